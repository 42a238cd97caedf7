"""Each risk's value and gradient against a hand computation on tiny tensors."""
import math

import pytest
import torch

from pusupport.core.losses import get_loss, logistic_loss, sigmoid_loss
from pusupport.core.risks import aapu_risk, naive_risk, nnpu_risk, pn_risk, upu_risk

PRIOR = 0.4


def sig(x):
    return 1 / (1 + math.exp(-x))


def softplus(x):
    return math.log1p(math.exp(x))


# ℓ(z) and dℓ/dz written out by hand for each loss.
HAND = {
    "logistic": (lambda z: softplus(-z), lambda z: -sig(-z)),
    "sigmoid": (lambda z: sig(-z), lambda z: -sig(-z) * sig(z)),
}


def leaf(values):
    return torch.tensor(values, dtype=torch.float64, requires_grad=True)


def hand_parts(gp, gu, gs, loss, prior=PRIOR):
    """R̂_p, R̂_n and their gradients w.r.t. every score, by hand."""
    ell, d = HAND[loss]
    n_p, n_u = len(gp), len(gu)
    r_p = prior / n_p * (sum(ell(g) for g in gp) + sum(ell(g) for g in gs))
    r_n = sum(ell(-g) for g in gu) / n_u - prior / n_p * sum(ell(-g) for g in gp)
    # d ℓ(−g)/dg = −ℓ'(−g)
    grad_rp = ([prior / n_p * d(g) for g in gp], [0.0] * n_u, [prior / n_p * d(g) for g in gs])
    grad_rn = ([prior / n_p * d(-g) for g in gp], [-d(-g) / n_u for g in gu], [0.0] * len(gs))
    return r_p, r_n, grad_rp, grad_rn


def grads(risk, *tensors):
    risk.objective.sum().backward()
    return [t.grad.tolist() if t.grad is not None else [0.0] * len(t) for t in tensors]


def assert_close(got, want):
    assert got == pytest.approx(want, abs=1e-12)


# Scores where R̂_n ≥ 0 (plain branch) and where R̂_n < 0 (nnPU correction).
PLAIN = ([0.5, -1.0], [0.2, -0.3, 1.5])
NEGATIVE = ([3.0, 2.0], [-4.0, -3.0, -5.0])


@pytest.mark.parametrize("loss", ["logistic", "sigmoid"])
def test_upu_value_and_gradient(loss):
    gp, gu = leaf(PLAIN[0]), leaf(PLAIN[1])
    r = upu_risk(gp, gu, PRIOR, loss)
    r_p, r_n, (dp_p, du_p, _), (dp_n, du_n, _) = hand_parts(PLAIN[0], PLAIN[1], [], loss)
    assert_close(float(r.value), r_p + r_n)
    assert_close(float(r.positive), r_p)
    assert_close(float(r.negative), r_n)
    g_p, g_u = grads(r, gp, gu)
    assert_close(g_p, [a + b for a, b in zip(dp_p, dp_n)])
    assert_close(g_u, [a + b for a, b in zip(du_p, du_n)])


def test_upu_negative_risk_can_go_below_zero():
    r = upu_risk(leaf(NEGATIVE[0]), leaf(NEGATIVE[1]), PRIOR, "logistic")
    assert float(r.negative) < 0 and not bool(r.corrected)


@pytest.mark.parametrize("loss", ["logistic", "sigmoid"])
@pytest.mark.parametrize("beta", [0.0, 0.01])
def test_nnpu_plain_branch(loss, beta):
    gp, gu = leaf(PLAIN[0]), leaf(PLAIN[1])
    r = nnpu_risk(gp, gu, PRIOR, loss, beta=beta, gamma=0.5)
    r_p, r_n, (dp_p, du_p, _), (dp_n, du_n, _) = hand_parts(PLAIN[0], PLAIN[1], [], loss)
    assert r_n >= -beta and not bool(r.corrected)
    assert_close(float(r.value), r_p + r_n)
    g_p, g_u = grads(r, gp, gu)
    assert_close(g_p, [a + b for a, b in zip(dp_p, dp_n)])
    assert_close(g_u, [a + b for a, b in zip(du_p, du_n)])


