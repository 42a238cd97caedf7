"""The book: the paper's settings, one object per experiment (its settings, its plan of
runs, its labels and its claims), the page a notebook opens, the cost model, claims and
verdicts, figures and the Ray fan-out."""
