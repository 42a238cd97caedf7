"""Each risk's value and gradient against a hand computation on tiny tensors."""
import math

import pytest
import torch

from pusupport.losses import get_loss, logistic_loss, sigmoid_loss
from pusupport.risks import aapu_risk, naive_risk, nnpu_risk, pn_risk, upu_risk

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