@pytest.mark.parametrize("loss", ["logistic", "sigmoid"])
@pytest.mark.parametrize("beta,gamma", [(0.0, 1.0), (0.05, 1.0), (0.0, 0.3), (0.05, 0.3)])
def test_nnpu_corrected_branch_steps_on_minus_gamma_rn_only(loss, beta, gamma):
    gp, gu = leaf(NEGATIVE[0]), leaf(NEGATIVE[1])
    r = nnpu_risk(gp, gu, PRIOR, loss, beta=beta, gamma=gamma)
    r_p, r_n, _, (dp_n, du_n, _) = hand_parts(NEGATIVE[0], NEGATIVE[1], [], loss)
    assert r_n < -beta and bool(r.corrected)
    assert_close(float(r.value), r_p - beta)          # reported: R̂_p − β
    assert_close(float(r.objective.detach()), -gamma * r_n)    # differentiated: −γ·R̂_n
    g_p, g_u = grads(r, gp, gu)
    assert_close(g_p, [-gamma * a for a in dp_n])     # no R̂_p gradient at all
    assert_close(g_u, [-gamma * a for a in du_n])


def test_nnpu_beta_keeps_plain_branch_when_rn_above_minus_beta():
    gp, gu = leaf(NEGATIVE[0]), leaf(NEGATIVE[1])
    r_p, r_n, *_ = hand_parts(NEGATIVE[0], NEGATIVE[1], [], "logistic")
    r = nnpu_risk(gp, gu, PRIOR, "logistic", beta=-r_n + 0.1)
    assert not bool(r.corrected)
    assert_close(float(r.value), r_p + r_n)


def test_nnpu_equals_upu_when_rn_is_non_negative():
    a = nnpu_risk(leaf(PLAIN[0]), leaf(PLAIN[1]), PRIOR, "sigmoid")
    b = upu_risk(leaf(PLAIN[0]), leaf(PLAIN[1]), PRIOR, "sigmoid")
    assert_close(float(a.value), float(b.value))


@pytest.mark.parametrize("scores", [PLAIN, NEGATIVE])
@pytest.mark.parametrize("loss", ["logistic", "sigmoid"])
def test_aapu_value_and_gradient(scores, loss):
    gs_values = [scores[1][1], 0.7]       # one point that is also in the U batch, one that is not
    gp, gu, gs = leaf(scores[0]), leaf(scores[1]), leaf(gs_values)
    r = aapu_risk(gp, gu, gs, PRIOR, loss)
    r_p, r_n, (dp_p, du_p, ds_p), (dp_n, du_n, ds_n) = hand_parts(scores[0], scores[1], gs_values, loss)
    assert_close(float(r.positive), r_p)
    assert_close(float(r.negative), r_n)
    g_p, g_u, g_s = grads(r, gp, gu, gs)
    if r_n >= 0:
        assert_close(float(r.value), r_p + r_n)
        assert_close(g_s, ds_p)
        assert_close(g_p, [a + b for a, b in zip(dp_p, dp_n)])
    else:   # corrected: S has no gradient, the correction uses P and U only
        assert_close(float(r.value), r_p)
        assert_close(g_s, [0.0, 0.0])
        assert_close(g_p, [-a for a in dp_n])
        assert_close(g_u, [-a for a in du_n])


@pytest.mark.parametrize("loss", ["logistic", "sigmoid"])
def test_the_literal_clamp_gives_s_its_gradient_on_a_corrected_batch(loss):
    """correction="clamp": on a batch whose R̂_n < 0 the objective is R̂_p + max(0, R̂_n) = R̂_p,
    so S and P keep R̂_p's gradient (π/n_p · ℓ'(g)) and U gets none; Kiryo's rule gives S none."""
    gs_values = [NEGATIVE[1][1], 0.7]
    gp, gu, gs = leaf(NEGATIVE[0]), leaf(NEGATIVE[1]), leaf(gs_values)
    r = aapu_risk(gp, gu, gs, PRIOR, loss, correction="clamp")
    r_p, r_n, (dp_p, du_p, ds_p), _ = hand_parts(NEGATIVE[0], NEGATIVE[1], gs_values, loss)
    assert r_n < 0 and bool(r.corrected)
    assert_close(float(r.value), r_p)
    assert_close(float(r.objective.detach()), r_p)
    g_p, g_u, g_s = grads(r, gp, gu, gs)
    assert_close(g_s, ds_p)
    assert all(abs(x) > 1e-3 for x in ds_p)
    assert_close(g_p, dp_p)
    assert_close(g_u, [0.0] * len(NEGATIVE[1]))
    kiryo = aapu_risk(leaf(NEGATIVE[0]), leaf(NEGATIVE[1]), gs := leaf(gs_values), PRIOR, loss)
    kiryo.objective.backward()
    assert_close(gs.grad.tolist(), [0.0, 0.0])
    plain = aapu_risk(leaf(PLAIN[0]), leaf(PLAIN[1]), leaf(gs_values), PRIOR, loss, correction="clamp")
    same = aapu_risk(leaf(PLAIN[0]), leaf(PLAIN[1]), leaf(gs_values), PRIOR, loss)
    assert_close(float(plain.objective.detach()), float(same.objective.detach()))   # R̂_n ≥ 0: one rule
    with pytest.raises(ValueError, match="correction must be one of"):
        aapu_risk(gp, gu, gs, PRIOR, loss, correction="max")


