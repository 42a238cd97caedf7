"""Words the command line and the own-data steps share, importable without torch."""

#: What U and π mean for your data — the same in the command line, the own-data page,
#: PUClassifier (U: the rows with s = 0) and the README.
U_MEANING = ("U is every training row you did not label (the labelled positives are not in U), "
             "and π is the positive fraction of U")
