"""Applications on your own data: the command line, the own-data steps, prior
estimation, saved models and a scikit-learn estimator. Built on the core and data
layers; nothing here knows the book."""