def test_moving_a_point_into_s_changes_only_the_positive_term():
    gp, gu = torch.tensor(PLAIN[0]), torch.tensor(PLAIN[1])
    base = aapu_risk(gp, gu, gu[:0], PRIOR)
    moved = aapu_risk(gp, gu, gu[2:3], PRIOR)           # U point 2 also joins S
    assert float(moved.negative) == pytest.approx(float(base.negative), abs=0)
    extra = PRIOR * float(logistic_loss(gu[2])) / len(gp)   # normalised by n_p, not n_p + |S|
    assert float(moved.positive) == pytest.approx(float(base.positive) + extra)
    nn = nnpu_risk(gp, gu, PRIOR)
    assert float(nn.value) == pytest.approx(float(base.value))


def test_s_never_enters_the_correction_term():
    gp, gu = leaf(NEGATIVE[0]), leaf(NEGATIVE[1])
    for gs in ([-9.0], [9.0], [0.0, 1.0, -2.0]):
        r = aapu_risk(gp, gu, torch.tensor(gs), PRIOR)
        assert float(r.negative) == pytest.approx(hand_parts(NEGATIVE[0], NEGATIVE[1], [], "logistic")[1])


def test_classic_port_bug_is_caught():
    """ℓ(g_u) in place of ℓ(−g_u) gives a value the hand computation rejects."""
    ell = get_loss("logistic")

    def buggy_negative(g_p, g_u, prior):
        return ell(g_u).mean() - prior * ell(-g_p).mean()

    gp, gu = torch.tensor(PLAIN[0]), torch.tensor(PLAIN[1])
    _, r_n, *_ = hand_parts(PLAIN[0], PLAIN[1], [], "logistic")
    assert float(nnpu_risk(gp, gu, PRIOR).negative) == pytest.approx(r_n, abs=1e-6)
    assert float(buggy_negative(gp, gu, PRIOR)) != pytest.approx(r_n, abs=1e-2)


def test_batched_leading_dimension_applies_the_rule_per_model():
    gp = torch.tensor([PLAIN[0], NEGATIVE[0]])
    gu = torch.tensor([PLAIN[1], NEGATIVE[1]])
    r = nnpu_risk(gp, gu, PRIOR)
    assert r.corrected.tolist() == [False, True]
    for k in range(2):
        single = nnpu_risk(gp[k], gu[k], PRIOR)
        assert float(r.value[k]) == pytest.approx(float(single.value))


def test_losses_are_stable_and_correct():
    z = torch.tensor([-1000.0, -1.0, 0.0, 2.0, 1000.0])
    assert torch.isfinite(logistic_loss(z)).all() and torch.isfinite(sigmoid_loss(z)).all()
    assert float(logistic_loss(torch.tensor(0.0))) == pytest.approx(math.log(2))
    assert float(sigmoid_loss(torch.tensor(2.0))) == pytest.approx(1 / (1 + math.e ** 2))
    assert float(logistic_loss(torch.tensor(-1000.0))) == pytest.approx(1000.0)


@pytest.mark.parametrize("prior", [0.0, 1.0, -0.1, 1.5, "0.4", None])
def test_bad_prior_is_rejected(prior):
    with pytest.raises(ValueError, match="class prior"):
        nnpu_risk(torch.zeros(2), torch.zeros(3), prior)


