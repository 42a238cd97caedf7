"""§5's discussion: how many points to select, from which epoch, and whether a point may
be selected again — a grid of aaPU variants beside nnPU."""
from ..experiment import TRAINING, Experiment, RunSpec

#: The variant that never re-picks a point already in S.
NEVER_REPICK = "never re-pick"


def plan(s):
    grid = s.page
    return ([RunSpec("nnpu", "nnpu")]
            + [RunSpec(f"n_select={n}", "aapu", {"train": {"n_select": n}}) for n in grid.n_select_grid]
            + [RunSpec(f"select_from={e}", "aapu", {"train": {"select_from": e}})
               for e in grid.select_from_grid if e != s.train.select_from]
            + [RunSpec(NEVER_REPICK, "aapu", {"train": {"allow_repick": False}})])


EXPERIMENT = Experiment(
    "discussion", dataset="cifar10", cpu_dataset="fashion_mnist", selects=True,
    changes={
        "paper": {"page": dict(n_select_grid=[40, 80, 160, 320], select_from_grid=[20, 60]),
                  "train": dict(eval_every=0)},           # final numbers only: no per-epoch test
        "cpu": {"train": dict(epochs=20, lr_schedule={5: 1e-5}),
                "page": dict(n_select_grid=[40, 80, 160, 320], select_from_grid=[2, 6], n_seeds=1)},
        "smoke": {"page": dict(n_select_grid=[10, 20], select_from_grid=[2, 3], n_seeds=1)}},
    parameters={"dataset": (str, type(None)), **TRAINING},
    plan=plan)
