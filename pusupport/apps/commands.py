"""The ``pusupport`` commands (:mod:`pusupport.apps.cli` parses their arguments): train,
predict, estimate π."""
from __future__ import annotations

import sys

from . import own, reading
from ..core.atomic import atomic_write_text
from .saved import load_model
from .words import SPELLING, U_MEANING
from ..core.training import train


class LearnedNothing(Exception):
    """A run whose result is useless (exit status 1)."""


def _size(values):
    return None if not values else values[0] if len(values) == 1 else tuple(values)


def _estimator(args, data, problem):
    """The P-vs-U classifier's settings for the data's size, with ``--estimator-epochs`` if given."""
    from dataclasses import replace
    cfg = own.estimator_config(data, n_rows=len(problem.x_p) + len(problem.x_u))
    return cfg if args.estimator_epochs is None else replace(cfg, epochs=args.estimator_epochs)


def _problem(args):
    data = reading.load_own(args.images, args.features, args.label_column, _size(args.image_size),
                        args.skip_unreadable, args.data_dir, args.seed, spelling="cli")
    return data, own.build_problem(data, args.positive, args.n_labeled, args.seed)


def _learned_nothing(args, problem: str) -> None:
    if problem and not args.allow_degenerate:
        raise LearnedNothing(f"{problem}; nothing saved ({SPELLING['cli']['allow']} keeps it)")
    if problem:
        print(f"warning: {problem}", file=sys.stderr)


def train_model(args) -> None:
    from ..core.methods import get_method
    own.check_method(args.method, args.prior, "cli")    # a typo fails before any data are read
    needs_prior = get_method(args.method).needs_prior
    inputs = {"--features": args.features, "--images": args.images}
    own.check_output(args.out, "--out", inputs=inputs)   # so do outputs that cannot be written
    if args.checkpoint_dir:
        own.check_output(args.checkpoint_dir, "--checkpoint-dir", folder=True,
                         inputs={**inputs, "--out": args.out})
    if args.prior is not None and not 0 < args.prior < 1:
        raise ValueError(f"--prior {args.prior}: give π strictly between 0 and 1, e.g. --prior 0.3")
    data, problem = _problem(args)
    model = own.as_model_config(args.model) if args.model else own.default_model(data)
    estimator = _estimator(args, data, problem) if needs_prior else None
    labels_say = problem.prior
    if needs_prior and args.prior is None:
        _estimating(estimator)
    problem, bbe = own.choose_prior(problem, args.prior, estimator, args.seed, args.device,
                                    args.method)
    if bbe is not None:
        print(own.describe_estimate(bbe, "cli"))
        print(f"(the labels give π = {labels_say:.3f}: with --prior {labels_say:.3f} the run trains "
              "with it instead)")
        _learned_nothing(args, own.estimate_problem(bbe, "cli"))
    given = {k: v for k, v in (("lr", args.lr), ("batch_size", args.batch_size),
                               ("checkpoint_dir", args.checkpoint_dir)) if v is not None}
    cfg = own.train_config(len(problem.x_u), model, args.method, args.epochs, device=args.device,
                           seed=args.seed, **given)
    print(f"{len(problem.x_p)} labelled positives, {len(problem.x_u)} unlabelled, "
          f"{len(problem.x_test)} test rows"
          f"{f' ({reading.TEST_FRACTION:.0%} of the table, held out: it has no test split)' if data.held_out else ''}; "
          f"{cfg.method} with {cfg.model.name} for {cfg.epochs} epochs (batch {cfg.batch_size}, "
          f"lr {cfg.lr:g}), " + (f"π = {problem.prior:.3f}" if needs_prior else "no π"))
    result = train(problem, cfg)
    last = result.history.iloc[-1]
    if len(problem.x_test):
        print(f"test error {last.test_error:.4f}, AUC {last.test_auc:.4f}")
    else:
        print("warning: no test rows, so no test error: give a test split (DIR/test/<class>/*, or "
              "x_test and y_test in the .npz)", file=sys.stderr)
    _learned_nothing(args, own.check_trained(result, problem, "cli"))
    print(f"saved {own.save(args.out, result, data, problem, args.positive)}")


def predict(args) -> None:
    own.check_output(args.csv, "--csv", inputs={"MODEL": args.model, "INPUTS": args.inputs})
    saved = load_model(args.model, args.device)
    x, ids = reading.read_inputs(saved, args.inputs, _size(args.image_size), args.skip_unreadable)
    table = own.predictions(saved, x, ids)
    atomic_write_text(args.csv, table.to_csv(index=False))
    print(f"{len(table)} predictions ({int(table.predicted.sum())} positive) written to {args.csv}")


def _estimating(estimator) -> None:
    """Say that π is being estimated, and how (it takes a P-vs-U classifier's training)."""
    print(f"estimating π: BBE and Elkan–Noto from a P-vs-U classifier ({estimator.model.name}, "
          f"{estimator.epochs} epochs) …", flush=True)


def estimate_prior(args) -> None:
    data, problem = _problem(args)
    estimator = _estimator(args, data, problem)
    _estimating(estimator)
    for e in own.estimate(problem, estimator, args.seed, args.device).values():
        print(own.describe_estimate(e, "cli"))
    print(f"(the labels give {problem.prior:.3f}: {U_MEANING})")
