"""The own-data page: an image folder or a feature table, its positive classes, and aaPU
trained on it (the steps themselves are in :mod:`pusupport.apps.own`)."""
from __future__ import annotations

from ...apps.own import OWN_DATA, OWN_DATA_ESTIMATOR, SPLITS, check_method, check_not_input, train_config
from ..cost import data_sizes
from ..experiment import OPT_INT, TRAINING, Experiment, RunSpec

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..page import Page


def own_data_settings(page: Page) -> dict:
    """The input, its positive classes, π (None: estimated), the model (None: the default
    for the input), sizes, and the page's training settings (aaPU's selection follows
    from the data: see :func:`pusupport.apps.own.train_config`), checkpointed where the
    profile checkpoints (a re-run resumes)."""
    from dataclasses import replace
    from ...core.config import as_model_config
    from ...data.datasets import CIFAR10_POSITIVE, data_root
    p = page.params
    if p.get("image_folder") is not None and p.get("features") is not None:
        raise ValueError("give image_folder or features, not both")
    example = p.get("image_folder") is None and p.get("features") is None
    folder = str(data_root(page.data_dir) / "cifar10-jpeg") if example else p.get("image_folder")
    positive = p.get("positive_classes") or (CIFAR10_POSITIVE if example else None)
    # the model and the ranking go to the page's results folder: not into the reader's data
    check_not_input(page.results_dir, "output_dir", {k: p.get(k) for k in ("image_folder", "features")},
                    strict=True)
    s, profile = page.settings, page.experiment.resolve(page.dataset, page.profile)[1]
    return {"image_folder": folder, "features": p.get("features"), "pu": not positive,
            "method": check_method(p.get("method") or "aapu", p.get("prior")),
            "label_column": p.get("label_column") or "label",
            "positive_classes": [str(c) for c in positive or ["positive"]], "image_size": p.get("image_size"),
            "prior": p.get("prior"), "model": None if p.get("model") is None else as_model_config(p["model"]),
            "n_labeled": s.data.n_labeled, "n_unlabeled": s.data.n_unlabeled, "n_test": s.data.n_test,
            "train": replace(s.train, device=page.device, seed=page.seeds[0],
                             checkpoint_dir=str(page.results_dir / "checkpoints")
                             if page.checkpoints else None),
            # what the reader set (settings other than the profile's) wins over the rules
            # for small data (own.train_config)
            "given": {k: getattr(s.train, k) for k in TRAINING
                      if getattr(s.train, k) != getattr(profile.train, k)}}


def train_own(page: Page, s: dict, mine, data):
    """π (given, BBE's, or none for a method that reads none), then the chosen method on
    the reader's problem ``data`` (``mine``: their input), each run trained or read through
    the page's run store (:meth:`~pusupport.book.page.Page.train`; a recipe that stops early:
    :func:`~pusupport.apps.own.fit`). Returns (the problem with π set, the estimate or None,
    the run's RunResult, where a recipe stopped or "")."""
    from ...apps import own
    shape = tuple(data.x_u.shape)
    estimator = own.estimator_config(shape, page.profile, page.settings.train.dry_run,
                                     n_rows=len(data.x_p) + len(data.x_u))
    data, estimate = own.choose_prior(data, s["prior"], estimator, page.seeds[0], page.device,
                                      s["method"], trainer=page.train)
    config = train_config(len(data.x_u), s["model"] or own.default_model(shape), s["method"],
                          base=s["train"], **s["given"])
    return (data, estimate, *own.fit(data, config, trainer=page.train))