def test_bad_inputs_are_rejected():
    with pytest.raises(ValueError, match="P must not be empty"):
        nnpu_risk(torch.zeros(0), torch.zeros(3), PRIOR)
    with pytest.raises(ValueError, match="U must not be empty"):
        upu_risk(torch.zeros(2), torch.zeros(0), PRIOR)
    with pytest.raises(ValueError, match="unknown loss 'hinge'"):
        nnpu_risk(torch.zeros(2), torch.zeros(3), PRIOR, loss="hinge")
    with pytest.raises(ValueError, match="beta"):
        nnpu_risk(torch.zeros(2), torch.zeros(3), PRIOR, beta=-1)
    with pytest.raises(ValueError, match="gamma"):
        nnpu_risk(torch.zeros(2), torch.zeros(3), PRIOR, gamma=0)


@pytest.mark.parametrize("loss", ["logistic", "sigmoid"])
def test_pn_risk_value_and_gradient(loss):
    """Eq. 1: π·mean_P ℓ(g) + (1 − π)·mean_N ℓ(−g), on labelled positives and negatives."""
    ell, d = HAND[loss]
    gp, gn = leaf(PLAIN[0]), leaf(PLAIN[1])
    r = pn_risk(gp, gn, PRIOR, loss)
    want = PRIOR * sum(map(ell, PLAIN[0])) / 2 + (1 - PRIOR) * sum(ell(-g) for g in PLAIN[1]) / 3
    assert_close(float(r.value), want)
    assert_close(float(r.positive), PRIOR * sum(map(ell, PLAIN[0])) / 2)
    assert not bool(r.corrected)
    got_p, got_n = grads(r, gp, gn)
    assert_close(got_p, [PRIOR / 2 * d(g) for g in PLAIN[0]])
    assert_close(got_n, [-(1 - PRIOR) / 3 * d(-g) for g in PLAIN[1]])


@pytest.mark.parametrize("scores", [PLAIN, NEGATIVE])
def test_naive_risk_puts_s_into_the_correction_too(scores):
    """The ablation: nnPU with P ∪ S as the positives — S enters both terms, means over |P ∪ S|."""
    ell, _ = HAND["logistic"]
    gp, gu, gs = leaf(scores[0]), leaf(scores[1]), leaf([0.7])
    r = naive_risk(gp, gu, gs, PRIOR)
    ps = scores[0] + [0.7]
    r_p = PRIOR * sum(map(ell, ps)) / 3
    r_n = sum(ell(-g) for g in scores[1]) / 3 - PRIOR * sum(ell(-g) for g in ps) / 3
    assert_close(float(r.positive), r_p)
    assert_close(float(r.negative), r_n)
    assert_close(float(r.value), r_p + r_n if r_n >= 0 else r_p)
    aapu = aapu_risk(gp, gu, gs, PRIOR)
    assert float(aapu.negative) != pytest.approx(r_n)         # aaPU keeps S out of R̂_n


# Boundaries and messages a caller relies on, and the vectorised (leading-dimension) forms.

def test_nnpu_boundary_rn_exactly_minus_beta_is_not_corrected():
    """The correction applies only when R̂_n < −β strictly (R̂_n = −β keeps the plain step)."""
    gp, gu = leaf(NEGATIVE[0]), leaf(NEGATIVE[1])
    r_n = float(upu_risk(gp, gu, PRIOR, "logistic").negative)
    r = nnpu_risk(gp, gu, PRIOR, "logistic", beta=-r_n)
    assert not bool(r.corrected)
    assert float(r.value) == float(r.positive) + r_n
    assert bool(nnpu_risk(gp, gu, PRIOR, "logistic", beta=-r_n * (1 - 1e-9)).corrected)


def test_nnpu_default_beta_is_zero():
    """R̂_n slightly below zero (−0.44) is corrected with the default β = 0."""
    gp, gu = leaf([1.0]), leaf([-2.0, -3.0])
    r_n = hand_parts([1.0], [-2.0, -3.0], [], "logistic")[1]
    assert -1 < r_n < 0
    r = nnpu_risk(gp, gu, PRIOR)
    assert bool(r.corrected)
    assert_close(float(r.value), float(r.positive))


