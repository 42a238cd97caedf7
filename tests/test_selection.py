"""aaPU selection (Algorithm 1, lines 7–9)."""
import math

import pytest
import torch
from torch import nn

from pusupport.core.selection import SelectedSet, top_k_purity, top_losses, unlabeled_losses


def test_picks_the_true_top_n():
    losses = torch.tensor([0.1, 0.9, 0.3, 0.8, 0.5])
    picked = top_losses(losses, 2, torch.ones(5, dtype=torch.bool))
    assert picked.tolist() == [1, 3]


def test_skips_labelled_positives():
    losses = torch.tensor([0.1, 0.9, 0.3, 0.8, 0.5])
    s = SelectedSet(5, labeled=torch.tensor([False, True, False, False, False]))
    assert s.update(losses, 2, epoch=1).tolist() == [3, 4]
    assert s.indices.tolist() == [3, 4]


def test_ties_are_broken_by_lower_index_deterministically():
    losses = torch.tensor([0.5, 0.7, 0.5, 0.7, 0.5, 0.5])
    for _ in range(3):
        assert top_losses(losses, 4, torch.ones(6, dtype=torch.bool)).tolist() == [1, 3, 0, 2]


def test_literal_rule_may_repick_so_s_grows_by_at_most_n():
    s = SelectedSet(6, true_labels=torch.tensor([1, -1, 1, 1, -1, -1]))
    losses = torch.tensor([0.9, 0.8, 0.1, 0.2, 0.3, 0.0])
    s.update(losses, 2, epoch=1)
    assert s.indices.tolist() == [0, 1]
    before = s.mask.clone()
    s.update(torch.tensor([0.9, 0.1, 0.1, 0.95, 0.3, 0.0]), 2, epoch=2)   # 0 again, 3 new
    assert s.indices.tolist() == [0, 1, 3]
    assert (s.mask | before).equal(s.mask)          # only grows
    assert s.purity == pytest.approx(2 / 3)
    picks = s.picks
    assert [(p["epoch"], p["index"], p["new"]) for p in picks] == [
        (1, 0, True), (1, 1, True), (2, 3, True), (2, 0, False)]
    assert [p["true_label"] for p in picks] == [1, -1, 1, 1]


def test_never_repick_variant_grows_by_exactly_n():
    s = SelectedSet(6, allow_repick=False)
    losses = torch.tensor([0.9, 0.8, 0.1, 0.2, 0.3, 0.0])
    sizes = []
    for epoch in range(1, 4):
        s.update(losses, 2, epoch)
        sizes.append(len(s))
    assert sizes == [2, 4, 6]
    assert s.update(losses, 2, 4).numel() == 0     # U exhausted: nothing left to add


def test_negative_n_select_is_rejected():
    with pytest.raises(ValueError, match="n_select"):
        top_losses(torch.zeros(3), -1, torch.ones(3, dtype=torch.bool))


class Spy(nn.Module):
    """Records the mode and grad state it is called in; BatchNorm makes modes differ."""

    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(1)
        self.calls = []

    def forward(self, x):
        self.calls.append((self.training, torch.is_grad_enabled()))
        return self.bn(x).squeeze(-1)


def test_scoring_runs_in_eval_mode_without_gradients_and_restores_mode():
    model = Spy().train()
    x = torch.randn(10, 1)
    losses = unlabeled_losses(model, x, "logistic", batch_size=4)
    assert model.calls == [(False, False)] * 3
    assert model.training
    g = model.bn.eval()(x).squeeze(-1)
    assert torch.allclose(losses, nn.functional.softplus(g))     # ℓ(−g) with logistic loss
    assert not losses.requires_grad


def test_sigmoid_scoring_is_selectable():
    model = Spy().eval()
    x = torch.randn(5, 1)
    assert torch.allclose(unlabeled_losses(model, x, "sigmoid"), torch.sigmoid(model(x)))


def test_nan_scores_raise():
    model = nn.Sequential(nn.Linear(1, 1), nn.Flatten(0))
    with pytest.raises(FloatingPointError, match="NaN"):
        unlabeled_losses(model, torch.tensor([[float("nan")]]))


def test_losses_default_to_the_logistic_loss_and_nan_message_is_exact():
    from pusupport.core.selection import negative_losses
    scores = torch.tensor([-2.0, 0.0, 3.0])
    assert torch.equal(negative_losses(scores), nn.functional.softplus(scores))
    model = nn.Sequential(nn.Linear(1, 1), nn.Flatten(0))
    x = torch.randn(7, 1)
    with torch.no_grad():
        assert torch.equal(unlabeled_losses(model, x), nn.functional.softplus(model(x)))
    with pytest.raises(FloatingPointError) as err:
        negative_losses(torch.tensor([0.0, float("nan")]))
    assert str(err.value) == ("the model produced NaN scores on U: training diverged — lower the "
                              "learning rate or check the inputs for NaN")


