"""The ``pusupport`` command: train aaPU on your data, predict with a saved model, estimate π.

Every user error ends with exit status 2 and one line naming the fix (no traceback),
before any work; a run that learned nothing (an unusable π estimate, a degenerate or
trivial classifier) ends with exit status 1, naming the options to change, and saves nothing;
Ctrl-C ends with exit status 130 and one line saying what was kept. ``--help`` and
``--version`` answer without importing torch: the commands import what they use.
"""
from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path
import warnings
from importlib.metadata import version

from .words import LABELED_FOLDERS, UNLABELED_FOLDERS, U_MEANING

SIZES = ("small data (U under ten batches): a batch of a tenth of U (at least 16), Adam's rate "
         "1e-3, a tenth of it for the last fifth of the epochs, and a P-vs-U classifier "
         "trained for at least 300 steps")


class _Parser(argparse.ArgumentParser):
    """Options by their whole names only (``--rankin`` is not taken for ``--ranking``), and an
    option no command knows answered with the closest names that one does."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message):
        unknown = re.findall(r"unrecognized arguments: (.*)", message)
        if unknown:
            commands = [a for a in self._actions if isinstance(a, argparse._SubParsersAction)]
            parsers = [self, *(p for a in commands for p in a.choices.values())]
            known = sorted({o for p in parsers for a in p._actions for o in a.option_strings})
            hints = [f"{w}: did you mean {' or '.join(close)}?" for w in unknown[0].split()
                     if w.startswith("--") and (close := difflib.get_close_matches(w.split("=")[0], known, n=2))]
            message += f" ({'; '.join(hints)})" if hints else ""
        super().error(message)


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return int(text)


def _inputs(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--images", metavar="DIR", help="image folder: DIR/labeled/* beside DIR/unlabeled/* "
                     "(optional DIR/test/<class>/*); with --positive: DIR/train/<class>/*, DIR/test/<class>/*")
    src.add_argument("--features", metavar="TABLE", help="feature table (.csv, .parquet, .npy, .npz)")
    p.add_argument("--label-column", default="label", help="the table's label column (default: label): "
                   "1/0, 1/-1 or True/False marking the labelled positives; with --positive, class labels")
    p.add_argument("--labeled-value", metavar="VALUE", help="the label value that marks the labelled "
                   "positives, where it is not 1 or True (e.g. a name)")
    p.add_argument("--empty-is-unlabeled", action="store_true",
                   help="an empty label cell means unlabelled (else it is an error)")
    p.add_argument("--labeled-folder", metavar="NAME", help="the folder of labelled positives, if not "
                   "one of " + ", ".join(LABELED_FOLDERS))
    p.add_argument("--unlabeled-folder", metavar="NAME", help="the unlabelled pool's folder, if not "
                   "one of " + ", ".join(UNLABELED_FOLDERS))
    p.add_argument("--test-positive", default="positive", metavar="NAME",
                   help="the positive class folder of an optional DIR/test/ (default: positive)")
    p.add_argument("--positive", nargs="+", help="evaluation mode, for fully labelled data: the "
                   "classes that count as positive; PU is simulated from them (half their training "
                   "rows labelled, the rest hidden in U) and scored against the hidden truth")
    p.add_argument("--n-labeled", type=int, help="evaluation mode: labelled positives (default: half "
                   "the training positives)")
    p.add_argument("--image-size", type=_positive_int, nargs="+", metavar="N", help="resize images to N×N or H W")
    p.add_argument("--skip-unreadable", action="store_true", help="leave unreadable images out (counted)")
    p.add_argument("--data-dir", help="where decoded images are cached (default: $PUSUPPORT_DATA, "
                                      "else ~/.cache/pusupport)")
    p.add_argument("--device", default="auto", help="auto, cpu or cuda")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--estimator-epochs", type=_positive_int, metavar="N",
                   help="epochs of the P-vs-U classifier behind the π estimate (default 10 for "
                        f"images, 20 for features; {SIZES})")


def parser() -> argparse.ArgumentParser:
    top = _Parser(prog="pusupport", description=__doc__.splitlines()[0].replace("``", ""))
    top.add_argument("--version", action="version", version=f"%(prog)s {version('pusupport')}")
    sub = top.add_subparsers(dest="command", required=True)
    train = sub.add_parser("train", help="train a PU classifier and save it",
                           description="Your data as they come: labelled positives beside an "
                                       "unlabelled pool (a folder's labeled/ and unlabeled/, or a "
                                       "table's label column marking the labelled positives); "
                                       "--positive is the evaluation mode, which simulates PU from "
                                       f"fully labelled classes. {U_MEANING}. Defaults follow the "
                                       f"data's size: {SIZES}. "
                                       "The progress bar shows the test error and S, the number of "
                                       "unlabelled points aaPU has selected as positives so far.")
    _inputs(train)
    train.add_argument("--out", required=True, help="where the model is saved (model.pt)")
    train.add_argument("--ranking", metavar="CSV", help="PU data: write the unlabelled pool ranked by "
                       "score, most positive first (rank, id, score, probability, predicted)")
    train.add_argument("--prior", type=float, help="π, the positive fraction of U (default: BBE estimate)")
    train.add_argument("--method", default="aapu", metavar="METHOD",
                       help="aapu (default), or another method of pusupport.core.methods, e.g. "
                            "nnpu, nnpusb or vpu (needs no π); a name it does not know lists them all")
    train.add_argument("--epochs", type=_positive_int, help="training epochs (default 50)")
    train.add_argument("--lr", type=float, help="Adam's learning rate (default 1e-4; 1e-3 for small data; "
                       "vpu: its authors' rate)")
    train.add_argument("--batch-size", type=_positive_int,
                       help="mini-batch size (default 500; a tenth of U for small data)")
    train.add_argument("--checkpoint-dir", metavar="DIR",
                       help="checkpoint there every 10 epochs and at the last; the same command "
                            "resumes a killed run")
    train.add_argument("--allow-degenerate", action="store_true",
                       help="keep an unusable π estimate or a classifier that learned nothing "
                            "(a warning instead of exit status 1)")
    train.add_argument("--model", help="model name (default: ¼-width Kiryo CNN for images, MLP for features)")
    pred = sub.add_parser("predict", help="score images or table rows with a saved model")
    pred.add_argument("model", help="a model saved by pusupport train")
    pred.add_argument("inputs", help="a folder of images (flat or nested) or a feature table")
    pred.add_argument("--csv", required=True, help="where the predictions are written")
    pred.add_argument("--image-size", type=_positive_int, nargs="+", metavar="N")
    pred.add_argument("--skip-unreadable", action="store_true")
    pred.add_argument("--device", default="cpu")
    est = sub.add_parser("estimate-prior", help="estimate π with BBE and Elkan–Noto",
                         description=f"{U_MEANING}.")
    _inputs(est)
    return top


def _interrupted(args) -> str:
    """What a Ctrl-C leaves: the checkpoints of a train run that writes them, else nothing."""
    where = getattr(args, "checkpoint_dir", None)
    if where and any(Path(where).glob("*")):
        return (f"interrupted; the checkpoints in {where} are kept (one every 10 epochs): the "
                "same command resumes from the last")
    if where:
        return (f"interrupted before the first checkpoint (every 10 epochs): nothing in {where} "
                "yet; the same command starts again from the beginning")
    if args.command == "train":
        return ("interrupted; nothing saved — add --checkpoint-dir DIR to make a run that the "
                "same command resumes")
    return "interrupted; nothing written"


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    from . import commands
    from ..data.datasets import DatasetNotFoundError
    from .prior import PriorWarning
    from ..core.runtime import LayoutNote
    run = {"train": commands.train_model, "predict": commands.predict,
           "estimate-prior": commands.estimate_prior}[args.command]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        warnings.simplefilter("ignore", PriorWarning)      # printed with the estimate
        warnings.simplefilter("ignore", LayoutNote)        # the book's build speed, not yours
        try:
            run(args)
            status = 0
        except commands.LearnedNothing as err:
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
