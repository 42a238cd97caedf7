"""The synthetic experiment (§4.1): nnPU and aaPU at the paper's settings."""
from ..claims import AAPU_VS_NNPU, Claim, lower_error
from ..experiment import OPT_INT, OPT_STR, TRAINING, Experiment, runs_of

EXPERIMENT = Experiment(
    "synthetic", dataset="synthetic", selects=True,
    # curves: every epoch at "paper", every 10th at "cpu" (and the last)
    changes={"cpu": {"train": dict(eval_every=10)}},
    parameters={**TRAINING, "n_select": OPT_INT, "select_from": OPT_INT, "correction": OPT_STR,
                "allow_repick": (bool, type(None))},
    plan=lambda s: runs_of(["nnpu", "aapu"]),
    claims=(Claim("Synthetic data (§4.1): aaPU has a lower test error than nnPU",
                  lower_error("aapu", "nnpu"), family=AAPU_VS_NNPU),))
