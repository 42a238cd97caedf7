"""The paper's real-data experiments (§4: the data sets' sizes in its Table 2, the results as
test-error curves): nnPU and aaPU on the real data sets (one page each), and on Fashion-MNIST,
which the paper does not use."""
from ..claims import AAPU_VS_NNPU, BESIDE_THE_PAPER, Claim, lower_error
from ..experiment import OPT_INT, OPT_STR, TRAINING, Experiment, runs_of

EXPERIMENT = Experiment(
    "real_data", dataset="cifar10", selects=True,
    parameters={"dataset": str, **TRAINING, "n_select": OPT_INT, "select_from": OPT_INT,
                "n_unlabeled": OPT_INT, "correction": OPT_STR,
                "allow_repick": (bool, type(None))},
    plan=lambda s: runs_of(["nnpu", "aapu"]),
    pages={"real_cifar10": {"dataset": "cifar10", "title": "Real data: CIFAR-10"},
           "real_cifar100": {"dataset": "cifar100", "title": "Real data: CIFAR-100"},
           "real_20news": {"dataset": "20news", "title": "Real data: 20 Newsgroups"},
           "real_fashion_mnist": {"dataset": "fashion_mnist",
                                  "title": "Real data: Fashion-MNIST (beyond the paper)"}},
    claims=tuple(Claim(text, lower_error("aapu", "nnpu"), dataset, family=family)
                 for text, dataset, family in (
        ("CIFAR-10: aaPU has a lower test error than nnPU (§4, its test-error curves)", "cifar10", AAPU_VS_NNPU),
        ("CIFAR-100: aaPU has a lower test error than nnPU (§4, its test-error curves)", "cifar100", AAPU_VS_NNPU),
        ("20News: aaPU has a lower test error than nnPU (§4, its test-error curves)", "20news", AAPU_VS_NNPU),
        ("Fashion-MNIST (beyond the paper): aaPU has a lower test error than nnPU",
         "fashion_mnist", BESIDE_THE_PAPER))))
