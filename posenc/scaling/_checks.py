"""Argument checks shared by every scaling method, and the original frequencies.

Each method validates its RoPE settings the same way: even widths with ``r <= d``
(``_rotary_dim``), a factor ``s >= 1``, positive lengths, a float32/float64 ``dtype``;
``_theta`` gives the unscaled ``θ_i`` in float64 (the formula lives in
:func:`posenc.rope.rope_inv_freq`), which every method rescales. Errors name the argument
through :mod:`posenc._checks`.
"""

from __future__ import annotations

import torch

from .._checks import check_even, check_int, check_real
from ..rope import rope_inv_freq


def _rotary_dim(head_dim, rotary_dim) -> int:
    head_dim = check_even("head_dim", head_dim)
    rotary_dim = head_dim if rotary_dim is None else check_even("rotary_dim", rotary_dim)
    if rotary_dim > head_dim:
        raise ValueError(f"rotary_dim must be <= head_dim ({head_dim}), got {rotary_dim}")
    return rotary_dim


def _factor(factor) -> float:
    return check_real("factor", factor, ge=1.0)


def _length(name: str, value) -> int:
    return check_int(name, value, minimum=1)


def _dtype(dtype):
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype}")
    return dtype


def _theta(head_dim, base, rotary_dim, device=None) -> torch.Tensor:
    """Original frequencies in float64 (the formula lives in :func:`rope_inv_freq`)."""
    return rope_inv_freq(head_dim, base, rotary_dim, dtype=torch.float64, device=device)
