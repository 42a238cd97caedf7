"""aaPU selection (Algorithm 1, lines 7–9)."""
import pytest
import torch
from torch import nn

from pusupport.selection import SelectedSet, top_losses, unlabeled_losses


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
