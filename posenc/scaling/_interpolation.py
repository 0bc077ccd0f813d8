"""Interpolation by one rule for every pair: PI, NTK-aware and dynamic NTK.

:func:`per_pair_scale` measures any method by how much slower each pair turns
(``θ_i / θ'_i``: 1 untouched, ``s`` fully interpolated). :func:`linear` (Position
Interpolation) divides every frequency by ``s``; :func:`ntk_aware` and :func:`dynamic_ntk`
keep plain RoPE and enlarge its base instead (:func:`ntk_aware_base`,
:func:`dynamic_ntk_base`, the latter from the current sequence length).
"""

from __future__ import annotations

import math

import torch

from .._checks import check_even, check_real
from ..rope import rope_inv_freq
from ._checks import _dtype, _factor, _length, _rotary_dim, _theta


def per_pair_scale(inv_freq: torch.Tensor, head_dim: int, base: float = 10000.0,
                   rotary_dim: int | None = None) -> torch.Tensor:
    """How much slower each pair turns after scaling: ``θ_i / θ'_i``.

    Args:
        inv_freq: ``(r/2,)`` scaled frequencies ``θ'_i`` from any method here.
        head_dim, base, rotary_dim: the *original* RoPE settings (``θ_i = base^(−2i/r)``).

    Returns:
        ``(r/2,)`` float64 tensor; 1 where a pair is untouched, ``s`` where it is fully
        interpolated (PI divides every frequency by ``s``).

    Raises:
        ValueError: ``inv_freq`` not of length ``r/2`` or not positive; bad RoPE settings.
        TypeError: ``inv_freq`` not a tensor.
    """
    if not isinstance(inv_freq, torch.Tensor):
        raise TypeError(f"inv_freq must be a torch.Tensor, got {type(inv_freq).__name__}")
    theta = _theta(head_dim, base, rotary_dim, device=inv_freq.device)
    if inv_freq.shape != theta.shape:
        raise ValueError(
            f"inv_freq must have shape (r/2,) = {tuple(theta.shape)}, got {tuple(inv_freq.shape)}"
        )
    if not bool((inv_freq > 0).all()):
        raise ValueError("inv_freq must be > 0 everywhere")
    return theta / inv_freq.to(torch.float64)


def ntk_aware_base(base: float, factor: float, rotary_dim: int) -> float:
    """NTK-aware base ``base' = base · s^(r/(r−2))``.

    The exponent is chosen so that the *lowest* frequency ``θ_{r/2−1} = base^(−(r−2)/r)`` is
    divided by exactly ``s`` while ``θ_0 = 1`` is unchanged; pair ``i`` is slowed by
    ``s^(2i/(r−2))``.

    Args:
        base: original ``rope_theta``; ``> 0``.
        factor: ``s >= 1``.
        rotary_dim: ``r``; an even integer ``>= 4`` (``r = 2`` has no exponent).

    Returns:
        The new base as a Python float.

    Raises:
        ValueError: ``base <= 0``; ``factor < 1``; ``rotary_dim`` odd or ``< 4``; a new base
            too large for a float.

    Source: bloc97 (2023), "NTK-Aware Scaled RoPE"; Peng et al. (2023), YaRN, section 3.1.
    """
    base = check_real("base", base, gt=0.0)
    factor = _factor(factor)
    r = check_even("rotary_dim", rotary_dim, minimum=4)
    return _finite_base(base, factor, r)


def _finite_base(base: float, bracket: float, r: int) -> float:
    """``base · bracket^(r/(r−2))``, or a ValueError when that leaves the float range."""
    try:
        new = base * bracket ** (r / (r - 2))
    except OverflowError:
        new = math.inf
    if not math.isfinite(new):
        raise ValueError(
            f"factor {bracket:g} is too large: the scaled base {base:g}·{bracket:g}^"
            f"({r}/{r - 2}) overflows a float"
        )
    return new


def dynamic_ntk_base(base: float, factor: float, original_max_position_embeddings: int,
                     seq_len: int, rotary_dim: int) -> float:
    """The base dynamic NTK uses for a sequence of ``seq_len`` tokens.

    ``base · (s·ℓ/L − (s − 1))^(r/(r−2))`` with ``ℓ = max(seq_len, L)``: equal to ``base``
    *exactly* for every ``seq_len <= L``, and growing with the current length beyond it.
    The bracket is 1 at ``ℓ = L``, equals ``s`` at ``ℓ = (2 − 1/s)·L`` and keeps growing
    (the YaRN paper's dynamic rule uses ``s = ℓ/L`` instead; the chapter compares them).

    Args:
        base: original ``rope_theta``; ``> 0``.
        factor: ``s >= 1`` (the configured ``rope_scaling.factor``).
        original_max_position_embeddings: ``L``, an integer ``>= 1``.
        seq_len: current sequence length ``ℓ`` (tokens so far, cache included), ``>= 1``.
        rotary_dim: ``r``; even, ``>= 4``.

    Returns:
        The base as a Python float.

    Raises:
        ValueError: ``base <= 0``, ``factor < 1``, ``L`` or ``seq_len < 1``, odd ``r`` or
            ``r < 4``; a base too large for a float.
        TypeError: ``L``, ``seq_len`` or ``rotary_dim`` not an integer.

    Source: emozilla (2023), "Dynamically Scaled RoPE"; matches ``transformers``'
    ``_compute_dynamic_ntk_parameters``.
    """
    base = check_real("base", base, gt=0.0)
    factor = _factor(factor)
    L = _length("original_max_position_embeddings", original_max_position_embeddings)
    seq_len = _length("seq_len", seq_len)
    r = check_even("rotary_dim", rotary_dim, minimum=4)
    if seq_len <= L:
        return base
    return _finite_base(base, (factor * seq_len / L) - (factor - 1), r)


