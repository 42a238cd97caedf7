"""Fixtures shared by the tests."""
import pytest
import torch


@pytest.fixture
def float64():
    """Compute in double precision, so that rounding cannot flip an nnPU branch or a pick
    when stacked and single runs are compared."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)


@pytest.fixture
def computed_afresh():
    """Code meanings and data checksums computed by this test, none kept from an earlier one:
    what the identity's tests check runs in them (a mutation run forks every mutant from a
    process that has run the tests once, its caches full)."""
    from pusupport.core import identity
    for cached in (identity.meaning, identity._shown, identity._registers, identity._imported):
        cached.cache_clear()
    identity._SUMS.clear()


def pytest_collection_modifyitems(items):
    """`make test` sends each test file to a worker whole (``--dist loadscope``), and each
    test class whole: the `paper` dry run is two classes, one half of the pages each. Classes
    go first (``--no-loadscope-reorder``), so that the two halves start on different workers."""
    items.sort(key=lambda item: item.cls is None)