def result_text(data, true_prior: float | None, estimate, result, model_path, warning: str = "",
                pool=None, stopped: str = "") -> str:
    """Markdown: the problem's sizes, π (given, estimated, or not used by the method; beside
    the labels' where PU was simulated, ``true_prior``), the final test error and AUC where
    there is a test split, what the method selected (if it selects; its purity where the
    truth is known), where a recipe that stops early stopped (``stopped``), the share of the
    ranked ``pool`` (PU data) predicted positive, and where the model is."""
    from ...apps.own import describe_estimate
    from ...core.methods import get_method
    method, final = get_method(result.config.method), result.history.iloc[-1]
    labels = "" if true_prior is None else f"; the labels give {true_prior:.3f}"
    if not method.needs_prior:
        prior = f"π is not used: {method.label} needs none{labels}"
    else:
        where = "given" if estimate is None else describe_estimate(estimate)
        prior = f"π = **{data.prior:.3f}** ({where}){labels}"
    purity = "" if true_prior is None else f", {result.selected.purity:.1%} of them truly positive"
    selected = f" It selected **{len(result.selected)}** unlabelled points{purity}." if method.selects else ""
    tested = (f" and reaches a test error of **{final.test_error:.4f}** (AUC {final.test_auc:.4f})."
              if len(data.x_test) else "; there is no labelled test split, so no test error.")
    share = ("" if pool is None else f" Of the unlabelled pool it calls **{pool.predicted.mean():.1%}** "
             "positive (against π above); the pool ranked by score is `pool_ranking.csv`.")
    return (f"**{len(data.x_p)}** labelled positives, **{len(data.x_u)}** unlabelled points. "
            f"{prior}. {method.label} ({result.config.model.name}) is trained{tested}{selected}"
            f"{f' {stopped}.' if stopped else ''}{share} The "
            f"model is saved as `{model_path.name}` in the page's results folder."
            + (f"\n\n**Warning:** {warning}" if warning else ""))


def input_line(s: dict) -> str:
    """What the page trains on, in one line (paths as :func:`~pusupport.book.records.shown_path`)."""
    from ..records import shown_path
    source = (f"image folder {shown_path(s['image_folder'])}" if s["image_folder"]
              else f"feature table {shown_path(s['features'])} (label column {s['label_column']!r})")
    from ...core.methods import get_method
    prior = ("not used by the method" if not get_method(s["method"]).needs_prior else
             "estimated with BBE" if s["prior"] is None else f"given, {s['prior']}")
    model = s["model"].name if s["model"] else "the default for the input"
    size = "" if not s["image_size"] else f"; images resized to {s['image_size']}"
    kind = ("PU data (labelled positives beside an unlabelled pool; every row of both is used: "
            "the profile's n_labeled and n_unlabeled size simulated PU only)" if s["pu"] else
            f"positive classes {', '.join(s['positive_classes'])} (PU simulated from them)")
    return (f"input: {source}; {kind}; "
            f"method: {s['method']}; π: {prior}; model: {model}{size}")


def plan(s, profile: str = "paper", method: str = "aapu", prior: float | None = None) -> list[RunSpec]:
    """The example (CIFAR-10 as image files) at the page's profile, as the page trains it:
    the P-vs-U classifiers behind π where the method reads π and none is given —
    :data:`~pusupport.apps.own.SPLITS` halvings, each trained to find its best held-out
    epoch and again to it, priced as one classifier trained 2 × SPLITS times its epochs —
    then ``method`` at :func:`pusupport.apps.own.train_config`'s settings (aaPU's selection
    follows from the size of U); a recipe that stops early is trained again to its stop
    (:func:`pusupport.apps.own.fit`), priced as one run of twice its epochs, the most
    that can take."""
    from ...core.methods import get_method
    data = {"n_labeled": s.data.n_labeled, "n_unlabeled": s.data.n_unlabeled,
            **({"n_test": s.data.n_test} if s.data.n_test else {})}     # a smoke page's test rows
    chosen = get_method(check_method(method, prior))
    cfg = train_config(data_sizes("cifar10", s.data).n_u, s.model, method, base=s.train)
    train = {"epochs": cfg.epochs * (2 if chosen.stop else 1), "n_select": cfg.n_select,
             "select_from": cfg.select_from}
    runs = [RunSpec(method, method, {"data": data, "train": train}, seeds=1, stacks=False)]
    if not chosen.needs_prior or prior is not None:
        return runs
    estimator = OWN_DATA_ESTIMATOR[profile]
    epochs = 2 * SPLITS * {**OWN_DATA_ESTIMATOR["paper"]["train"], **estimator["train"]}["epochs"]
    return [RunSpec("P-vs-U classifiers", "pn", {**estimator, "train": {**estimator["train"], "epochs": epochs},
                                                 "data": data}, estimator=True), *runs]


EXPERIMENT = Experiment(
    "own_data", changes=OWN_DATA, plan=plan, sizes="cifar10",
    not_in_paper="your own images or features", plan_reads=("method", "prior"),
    parameters={"image_folder": (str, type(None)), "features": (str, type(None)),
                "label_column": (str, type(None)), "positive_classes": (list, type(None)),
                "image_size": (int, list, type(None)), "prior": (float, type(None)),
                "model": (str, dict, type(None)), "n_labeled": OPT_INT,
                "method": (str, type(None)), **TRAINING})
