"""PU methods people use today beside the paper's baselines, one short file each; importing
the package registers them in :data:`pusupport.core.methods.METHODS`."""
from . import distpu, negsel, nnpusb, oracle, robustpu, vpu  # noqa: F401
