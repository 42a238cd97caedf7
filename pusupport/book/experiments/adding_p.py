"""More labelled positives for nnPU (the paper's motivation, §3.1): CIFAR-10 with its 1,000
labelled positives and with 7,000 more."""
from ..claims import Claim, lower_error
from ..experiment import OPT_INT, TRAINING, Experiment, RunSpec
from ..paper import CPU_CIFAR_SHORT

#: The run with the extra positives.
MORE_P = "nnpu+p"


def plan(s):
    more = s.data.n_labeled + s.page.extra_positives
    return [RunSpec("nnpu", "nnpu"), RunSpec(MORE_P, "nnpu", {"data": {"n_labeled": more}})]


EXPERIMENT = Experiment(
    "adding_p", dataset="cifar10",
    changes={"paper": {"page": dict(extra_positives=7000)},
             # 6 seeds (a verdict's fewest) at half the cpu CNN's width and 6 of its 10 epochs
             # (milestones scaled): 6 seeds at 1/4 width and 10 epochs would cost this machine
             # about 25 min of the hour `make book` has
             "cpu": {**CPU_CIFAR_SHORT, "model": dict(width=0.125),
                     "train": dict(epochs=6, lr_schedule={3: 5e-5, 5: 1e-5}),
                     "page": dict(extra_positives=7000, n_seeds=6)},
             "smoke": {"page": dict(extra_positives=200)}},
    parameters={**TRAINING, "extra_positives": OPT_INT},
    plan=plan, labels={MORE_P: ("nnPU + extra P", "#2ca02c")},
    claims=(Claim("More labelled positives help nnPU a lot (CIFAR-10, +7,000 P)",
                  lower_error(MORE_P, "nnpu")),))
