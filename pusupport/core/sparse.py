"""Row-indexable sparse matrices (CSR) for bag-of-words features.

torch's sparse CSR tensors cannot be row-gathered (``index_select`` is not
implemented for them), and the dense 20News matrix would take gigabytes, so
:class:`SparseRows` keeps the CSR arrays and gathers rows with a few vectorised
tensor operations; :meth:`SparseRows.torch` hands a batch to the model.
"""
from __future__ import annotations

import warnings

import torch

warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")


class SparseRows:
    """A CSR matrix with ``len``, row gathering (``x[idx]``, ``x[mask]``), slicing and ``.to``."""

    def __init__(self, crow: torch.Tensor, col: torch.Tensor, val: torch.Tensor, n_cols: int):
        self.crow, self.col, self.val, self.n_cols = crow, col, val, int(n_cols)

    @classmethod
    def from_scipy(cls, m) -> "SparseRows":
        m = m.tocsr()
        m.sort_indices()
        return cls(torch.from_numpy(m.indptr.astype("int64")), torch.from_numpy(m.indices.astype("int64")),
                   torch.from_numpy(m.data.astype("float32")), m.shape[1])

    def __len__(self) -> int:
        return self.crow.numel() - 1

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self), self.n_cols)

    @property
    def device(self) -> torch.device:
        return self.val.device

    def dim(self) -> int:
        return 2

    def to(self, device) -> "SparseRows":
        return SparseRows(self.crow.to(device), self.col.to(device), self.val.to(device), self.n_cols)

    def __getitem__(self, index) -> "SparseRows":
        if isinstance(index, slice):
            index = torch.arange(len(self), device=self.device)[index]
        index = torch.as_tensor(index, device=self.device).reshape(-1)
        if index.dtype == torch.bool:
            index = index.nonzero().reshape(-1)
        start, counts = self.crow[index], self.crow[index + 1] - self.crow[index]
        crow = torch.zeros(len(index) + 1, dtype=torch.int64, device=self.device)
        crow[1:] = counts.cumsum(0)
        offsets = torch.repeat_interleave(start - crow[:-1], counts)
        pos = torch.arange(int(crow[-1]), device=self.device) + offsets
        return SparseRows(crow, self.col[pos], self.val[pos], self.n_cols)

    @staticmethod
    def cat(parts: list["SparseRows"]) -> "SparseRows":
        shifts = torch.tensor([0] + [int(p.crow[-1]) for p in parts[:-1]]).cumsum(0).tolist()
        crow = torch.cat([parts[0].crow[:1]] + [p.crow[1:] + s for p, s in zip(parts, shifts)])
        return SparseRows(crow, torch.cat([p.col for p in parts]), torch.cat([p.val for p in parts]),
                          parts[0].n_cols)

    def torch(self) -> torch.Tensor:
        """The rows as a torch sparse CSR tensor (what the first layer multiplies)."""
        return torch.sparse_csr_tensor(self.crow, self.col, self.val, self.shape,
                                       check_invariants=False)

    def to_dense(self) -> torch.Tensor:
        return self.torch().to_dense()


def as_model_input(x):
    """What a model takes: dense tensors as they are, :class:`SparseRows` as sparse CSR."""
    return x.torch() if isinstance(x, SparseRows) else x


def cat_rows(parts):
    """Concatenate row blocks, dense or :class:`SparseRows`."""
    return SparseRows.cat(parts) if isinstance(parts[0], SparseRows) else torch.cat(parts)
