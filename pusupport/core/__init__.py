"""The learner: losses and risks (the paper's equations), the method registry, the
selection of Algorithm 1, the networks, seeds stacked as one network, and the one
training loop. The core imports nothing from the data, application or book layers."""

from . import baselines  # noqa: E402,F401  registers today's methods (nnPUSB, VPU, …)
