"""§3.3: S used only in the positive risk (aaPU) against S added to P everywhere (naive),
after a look at which U points nnPU's largest losses pick."""
from ..claims import Claim, lower_error
from ..experiment import TRAINING, Experiment, RunSpec

#: The single nnPU run whose U losses pick the plotted points.
SNAPSHOT = "nnpu snapshot"


def plan(s):
    epoch = s.page.snapshot_epochs[0]
    return [RunSpec(SNAPSHOT, "nnpu", {"train": {"epochs": epoch, "record_u_losses": [epoch]}},
                    seeds=1, stacks=False, keeps=("u_losses",)),
            RunSpec("naive", "naive"), RunSpec("aapu", "aapu")]


EXPERIMENT = Experiment(
    "biased_selection", dataset="synthetic", selects=True,
    changes={
        "paper": {"page": dict(snapshot_epochs=[200], selection_ks=[200, 300, 400])},
        "cpu": {"page": dict(snapshot_epochs=[200], selection_ks=[200, 300, 400], n_seeds=10),
                "train": dict(eval_every=10)},
        "smoke": {"page": dict(snapshot_epochs=[6], selection_ks=[200, 300, 400])}},
    parameters=TRAINING, plan=plan,
    claims=(Claim("Using S only in the positive risk beats adding S to P everywhere (§3.3)",
                  lower_error("aapu", "naive")),))
