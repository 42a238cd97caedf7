"""Today's PU methods beside the paper's: each checked against its published formula on
tiny tensors (values worked out by hand), then trained single and stacked (float64)."""
import math

import pandas as pd
import pytest
import torch

from pusupport.core.baselines.nnpusb import quantile_threshold
from pusupport.core.baselines.vpu import half_max_threshold, mixup_penalty, variational_loss
from pusupport.core.methods import get_method
from pusupport.core.training import train, train_seeds
from pusupport.data import synthetic

SEEDS = [0, 1, 2]
CFG = dict(epochs=5, batch_size=64, lr=3e-3, lr_schedule={}, progress=False)


def data(seed, prior=None):
    d = synthetic(seed, n_labeled=40, n_unlabeled=300, n_test=500)
    return d if prior is None else d.__class__(**{**d.__dict__, "prior": prior})


def test_nnpusb_calls_a_fraction_pi_of_u_positive():
    """Scores −2…7 with π = 0.3: the threshold is U's 0.7-quantile, 4.3, and exactly the
    three scores 5, 6, 7 lie above it."""
    g_u = torch.arange(-2.0, 8.0)[None]
    theta = quantile_threshold(None, g_u, 0.3)
    assert theta.tolist() == pytest.approx([4.3]) and int((g_u > theta[:, None]).sum()) == 3
    two = quantile_threshold(None, torch.stack([g_u[0], g_u[0] + 1]), torch.tensor([0.3, 0.5]))
    assert two.tolist() == pytest.approx([4.3, 3.5])                  # one π per member


def test_vpu_variational_loss_by_hand():
    """φ_P = [0.8, 0.4], φ_U = [0.2, 0.6]: log 0.4 − ½(log 0.8 + log 0.4) = −½ ln 2; adding
    a constant to every log φ leaves it unchanged."""
    log_p, log_u = torch.tensor([[0.8, 0.4]]).log(), torch.tensor([[0.2, 0.6]]).log()
    assert variational_loss(log_p, log_u).item() == pytest.approx(-0.5 * math.log(2), abs=1e-7)
    assert variational_loss(log_p - 2.5, log_u - 2.5).item() == pytest.approx(-0.5 * math.log(2),
                                                                            abs=1e-6)


def test_vpu_mixup_penalty_and_threshold_by_hand():
    """μ = ½, φ(x_u) = 0.2: the target is log(0.1 + 0.5) = log 0.6; a mix scored φ = 0.3
    costs (log 0.6 − log 0.3)² = (ln 2)². The threshold: φ / max φ > ½."""
    penalty = mixup_penalty(torch.tensor([[0.2]]).log(), torch.tensor([[0.3]]).log(),
                            torch.tensor([0.5]))
    assert penalty.item() == pytest.approx(math.log(2) ** 2, rel=1e-6)
    g_p, g_u = torch.tensor([[2.0]]), torch.tensor([[-1.0, 0.0, 1.0]])
    theta = half_max_threshold(g_p, g_u)
    phi_max = torch.sigmoid(torch.tensor(2.0))
    assert torch.sigmoid(theta).item() == pytest.approx(phi_max.item() / 2, rel=1e-6)
    assert ((g_u > theta[:, None]) == (torch.sigmoid(g_u) / phi_max > 0.5)).all()


STACKING = {**CFG, "epochs": 6, "select_from": 3, "n_select": 5}


@pytest.mark.usefixtures("float64")
@pytest.mark.parametrize("method", ["nnpu_sigmoid", "nnpusb", "vpu", "distpu", "robustpu",
                                    "aapu_oracle", "negsel"])
def test_stacked_runs_equal_single_runs(method):
    assert get_method(method).stacks
    together = train_seeds(data, SEEDS, method=method, **STACKING)
    cols = ["risk", "risk_positive", "risk_negative", "test_error", "test_auc", "n_selected"]
    for seed, stacked in zip(SEEDS, together):
        single = train(data(seed), seed=seed, method=method, **STACKING)
        pd.testing.assert_frame_equal(stacked.history[cols], single.history[cols], atol=1e-9, rtol=1e-9)
        assert stacked.threshold == pytest.approx(single.threshold, abs=1e-9)
        assert stacked.history.test_error.iloc[-1] < 0.4                   # it learned


