"""Words the command line and the own-data steps share, importable without torch."""

def few(items, n: int = 5) -> str:
    """The first ``n`` of ``items`` for a message, "…" after them where there are more."""
    items = list(items)
    return f"{items[:n]}{' …' if len(items) > n else ''}"


#: What U and π mean for your data — the same in the command line, the own-data page,
#: PUClassifier (U: the rows with s = 0) and the README.
U_MEANING = ("U is every training row you did not label (the labelled positives are not in U), "
             "and π is the positive fraction of U")

#: How each interface spells the options a message names: the command line, and Python
#: (the own-data page's parameters and :mod:`pusupport.apps.own`'s arguments).
SPELLING = {
    "cli": {"prior": "--prior P", "epochs": "--epochs N", "lr": "--lr RATE",
            "batch_size": "--batch-size N", "estimator_epochs": "--estimator-epochs N",
            "allow": "--allow-degenerate", "label_column": "--label-column NAME"},
    "python": {"prior": "prior=…", "epochs": "epochs=…", "lr": "lr=…",
               "estimator_epochs": "more estimator epochs (estimator_config(...).epochs)",
               "allow": "the warning", "label_column": "label_column=…"},
}

#: Folder names recognised (in any case) for the labelled positives and for the pool.
LABELED_FOLDERS = ("labeled", "labelled", "positive", "positives")
UNLABELED_FOLDERS = ("unlabeled", "unlabelled", "unknown", "mixed", "pool")
