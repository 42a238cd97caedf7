"""The method contract and the registry of methods the book trains.

A :class:`Method` sees one mini-batch as a :class:`Batch` — the scores of its P, U and
S rows, the inputs behind them, U's indices, the members (for a second forward pass)
and the method's own per-member state — and returns a :class:`~pusupport.core.risks.Risk`.
Optional hooks set up that state, run between epochs (:class:`EpochEnd`; aaPU's
selection, Algorithm 1 lines 7–9, is one) and place the decision threshold from the
training data alone (nnPUSB, VPU). A method also owns its label, its colour, its cost per
trained row and whether it needs π. Add one with :func:`register`: the loop does not change.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch

from .risks import Risk, aapu_risk, naive_risk, nnpu_risk, pn_risk, upu_risk


@dataclass
class Batch:
    """One mini-batch as a method sees it; every tensor has a leading member dimension K.

    ``g_p``, ``g_u``, ``g_s``: training-mode scores (K, n) in float32; ``s_mask``: 1 for
    real S entries when S batches are padded (else None); ``index_u``: (K, b_u) indices
    into U of the U rows; ``state``: the method's per-member tensors (:attr:`Method.init_state`).
    :meth:`inputs` and :meth:`forward` give the batch's inputs and a second forward pass.
    """

    g_p: torch.Tensor
    g_u: torch.Tensor
    g_s: torch.Tensor
    s_mask: torch.Tensor | None
    prior: float | torch.Tensor
    config: object
    index_u: torch.Tensor
    state: dict
    _inputs: Callable
    _forward: Callable

    def inputs(self) -> tuple:
        """(x_p, x_u, x_s), each (K, n, …): the rows behind the scores (dense inputs only)."""
        return self._inputs()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Training-mode scores (K, B) in float32 of inputs (K, B, …), at the loop's precision."""
        return self._forward(x)


@dataclass
class EpochEnd:
    """What a hook sees after an epoch: the epoch, the settings, each member's selected
    set S, the method's state, and U's losses as negatives ℓ(−g(x)) (K, n_u), scored in
    eval mode once per epoch on first use (``-inf`` for rows a dry run leaves unscored)."""

    epoch: int
    config: object
    selected: list
    state: dict
    u_losses: Callable[[], torch.Tensor]


#: The metadata of :class:`Method`'s presentation fields (label, colour, prose, sources):
#: a run's identity leaves them out (:mod:`~pusupport.core.identity`).
SHOWN = {"shown": True}