def test_nnpu_sigmoid_is_nnpu_with_the_sigmoid_loss():
    a = train(data(0), method="nnpu_sigmoid", **CFG)
    b = train(data(0), method="nnpu", loss="sigmoid", **CFG)
    views = [c for c in b.history if ":" in c]                    # nnPU's run also gives nnPUSB's
    common = [c for c in a.history if ":" in c]                   # every run: the common threshold
    assert len(views) == 4 and common == ["test_error:nnpusb", "test_wrong:nnpusb"]
    pd.testing.assert_frame_equal(a.history.drop(columns=["method", "wall_time", *common]),
                                  b.history.drop(columns=["method", "wall_time", *views]))
    pd.testing.assert_frame_equal(a.history[common], b.history[common])


def test_vpu_never_reads_the_prior():
    assert not get_method("vpu").needs_prior and get_method("nnpusb").needs_prior
    a = train(data(0, prior=0.2), method="vpu", **CFG)
    b = train(data(0, prior=0.7), method="vpu", **CFG)
    pd.testing.assert_frame_equal(a.history.drop(columns="wall_time"), b.history.drop(columns="wall_time"))


@pytest.mark.usefixtures("float64")
def test_the_threshold_decides_the_test_error():
    """nnPUSB's error counts g > θ as positive, θ from the training U alone."""
    run = train(data(0), method="nnpusb", **CFG)
    d = data(0)
    from pusupport.core.models import predict
    g = predict(run.model, d.x_test)
    expected = float(((g > run.threshold) != (d.y_test > 0)).double().mean())
    assert run.history.test_error.iloc[-1] == pytest.approx(expected, abs=1e-12)
    assert run.threshold != 0.0


@pytest.mark.usefixtures("float64")
def test_nnpusb_as_its_authors_place_it_reads_the_test_inputs_not_their_labels():
    """The second view of nnPU's run: θ at the test inputs' (1 − π)-quantile. With the test
    labels flipped the run and θ are the same, so every call is judged the other way."""
    from dataclasses import replace
    from pusupport.core.methods import view_column
    from pusupport.core.models import predict
    d = data(0)
    run = train(d, method="nnpu", **CFG)
    g = predict(run.model, d.x_test)
    expected = float(((g > torch.quantile(g, 1 - d.prior)) != (d.y_test > 0)).double().mean())
    assert run.history[view_column("nnpusb_test")].iloc[-1] == pytest.approx(expected, abs=1e-12)
    flipped = train(replace(d, y_test=-d.y_test), method="nnpu", **CFG)
    assert flipped.history[view_column("nnpusb_test")].iloc[-1] == pytest.approx(1 - expected, abs=1e-12)
    assert not get_method("nnpusb_test").usable                      # a view, not a method to train


@pytest.mark.usefixtures("float64")
@pytest.mark.parametrize("stacked", [False, True])
def test_nnpusb_is_nnpus_run_at_its_own_threshold(stacked):
    """nnPUSB trains exactly as nnPU; every nnPU run records its final test error at
    nnPUSB's threshold, equal to nnPUSB's own run's (single and stacked)."""
    from pusupport.core.methods import view_column
    runs = {m: ([train(data(s), method=m, seed=s, **CFG) for s in SEEDS] if not stacked else
                train_seeds(data, SEEDS, method=m, **CFG)) for m in ("nnpu", "nnpusb")}
    for nnpu, nnpusb in zip(runs["nnpu"], runs["nnpusb"]):
        a, b = nnpu.history, nnpusb.history
        assert a[view_column("nnpusb")].iloc[:-1].isna().all()
        assert a[view_column("nnpusb")].iloc[-1] == pytest.approx(b.test_error.iloc[-1], abs=1e-12)
        for column in ("risk", "test_auc", "test_ap"):
            assert a[column].tolist() == pytest.approx(b[column].tolist(), abs=1e-12)
        assert (a.test_error != b.test_error).any()          # the thresholds differ
        assert view_column("nnpusb") not in b                # a view has no views


def test_oracle_aapu_selects_only_true_positives():
    run = train(data(0), method="aapu_oracle", **{**STACKING, "allow_repick": False})
    assert len(run.selected) == 20 and run.selected.purity == 1.0
    assert (run.picks.true_label > 0).all()


