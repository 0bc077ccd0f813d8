"""LongRoPE (Phi-3/Phi-4): one searched rescale factor per pair, chosen by length.

:func:`longrope` divides each ``θ_i`` by its entry of ``short_factor`` or ``long_factor``
(data from an evolutionary search, checked by ``_factor_list``) and returns the attention
factor of :func:`longrope_attention_factor` unless one is given.
"""

from __future__ import annotations

import math

import torch

from .._checks import check_int, check_real
from ._checks import _dtype, _factor, _length, _rotary_dim, _theta


def _factor_list(name: str, values, pairs: int) -> torch.Tensor:
    """``values`` as a float64 ``(pairs,)`` tensor of finite numbers ``> 0``; raise otherwise."""
    if isinstance(values, (str, bytes)) or values is None:
        raise TypeError(f"{name} must be a sequence of {pairs} numbers, got {values!r}")
    try:
        t = torch.as_tensor(values, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError) as err:
        raise TypeError(
            f"{name} must be a sequence of {pairs} numbers, got {type(values).__name__}"
        ) from err
    if t.shape != (pairs,):
        raise ValueError(
            f"{name} must hold rotary_dim/2 = {pairs} numbers (one per pair), got shape "
            f"{tuple(t.shape)}"
        )
    if not bool(torch.isfinite(t).all()) or not bool((t > 0).all()):
        raise ValueError(f"{name} must hold finite numbers > 0")
    return t


def longrope_attention_factor(factor: float, original_max_position_embeddings: int) -> float:
    """LongRoPE's default cos/sin multiplier ``√(1 + ln s / ln L)`` (1.0 for ``s <= 1``).

    Args:
        factor: ``s``, finite and ``> 0`` (Phi-3 configs leave it out and use
            ``max_position_embeddings / original_max_position_embeddings``).
        original_max_position_embeddings: ``L``, an integer ``>= 2`` (``ln L`` divides).

    Returns:
        A float; logits are multiplied by its square.

    Raises:
        ValueError: ``factor <= 0``; ``L < 2``.
        TypeError: ``L`` not an integer.

    Source: matches the default in ``transformers``' ``_compute_longrope_parameters``
    (Microsoft's Phi-3 modelling code, ``scaling_factor``).
    """
    factor = check_real("factor", factor, gt=0.0)
    L = check_int("original_max_position_embeddings", original_max_position_embeddings,
                  minimum=2)
    if factor <= 1.0:
        return 1.0
    return math.sqrt(1.0 + math.log(factor) / math.log(L))


def longrope(head_dim: int, factor: float, original_max_position_embeddings: int, *,
             short_factor, long_factor, seq_len: int | None = None, base: float = 10000.0,
             attention_factor: float | None = None, rotary_dim: int | None = None,
             dtype=torch.float32) -> tuple[torch.Tensor, float]:
    """LongRoPE (Phi-3/Phi-4 long-context models): one searched rescale factor per pair.

    ``θ'_i = θ_i / λ_i`` where ``λ`` is ``long_factor`` when ``seq_len > L`` and
    ``short_factor`` otherwise (``seq_len = None`` counts as short, as at model init), and
    the attention factor is the explicit ``attention_factor`` or else
    :func:`longrope_attention_factor` ``√(1 + ln s / ln L)``. The factor lists come from an
    evolutionary search (Ding et al., 2024); they are data, not a formula.

    Args:
        head_dim: ``d``, even.
        factor: ``s >= 1``, the context-extension ratio (only the attention factor uses it).
        original_max_position_embeddings: ``L >= 2`` (4096 for Phi-3-mini-128k).
        short_factor, long_factor: sequences of ``r/2`` finite numbers ``> 0``.
        seq_len: current length (tokens so far, cache included); ``None`` = short.
        base: ``rope_theta``, ``> 0``.
        attention_factor: explicit cos/sin multiplier, ``> 0``.
        rotary_dim: ``r`` (default ``d``; Phi-3 configs may set ``partial_rotary_factor``).
        dtype: float32 or float64.

    Returns:
        ``(inv_freq (r/2,), attention_factor)``.

    Raises:
        ValueError: factor lists of the wrong length or with values ``<= 0``; ``factor <
            1``; ``L < 2``; ``seq_len < 1``; odd dims; ``attention_factor <= 0``; bad dtype.
        TypeError: factor lists that are not sequences of numbers.

    Source: Ding et al. (2024), LongRoPE (one rescale factor ``λ_i`` per dimension); matches
    ``transformers``' ``_compute_longrope_parameters`` (tested on a grid and on
    Phi-3-mini-128k's published factors).
    """
    r = _rotary_dim(head_dim, rotary_dim)
    factor = _factor(factor)
    L = check_int("original_max_position_embeddings", original_max_position_embeddings,
                  minimum=2)
    if seq_len is not None:
        seq_len = _length("seq_len", seq_len)
    short = _factor_list("short_factor", short_factor, r // 2)
    long = _factor_list("long_factor", long_factor, r // 2)
    dtype = _dtype(dtype)
    if attention_factor is None:
        attention_factor = longrope_attention_factor(factor, L)
    else:
        attention_factor = check_real("attention_factor", attention_factor, gt=0.0)
    ext = long if seq_len is not None and seq_len > L else short
    return (_theta(head_dim, base, r) / ext).to(dtype), attention_factor
