"""The two rope types without a length rule: proportional RoPE and unscaled RoPE.

:func:`proportional` (Gemma 4's global layers) rotates the fastest ``r/2`` pairs of the
full-head schedule, divided by ``s``, and leaves the other pairs still; :func:`default` is
plain RoPE in the registries' ``(inv_freq, attention_factor)`` form. Both are
``transformers`` rope types (:data:`posenc.scaling.ROPE_TYPES`).
"""

from __future__ import annotations

import torch

from .._checks import check_even, check_real
from ._checks import _dtype, _factor, _length, _rotary_dim, _theta


def proportional(head_dim: int, factor: float = 1.0,
                 original_max_position_embeddings: int | None = None, *,
                 base: float = 10000.0, rotary_dim: int | None = None,
                 dtype=torch.float32) -> tuple[torch.Tensor, float]:
    """Proportional RoPE (Gemma 4's global layers): partial rotation *spread over the head*.

    Unlike partial rotary (``rotary_dim = r``: frequencies ``base^(−2i/r)`` on the first
    ``r`` channels, pairs ``(i, i + r/2)``), proportional RoPE keeps the full head's pairs
    ``(i, i + d/2)`` and the full head's frequencies ``θ_i = base^(−2i/d)``, and sets
    ``θ_i = 0`` (no rotation) for the pairs ``i >= r/2``::

        θ'_i = base^(−2i/d) / s   for i < r/2,      θ'_i = 0   for r/2 <= i < d/2

    So it returns ``d/2`` frequencies (use it with ``rotary_dim = d`` in
    :func:`posenc.rope.apply_rope`), and the rotated pairs are the *fastest* ``r/2`` of the
    full-head schedule rather than a compressed schedule over ``r`` channels.

    Args:
        head_dim: ``d``, even.
        factor: ``s >= 1`` dividing the frequencies (default 1).
        original_max_position_embeddings: unused; checked for a uniform signature.
        base: ``rope_theta``, ``> 0``.
        rotary_dim: ``r = 2·⌊p·d/2⌋`` for ``partial_rotary_factor`` ``p`` (default ``d``),
            even, ``<= d``; may be 0 (no pair rotates).
        dtype: float32 or float64.

    Returns:
        ``(inv_freq (d/2,), 1.0)``.

    Raises:
        ValueError: odd dims, ``rotary_dim > head_dim`` or ``< 0``, ``factor < 1``,
            ``base <= 0``, bad dtype.

    Source: matches ``transformers``' ``_compute_proportional_rope_parameters`` (tested).
    """
    d = check_even("head_dim", head_dim)
    r = d if rotary_dim is None else check_even("rotary_dim", rotary_dim, minimum=0)
    if r > d:
        raise ValueError(f"rotary_dim must be <= head_dim ({d}), got {r}")
    factor = _factor(factor)
    if original_max_position_embeddings is not None:
        _length("original_max_position_embeddings", original_max_position_embeddings)
    dtype = _dtype(dtype)
    inv_freq = _theta(d, base, d) / factor
    inv_freq[r // 2:] = 0.0
    return inv_freq.to(dtype), 1.0


def default(head_dim: int, factor: float = 1.0,
            original_max_position_embeddings: int | None = None, *,
            base: float = 10000.0, rotary_dim: int | None = None,
            dtype=torch.float32) -> tuple[torch.Tensor, float]:
    """Unscaled RoPE in the registry's form: ``(rope_inv_freq(d, base, r), 1.0)``.

    Args:
        head_dim, base, rotary_dim, dtype: as :func:`posenc.rope.rope_inv_freq`.
        factor: must be 1 (there is nothing to scale); accepted for a uniform signature.
        original_max_position_embeddings: unused; checked for a uniform signature.

    Raises:
        ValueError: ``factor != 1`` and the errors of :func:`posenc.rope.rope_inv_freq`.

    Source: Su et al., RoFormer, eq. (15); ``transformers``' ``"default"`` rope type.
    """
    r = _rotary_dim(head_dim, rotary_dim)
    if check_real("factor", factor) != 1.0:
        raise ValueError(f"factor must be 1 for unscaled RoPE, got {factor:g}")
    if original_max_position_embeddings is not None:
        _length("original_max_position_embeddings", original_max_position_embeddings)
    dtype = _dtype(dtype)
    return _theta(head_dim, base, r).to(dtype), 1.0
