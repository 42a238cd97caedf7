"""Device-side test metrics agree with scikit-learn."""
import math

import pytest
import torch
from sklearn.metrics import average_precision_score, roc_auc_score

from pusupport.core.metrics import average_precision, roc_auc, zero_one_error


def test_auc_matches_scikit_learn_with_ties():
    gen = torch.Generator().manual_seed(0)
    labels = torch.where(torch.rand(500, generator=gen) < 0.3, 1, -1)
    scores = torch.randint(0, 20, (500,), generator=gen).float() + 0.5 * labels   # many ties
    assert math.isclose(float(roc_auc(scores, labels)), roc_auc_score(labels > 0, scores), rel_tol=1e-12)


def test_auc_extremes_and_one_class():
    labels = torch.tensor([1, 1, -1, -1])
    assert float(roc_auc(torch.tensor([3.0, 2.0, 1.0, 0.0]), labels)) == 1.0
    assert float(roc_auc(torch.tensor([0.0, 1.0, 2.0, 3.0]), labels)) == 0.0
    assert float(roc_auc(torch.ones(4), labels)) == 0.5
    assert math.isnan(float(roc_auc(torch.tensor([1.0, 2.0]), torch.tensor([1, 1]))))


def test_zero_one_error_counts_sign_disagreements():
    scores = torch.tensor([[0.5, -0.2, 0.0, 2.0], [1.0, 1.0, 1.0, 1.0]])
    labels = torch.tensor([[1, -1, 1, -1], [1, 1, -1, -1]])
    assert zero_one_error(scores, labels).tolist() == [0.5, 0.5]       # g = 0 counts as −1


def test_zero_one_error_of_one_model_and_zero_one_labels():
    scores = torch.tensor([2.0, 1.0, -1.0, -3.0, 0.5])
    assert float(zero_one_error(scores, torch.tensor([1, -1, -1, -1, 1]))) == 0.2     # 1 of 5 wrong
    assert float(zero_one_error(scores, torch.tensor([1, 0, 0, 0, 1]))) == 0.2        # label 0 is negative


def test_auc_treats_label_zero_as_negative():
    scores = torch.tensor([0.9, 0.1, 0.4, 0.8, 0.3])
    labels = torch.tensor([1, 0, 0, 1, 1])
    assert roc_auc_score(labels, scores) == pytest.approx(5 / 6)
    assert float(roc_auc(scores, labels)) == pytest.approx(5 / 6, abs=1e-15)


def test_average_precision_matches_scikit_learn_with_ties():
    gen = torch.Generator().manual_seed(1)
    labels = torch.where(torch.rand(500, generator=gen) < 0.3, 1, -1)
    scores = torch.randint(0, 20, (500,), generator=gen).float() + 0.5 * labels   # many ties
    assert math.isclose(float(average_precision(scores, labels)),
                        average_precision_score(labels > 0, scores), rel_tol=1e-12)


def test_average_precision_by_hand():
    """Scores 4 > 3 > 2 > 1 with labels +, −, +, −: precisions 1 and 2/3 at recalls ½ and 1,
    AP = ½·1 + ½·⅔ = ⅚; all tied: the positive fraction; no positive: NaN."""
    labels = torch.tensor([1, -1, 1, -1])
    assert float(average_precision(torch.tensor([4.0, 3.0, 2.0, 1.0]), labels)) == pytest.approx(5 / 6)
    assert float(average_precision(torch.ones(4), labels)) == 0.5
    assert math.isnan(float(average_precision(torch.tensor([1.0, 2.0]), torch.tensor([-1, -1]))))


def test_per_point_errors_pack_four_to_a_hex_digit_first_point_highest():
    """By hand: [1,0,1,1 | 0] → "b" (8+2+1) then "0" (the fifth point's bit 8, unset);
    [0,1 | pad] → "4"; every length round-trips, a 20 News test set in 1,888 characters."""
    from pusupport.core.metrics import pack_rows, unpack_rows
    cases = {(True, False, True, True, False): "5:b0", (False, True): "2:4", (True,): "1:8",
             (True, True, True, True, True, True, True, True, True): "9:ff8", (False,) * 4: "4:0"}
    for wrong, packed in cases.items():
        assert pack_rows(torch.tensor(wrong)) == packed
        assert unpack_rows(packed) == list(wrong)
    gen = torch.Generator().manual_seed(0)
    for n in range(1, 13):
        wrong = torch.rand(n, generator=gen) > 0.5
        assert unpack_rows(pack_rows(wrong)) == wrong.tolist()
    news = pack_rows(torch.rand(7532, generator=gen) > 0.9)
    assert news.startswith("7532:") and len(news) == len("7532:") + 1883
    assert pack_rows(torch.tensor([], dtype=torch.bool)) == "0:" and unpack_rows("0:") == []
