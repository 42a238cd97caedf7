"""The own-data page: a folder of images, its positive classes, and aaPU trained on it."""
from __future__ import annotations

from ..config import Settings, TrainConfig
from ..pages import Page
from ..paper import OWN_DATA_ESTIMATOR


def own_data_settings(page: Page) -> dict:
    """The folder, its positive classes, and the estimator's and aaPU's settings.

    aaPU selects from epoch ⌊epochs/4⌋ (at least 1) and 2 % of U an epoch.
    """
    from ..datasets import CIFAR10_POSITIVE, data_root
    example = page.params.get("image_folder") is None
    folder = str(data_root(page.data_dir) / "cifar10-jpeg") if example else page.params["image_folder"]
    positive = page.params.get("positive_classes") or (CIFAR10_POSITIVE if example else None)
    if not positive:
        raise ValueError("positive_classes is required with your own image_folder: "
                         "-y 'positive_classes: [name1, name2]'")
    s = page.settings
    train: TrainConfig = page.train_config(
        "aapu", n_select=max(1, (s.data.n_unlabeled or 50_000) // 50),
        select_from=max(1, s.train.epochs // 4))
    return {"image_folder": folder, "positive_classes": [str(c) for c in positive],
            "n_labeled": s.data.n_labeled, "n_unlabeled": s.data.n_unlabeled,
            "train": train, "estimator": Settings().merge(OWN_DATA_ESTIMATOR[page.profile]).train}
