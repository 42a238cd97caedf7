"""The reference suite: small float64 runs on the CPU of every method and training path the
committed pages use, each reduced to a digest of its histories.

Code at two commits whose suite runs agree trains the same numbers on those paths, whatever
else changed (a refactor, a renamed helper): a part committed at one joins the other's
(:func:`~pusupport.book.committed.joinable`). Each run names what it uses (methods, models,
paths); a part is checked on the runs whose uses its page has. The suite is run in a child
process, on one thread, from this checkout or from a commit's files (``git archive``), by
this file itself — it imports only what the package has had since its first committed part
(``train``, ``train_seeds``, ``TrainConfig``, ``synthetic``), so it runs at old commits too.
What it cannot reach (CUDA-only lines) is listed in DEVELOPING.md; those stay checked by the
device choices in each part's provenance.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

#: The history columns a digest covers (with the views' errors and the validation risk).
COLUMNS = ("epoch", "lr", "risk", "risk_positive", "risk_negative", "corrected_fraction",
           "test_error", "test_auc", "test_ap", "n_selected", "purity")
BASE = dict(epochs=4, batch_size=32, lr=3e-3, lr_schedule={3: 1e-3}, n_select=4, select_from=2,
            progress=False, device="cpu", autocast="off", eval_every=1)
CNN = {"name": "kiryo_cnn", "width": 0.0625, "dropout": 0.5}
#: The runs: name → (what it uses, methods, settings, data, seeds stacked). "fork": nnPU and
#: aaPU trained as the book trains them (aaPU forked from nnPU where the code forks).
RUNS = {
    "nnpu and aapu forked": ({"nnpu", "aapu", "mlp"}, ("nnpu", "aapu"), {}, "synthetic", False),
    "nnpu and aapu, seeds stacked": ({"nnpu", "aapu", "mlp"}, ("nnpu", "aapu"), {}, "synthetic", True),
    "nnpu and aapu, Kiryo's CNN with dropout": ({"nnpu", "aapu", "kiryo_cnn"}, ("nnpu", "aapu"),
                                               {"model": CNN, "batch_size": 16}, "images", False),
    "nnpu and aapu, Kiryo's CNN, seeds stacked, dropout seeded per member (CUDA's default)": (
        {"nnpu", "aapu", "kiryo_cnn"}, ("nnpu", "aapu"),
        {"model": CNN, "batch_size": 16, "dropout_streams": "seeded"}, "images", True),
    "nnpu and aapu, sparse rows": ({"nnpu", "aapu", "news_mlp"}, ("nnpu", "aapu"),
                                   {"model": "news_mlp"}, "sparse", False),
    "nnpu and aapu, dense rows, relu": ({"nnpu", "aapu", "news_mlp"}, ("nnpu", "aapu"),
                                        {"model": {"name": "news_mlp", "activation": "relu"}},
                                        "dense", False),
    "nnpu and aapu under the clamp": ({"nnpu", "aapu", "mlp", "clamp"}, ("nnpu", "aapu"),
                                      {"correction": "clamp"}, "synthetic", False),
    "nnpu and aapu, a held-out PU split": ({"nnpu", "aapu", "mlp", "validation"}, ("nnpu", "aapu"),
                                           {}, "validation", False),
    **{f"{m} alone": ({m, "mlp"}, (m,), {}, "synthetic", False)
       for m in ("upu", "nnpu_sigmoid", "naive", "pn", "vpu", "distpu", "robustpu", "negsel",
                 "aapu_oracle")},
}


def _data(kind: str, seed: int):
    import torch
    from pusupport.data.synthetic import synthetic
    if kind in ("synthetic", "validation"):
        data = synthetic(seed, n_labeled=20, n_unlabeled=120, n_test=100)
        if kind == "validation":
            from pusupport.core.problem import hold_out
            data = hold_out(data, 0.25, seed)
        return data
    from pusupport.core.problem import LabeledData, make_pu
    gen = torch.Generator().manual_seed(seed)
    if kind == "images":
        y = (torch.rand(120, generator=gen) < 0.4).long()
        x = torch.rand(120, 3, 32, 32, generator=gen) * 0.5 + 0.25 * y[:, None, None, None]
        return make_pu("images", LabeledData(x[:80], y[:80], x[80:], y[80:], ["neg", "pos"]),
                       ["pos"], 12, seed)
    y = (torch.rand(160, generator=gen) < 0.4).long()
    x = (torch.rand(160, 30, generator=gen) < 0.2) * (torch.rand(160, 30, generator=gen) + y[:, None])
    if kind == "sparse":
        import scipy.sparse
        from pusupport.core.sparse import SparseRows
        rows = [SparseRows.from_scipy(scipy.sparse.csr_matrix(part.float().numpy()))
                for part in (x[:120], x[120:])]
        return make_pu("sparse", LabeledData(rows[0], y[:120], rows[1], y[120:], ["neg", "pos"]),
                       ["pos"], 15, seed)
    return make_pu("dense", LabeledData(x[:120], y[:120], x[120:], y[120:], ["neg", "pos"]), ["pos"], 15, seed)


def _histories(name: str) -> list:
    """Run ``name`` of :data:`RUNS`: its histories, one per method and seed."""
    from pusupport.core import training
    _, methods, changes, kind, stacked = RUNS[name]
    cfgs = [training.TrainConfig(**{**BASE, **changes, "method": m}) for m in methods]
    if stacked:
        return [r.history for cfg in cfgs for r in training.train_seeds(lambda s: _data(kind, s), [0, 1], cfg)]
    data = _data(kind, 0)
    if hasattr(training, "fit_shared") and len(cfgs) > 1:    # forked, as the book trains them
        return [r.history for (r,) in training.fit_shared([[data]] * len(cfgs), [0], cfgs,
                                                          stacked=False, together=False)]
    return [training.train(data, cfg).history for cfg in cfgs]


#: Where a suite's digests hold each method's training-code version (not a run).
CODE = "training code of each method"

#: The method whose runs alone recorded views' errors before every run that reads π was
#: also scored at the common threshold: a view's digest reads its rows, as it always did,
#: and the other methods' rows of the column get a digest of their own.
VIEWED = "nnpu"


def digest(histories: list) -> dict[str, str]:
    """Per column of the histories — :data:`COLUMNS`, each view's error (:data:`VIEWED`'s
    rows; the other methods' as "<column> elsewhere"), the validation risk — 16 hex digits
    of its numbers to 12 significant digits."""
    import pandas as pd
    h = pd.concat(histories, ignore_index=True)
    views = sorted(c for c in h if c.startswith("test_error:"))
    columns = {c: h[c] for c in COLUMNS if c in h}
    for c in views:
        columns[c] = h[c].where(h.method == VIEWED)
        if h[c].where(h.method != VIEWED).notna().any():
            columns[f"{c} elsewhere"] = h[c].where(h.method != VIEWED)
    if "val_risk" in h:
        columns["val_risk"] = h["val_risk"]
    return {c: hashlib.sha256(v.to_csv(index=False, float_format="%.12g").encode()).hexdigest()[:16]
            for c, v in columns.items()}


def run_here() -> dict:
    """Every run's digests (or why it could not run: "error: …"), in this process, and
    under :data:`CODE` the version of each method's training code, as this code's own
    identity computes it."""
    import torch
    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(1)
    out = {}
    for name in RUNS:
        try:
            out[name] = digest(_histories(name))
        except Exception as err:             # a method or path this code does not have
            out[name] = f"error: {type(err).__name__}: {str(err)[:200]}"
    out[CODE] = code_versions()
    return out


def code_versions() -> dict | str:
    """{method: the version of its training code} as this code's own identity computes
    it, or why it cannot ("error: …": code from before its identity was computed so)."""
    try:
        from pusupport.core.identity import code_version
        from pusupport.core.methods import METHODS
        try:
            return {m: code_version(methods=[m]) for m in METHODS}
        except TypeError:                    # code versions before they were a method's
            return dict.fromkeys(METHODS, code_version())
    except Exception as err:
        return f"error: {type(err).__name__}: {str(err)[:200]}"


def run(commit: str | None = None, repo: Path | None = None) -> dict:
    """The suite's digests for this checkout's package, or for the package at git ``commit``
    of ``repo`` (default: this checkout's), in a child process on one thread."""
    repo = Path(repo or Path(__file__).resolve().parents[2])
    with tempfile.TemporaryDirectory() as tmp:
        if commit is None:
            root = repo
        else:
            root = Path(tmp)
            archive = subprocess.run(["git", "-C", str(repo), "archive", commit, "pusupport"],
                                     capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        script = Path(tmp) / "reference_suite.py"
        shutil.copy(__file__, script)
        env = {**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
               "TQDM_DISABLE": "1"}
        done = subprocess.run([sys.executable, str(script)], cwd=root, env=env, capture_output=True,
                              text=True)
        if done.returncode:
            raise RuntimeError(f"the reference suite failed at {commit or 'this checkout'}: "
                               f"{done.stderr[-500:]}")
        return json.loads(done.stdout.splitlines()[-1])


@lru_cache(maxsize=None)
def at(commit: str | None) -> dict:
    """:func:`run` at ``commit`` of this checkout's repository (None: this checkout), once a process."""
    return run(commit)


def relevant(uses: set) -> list[str]:
    """The runs whose uses a page with ``uses`` (methods, models, paths) has."""
    return [name for name, (needs, *_) in RUNS.items() if needs <= set(uses)]


def differs(old, new) -> str | None:
    """How one run's digests at two commits differ — it did not run at one, a column of
    :data:`COLUMNS` is missing at one, or the numbers of a column both have — else None. A
    column only one has (a measurement added since, e.g. a new view's error) is not a
    difference in what both computed."""
    for got in (old, new):
        if not isinstance(got, dict):
            return f"it did not run ({got})"
    shared = sorted(set(old) & set(new), key=lambda c: (COLUMNS.index(c) if c in COLUMNS else len(COLUMNS), c))
    missing = [c for c in COLUMNS if (c in old) != (c in new)]
    if missing:
        return f"column {missing[0]} is in one history only"
    return next((f"its {c} differs" for c in shared if old[c] != new[c]), None)


def first_difference(old: dict, new: dict, uses: set | None = None, runs=None) -> tuple[str, str] | None:
    """The first run relevant to ``uses`` (or of ``runs``, names of :data:`RUNS`) whose
    numbers differ between two suites, and how."""
    return next(((name, why) for name in (relevant(uses) if runs is None else runs)
                 if (why := differs(old.get(name), new.get(name)))), None)


if __name__ == "__main__":
    print(json.dumps(run_here()))