def linear(head_dim: int, factor: float, original_max_position_embeddings: int | None = None,
           *, base: float = 10000.0, rotary_dim: int | None = None,
           dtype=torch.float32) -> tuple[torch.Tensor, float]:
    """Position Interpolation (PI): ``θ'_i = θ_i / s`` for every pair.

    Rotating position ``m`` by ``m·θ_i/s`` is rotating position ``m/s`` by ``m/s·θ_i``: the
    ``s·L`` new positions are squeezed into the ``L`` the model was trained on.

    Args:
        head_dim: ``d``, even ``>= 2``.
        factor: ``s >= 1``.
        original_max_position_embeddings: ``L`` (unused by the formula; accepted and checked
            so every method in :data:`ROPE_SCALING` takes the same arguments).
        base: ``rope_theta``; ``> 0``.
        rotary_dim: ``r`` (default ``d``).
        dtype: float32 or float64.

    Returns:
        ``(inv_freq (r/2,), 1.0)``.

    Raises:
        ValueError: odd/too small dims, ``factor < 1``, ``L < 1``, ``base <= 0``, bad dtype.

    Source: Chen et al. (2023), the interpolation ``f'(x, m) = f(x, mL/L')``; matches
    ``transformers``'
    ``_compute_linear_scaling_rope_parameters``.
    """
    r = _rotary_dim(head_dim, rotary_dim)
    factor = _factor(factor)
    if original_max_position_embeddings is not None:
        _length("original_max_position_embeddings", original_max_position_embeddings)
    dtype = _dtype(dtype)
    return (_theta(head_dim, base, r) / factor).to(dtype), 1.0


def ntk_aware(head_dim: int, factor: float, original_max_position_embeddings: int | None = None,
              *, base: float = 10000.0, rotary_dim: int | None = None,
              dtype=torch.float32) -> tuple[torch.Tensor, float]:
    """NTK-aware scaling: plain RoPE with the enlarged base ``base · s^(r/(r−2))``.

    High frequencies are almost untouched (``θ_0 = 1`` exactly), the lowest is divided by
    exactly ``s``, pair ``i`` by ``s^(2i/(r−2))``.

    Args:
        head_dim: ``d``, even ``>= 4``.
        factor: ``s >= 1``.
        original_max_position_embeddings: ``L`` (unused; checked for a uniform signature).
        base: original ``rope_theta``; ``> 0``.
        rotary_dim: ``r`` (default ``d``), even ``>= 4``.
        dtype: float32 or float64.

    Returns:
        ``(inv_freq (r/2,), 1.0)``.

    Raises:
        ValueError: odd dims or ``r < 4``, ``factor < 1``, ``L < 1``, ``base <= 0``, bad dtype.

    Source: bloc97 (2023); Peng et al. (2023), YaRN, section 3.1. ``transformers`` has no
    static NTK type; its dynamic function at ``factor = 1`` and ``seq_len = s·L`` gives this
    exactly (tested).
    """
    r = _rotary_dim(head_dim, rotary_dim)
    if original_max_position_embeddings is not None:
        _length("original_max_position_embeddings", original_max_position_embeddings)
    dtype = _dtype(dtype)
    new_base = ntk_aware_base(base, factor, r)
    return rope_inv_freq(head_dim, new_base, r, dtype=torch.float64).to(dtype), 1.0


def dynamic_ntk(head_dim: int, factor: float, original_max_position_embeddings: int,
                *, seq_len: int | None = None, base: float = 10000.0,
                rotary_dim: int | None = None, dtype=torch.float32) -> tuple[torch.Tensor, float]:
    """Dynamic NTK: NTK-aware frequencies with the base recomputed from the current length.

    For ``seq_len <= L`` (or ``None``) this returns :func:`posenc.rope.rope_inv_freq`'s
    frequencies for the original base *exactly* — a short request after a long one gets the
    model's own RoPE back. Beyond ``L`` the base is :func:`dynamic_ntk_base`.

    Args:
        head_dim: ``d``, even ``>= 4``.
        factor: ``s >= 1``.
        original_max_position_embeddings: ``L``, ``>= 1``.
        seq_len: current length ``ℓ >= 1`` (default ``L``: the unscaled frequencies, as
            ``transformers`` does at init).
        base: original ``rope_theta``; ``> 0``.
        rotary_dim: ``r`` (default ``d``), even ``>= 4``.
        dtype: float32 or float64.

    Returns:
        ``(inv_freq (r/2,), 1.0)``.

    Raises:
        ValueError: as :func:`dynamic_ntk_base`; bad dims or dtype.

    Source: emozilla (2023); matches ``transformers``' ``_compute_dynamic_ntk_parameters``
    (which reads ``L`` from ``max_position_embeddings``).
    """
    r = _rotary_dim(head_dim, rotary_dim)
    L = _length("original_max_position_embeddings", original_max_position_embeddings)
    seq_len = L if seq_len is None else _length("seq_len", seq_len)
    dtype = _dtype(dtype)
    new_base = dynamic_ntk_base(base, factor, L, seq_len, r)
    return rope_inv_freq(head_dim, new_base, r, dtype=torch.float64).to(dtype), 1.0