@dataclass(frozen=True)
class Method:
    """A training method.

    ``risk(batch) → Risk``; ``init_state(n_u, seeds, device) → {name: tensor}``
    (optional): per-member state (K = len(seeds) rows), checkpointed with the run;
    ``end_epoch(EpochEnd)`` (optional): runs after each epoch's evaluation;
    ``threshold(g_p, g_u, prior) → (K,)`` (optional): the score above which a point is
    called positive, from the training P and U scores (K, n) in eval mode — never from
    test labels (default 0: the sign of g); ``threshold_on``: the unlabelled rows passed as
    ``g_u`` — the training U ("x_u"), or the test inputs ("x_test": transductive, as
    nnPUSB's authors place it; their labels are never read). ``selects``: grows S from ``select_from`` on
    (its settings are then checked); ``stacks``: K seeds can share one stacked network;
    ``supervised``: the U slot holds labelled negatives (PN training), so the loop also
    reports the error on the training labels; ``needs_prior``: False for a method that
    never reads π; ``usable``: False for an ablation or counterfactual, which is not a
    method to train on one's own data (the command line and PUClassifier refuse it);
    ``mixes_inputs``: MixUp mixes its input rows, so it needs dense rows (not sparse ones);
    ``passes``: forward-pass equivalents one trained row costs (forward +
    backward = 3; a second forward pass adds 3); ``view_of``: the method this one trains
    exactly as (same risk, same batches), differing only in its ``threshold`` — the loop
    records its final test error beside that method's own (:func:`view_column`), so one
    run gives both; ``views_every_run``: its threshold also scores the final model of every
    other method that reads π (the book's common label-free threshold, so that every
    comparison can be read at one threshold); ``before_selection``: the method this one trains exactly as until its
    first selection (S empty: aaPU is then nnPU), so its run forks from that method's
    (:mod:`~pusupport.core.forks`). A method from another paper also declares its own
    ``settings`` (a frozen dataclass whose defaults are its authors'; a run changes them
    with ``TrainConfig.method_settings`` and the risk reads ``config.own``), its authors'
    values for a data set where they give them (``by_dataset``), ``recipe(config) →
    config`` (what its authors' recipe changes in a run's shared settings, e.g. fewer
    epochs), where its authors set all this (``source``) and this book's departures from
    them, each with its reason (``departures``: (what, why) pairs). ``optimiser(config,
    epoch) → (lr, weight_decay, fresh)`` (optional): its own rates for an epoch, and whether
    Adam starts afresh at it (default: the config's rate and weight decay, one Adam a run);
    ``second_stage(config)``: the first epoch of its second stage, where it has one (a dry
    run steps there too). ``validation(g_p, g_u, prior, state) → (K,)``: its authors'
    label-free model selection criterion on a held-out PU split (lower is better; VPU's
    variational loss; NaN where a member chooses no epoch yet); without one, a method is offered
    :func:`~pusupport.core.evaluation.validation_risks`' default. ``stop(values) → i``: its
    recipe's early stop on that criterion (its values at the evaluated epochs, in order): the
    position of the model it restores and reports (default: none — the lowest value is its
    own choice, its last epoch its final model). ``criterion``: that choice in words, where
    the method declares a ``validation`` or ``stop`` of its own (default: the book's, the
    lowest non-negative PU sigmoid risk).
    """

    name: str
    label: str = field(metadata=SHOWN)
    description: str = field(metadata=SHOWN)
    risk: Callable[[Batch], Risk]
    color: str = field(default="#8c564b", metadata=SHOWN)
    selects: bool = False
    stacks: bool = True
    supervised: bool = False
    passes: int = 3
    needs_prior: bool = True
    usable: bool = True
    mixes_inputs: bool = False
    init_state: Callable | None = None
    end_epoch: Callable | None = None
    threshold: Callable | None = None
    threshold_on: str = "x_u"
    view_of: str | None = None
    views_every_run: bool = False
    before_selection: str | None = None
    settings: type | None = None
    by_dataset: dict = field(default_factory=dict, compare=False)
    recipe: Callable | None = None
    source: str = field(default="", metadata=SHOWN)
    departures: tuple = field(default=(), metadata=SHOWN)
    optimiser: Callable | None = None
    second_stage: Callable | None = None
    validation: Callable | None = None
    stop: Callable | None = None
    criterion: str = field(default="", metadata=SHOWN)


def optimiser_at(method: Method, config, epoch: int) -> tuple[float, float, bool]:
    """(learning rate, weight decay, whether Adam starts afresh) for ``epoch``: the method's
    own (:attr:`Method.optimiser`), else the config's rate at that epoch and its decay."""
    if method.optimiser:
        return method.optimiser(config, epoch)
    return config.lr_at(epoch), config.weight_decay, False


def views_of(name: str) -> list[Method]:
    """The thresholds at which a run of method ``name`` is also scored: the methods that are
    its run at another threshold (their ``view_of``), and the common label-free threshold
    (``views_every_run``, nnPUSB's) on the run of every other method that reads π."""
    reads_prior = name in METHODS and METHODS[name].needs_prior and METHODS[name].view_of is None
    return [m for m in METHODS.values() if m.view_of == name
            or m.views_every_run and reads_prior and m.name != name]


#: The history columns of the test error at a view's threshold: this prefix and its name.
VIEW_PREFIX = "test_error:"


def view_column(name: str, column: str = "test_error") -> str:
    """The history column of the test error (or ``column``, e.g. the per-point errors
    "test_wrong") at view ``name``'s threshold."""
    return f"{column}:{name}"