def test_the_oracle_hook_passes_over_the_largest_loss_negatives():
    """U losses [9, 8, 1, 7, 2] with true labels [−, +, −, +, +]: aaPU takes 0 and 1; the
    oracle takes the largest-loss true positives, 1 and 3."""
    from pusupport.core.baselines.oracle import grow_from_true_positives
    from pusupport.core.config import TrainConfig
    from pusupport.core.methods import EpochEnd
    from pusupport.core.selection import SelectedSet
    truth = torch.tensor([-1, 1, -1, 1, 1])
    losses = torch.tensor([[9.0, 8.0, 1.0, 7.0, 2.0]])
    cfg = TrainConfig(method="aapu_oracle", epochs=3, select_from=1, n_select=2)
    oracle, plain = SelectedSet(5, true_labels=truth), SelectedSet(5, true_labels=truth)
    grow_from_true_positives(EpochEnd(1, cfg, [oracle], {}, lambda: losses))
    plain.update(losses[0], 2, 1)
    assert oracle.indices.tolist() == [1, 3] and plain.indices.tolist() == [0, 1]


def softplus(z):
    return math.log1p(math.exp(z))


@pytest.mark.parametrize("g_p, corrected", [([-2.0, -3.0], False), ([3.0, 2.0], True)])
def test_negative_selection_value_and_gradient_by_hand(g_p, corrected):
    """π = 0.4, U scores [−2, −3, −1], N = {U's second point, g = −3}: R̂_p = π·mean_P ℓ(g)
    + ℓ(3)/3 and R̂_n = mean_U ℓ(−g) − π·mean_P ℓ(−g) with ℓ(z) = ln(1 + e^−z). N's
    gradient is σ(−3)/3 in the plain branch and 0 when the rule corrects (R̂_n < 0)."""
    from pusupport.core.risks import negative_selection_risk, nnpu_risk
    g_u = [-2.0, -3.0, -1.0]
    gp, gu, gn = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (g_p, g_u, [-3.0]))
    r = negative_selection_risk(gp, gu, gn, 0.4)
    r_p = 0.4 * sum(softplus(-g) for g in g_p) / 2 + softplus(-3.0) / 3
    r_n = sum(softplus(g) for g in g_u) / 3 - 0.4 * sum(softplus(g) for g in g_p) / 2
    assert bool(r.corrected) == corrected == (r_n < 0)
    assert float(r.positive) == pytest.approx(r_p, abs=1e-12)
    assert float(r.negative) == pytest.approx(r_n, abs=1e-12)
    r.objective.backward()
    expected = 0.0 if corrected else 1 / (1 + math.exp(3.0)) / 3
    assert gn.grad.tolist() == pytest.approx([expected], abs=1e-12)
    empty = negative_selection_risk(gp.detach(), gu.detach(), gn.detach()[:0], 0.4)
    assert float(empty.value) == float(nnpu_risk(gp.detach(), gu.detach(), 0.4).value)


def test_negative_selection_takes_the_smallest_scored_losses():
    """U losses [9, 8, 1, 7, 2, −inf (unscored)]: negative selection takes 2 and 4, never
    the unscored row; aaPU's hook would take 0 and 1."""
    from pusupport.core.baselines.negsel import grow_negatives
    from pusupport.core.config import TrainConfig
    from pusupport.core.methods import EpochEnd
    from pusupport.core.selection import SelectedSet
    losses = torch.tensor([[9.0, 8.0, 1.0, 7.0, 2.0, -math.inf]])
    cfg = TrainConfig(method="negsel", epochs=3, select_from=1, n_select=2)
    chosen = SelectedSet(6, true_labels=torch.tensor([1, 1, -1, 1, -1, -1]))
    grow_negatives(EpochEnd(1, cfg, [chosen], {}, lambda: losses))
    assert chosen.indices.tolist() == [2, 4] and chosen.purity == 0.0
    assert [p["loss"] for p in chosen.picks] == [1.0, 2.0]
    from pusupport.core.methods import grow_selection
    aapu = SelectedSet(6, true_labels=torch.tensor([1, 1, -1, 1, -1, -1]))
    grow_selection(EpochEnd(1, cfg, [aapu], {}, lambda: losses))
    assert aapu.indices.tolist() == [0, 1]


