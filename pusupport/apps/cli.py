"""The ``pusupport`` command: train aaPU on your data, predict with a saved model, estimate π.

Every user error ends with exit status 2 and one line naming the fix (no traceback).
"""
from __future__ import annotations

import argparse
import sys
import warnings

from . import own
from ..data.datasets import DatasetNotFoundError
from .saved import load_model
from ..core.training import train


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
                        "images, 20 for features; more for small data: each epoch is ⌈n/256⌉ steps)")


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="pusupport", description=__doc__.splitlines()[0])
    sub = top.add_subparsers(dest="command", required=True)
    train = sub.add_parser("train", help="train a PU classifier and save it")
    _inputs(train)
    train.add_argument("--out", required=True, help="where the model is saved (model.pt)")
    train.add_argument("--prior", type=float, help="π, the positive fraction of U (default: BBE estimate)")
    train.add_argument("--method", default="aapu", help="aapu (default), nnpu, upu, …")
    train.add_argument("--epochs", type=int, help="training epochs (default 50)")
    train.add_argument("--lr", type=float, help="Adam's learning rate (default 1e-4)")
    train.add_argument("--batch-size", type=int, help="mini-batch size (default 500; use less for "
                       "small data sets: each epoch makes ⌈n/batch⌉ steps)")
    train.add_argument("--model", help="model name (default: ¼-width Kiryo CNN for images, MLP for features)")
    pred = sub.add_parser("predict", help="score images or table rows with a saved model")
    pred.add_argument("model", help="a model saved by pusupport train")
    pred.add_argument("inputs", help="a folder of images (flat or nested) or a feature table")
    pred.add_argument("--csv", required=True, help="where the predictions are written")
    pred.add_argument("--image-size", type=int, nargs="+", metavar="N")
    pred.add_argument("--skip-unreadable", action="store_true")
    pred.add_argument("--device", default="cpu")
    est = sub.add_parser("estimate-prior", help="estimate π with BBE and Elkan–Noto")
    _inputs(est)
    return top


def _size(values):
    return None if not values else values[0] if len(values) == 1 else tuple(values)


def _estimator(args, data):
    """The P-vs-U classifier's settings, with ``--estimator-epochs`` if given."""
    from dataclasses import replace
    cfg = own.estimator_config(data)
    return cfg if args.estimator_epochs is None else replace(cfg, epochs=args.estimator_epochs)


def _problem(args):
    data = own.load_own(args.images, args.features, args.label_column, _size(args.image_size),
                        args.skip_unreadable, args.data_dir, args.seed)
    return data, own.build_problem(data, args.positive, args.n_labeled, args.seed)


def cmd_train(args) -> None:
    from ..core.methods import get_method
    get_method(args.method)                    # a typo fails before any data are read
    data, problem = _problem(args)
    model = own.as_model_config(args.model) if args.model else own.default_model(data)
    problem, bbe = own.choose_prior(problem, args.prior, _estimator(args, data), args.seed,
                                    args.device)
    if bbe is not None:
        print(own.describe_estimate(bbe))
    given = {k: v for k, v in (("lr", args.lr), ("batch_size", args.batch_size)) if v is not None}
    cfg = own.train_config(len(problem.x_u), model, args.method, args.epochs, device=args.device,
                           seed=args.seed, **given)
    print(f"{len(problem.x_p)} labelled positives, {len(problem.x_u)} unlabelled; "
          f"{cfg.method} with {cfg.model.name} for {cfg.epochs} epochs, π = {problem.prior:.3f}")
    result = train(problem, cfg)
    last = result.history.iloc[-1]
    print(f"test error {last.test_error:.4f}, AUC {last.test_auc:.4f}")
    warning = own.check_trained(result, problem)
    if warning:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"saved {own.save(args.out, result, data, problem, args.positive)}")


def cmd_predict(args) -> None:
    saved = load_model(args.model, args.device)
    x, ids = own.read_inputs(saved, args.inputs, _size(args.image_size), args.skip_unreadable)
    table = own.predictions(saved, x, ids)
    table.to_csv(args.csv, index=False)
    print(f"{len(table)} predictions ({int(table.predicted.sum())} positive) written to {args.csv}")


def cmd_estimate(args) -> None:
    data, problem = _problem(args)
    for e in own.estimate(problem, _estimator(args, data), args.seed, args.device).values():
        print(own.describe_estimate(e))
    print(f"(the labels give {problem.prior:.3f})")


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    run = {"train": cmd_train, "predict": cmd_predict, "estimate-prior": cmd_estimate}[args.command]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        try:
            run(args)
            status = 0
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
