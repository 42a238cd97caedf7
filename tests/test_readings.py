"""The unstated-choices page: which runs each reading needs, and the one-sentence answer."""
import pandas as pd

from pusupport.book.experiments.readings import BOOK_READING, READINGS, answer, pairs, plan
from pusupport.book.registry import get
from pusupport.book.verdicts import BORDERLINE, CONTRADICTED, INCONCLUSIVE, REPRODUCED, RULED_OUT


def test_each_reading_changes_one_side_and_shares_the_rest():
    _, settings = get("readings").resolve("synthetic", "paper")
    assert settings.train.select_from == 200
    pairs_ = pairs(200)
    assert pairs_[0][0] is BOOK_READING and pairs_[0][1:3] == ("aapu", "nnpu")
    labels = {r.short: (a, n, sf) for r, a, n, sf in pairs_}
    assert labels["nnPU with sigmoid loss"][:2] == ("aapu", "nnpu loss=sigmoid")
    assert labels["n_select = 5"][:2] == ("aapu n_select=5", "nnpu")
    assert sorted(sf for r, a, n, sf in pairs_ if r.select_from_factor) == [100, 400]
    assert labels["π = 0.4412"][:2] == ("aapu π=0.4412", "nnpu π=0.4412")
    runs = plan(settings)                        # each run once, whichever readings share it
    assert len({r.label for r in runs}) == len(runs)
    assert {r.label for r in runs} == {label for _, a, n, _ in pairs_ for label in (a, n)}
    changed = [r for r in runs if r.prior is not None]
    assert {(r.method, r.prior, r.group) for r in changed} == {("aapu", 0.4412, "prior_0.4412"),
                                                               ("nnpu", 0.4412, "prior_0.4412")}
    assert len(runs) - len(changed) == 11        # the book's pair + 8 one-sided readings + nnPU clamped
    assert labels["max(0, ·) as a clamp, both"][:2] == ("aapu correction=clamp", "nnpu correction=clamp")
    assert labels["max(0, ·) as a clamp"][:2] == ("aapu correction=clamp", "nnpu")
    assert len(pairs_) == len(READINGS) + 1


def _table(verdicts):
    return pd.DataFrame({"choice": ["c"] * len(verdicts), "reading": [f"r{i}" for i in range(len(verdicts))],
                         "verdict on “aaPU is better”": verdicts})


def test_the_answer_uses_the_adjusted_verdicts_and_says_what_they_allow():
    yes = answer(_table([INCONCLUSIVE, REPRODUCED]))
    assert yes.startswith("Yes: 1 of 2 readings put aaPU's final test error below nnPU's, adjusted "
                          "for the 2 readings") and "c: r1" in yes
    no = answer(_table([RULED_OUT, RULED_OUT]))
    assert no.startswith("No: every one of the 2 readings rules out a gain") and "intersection–union" in no
    unclear = answer(_table([INCONCLUSIVE, CONTRADICTED, RULED_OUT, BORDERLINE]))
    assert unclear.startswith("No reading shows the gap: adjusted for the 4 readings, none puts aaPU's")
    assert "ruled out under 1 of them, aaPU is worse under 1, and 2 cannot tell" in unclear
    assert "absence of evidence" in unclear


def test_a_reading_with_a_control_is_reported_by_it_where_they_disagree():
    """aaPU clamped beats Kiryo's nnPU, but against nnPU clamped too (only S differs) the
    gain is ruled out: the reading is reported by its control, the answer says both, and
    the claim of the reproduction table follows the control."""
    from pusupport.book.experiments.readings import reported, some_reading
    table = pd.DataFrame({"choice": ["max(0, ·) of aaPU's risk", "max(0, ·) of both risks"],
                          "reading": ["a plain clamp", "a plain clamp in nnPU too"],
                          "verdict on “aaPU is better”": [REPRODUCED, RULED_OUT]})
    assert reported(table) == [RULED_OUT, RULED_OUT]
    text = answer(table)
    assert text.startswith("No: every one of the 2 readings rules out a gain")
    assert text.endswith("The reading “max(0, ·) of aaPU's risk” changes aaPU's side alone, and with "
                         f"it more than S: alone it reads “{REPRODUCED}”; against its control (“max(0, ·) "
                         f"of both risks”: nnPU changed the same way, only S differing) “{RULED_OUT}”, "
                         "which is what it is reported by.")
    records = {"readings": table.to_dict("records"), "seeds": list(range(10))}
    assert some_reading(records, pd.DataFrame()).verdict == RULED_OUT
    alone = table.iloc[:1]                                   # no control in the table: its own verdict
    assert reported(alone) == [REPRODUCED] and "changes aaPU's side alone" not in answer(alone)
    agree = table.assign(**{"verdict on “aaPU is better”": [REPRODUCED, REPRODUCED]})
    assert answer(agree).startswith("Yes: 2 of 2") and "changes aaPU's side alone" not in answer(agree)