def adam_steps(monkeypatch) -> list:
    """Each optimiser step's (rate, weight decay, the steps its moments had seen), as Adam
    takes them from here on."""
    seen = []

    class Spy(torch.optim.Adam):
        def step(self, *args, **kwargs):
            group = self.param_groups[0]
            first = group["params"][0]
            seen.append((group["lr"], group["weight_decay"],
                         int(self.state[first]["step"]) if first in self.state else 0))
            return super().step(*args, **kwargs)

    monkeypatch.setattr(torch.optim, "Adam", Spy)
    return seen


def test_robust_pu_welsch_weight_and_schedule_by_hand():
    from pusupport.core.baselines.robustpu import lam_at, welsch
    assert welsch(torch.tensor(math.log(2)), 1.0).item() == pytest.approx(0.5)
    assert welsch(torch.tensor(0.0), 0.1).item() == 1.0                 # an easy point keeps weight 1
    assert [lam_at(e) for e in (0, 5, 10, 30)] == pytest.approx([0.1, 1.05, 2.0, 2.0])


def test_robust_pu_warms_up_as_nnpu_then_weighs():
    cols = ["risk", "risk_positive", "risk_negative", "test_error", "test_auc"]
    robust = train(data(0), seed=0, method="robustpu", **STACKING).history
    warm = train(data(0), seed=0, method="nnpu_sigmoid", **STACKING).history
    pd.testing.assert_frame_equal(robust[cols].iloc[:2], warm[cols].iloc[:2])   # epochs 1–2: nnPU
    assert not robust.risk.iloc[2:].equals(warm.risk.iloc[2:])


def test_robust_pu_stops_as_its_authors_do_by_hand():
    """A value below every earlier one is the best; five values after it without a lower one
    end the run and the best is restored (an equal value is no improvement); a run that
    never stops restores its lowest."""
    from pusupport.core.baselines.robustpu import stop
    assert stop([5, 4, 3, 3.5, 3.2, 3.1, 3.0, 3.05, 2.0]) == 2       # 2.0 comes after the stop
    assert stop([5, 4, 3, 3.5, 3.2, 3.1, 3.0, 2.0]) == 7             # a lower value in time
    assert stop([2, 2, 2, 2, 2, 2, 1]) == 0
    assert stop([3, 2, 1]) == 2


def test_robust_pu_starts_a_fresh_adam_each_weighted_epoch_at_its_authors_rate(monkeypatch):
    """6 epochs, the first weighted one the third: the page's Adam (3e-3) through the
    warm-up, then each episode a fresh Adam at 1e-4 without weight decay."""
    seen = adam_steps(monkeypatch)
    train(data(0), seed=0, method="robustpu", **{**STACKING, "batch_size": 400, "weight_decay": 1e-3})
    assert seen == [(3e-3, 1e-3, 0), (3e-3, 1e-3, 1)] + [(1e-4, 0.0, 0)] * 4


@pytest.mark.usefixtures("float64")
def test_robust_pu_reports_the_model_its_stop_restores_with_every_view():
    """With a held-out PU split, its criterion is scored after each weighted epoch only (none
    in the warm-up) and its own choice is the stop's epoch; that row holds the common
    threshold's error and its per-point errors, as a last epoch does. A method without a
    stop keeps them at its last epoch alone."""
    from pusupport.core.baselines.robustpu import stop
    from pusupport.core.evaluation import at_own_choice
    from pusupport.core.problem import hold_out
    d = hold_out(data(0), 1 / 12, 0)
    run = {**STACKING, "epochs": 12, "eval_every": 1}
    h, nnpu = (train(d, seed=0, method=m, **run) for m in ("robustpu", "nnpu"))
    h = h.history
    assert h.val_risk.isna().tolist() == [True, True] + [False] * 10       # weighted from epoch 3
    chosen = at_own_choice(h)
    assert chosen.epoch.item() == 3 + stop(h.val_risk.dropna().to_numpy())
    assert chosen[["test_error:nnpusb", "test_wrong", "test_wrong:nnpusb"]].notna().all(axis=None)
    assert h["test_error:nnpusb"].notna().all()                       # at every evaluation
    assert nnpu.history["test_error:nnpusb"].notna().tolist() == [False] * 11 + [True]


