"""The unstated-choices page: which runs each reading needs, and the one-sentence answer."""
import pandas as pd

from pusupport.book.experiments.readings import BOOK_READING, READINGS, answer, plan
from pusupport.book.verdicts import CONTRADICTED, INCONCLUSIVE, REPRODUCED


def test_each_reading_changes_one_side_and_shares_the_rest():
    pairs, runs = plan(200)
    assert pairs[0][0] is BOOK_READING and pairs[0][1:3] == ("aapu", "nnpu")
    labels = {r.short: (a, n, sf) for r, a, n, sf in pairs}
    assert labels["nnPU with sigmoid loss"][:2] == ("aapu", "nnpu loss=sigmoid")
    assert labels["n_select = 5"][:2] == ("aapu n_select=5", "nnpu")
    assert sorted(sf for r, a, n, sf in pairs if r.select_from_factor) == [100, 400]
    assert labels["π = 0.4412"][:2] == ("aapu π=0.4412", "nnpu π=0.4412")
    assert set(runs) == {None, 0.4412} and set(runs[0.4412]) == {"aapu", "nnpu"}
    assert len(runs[None]) == 9                  # the book's pair + 7 one-sided readings
    assert len(pairs) == len(READINGS) + 1


def _table(verdicts):
    return pd.DataFrame({"choice": ["c"] * len(verdicts), "reading": [f"r{i}" for i in range(len(verdicts))],
                         "verdict on “aaPU is better”": verdicts})


def test_the_answer_is_no_unless_some_interval_lies_below_zero():
    assert answer(_table([INCONCLUSIVE, CONTRADICTED])).startswith("No: under none of the 2 readings")
    yes = answer(_table([INCONCLUSIVE, REPRODUCED]))
    assert yes.startswith("Yes, 1 of 2 readings") and "c: r1" in yes