def test_the_baseline_loss_reading_says_how_far_the_loss_alone_moves_nnpu():
    import pandas as pd
    from pusupport.book.experiments.readings import the_baseline_loss
    table = pd.DataFrame([{"choice": BOOK_READING.choice, "aaPU": 0.0640, "nnPU": 0.0645},
                          {"choice": "nnPU baseline's loss", "aaPU": 0.0640, "nnPU": 0.0336}])
    text = the_baseline_loss(table)
    assert "from 0.0645 (logistic) to 0.0336 (sigmoid), -0.0309" in text and "-0.0005 from" in text
    assert "lowest error of the three" in text
    table.loc[1, "nnPU"] = 0.07
    assert "lowest" not in the_baseline_loss(table)
    assert the_baseline_loss(table.iloc[:1]) == ""


def test_the_two_clamp_readings_tell_the_rule_from_s():
    import pandas as pd
    from pusupport.book.experiments.readings import VERDICT, the_clamp
    table = pd.DataFrame([
        {"choice": "max(0, ·) of aaPU's risk", "aaPU": 0.0524, "nnPU": 0.0645, "aaPU − nnPU": -0.0121,
         "low": -0.0171, "high": -0.0071, VERDICT: REPRODUCED},
        {"choice": "max(0, ·) of both risks", "aaPU": 0.0524, "nnPU": 0.0535, "aaPU − nnPU": -0.0011,
         "low": -0.0051, "high": 0.0029, VERDICT: RULED_OUT}])
    text = the_clamp(table)
    assert "gives aaPU a mean final error of 0.0524 against 0.0645 for Kiryo et al.'s nnPU (reproduced)" in text
    assert "nnPU reaches 0.0535, and aaPU − nnPU under one rule is -0.0011 [-0.0051, +0.0029]" in text
    assert the_clamp(table.iloc[:1]) == ""


def test_the_readings_answer_is_a_claim_of_the_reproduction_table():
    """One row of the summary, judged from the table the page judged as one family."""
    from pusupport.book.experiments.readings import EXPERIMENT, some_reading
    from pusupport.book.verdicts import SMALLER_GAIN, SMALLER_LOSS

    def verdict(*verdicts):
        return some_reading({"readings": _table(list(verdicts)).to_dict("records"), "seeds": [0, 1]},
                            pd.DataFrame()).verdict
    assert verdict(INCONCLUSIVE, SMALLER_GAIN) == SMALLER_GAIN
    assert verdict(SMALLER_GAIN, REPRODUCED) == REPRODUCED
    assert verdict(RULED_OUT, RULED_OUT) == RULED_OUT
    assert verdict(CONTRADICTED, SMALLER_LOSS) == CONTRADICTED
    assert verdict(RULED_OUT, CONTRADICTED, BORDERLINE) == INCONCLUSIVE
    outcome = some_reading({"readings": _table([RULED_OUT]).to_dict("records"), "seeds": [0, 1, 2]}, pd.DataFrame())
    assert outcome.seeds == 3 and outcome.measured.startswith("No: every one of the 1 readings")
    assert some_reading({}, pd.DataFrame()).verdict == INCONCLUSIVE
    assert [c.check for c in EXPERIMENT.claims] == [some_reading]
