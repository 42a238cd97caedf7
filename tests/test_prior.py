"""Class-prior estimation: BBE and Elkan–Noto on mixtures with a known π."""
from dataclasses import replace

import pytest
import torch

from pusupport.apps.prior import (PriorEstimate, bbe_from_scores, combined, elkan_noto_from_scores,
                                  estimate_prior)


def mixture(prior, n_p=2000, n_u=4000, seed=0, gap=4.0):
    """P ~ N(+gap/2, 1)², N ~ N(−gap/2, 1)² in 2-D; U mixes them with weight π."""
    gen = torch.Generator().manual_seed(seed)
    x_p = torch.randn(n_p, 2, generator=gen) + gap / 2
    n_pos = int(round(prior * n_u))
    x_u = torch.cat([torch.randn(n_pos, 2, generator=gen) + gap / 2,
                     torch.randn(n_u - n_pos, 2, generator=gen) - gap / 2])
    return x_p, x_u


@pytest.mark.parametrize("prior", [0.2, 0.4, 0.6])
def test_bbe_on_known_mixtures_within_005(prior):
    x_p, x_u = mixture(prior)
    est = estimate_prior(x_p, x_u, model="mlp", epochs=5, device="cpu")
    bbe = est["BBE"]
    assert abs(bbe.estimate - prior) < 0.05, bbe
    assert bbe.low < prior < bbe.high and bbe.seconds > 0         # the interval covers the truth
    assert bbe.high - bbe.low < 0.3


def test_bbe_on_oracle_scores():
    """With the score x₁ itself, BBE finds the pure top bin."""
    x_p, x_u = mixture(0.3, seed=1)
    est = bbe_from_scores(x_p[:, 0] + x_p[:, 1], x_u[:, 0] + x_u[:, 1])
    assert abs(est.estimate - 0.3) < 0.03 and est.low < 0.3 < est.high


def test_bbe_counts_tied_scores_on_both_sides():
    """Hand-computed: P scores (2, 2, 0), U scores (2, 0, 0, 0, 0, 0, 0, 0). At t = 2,
    q_p = 2/3 and q_u = 1/8 (ties count as ≥ t on both sides), so π̂ = 3/16."""
    est = bbe_from_scores(torch.tensor([2.0, 2.0, 0.0]), torch.tensor([2.0] + [0.0] * 7), delta=0.9)
    assert est.estimate == pytest.approx(3 / 16)


def test_the_p_vs_u_classifier_is_scored_in_float32_whatever_it_trained_in(monkeypatch):
    """Trained under bfloat16 autocast, its scores still rank every held-out point apart:
    bfloat16's 8-bit mantissa would tie many at the top, where BBE reads."""
    import pusupport.apps.prior as prior_module
    seen = {}
    real = prior_module.bbe_from_scores
    monkeypatch.setattr(prior_module, "bbe_from_scores",
                        lambda g_p, g_u, delta: seen.update(g=torch.cat([g_p, g_u])) or real(g_p, g_u, delta))
    x_p, x_u = mixture(0.4, n_p=200, n_u=800)
    estimate_prior(x_p, x_u, model="mlp", epochs=2, device="cpu", autocast="bf16")
    assert seen["g"].dtype == torch.float32 and len(torch.unique(seen["g"])) == len(seen["g"]) == 500


def test_several_halvings_give_the_median_of_their_estimates():
    """``splits=3``: each estimate and each end of its interval is the median of those of the
    three halvings trained alone with seeds 5, 6 and 7; the seconds add up."""
    x_p, x_u = mixture(0.4, n_p=60, n_u=300)
    alone = [estimate_prior(x_p, x_u, model="mlp", epochs=2, device="cpu", seed=5 + i) for i in range(3)]
    together = estimate_prior(x_p, x_u, model="mlp", epochs=2, device="cpu", seed=5, splits=3)
    assert estimate_prior(x_p, x_u, model="mlp", epochs=2, device="cpu", seed=5, splits=1)["BBE"] == alone[0]["BBE"]
    for name, e in together.items():
        for end in ("estimate", "low", "high"):
            assert getattr(e, end) == sorted(getattr(a[name], end) for a in alone)[1]
        assert e.splits == 3
    halvings = [replace(a["BBE"], seconds=s) for a, s in zip(alone, (0.5, 1.25, 2.0))]
    assert combined(halvings).seconds == 3.75               # the seconds add up (not timed here)
    assert len({a["BBE"].estimate for a in alone}) > 1            # the halvings differ
    with pytest.raises(ValueError, match="splits=0: give the number of P-vs-U halvings"):
        estimate_prior(x_p, x_u, splits=0)


def test_several_halvings_show_a_bar_with_the_time_left(capsys, monkeypatch):
    """Halvings take a while on images (≈ 10 s each on one thread): a bar counts them, with
    the time left, where the classifier's config shows progress; one halving, or a config
    without progress (the tables' default), shows none."""
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    x_p, x_u = mixture(0.4, n_p=40, n_u=120)
    estimate_prior(x_p, x_u, model="mlp", epochs=1, device="cpu", splits=2, progress=True)
    shown = capsys.readouterr().err
    assert "π: P-vs-U halvings" in shown and "2/2" in shown and "<" in shown   # elapsed<left
    estimate_prior(x_p, x_u, model="mlp", epochs=1, device="cpu", splits=2)
    estimate_prior(x_p, x_u, model="mlp", epochs=1, device="cpu", progress=True)
    assert "halvings" not in capsys.readouterr().err


