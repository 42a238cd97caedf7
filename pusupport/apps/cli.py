"""The ``pusupport`` command: train aaPU on your data, predict with a saved model, estimate π.

Every user error ends with exit status 2 and one line naming the fix (no traceback),
before any work; a run that learned nothing (an unusable π estimate, a degenerate or
trivial classifier) ends with exit status 1, naming the options to change, and saves nothing;
Ctrl-C ends with exit status 130 and one line saying what was kept.
"""
from __future__ import annotations

import argparse
import sys
import warnings

from . import own
from .prior import PriorWarning
from ..data.datasets import DatasetNotFoundError
from .saved import load_model
from ..core.methods import usable_methods
from ..core.training import train

SIZES = ("small data (U under ten batches): a batch of a tenth of U (at least 16), Adam's rate "
         "1e-3, a tenth of it for the last fifth of the epochs, and a P-vs-U classifier "
         "trained for at least 300 steps")


class LearnedNothing(Exception):
    """A run whose result is useless (exit status 1)."""


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return int(text)


def _inputs(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--images", metavar="DIR", help="image folder: DIR/train/<class>/*, DIR/test/<class>/*")
    src.add_argument("--features", metavar="TABLE", help="feature table (.csv, .parquet, .npy, .npz)")
    p.add_argument("--label-column", default="label", help="the table's label column (default: label)")
    p.add_argument("--positive", nargs="+", required=True, help="positive class names (or integers)")
    p.add_argument("--n-labeled", type=int, help="labelled positives (default: half the training positives)")
    p.add_argument("--image-size", type=int, nargs="+", metavar="N", help="resize images to N×N or H W")
    p.add_argument("--skip-unreadable", action="store_true", help="leave unreadable images out (counted)")
    p.add_argument("--data-dir", help="where decoded images are cached (default: $PUSUPPORT_DATA)")
    p.add_argument("--device", default="auto", help="auto, cpu or cuda")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--estimator-epochs", type=_positive_int, metavar="N",
                   help="epochs of the P-vs-U classifier behind the π estimate (default 10 for "
                        f"images, 20 for features; {SIZES})")


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="pusupport", description=__doc__.splitlines()[0].replace("``", ""))
    sub = top.add_subparsers(dest="command", required=True)
    train = sub.add_parser("train", help="train a PU classifier and save it",
                           description=f"{own.U_MEANING}. Defaults follow the data's size: {SIZES}.")
    _inputs(train)
    train.add_argument("--out", required=True, help="where the model is saved (model.pt)")
    train.add_argument("--prior", type=float, help="π, the positive fraction of U (default: BBE estimate)")
    train.add_argument("--method", default="aapu", metavar="METHOD",
                       help=f"one of {', '.join(usable_methods())} (default aapu; vpu needs no π)")
    train.add_argument("--epochs", type=_positive_int, help="training epochs (default 50)")
    train.add_argument("--lr", type=float, help="Adam's learning rate (default 1e-4; 1e-3 for small data)")
    train.add_argument("--batch-size", type=_positive_int,
                       help="mini-batch size (default 500; a tenth of U for small data)")
    train.add_argument("--checkpoint-dir", metavar="DIR",
                       help="checkpoint every 10 epochs there; the same command resumes a killed run")
    train.add_argument("--allow-degenerate", action="store_true",
                       help="keep an unusable π estimate or a classifier that learned nothing "
                            "(a warning instead of exit status 1)")
    train.add_argument("--model", help="model name (default: ¼-width Kiryo CNN for images, MLP for features)")
    pred = sub.add_parser("predict", help="score images or table rows with a saved model")
    pred.add_argument("model", help="a model saved by pusupport train")
    pred.add_argument("inputs", help="a folder of images (flat or nested) or a feature table")
    pred.add_argument("--csv", required=True, help="where the predictions are written")
    pred.add_argument("--image-size", type=int, nargs="+", metavar="N")
    pred.add_argument("--skip-unreadable", action="store_true")
    pred.add_argument("--device", default="cpu")
    est = sub.add_parser("estimate-prior", help="estimate π with BBE and Elkan–Noto",
                         description=f"{own.U_MEANING}.")
    _inputs(est)
    return top


def _size(values):
    return None if not values else values[0] if len(values) == 1 else tuple(values)


def _estimator(args, data, problem):
    """The P-vs-U classifier's settings for the data's size, with ``--estimator-epochs`` if given."""
    from dataclasses import replace
    cfg = own.estimator_config(data, n_rows=len(problem.x_p) + len(problem.x_u))
    return cfg if args.estimator_epochs is None else replace(cfg, epochs=args.estimator_epochs)


def _problem(args):
    data = own.load_own(args.images, args.features, args.label_column, _size(args.image_size),
                        args.skip_unreadable, args.data_dir, args.seed, spelling="cli")
    return data, own.build_problem(data, args.positive, args.n_labeled, args.seed)


def _learned_nothing(args, problem: str) -> None:
    if problem and not args.allow_degenerate:
        raise LearnedNothing(f"{problem}; nothing saved ({own.SPELLING['cli']['allow']} keeps it)")
    if problem:
        print(f"warning: {problem}", file=sys.stderr)


def cmd_train(args) -> None:
    from ..core.methods import get_method
    own.check_method(args.method, args.prior, "cli")    # a typo fails before any data are read
    needs_prior = get_method(args.method).needs_prior
    own.check_output(args.out, "--out")        # so do outputs that cannot be written
    if args.checkpoint_dir:
        own.check_output(args.checkpoint_dir, "--checkpoint-dir", folder=True)
    if args.prior is not None and not 0 < args.prior < 1:
        raise ValueError(f"--prior {args.prior}: give π strictly between 0 and 1, e.g. --prior 0.3")
    data, problem = _problem(args)
    model = own.as_model_config(args.model) if args.model else own.default_model(data)
    estimator = _estimator(args, data, problem) if needs_prior else None
    problem, bbe = own.choose_prior(problem, args.prior, estimator, args.seed, args.device,
                                    args.method)
    if bbe is not None:
        print(own.describe_estimate(bbe, "cli"))
        _learned_nothing(args, own.estimate_problem(bbe, "cli"))
    given = {k: v for k, v in (("lr", args.lr), ("batch_size", args.batch_size),
                               ("checkpoint_dir", args.checkpoint_dir)) if v is not None}
    cfg = own.train_config(len(problem.x_u), model, args.method, args.epochs, device=args.device,
                           seed=args.seed, **given)
    print(f"{len(problem.x_p)} labelled positives, {len(problem.x_u)} unlabelled; "
          f"{cfg.method} with {cfg.model.name} for {cfg.epochs} epochs (batch {cfg.batch_size}, "
          f"lr {cfg.lr:g}), " + (f"π = {problem.prior:.3f}" if needs_prior else "no π"))
    result = train(problem, cfg)
    last = result.history.iloc[-1]
    print(f"test error {last.test_error:.4f}, AUC {last.test_auc:.4f}")
    _learned_nothing(args, own.check_trained(result, problem, "cli"))
    print(f"saved {own.save(args.out, result, data, problem, args.positive)}")


def cmd_predict(args) -> None:
    own.check_output(args.csv, "--csv")
    saved = load_model(args.model, args.device)
    x, ids = own.read_inputs(saved, args.inputs, _size(args.image_size), args.skip_unreadable)
    table = own.predictions(saved, x, ids)
    table.to_csv(args.csv, index=False)
    print(f"{len(table)} predictions ({int(table.predicted.sum())} positive) written to {args.csv}")


def cmd_estimate(args) -> None:
    data, problem = _problem(args)
    for e in own.estimate(problem, _estimator(args, data, problem), args.seed, args.device).values():
        print(own.describe_estimate(e, "cli"))
    print(f"(the labels give {problem.prior:.3f}: {own.U_MEANING})")


def _interrupted(args) -> str:
    """What a Ctrl-C leaves: the checkpoints of a train run that writes them, else nothing."""
    where = getattr(args, "checkpoint_dir", None)
    if where:
        return (f"interrupted; the checkpoints in {where} are kept (one every 10 epochs): the "
                "same command resumes from the last")
    if args.command == "train":
        return ("interrupted; nothing saved — add --checkpoint-dir DIR to make a run that the "
                "same command resumes")
    return "interrupted; nothing written"


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    run = {"train": cmd_train, "predict": cmd_predict, "estimate-prior": cmd_estimate}[args.command]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        warnings.simplefilter("ignore", PriorWarning)      # printed with the estimate
        try:
            run(args)
            status = 0
        except LearnedNothing as err:
            message, status = str(err), 1
        except KeyboardInterrupt:
            message, status = _interrupted(args), 130
        except DatasetNotFoundError as err:
            message, status = str(err).splitlines()[0], 2
        except (ValueError, FileNotFoundError, KeyError, TypeError, ImportError) as err:
            message, status = " ".join(str(err).split()), 2
        for w in caught:
            if issubclass(w.category, UserWarning):
                print(f"warning: {w.message}", file=sys.stderr)
    if status:
        print(f"pusupport {args.command}: error: {message}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