@pytest.mark.parametrize("gamma", [1.0 + 1e-9, 1.5, 2.0, -0.5])
def test_gamma_outside_zero_one_is_rejected(gamma):
    with pytest.raises(ValueError, match=r"gamma must be in \(0, 1\], got .* \(nnPU uses gamma=1\)"):
        nnpu_risk(torch.zeros(2), torch.zeros(3), PRIOR, gamma=gamma)


def test_beta_zero_and_gamma_one_are_accepted_but_negative_beta_is_not():
    r = nnpu_risk(leaf(PLAIN[0]), leaf(PLAIN[1]), PRIOR, beta=0.0, gamma=1.0)
    assert not bool(r.corrected)
    with pytest.raises(ValueError, match=r"beta must be >= 0, got -0.001 \(nnPU uses beta=0\)"):
        nnpu_risk(torch.zeros(2), torch.zeros(3), PRIOR, beta=-0.001)


def test_error_messages_are_exact():
    with pytest.raises(ValueError) as err:
        upu_risk(torch.zeros(2), torch.zeros(3), 1.5)
    assert str(err.value) == ("class prior must be a number in (0, 1), got 1.5: pass the "
                              "positive-class fraction of the unlabelled data (e.g. prior=0.4)")
    with pytest.raises(ValueError) as err:
        upu_risk(torch.zeros(0), torch.zeros(3), PRIOR)
    assert str(err.value) == "no labelled positive scores in the batch: P must not be empty"
    with pytest.raises(ValueError) as err:
        aapu_risk(torch.zeros(2), torch.zeros(0), torch.zeros(1), PRIOR)
    assert str(err.value) == "no unlabelled scores in the batch: U must not be empty"


def test_tensor_prior_gives_one_prior_per_member():
    gp = torch.tensor([PLAIN[0], PLAIN[0]], dtype=torch.float64)
    gu = torch.tensor([PLAIN[1], PLAIN[1]], dtype=torch.float64)
    r = upu_risk(gp, gu, torch.tensor([0.2, 0.6], dtype=torch.float64), "sigmoid")
    for k, prior in enumerate([0.2, 0.6]):
        r_p, r_n, *_ = hand_parts(PLAIN[0], PLAIN[1], [], "sigmoid", prior=prior)
        assert_close(float(r.value[k]), r_p + r_n)


@pytest.mark.parametrize("prior", [[0.0, 0.5], [0.5, 1.0], [0.5, 1.5], [-0.2, 0.5], [1.0, 1.0]])
def test_tensor_prior_outside_zero_one_is_rejected(prior):
    with pytest.raises(ValueError, match="class prior must be a number in"):
        upu_risk(torch.zeros(2, 2), torch.zeros(2, 3), torch.tensor(prior))


def test_integer_tensor_prior_is_rejected():
    with pytest.raises(ValueError, match="class prior"):
        upu_risk(torch.zeros(2), torch.zeros(3), torch.tensor(0))


