"""The synthetic experiment (§4.1): nnPU and aaPU at the paper's settings."""
from ..claims import Claim, lower_error
from ..experiment import OPT_INT, TRAINING, Experiment, runs_of

#: The family of the book's aaPU-vs-nnPU claims (synthetic and each real data set), stated
#: together in the paper's §4 and adjusted together.
AAPU_VS_NNPU = "aaPU vs nnPU (§4)"

EXPERIMENT = Experiment(
    "synthetic", dataset="synthetic", selects=True,
    # curves: every epoch at "paper", every 10th at "cpu" (and the last)
    changes={"cpu": {"train": dict(eval_every=10)}},
    parameters={**TRAINING, "n_select": OPT_INT, "select_from": OPT_INT},
    plan=lambda s: runs_of(["nnpu", "aapu"]),
    claims=(Claim("Synthetic data (§4.1): aaPU has a lower test error than nnPU",
                  lower_error("aapu", "nnpu"), family=AAPU_VS_NNPU),))