def test_dist_pu_alignment_and_entropy_by_hand():
    """π = 0.4, s_P = [0.9, 0.7], s_U = [0.2, 0.4]: (1 − 0.8) + |0.3 − 0.4|/0.8 = 0.325."""
    from pusupport.core.baselines.distpu import alignment, entropy
    value = alignment(torch.tensor([[0.9, 0.7]]), torch.tensor([[0.2, 0.4]]), 0.4)
    assert value.item() == pytest.approx(0.325, abs=1e-6)
    assert entropy(torch.tensor([[0.5, 0.5]])).item() == pytest.approx(math.log(2))


def test_dist_pu_adds_its_mixup_stage_after_the_first():
    h = train(data(0), seed=0, method="distpu", **STACKING).history
    b = STACKING["epochs"] // 2                                     # the authors' 60 + 60
    assert (h.risk_negative.iloc[:b] > 0).all()                     # U's entropy alone
    assert (h.risk_negative.iloc[b:] > h.risk_negative.iloc[b - 1]).all()   # + MixUp BCE


def test_dist_pus_second_stage_starts_a_fresh_adam_at_its_own_rates(monkeypatch):
    """6 epochs: 3 of warm-up (Adam at 5e-4, decay 5e-3, a cosine to 0), then a fresh Adam at
    5e-5 (decay 1e-3, a cosine to 3.5e-5): its first step finds no moments."""
    from pusupport.core.baselines.distpu import cosine
    seen = adam_steps(monkeypatch)
    d = data(0)
    train(d, seed=0, method="distpu", **{**STACKING, "batch_size": 400})   # one step an epoch
    assert [round(lr, 12) for lr, _, _ in seen] == [round(x, 12) for x in (
        5e-4, cosine(5e-4, 0, 1, 3), cosine(5e-4, 0, 2, 3), 5e-5, cosine(5e-5, 3.5e-5, 1, 3),
        cosine(5e-5, 3.5e-5, 2, 3))]
    assert [wd for _, wd, _ in seen] == [5e-3] * 3 + [1e-3] * 3
    assert [steps for _, _, steps in seen] == [0, 1, 2, 0, 1, 2]          # moments reset


@pytest.mark.parametrize("method", ["vpu", "distpu", "robustpu"])
def test_a_resumed_run_draws_and_weighs_as_an_uninterrupted_one(method, tmp_path, monkeypatch):
    from pusupport.core import checkpoint
    cfg = {**CFG, "epochs": 6, "select_from": 3, "method": method, "checkpoint_every": 3}
    whole = train(data(1), seed=1, **cfg)
    save = checkpoint.save

    def crash(path, state):                         # dies after the epoch-3 checkpoint
        save(path, state)
        raise KeyboardInterrupt

    monkeypatch.setattr(checkpoint, "save", crash)
    with pytest.raises(KeyboardInterrupt):
        train(data(1), seed=1, checkpoint_dir=str(tmp_path), **cfg)
    monkeypatch.setattr(checkpoint, "save", save)
    resumed = train(data(1), seed=1, checkpoint_dir=str(tmp_path), **cfg)
    pd.testing.assert_frame_equal(resumed.history.drop(columns="wall_time"),
                                  whole.history.drop(columns="wall_time"))


def test_robust_pu_weighs_p_and_u_as_its_authors_1_to_2_batches_by_hand():
    """A batch of 3 P and 30 U rows (the data's 1 : 10), every weight 1: the loss is
    ⅓·mean_P ℓ(g) + ⅔·mean_U ℓ(−g) — P's rows carry half U's total weight, as in the
    authors' 2,000 : 4,000 — and with class_ratio None the plain mean over the 33 rows."""
    from pusupport.core.baselines.robustpu import robust_risk
    from pusupport.core.config import TrainConfig
    from pusupport.core.losses import logistic_loss
    from pusupport.core.methods import Batch
    g_p = torch.tensor([[0.5, -1.0, 2.0]], dtype=torch.float64, requires_grad=True)
    g_u = torch.linspace(-2, 2, 30, dtype=torch.float64)[None].requires_grad_()
    state = {"weighting": torch.ones(1, dtype=torch.int64), "lam": torch.full((1,), 1e6),
             "w_u": torch.ones(1, 30, dtype=torch.float64)}      # λ → ∞: every Welsch weight 1

    def risk(**own):
        cfg = TrainConfig(method="robustpu", method_settings=own)
        return robust_risk(Batch(g_p, g_u, g_u[:, :0], None, 0.4, cfg,
                                 torch.arange(30)[None], state, None, None))

    lp, lu = logistic_loss(g_p.detach()), logistic_loss(-g_u.detach())
    balanced = risk()
    assert balanced.value.item() == pytest.approx(lp.mean().item() / 3 + 2 * lu.mean().item() / 3)
    balanced.objective.sum().backward()
    d_p, d_u = g_p.grad.abs().sum() / lp.new_tensor(1), g_u.grad.abs().sum()
    # ∂/∂ℓ of the loss per row: ⅓/3 for P, ⅔/30 for U — total P weight : total U weight = 1 : 2
    sig = torch.sigmoid
    assert d_p.item() == pytest.approx((sig(-g_p.detach()).sum() / 9).item())
    assert d_u.item() == pytest.approx((sig(g_u.detach()).sum() * 2 / 90).item())
    assert risk(class_ratio=None).value.item() == pytest.approx(
        (lp.sum().item() + lu.sum().item()) / 33)


