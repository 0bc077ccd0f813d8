"""Rotary position embedding (RoPE; Su et al., 2021/2024, RoFormer).

Shape notation: ``b`` batch, ``h`` heads, ``s`` sequence, ``d`` = ``head_dim``,
``r`` = ``rotary_dim`` (``r <= d``, even): the first ``r`` channels are rotated in ``r/2``
pairs, the remaining ``d − r`` pass through unchanged.
"""

from __future__ import annotations

import torch

from ._checks import check_even, check_real

__all__ = ["rope_inv_freq"]


def rope_inv_freq(
    head_dim: int,
    base: float = 10000.0,
    rotary_dim: int | None = None,
    *,
    dtype=torch.float32,
) -> torch.Tensor:
    """RoPE frequencies ``θ_i = base^(−2i/r)``, ``i = 0 … r/2 − 1`` (radians per position).

    Args:
        head_dim: per-head width ``d``; an even integer ``>= 2``.
        base: ``rope_theta`` (10000 in RoFormer and Llama 2, 500000 in Llama 3); ``> 0``.
        rotary_dim: rotated channels ``r`` (default ``head_dim``); even, ``2 <= r <= d``.
            Partial rotation (``r < d``, e.g. GPT-NeoX's ``rotary_pct``) computes the
            frequencies over ``r``, not ``d``: head_dim 8, rotary_dim 4 → ``[1.0, 0.01]``.
        dtype: float32 (default) or float64; half precision is refused because angles
            built from it are wrong (see the RoPE chapter).

    Returns:
        ``(r/2,)`` tensor ``inv_freq``.

    Raises:
        ValueError: odd or too small ``head_dim``/``rotary_dim``, ``rotary_dim > head_dim``,
            ``base <= 0``, or a dtype other than float32/float64.

    Source: Su et al., RoFormer, eq. (15); matches ``transformers``'
    ``_compute_default_rope_parameters`` (``inv_freq = 1/base**(arange(0, r, 2)/r)``).
    """
    head_dim = check_even("head_dim", head_dim)
    rotary_dim = head_dim if rotary_dim is None else check_even("rotary_dim", rotary_dim)
    if rotary_dim > head_dim:
        raise ValueError(
            f"rotary_dim must be <= head_dim ({head_dim}), got {rotary_dim}"
        )
    base = check_real("base", base, gt=0.0)
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype}")
    exponent = torch.arange(0, rotary_dim, 2, dtype=torch.int64).to(torch.float64) / rotary_dim
    return (1.0 / (base**exponent)).to(dtype)