def test_a_halving_with_an_unusable_estimate_is_left_out_of_the_median():
    """A degenerate halving says nothing about π: the median is the others', the note says
    how many were left out; only if every halving is unusable is the estimate."""
    from pusupport.apps.prior import combined
    bad = PriorEstimate("BBE", 0.3, 0.1, 0.5, 1.0, note="degenerate", unusable=True)
    kept = combined([PriorEstimate("BBE", 0.4, 0.2, 0.6, 1.0), PriorEstimate("BBE", 0.5, 0.3, 0.7, 1.0), bad])
    assert (kept.estimate, kept.low, kept.high, kept.splits, kept.unusable, kept.seconds) == (
        pytest.approx(0.45), pytest.approx(0.25), pytest.approx(0.65), 2, False, 3.0)
    assert kept.note.startswith("1 of 3 halvings left out")
    lost = combined([bad, replace(bad, estimate=0.5)])
    assert lost.unusable and lost.estimate == pytest.approx(0.4) and lost.note == "degenerate"


def test_elkan_noto_recovers_the_prior_on_separable_scores():
    # A perfect P-vs-U posterior on positives is n_p / (n_p + n_u·π).
    n_p, n_u, prior = 1000, 4000, 0.25
    probs = torch.full((500,), n_p / (n_p + n_u * prior))
    assert elkan_noto_from_scores(probs, n_p, n_u).estimate == pytest.approx(prior)


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="shape \\(n,\\)"):
        bbe_from_scores(torch.zeros(5, 2), torch.zeros(5))
    with pytest.raises(ValueError, match="no positive scores"):
        bbe_from_scores(torch.zeros(0), torch.zeros(5))
    with pytest.raises(ValueError, match="NaN"):
        bbe_from_scores(torch.tensor([float("nan")]), torch.zeros(5))
    with pytest.raises(ValueError, match="at least two labelled positives"):
        estimate_prior(torch.zeros(1, 2), torch.zeros(10, 2))


def test_an_estimate_at_1_is_clipped_into_a_usable_prior_and_says_why():
    """A P-vs-U classifier that cannot tell P from U makes BBE return 1.0: not a prior."""
    same = torch.linspace(0, 1, 400)
    with pytest.warns(UserWarning, match="could not tell P from U.*Pass the prior yourself"):
        est = bbe_from_scores(same[::2], same[1::2])
    assert est.estimate == 0.99 and est.low <= est.estimate <= est.high <= 1.0
    assert "clipped to 0.99" in est.note
    with pytest.warns(UserWarning, match="near 0"):
        assert PriorEstimate("BBE", 0.0, 0.0, 0.02).estimate == 0.01
    assert PriorEstimate("BBE", 0.4, 0.3, 0.5).note == ""           # a usable estimate is kept


def test_a_degenerate_classifier_is_named():
    from pusupport.apps.prior import degenerate
    assert degenerate(torch.full((50,), 0.3)) == "its scores are constant (0.3): it learned nothing"
    assert degenerate(torch.linspace(0.1, 2, 50)) == "it calls every point positive"
    assert degenerate(torch.linspace(-2, 0, 50)) == "it calls every point negative"
    assert degenerate(torch.linspace(-1, 1, 50)) == ""
    assert degenerate(torch.zeros(0)) == ""


def test_estimates_from_a_degenerate_p_vs_u_classifier_say_so():
    x_p, x_u = mixture(0.4, n_p=40, n_u=80)
    with pytest.warns(UserWarning, match="degenerate .* says nothing about π"):
        est = estimate_prior(x_p, x_u, model="mlp", epochs=1, lr=1e-12, device="cpu")
    assert all("degenerate" in e.note for e in est.values())


def test_the_prior_page_says_where_a_wrong_prior_gives_the_lower_error_and_what_it_means():
    import pandas as pd
    from pusupport.book.experiments.prior import what_it_means
    rows = [(m, label, seed, err) for m, errs in (("aapu", (0.062, 0.074, 0.080)), ("nnpu", (0.070, 0.065, 0.071)))
            for label, err in zip(("×0.8", "×1", "×1.2"), errs) for seed in (0, 1)]
    history = pd.DataFrame(rows, columns=["method", "prior_label", "seed", "test_error"]).assign(epoch=300)
    text = what_it_means(history)
    assert "aaPU 0.0620 with π ×0.8 (0.0740 with the true π)" in text
    assert "nnPU 0.0650 with π ×1 (0.0650 with the true π)" in text
    assert "For aaPU a wrong π gives a lower error" in text and "threshold" in text
    history.loc[(history.method == "aapu") & (history.prior_label == "×1"), "test_error"] = 0.05
    assert "wrong π" not in what_it_means(history)
    history.loc[(history.method == "nnpu") & (history.prior_label == "×1.2"), "test_error"] = 0.01
    assert "For nnPU" in what_it_means(history) and "a larger π" in what_it_means(history)


def test_the_prior_reading_is_silent_where_there_is_nothing_to_read():
    import pandas as pd
    from pusupport.book.experiments.prior import what_it_means
    from pusupport.book.experiments.formulation import what_it_means as formulation_reading
    dry = pd.DataFrame({"method": ["aapu", "nnpu"], "prior_label": ["×1", "×1"], "seed": [0, 0],
                        "test_error": [0.1, float("nan")], "epoch": [20, 1]})
    assert what_it_means(dry) == ""
    assert formulation_reading({"methods": {"nnpu": {"test_error": {"mean": 0.1}}}}) == ""