def grow_selection(end: EpochEnd, smallest: bool = False, among: Callable | None = None) -> None:
    """aaPU's hook (Algorithm 1, lines 7–9): from ``select_from`` on, the ``n_select``
    largest-loss U points of each member join its S (the ``smallest`` instead: negative
    selection; only the U points ``among(selected)`` marks, if given: the oracle)."""
    cfg = end.config
    if cfg.selects_at(end.epoch):
        losses = end.u_losses()
        for k, selected in enumerate(end.selected):
            selected.update(losses[k], cfg.n_select, end.epoch, smallest=smallest,
                            among=None if among is None else among(selected))


METHODS: dict[str, Method] = {}


def register(method: Method) -> Method:
    """Add ``method`` to :data:`METHODS` (a name already taken is an error)."""
    if method.name in METHODS:
        raise ValueError(f"a method called {method.name!r} is already registered")
    if method.threshold_on not in ("x_u", "x_test"):
        raise ValueError(f"{method.name}: threshold_on={method.threshold_on!r} — use 'x_u' (the "
                         "training U) or 'x_test' (the test inputs)")
    METHODS[method.name] = method
    return method


def get_method(name: str) -> Method:
    """The method called ``name`` (see :data:`METHODS`)."""
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}: use one of {list(METHODS)}") from None


register(Method("upu", "uPU", "unbiased PU risk (Eq. 8)", color="#7f7f7f",
                risk=lambda b: upu_risk(b.g_p, b.g_u, b.prior, b.config.loss)))
register(Method("nnpu", "nnPU", "non-negative PU risk (Eq. 9, Kiryo et al.)", color="#1f77b4",
                risk=lambda b: nnpu_risk(b.g_p, b.g_u, b.prior, b.config.loss, b.config.beta,
                                         b.config.gamma, b.config.correction),
                source="the paper's baseline; Kiryo et al.: kiryor/nnPUlearning train.py L43–47, "
                       "pu_loss.py L48–53 (bb49475)",
                departures=(("the logistic loss, the paper's; Kiryo et al.'s default is the sigmoid",
                             "the paper trains both methods with it; nnPU (sigmoid) is the authors' own"),
                            ("Adam and the page's schedule, not Kiryo et al.'s optimiser",
                             "the paper's settings for every method, so that only the risk differs"))))
register(Method("nnpu_sigmoid", "nnPU (sigmoid)",
                "nnPU with the sigmoid loss, Kiryo et al.'s default (whatever the config's loss)",
                color="#aec7e8", risk=lambda b: nnpu_risk(b.g_p, b.g_u, b.prior, "sigmoid",
                                                          b.config.beta, b.config.gamma),
                source="kiryor/nnPUlearning train.py L43–47, pu_loss.py L48–53 (bb49475)",
                departures=(("Adam and the page's schedule, not Kiryo et al.'s optimiser",
                             "the comparison page's, as for every method here"),)))
register(Method("aapu", "aaPU", "nnPU whose positive risk also counts S (§3.3)", color="#d62728",
                risk=lambda b: aapu_risk(b.g_p, b.g_u, b.g_s, b.prior, b.config.loss, b.config.beta,
                                         b.config.gamma, b.s_mask, b.config.s_weight,
                                         b.config.correction),
                selects=True, end_epoch=grow_selection, before_selection="nnpu",
                source="the paper: §3.3 and its Algorithm 1; no public code",
                departures=(("max(0, ·) read as Kiryo et al.'s rule: a negative R̂_n steps on −γ∇R̂_n",
                             "the paper builds on nnPU; read as a plain clamp it changes nnPU's rule "
                             "too — the readings page and the clamp records judge both"),)))
register(Method("naive", "S added to P everywhere",
                "ablation: S added to the labelled positives everywhere", color="#9467bd",
                risk=lambda b: naive_risk(b.g_p, b.g_u, b.g_s, b.prior, b.config.loss,
                                          b.config.beta, b.config.gamma, b.s_mask),
                selects=True, end_epoch=grow_selection, before_selection="nnpu", usable=False))
register(Method("pn", "PN", "supervised risk on ±1 labels (Eq. 1): P = +1, the U slot = −1",
                color="#17becf", risk=lambda b: pn_risk(b.g_p, b.g_u, b.prior, b.config.loss),
                supervised=True, usable=False))


def usable_methods() -> list[str]:
    """The methods one can train on one's own PU data (no ablations, counterfactuals or PN)."""
    return [name for name, m in METHODS.items() if m.usable]
