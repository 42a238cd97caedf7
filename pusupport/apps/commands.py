"""The ``pusupport`` commands (:mod:`pusupport.apps.cli` parses their arguments): train,
predict, estimate π."""
from __future__ import annotations

import sys

from . import own, pu_data, reading
from ..core.atomic import atomic_write_text
from .saved import load_model
from .words import SPELLING, U_MEANING


class LearnedNothing(Exception):
    """A run whose result is useless (exit status 1)."""


def _size(values):
    return None if not values else values[0] if len(values) == 1 else tuple(values)


def _estimator(args, problem):
    """The P-vs-U classifier's settings for the data's size, with ``--estimator-epochs`` if given."""
    from dataclasses import replace
    cfg = own.estimator_config(tuple(problem.x_u.shape), n_rows=len(problem.x_p) + len(problem.x_u))
    return cfg if args.estimator_epochs is None else replace(cfg, epochs=args.estimator_epochs)


#: Options for PU data only, and for the evaluation mode (--positive) only, as argparse names them.
PU_ONLY = ("labeled_value", "empty_is_unlabeled", "labeled_folder", "unlabeled_folder", "ranking")
SIMULATION_ONLY = ("n_labeled",)


def _problem(args):
    """(what was read, the PU problem): PU data as they are, or with ``--positive`` PU
    simulated from fully labelled classes (evaluation mode)."""
    simulated = args.positive is not None
    wrong = [o for o in (PU_ONLY if simulated else SIMULATION_ONLY) if getattr(args, o, None)]
    if wrong:
        flag = "--" + wrong[0].replace("_", "-")
        raise ValueError(f"{flag} is for {'PU data; leave out --positive' if simulated else 'the evaluation mode: add --positive CLASS'}"
                         f" ({'--positive simulates PU from fully labelled classes' if simulated else 'without it the data are read as PU'})")
    if not simulated:
        source = pu_data.load_pu(args.images, args.features, args.label_column, args.labeled_value,
                                 args.empty_is_unlabeled, args.labeled_folder, args.unlabeled_folder,
                                 args.test_positive, _size(args.image_size), args.skip_unreadable,
                                 spelling="cli")
        return source, source.problem()
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
    if args.ranking:
        own.check_output(args.ranking, "--ranking", inputs=inputs, outputs={"--out": args.out})
    if args.checkpoint_dir:
        own.check_output(args.checkpoint_dir, "--checkpoint-dir", folder=True, inputs=inputs,
                         outputs={"--out": args.out})
    if args.prior is not None and not 0 < args.prior < 1:
        raise ValueError(f"--prior {args.prior}: give π strictly between 0 and 1, e.g. --prior 0.3")
    data, problem = _problem(args)
    simulated = args.positive is not None
    model = own.as_model_config(args.model) if args.model else own.default_model(tuple(problem.x_u.shape))
    estimator = _estimator(args, problem) if needs_prior else None
    labels_say = problem.prior
    if needs_prior and args.prior is None:
        _estimating(estimator)
    problem, bbe = own.choose_prior(problem, args.prior, estimator, args.seed, args.device,
                                    args.method)
    if bbe is not None:
        print(own.describe_estimate(bbe, "cli"))
        if simulated:
            print(f"(the labels give π = {labels_say:.3f}: with --prior {labels_say:.3f} the run "
                  "trains with it instead)")
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
    result, stopped = own.fit(problem, cfg)
    if stopped:
        print(stopped)
    last = result.history.iloc[-1]
    if len(problem.x_test):
        print(f"test error {last.test_error:.4f}, AUC {last.test_auc:.4f}")
    elif simulated:
        print("warning: no test rows, so no test error: give a test split (DIR/test/<class>/*, or "
              "x_test and y_test in the .npz)", file=sys.stderr)
    _learned_nothing(args, own.check_trained(result, problem, "cli"))
    saved = own.save(args.out, result, data, problem, args.positive or data.classes[1:])
    print(f"saved {saved}")
    if not simulated:
        _pool(args, load_model(saved), problem, data.u_ids, bbe)


def _pool(args, saved, problem, ids, estimate) -> None:
    """Label-free diagnostics of PU data (the share of U predicted positive against π) and,
    with ``--ranking``, the pool ranked by score."""
    table = own.ranking(saved, problem.x_u, ids)
    share = table.predicted.mean()
    prior = (f" ({args.method} reads no π: `pusupport estimate-prior` gives one to hold this share "
             "against; its threshold may be off where its ranking is not)" if saved.prior is None else
             f", against π = {saved.prior:.3f}" +
             (f" (estimated, interval {estimate.low:.3f}–{estimate.high:.3f})" if estimate else " (given)"))
    print(f"the unlabelled pool: {int(table.predicted.sum())} of {len(table)} ({share:.1%}) predicted "
          f"positive{prior}")
    if tied := own.ties(table):
        print(f"warning: {tied}", file=sys.stderr)
    if args.ranking:
        atomic_write_text(args.ranking, table.to_csv(index=False))
        print(f"the pool ranked by score, most positive first: {args.ranking}")
    else:
        print("(--ranking pool.csv writes the pool ranked by score)")


def predict(args) -> None:
    own.check_output(args.csv, "--csv", inputs={"MODEL": args.model, "INPUTS": args.inputs})
    saved = load_model(args.model, args.device)
    x, ids = reading.read_inputs(saved, args.inputs, _size(args.image_size), args.skip_unreadable)
    table = own.predictions(saved, x, ids)
    atomic_write_text(args.csv, table.to_csv(index=False))
    print(f"{len(table)} predictions ({int(table.predicted.sum())} positive) written to {args.csv}")


def _estimating(estimator) -> None:
    """Say that π is being estimated, and how (it takes a P-vs-U classifier's training)."""
    print(f"estimating π: BBE and Elkan–Noto, the median over {own.SPLITS} P-vs-U classifiers "
          f"({estimator.model.name}, each trained up to {estimator.epochs} epochs and kept at its "
          "best held-out one) …", flush=True)


def estimate_prior(args) -> None:
    data, problem = _problem(args)
    estimator = _estimator(args, problem)
    _estimating(estimator)
    for e in own.estimate(problem, estimator, args.seed, args.device).values():
        print(own.describe_estimate(e, "cli"))
    print("(BBE is the one `pusupport train` uses: it reads only the ranking of the P-vs-U "
          "classifier's scores; Elkan–Noto reads their values as calibrated probabilities, which a "
          "network's seldom are, and its interval covers the classifier's average, not that error)")
    if args.positive is not None:
        print(f"(the labels give {problem.prior:.3f}: {U_MEANING})")