@pytest.mark.parametrize("risk", ["upu", "nnpu", "pn", "aapu", "naive"])
def test_every_risk_is_evaluated_per_member_along_leading_dims(risk):
    """Shape (2, 3, n): each of the six members gives its own single-model risk."""
    fns = {"upu": lambda p, u, s: upu_risk(p, u, PRIOR), "nnpu": lambda p, u, s: nnpu_risk(p, u, PRIOR),
           "pn": lambda p, u, s: pn_risk(p, u, PRIOR), "aapu": lambda p, u, s: aapu_risk(p, u, s, PRIOR),
           "naive": lambda p, u, s: naive_risk(p, u, s, PRIOR, gamma=0.5)}
    members = [(PLAIN[0], PLAIN[1], [0.7]), (NEGATIVE[0], NEGATIVE[1], [-1.0]),
               ([0.1, 0.2], [0.3, 0.4, 0.5], [2.0]), ([-2.0, 1.0], [1.0, -1.0, 0.0], [0.0]),
               ([1.0, 1.0], [-1.0, -2.0, -3.0], [0.5]), ([0.0, -0.5], [0.5, 0.0, 2.0], [-0.5])]
    stack = [torch.tensor([[m[i] for m in members[:3]], [m[i] for m in members[3:]]],
                          dtype=torch.float64) for i in range(3)]
    r = fns[risk](*stack)
    assert r.value.shape == r.corrected.shape == (2, 3) and r.corrected.dtype == torch.bool
    for k, m in enumerate(members):
        one = fns[risk](*(torch.tensor(v, dtype=torch.float64) for v in m))
        for field in ("value", "objective", "positive", "negative", "corrected"):
            assert getattr(r, field)[k // 3, k % 3].tolist() == pytest.approx(getattr(one, field).tolist())


def test_unbiased_and_pn_risks_never_report_a_correction():
    for r in (upu_risk(leaf(NEGATIVE[0]), leaf(NEGATIVE[1]), PRIOR),
              pn_risk(leaf(NEGATIVE[0]), leaf(NEGATIVE[1]), PRIOR)):
        assert r.corrected.dtype == torch.bool and r.corrected.shape == () and not bool(r.corrected)


def test_pn_risk_defaults_to_logistic_loss_and_reports_its_negative_part():
    r = pn_risk(leaf(PLAIN[0]), leaf(PLAIN[1]), PRIOR)
    ell = HAND["logistic"][0]
    assert_close(float(r.negative), (1 - PRIOR) * sum(ell(-g) for g in PLAIN[1]) / 3)
    assert_close(float(r.value), float(pn_risk(leaf(PLAIN[0]), leaf(PLAIN[1]), PRIOR, "logistic").value))


def test_padded_s_entries_are_masked_out():
    """A padded S batch [s, pad] with mask [1, 0] gives the risk of S = [s] alone."""
    gp, gu = torch.tensor([PLAIN[0]] * 2), torch.tensor([PLAIN[1]] * 2)
    g_s = torch.tensor([[0.7, -3.0], [0.7, 0.2]])
    mask = torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    r = aapu_risk(gp, gu, g_s, PRIOR, s_mask=mask)
    assert float(r.positive[0]) == pytest.approx(float(aapu_risk(gp[0], gu[0], g_s[0, :1], PRIOR).positive))
    assert float(r.positive[1]) == pytest.approx(float(aapu_risk(gp[1], gu[1], g_s[1], PRIOR).positive))
    naive = naive_risk(gp, gu, g_s, PRIOR, s_mask=mask)
    for k, real in enumerate((g_s[0, :1], g_s[1])):
        alone = naive_risk(gp[k], gu[k], real, PRIOR)
        for field in ("value", "positive", "negative"):
            assert float(getattr(naive, field)[k]) == pytest.approx(float(getattr(alone, field)))


def test_naive_risk_passes_gamma_on():
    gp, gu, gs = leaf(NEGATIVE[0]), leaf(NEGATIVE[1]), leaf([0.7])
    r = naive_risk(gp, gu, gs, PRIOR, gamma=0.25)
    assert bool(r.corrected)
    assert_close(float(r.objective.detach()), -0.25 * float(r.negative))


def test_union_weighting_divides_p_and_s_by_their_joint_count():
    """The reading the paper does not take: π/(n_p + |S|)·Σ_{P∪S} ℓ(g), per member with padding."""
    ell = logistic_loss
    g_p, g_u, g_s = torch.tensor([0.5, -1.0]), torch.tensor([0.2, -0.3, 1.0]), torch.tensor([2.0])
    r = aapu_risk(g_p, g_u, g_s, 0.4, s_weight="union")
    want = 0.4 * (ell(g_p).sum() + ell(g_s).sum()) / 3
    assert float(r.positive) == pytest.approx(float(want))
    labeled = aapu_risk(g_p, g_u, g_s, 0.4)
    assert float(labeled.positive) == pytest.approx(float(want) * 3 / 2)
    assert float(r.negative) == pytest.approx(float(labeled.negative))      # S never in R̂_n
    # two members, the second's S padded to one real entry of two
    gs2 = torch.tensor([[2.0, 1.0], [2.0, 9.0]])
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    r2 = aapu_risk(torch.stack([g_p, g_p]), torch.stack([g_u, g_u]), gs2, 0.4, s_mask=mask,
                   s_weight="union")
    assert float(r2.positive[1]) == pytest.approx(float(want))
    assert float(r2.positive[0]) == pytest.approx(float(0.4 * (ell(g_p).sum() + ell(gs2[0]).sum()) / 4))
    with pytest.raises(ValueError, match="s_weight must be one of"):
        aapu_risk(g_p, g_u, g_s, 0.4, s_weight="mean")
