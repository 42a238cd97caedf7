"""Mutation testing of pusupport's core modules with mutmut 3 (run by `make mutation`).

Each group of modules is mutated on its own, against only its own fast tests, so a
module's score says how well *its* tests pin it down. mutmut reads its settings
from setup.cfg, which this script writes for one group at a time and removes
afterwards. Results accumulate in bench/mutation.json:

    {"modules": {path: {killed, survived, timeout, no_tests, equivalent}}, "score": x}

with score = (killed + timeout) / (all − equivalent). Equivalent mutants (same
meaning as the original code) are listed, with a reason, in
bench/mutation_equivalent.json.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTMUT = Path(sys.executable).parent / "mutmut"
#: Modules mutated together, and the tests that must kill their mutants.
GROUPS = [
    (["pusupport/core/risks.py", "pusupport/core/losses.py"],
     ["tests/test_risks.py", "tests/test_baselines.py::test_negative_selection_value_and_gradient_by_hand"]),
    (["pusupport/core/selection.py"], ["tests/test_selection.py"]),
    (["pusupport/core/metrics.py"], ["tests/test_metrics.py"]),
    (["pusupport/core/checkpoint.py", "pusupport/core/identity.py"],
     ["tests/test_checkpoint_unit.py", "tests/test_identity.py"]),
    (["pusupport/book/records.py", "pusupport/book/claims.py"], ["tests/test_claims.py", "tests/test_records.py"]),
    (["pusupport/book/verdicts.py"], ["tests/test_verdicts.py", "tests/test_verdict_edges.py"]),
    (["pusupport/book/signflip.py"], ["tests/test_verdicts.py"]),
]
#: mutmut's exit codes (mutmut.stats.status_by_exit_code) as counted here; any other
#: outcome (suspicious, segfault, not checked) counts as survived.
OUTCOMES = {1: "killed", 3: "killed", 0: "survived", 5: "no_tests", 33: "no_tests",
            36: "timeout", 24: "timeout", -24: "timeout", 152: "timeout", 255: "timeout"}
COUNTS = ("killed", "survived", "timeout", "no_tests", "equivalent")


def _config(modules, tests) -> str:
    lines = ["[mutmut]", "source_paths = pusupport", "only_mutate ="]
    lines += [f"    {m}" for m in modules]
    lines += ["pytest_add_cli_args_test_selection ="] + [f"    {t}" for t in tests]
    # the registry reads the book's order (_toc.yml); the rule's tests, the committed records
    lines += ["also_copy =", "    book", "    results/reference/paper"]
    lines += ["pytest_add_cli_args =", "    -p", "    no:cacheprovider", ""]
    return "\n".join(lines)


def _outcomes(module: str) -> dict[str, str]:
    """mutant name → outcome, from mutmut's meta file for ``module``."""
    meta = json.loads((ROOT / "mutants" / f"{module}.meta").read_text())
    return {name: OUTCOMES.get(code, f"other ({code})")
            for name, code in meta["exit_code_by_key"].items()}


def score(counts: dict) -> float:
    """(killed + timeout) / (all − equivalent)."""
    total = sum(counts.values()) - counts["equivalent"]
    return (counts["killed"] + counts["timeout"]) / total if total else float("nan")


def tally(outcomes: dict[str, str], equivalent: set[str]) -> tuple[dict, list[str]]:
    """Counts per outcome, and the mutants listed as equivalent that were killed (the list is
    stale for them: remove them from bench/mutation_equivalent.json)."""
    counts, stale = dict.fromkeys(COUNTS, 0), []
    for name, outcome in outcomes.items():
        if name in equivalent and outcome not in ("killed", "timeout"):
            counts["equivalent"] += 1
        else:
            stale += [name] if name in equivalent else []
            counts[outcome if outcome in COUNTS else "survived"] += 1
    return counts, stale


def run_group(modules, tests) -> dict[str, dict[str, str]]:
    shutil.rmtree(ROOT / "mutants", ignore_errors=True)
    cfg = ROOT / "setup.cfg"
    cfg.write_text(_config(modules, tests))
    try:
        subprocess.run([str(MUTMUT), "run", "--max-children", "1"], cwd=ROOT, check=True)
    finally:
        cfg.unlink()
    return {m: _outcomes(m) for m in modules}


#: The score every module must reach for `make mutation` to pass.
BAR = 0.90


def main(only: list[str]) -> int:
    """Mutate every group (or the groups holding one of ``only``'s modules, merged into the
    last bench/mutation.json); 1 when a module scores below BAR or the equivalent list is stale."""
    equivalent = json.loads((ROOT / "bench" / "mutation_equivalent.json").read_text())
    path = ROOT / "bench" / "mutation.json"
    modules = json.loads(path.read_text())["modules"] if only and path.exists() else {}
    survivors, stale = {}, []
    start = time.time()
    for group_modules, tests in GROUPS:
        if only and not set(only) & set(group_modules):
            continue
        for module, outcomes in run_group(group_modules, tests).items():
            modules[module], killed = tally(outcomes, set(equivalent))
            stale += killed
            survivors[module] = sorted(n for n, o in outcomes.items()
                                       if o not in ("killed", "timeout") and n not in equivalent)
    totals = {k: sum(c[k] for c in modules.values()) for k in COUNTS}
    result = {"modules": modules, "score": round(score(totals), 4)}
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\n{'module':28} {'mutants':>7} {'killed':>6} {'surv':>5} {'tmo':>4} "
          f"{'none':>4} {'equiv':>5} {'score':>6}")
    for m, c in modules.items():
        print(f"{m:28} {sum(c.values()):7} {c['killed']:6} {c['survived']:5} {c['timeout']:4} "
              f"{c['no_tests']:4} {c['equivalent']:5} {score(c):6.3f}")
    print(f"overall score {result['score']:.4f} in {time.time() - start:.0f} s")
    for m, names in survivors.items():
        for n in names:
            print(f"  not killed: {n}")
    for n in stale:
        print(f"{n} is listed as equivalent but was killed: remove it from bench/mutation_equivalent.json")
    low = [m for m, c in modules.items() if score(c) < BAR]
    if low:
        print(f"below {BAR}: {', '.join(low)}")
    return 1 if low or stale else 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    sys.exit(main(sys.argv[1:]))
