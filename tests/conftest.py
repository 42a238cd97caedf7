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