def test_scoring_defaults_to_4096_rows_at_a_time_in_full_precision():
    model = Spy().eval()
    sizes = []
    model.register_forward_pre_hook(lambda m, args: sizes.append(len(args[0])))
    x = torch.randn(4097, 1)
    unlabeled_losses(model, x)
    assert sizes == [4096, 1]
    lin = nn.Sequential(nn.Linear(3, 1), nn.Flatten(0))
    x = torch.randn(50, 3)
    with torch.no_grad():
        exact = nn.functional.softplus(lin(x))
    assert torch.equal(unlabeled_losses(lin, x), exact)                    # no bfloat16 autocast
    assert not torch.equal(unlabeled_losses(lin, x, amp=True), exact)      # amp is passed on


def test_zero_picks_nothing():
    assert top_losses(torch.tensor([0.3, 0.1]), 0, torch.ones(2, dtype=torch.bool)).tolist() == []
    s = SelectedSet(3)
    assert s.update(torch.tensor([0.3, 0.1, 0.2]), 0, epoch=1).tolist() == [] and len(s) == 0


def test_many_ties_keep_index_order():
    losses = torch.randint(0, 3, (200_000,), generator=torch.Generator().manual_seed(0)).float()
    picked = top_losses(losses, 100_000, torch.ones_like(losses, dtype=torch.bool))
    twos = (losses == 2).nonzero().reshape(-1)
    ones = (losses == 1).nonzero().reshape(-1)
    assert torch.equal(picked, torch.cat([twos, ones])[:100_000])


def test_ineligible_points_are_never_picked_even_with_too_few_eligible():
    losses = torch.tensor([float("-inf"), 5.0, 1.0, 2.0])
    eligible = torch.tensor([True, False, True, False])
    assert top_losses(losses, 3, eligible).tolist() == [2, 0]


def test_selected_set_lives_on_the_device_of_its_labelled_mask():
    s = SelectedSet(4, labeled=torch.zeros(4, dtype=torch.bool, device="meta"))
    assert s.mask.device.type == "meta" and s.labeled.device.type == "meta"
    fresh = SelectedSet(4)
    assert fresh.labeled.tolist() == [False] * 4 and fresh.mask.tolist() == [False] * 4
    assert math.isnan(fresh.purity)


def test_picks_record_rank_loss_and_unknown_labels():
    s = SelectedSet(4)
    s.update(torch.tensor([0.25, 0.75, 0.5, 0.0]), 2, epoch=3)
    assert s.picks == [{"epoch": 3, "rank": 0, "index": 1, "new": True, "loss": 0.75, "true_label": None},
                       {"epoch": 3, "rank": 1, "index": 2, "new": True, "loss": 0.5, "true_label": None}]
    assert math.isnan(s.purity)


def test_state_dict_round_trip_restores_s_and_its_log():
    s = SelectedSet(5, true_labels=torch.tensor([1, -1, 1, 1, -1]))
    s.update(torch.tensor([0.9, 0.8, 0.1, 0.2, 0.3]), 2, epoch=1)
    state = s.state_dict()
    assert set(state) == {"mask", "picks"} and state["mask"].tolist() == [True, True, False, False, False]
    s.update(torch.tensor([0.0, 0.0, 0.9, 0.0, 0.0]), 1, epoch=2)       # changes after saving
    assert state["mask"].tolist() == [True, True, False, False, False] and len(state["picks"]) == 2
    restored = SelectedSet(5, true_labels=torch.tensor([1, -1, 1, 1, -1]))
    restored.load_state_dict(state)
    assert restored.indices.tolist() == [0, 1] and restored.purity == 0.5
    assert restored.picks == state["picks"] and restored.picks is not state["picks"]
    restored.update(torch.tensor([0.0, 0.0, 0.0, 0.9, 0.0]), 1, epoch=2)
    assert len(state["picks"]) == 2 and restored.indices.tolist() == [0, 1, 3]


def test_state_is_loaded_onto_the_sets_device():
    s = SelectedSet(3, labeled=torch.zeros(3, dtype=torch.bool, device="meta"))
    s.load_state_dict({"mask": torch.tensor([True, False, False]), "picks": ()})
    assert s.mask.device.type == "meta" and s.picks == []


def test_top_k_purity():
    losses = torch.tensor([0.9, 0.8, 0.7, 0.1])
    labels = torch.tensor([1, -1, 1, 1])
    assert top_k_purity(losses, labels, 2) == 0.5
    assert top_k_purity(losses, labels, 3) == pytest.approx(2 / 3)
    assert top_k_purity(losses, labels, 2, eligible=torch.tensor([True, False, True, True])) == 1.0
    assert math.isnan(top_k_purity(losses, labels, 0))
    assert top_k_purity(losses, torch.tensor([1, 0, 1, 1]), 2) == 0.5       # label 0 is negative


def test_unscored_rows_of_a_dry_run_are_never_selected_largest_or_smallest():
    losses = torch.tensor([3.0, 2.0, float("-inf"), float("-inf"), 1.0])
    assert SelectedSet(5).update(losses, 4, epoch=1).tolist() == [0, 1, 4]
    assert SelectedSet(5).update(losses, 4, epoch=1, smallest=True).tolist() == [4, 1, 0]
