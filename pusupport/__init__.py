"""pusupport — the code behind the aaPU reproduction book, in four layers, each importing
only those below it: ``core`` (losses, risks, the method registry, selection, networks,
stacked seeds, the one training loop), ``data`` (the synthetic problem, the real data sets,
image folders), ``apps`` (your own data: the command line, prior estimation, saved models,
a scikit-learn estimator) and ``book`` (the paper's settings, pages, cost, claims,
verdicts, figures). The names below are the public API.
"""
from importlib import import_module

#: The public API, name → its module; imported when first used (PEP 562), so that
#: ``pusupport --help`` and ``--version`` answer without importing torch.
_PUBLIC = {
    **dict.fromkeys(["DataConfig", "ModelConfig", "Settings", "TrainConfig"], "core.config"),
    "PageConfig": "core.page_settings",
    "PUData": "core.problem", "synthetic": "data.synthetic",
    **dict.fromkeys(["get_loss", "logistic_loss", "sigmoid_loss"], "core.losses"),
    "METHODS": "core.methods", "build_model": "core.models",
    **dict.fromkeys(["Risk", "aapu_risk", "nnpu_risk", "pn_risk", "upu_risk"], "core.risks"),
    **dict.fromkeys(["SelectedSet", "top_losses", "unlabeled_losses"], "core.selection"),
    **dict.fromkeys(["RunResult", "train", "train_seeds"], "core.training"),
}

__version__ = "0.1.0"
__all__ = list(_PUBLIC)


def __getattr__(name: str):
    if name in _PUBLIC:
        return getattr(import_module(f".{_PUBLIC[name]}", __name__), name)
    raise AttributeError(f"module 'pusupport' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])