def test_robust_pu_trains_its_warm_up_then_at_most_its_authors_episodes():
    from pusupport.book.plan import RunSpec
    from pusupport.core.config import TrainConfig
    page = TrainConfig(method="nnpu", epochs=1000, select_from=200)
    assert RunSpec("robustpu", "robustpu").train(page).epochs == 299
    assert RunSpec("r", "robustpu", {"train": {"method_settings": {"episodes": 5}}}).train(page).epochs == 204
    short = TrainConfig(method="nnpu", epochs=50, select_from=20)
    assert RunSpec("robustpu", "robustpu").train(short).epochs == 50       # never more than the page's
    assert RunSpec("vpu", "vpu").train(page).epochs == 1000               # no recipe: the page's


def test_a_method_owns_its_settings_and_a_wrong_one_names_the_valid_keys():
    from pusupport.core.config import ConfigError, TrainConfig
    from pusupport.book.store import run_key
    vpu = TrainConfig(method="vpu", method_settings={"lam": 0.3})
    assert (vpu.own.lam, vpu.own.alpha) == (0.3, 0.3)
    assert TrainConfig(method="vpu").own.lam == 0.03 and TrainConfig(method="nnpu").own is None
    with pytest.raises(ConfigError, match=r"\['alpha', 'lam'\]"):
        TrainConfig(method="vpu", method_settings={"lamda": 0.3})
    with pytest.raises(ValueError, match="nnpu has no settings of its own"):
        TrainConfig(method="nnpu", method_settings={"lam": 0.3})
    d = [data(0)]
    assert run_key(vpu, [0], d, False) != run_key(TrainConfig(method="vpu"), [0], d, False)


def test_the_standing_page_gives_vpu_its_authors_lambda_where_they_give_one():
    from pusupport.book.experiments.standing import plan
    from pusupport.book.pages import resolve_page
    page = resolve_page("standing", output_dir="unused", profile="paper", seeds=None, device="cpu",
                        data_dir=None, dry_run=0, checkpoints=None, runner=None, compared=None)
    specs = {(s.dataset, s.method): s for s in plan(page.settings)}
    from pusupport.core.config import TrainConfig
    base = TrainConfig(method="nnpu")
    assert specs["fashion_mnist", "vpu"].train(base).own.lam == 0.3
    assert specs["synthetic", "vpu"].train(base).own.lam == 0.03


@pytest.mark.parametrize("method, bad, fix", [
    ("robustpu", {"class_ratio": (1, 0)}, "two positive numbers"),
    ("robustpu", {"episodes": 0}, "weighted epochs >= 1"),
    ("distpu", {"first_share": 1.0}, "strictly between 0 and 1"),
    ("distpu", {"alpha": 0.0}, "alpha > 0"),
    ("distpu", {"clip": -1.0}, "clip must be > 0"),
    ("distpu", {"entropy": -0.1}, "must be >= 0"),
    ("robustpu", {"lr": 0.0}, "rate > 0"),
    ("vpu", {"alpha": 0.0}, "alpha > 0")])
def test_a_methods_own_setting_out_of_range_names_the_fix(method, bad, fix):
    from pusupport.core.config import TrainConfig
    with pytest.raises(ValueError, match=fix):
        TrainConfig(method=method, method_settings=bad)
