"""RoPE inside attention: what happens to the values, and decoding with a KV cache.

Shape notation as in :mod:`posenc.rope`: ``...`` leading batch/head dims, ``s_q`` queries,
``s_k`` keys, ``d`` = ``head_dim``, ``d_v`` the value width.

* :func:`rope_attention` — attention with RoPE on ``q`` and ``k`` and a choice of what
  happens to ``v`` (``VALUE_MODES``: not rotated, rotated, rotated and rotated back), the
  comparison of the "Why V is not rotated" chapter.
* :func:`rope_decode` — causal RoPE attention run as inference runs it: a prefill, then one
  token at a time through a :class:`posenc.attention.KVCache`.
"""

from __future__ import annotations

import torch

from ._checks import as_positions, check_choice, check_even, check_int
from .rope import _check_x, apply_rope

VALUE_MODES = ("raw", "rotated", "vo")

__all__ = ["VALUE_MODES", "rope_attention", "rope_decode"]


def rope_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    q_positions,
    k_positions=None,
    *,
    values: str = "raw",
    layout: str = "half",
    inv_freq: torch.Tensor | None = None,
    base: float = 10000.0,
    causal: bool = False,
    scale: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention with RoPE on ``q`` and ``k``, and a choice of what happens to ``v``.

    ``values`` selects the variant compared in the "Why V is not rotated" chapter:

    * ``"raw"`` — standard RoPE: ``o_m = Σ_n a_mn v_n``.
    * ``"rotated"`` — also rotate each value at its own position:
      ``o_m = Σ_n a_mn R_n v_n``; the output now depends on absolute positions.
    * ``"vo"`` — rotate values at their positions and the output back by the query's:
      ``o_m = R_mᵀ Σ_n a_mn R_n v_n = Σ_n a_mn R_{n−m} v_n``; relative again
      (the idea of VO-RoPE / RoPER).

    Args:
        q: ``(..., s_q, d)``; k: ``(..., s_k, d)``; v: ``(..., s_k, d_v)`` (``d_v`` even for
            ``"rotated"``/``"vo"``; its frequencies come from ``base`` over ``d_v``).
        q_positions: integer positions ``(s_q,)`` (or broadcastable ``(..., s_q)``).
        k_positions: positions of the keys (default: ``q_positions``).
        values: ``"raw"``, ``"rotated"`` or ``"vo"``.
        layout, inv_freq, base: as in :func:`~posenc.rope.apply_rope` (``inv_freq`` is for
            ``q``/``k``).
        causal: mask keys after each query (queries are the last ``s_q`` keys).
        scale: score multiplier, default ``1/√d``.

    Returns:
        ``(output, weights)`` as :func:`posenc.attention.attention`.

    Raises:
        ValueError: unknown ``values``/``layout``; odd ``d_v`` with a rotating mode;
            the errors of :func:`~posenc.rope.apply_rope` and :func:`posenc.attention.attention`.
    """
    from .attention import attention

    values = check_choice("values", values, VALUE_MODES)
    k_positions = q_positions if k_positions is None else k_positions
    qr = apply_rope(q, q_positions, inv_freq=inv_freq, base=base, layout=layout)
    kr = apply_rope(k, k_positions, inv_freq=inv_freq, base=base, layout=layout)
    if values != "raw":
        _check_x(v)
        check_even("v.shape[-1] (values are rotated in pairs)", v.shape[-1])
        v = apply_rope(v, k_positions, base=base, layout=layout)
    out, weights = attention(qr, kr, v, scale=scale, causal=causal)
    if values == "vo":
        neg = -as_positions("q_positions", q_positions, minimum=None)
        out = apply_rope(out, neg, base=base, layout=layout)
    return out, weights


def rope_decode(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    prefill: int = 1,
    layout: str = "half",
    inv_freq: torch.Tensor | None = None,
    base: float = 10000.0,
    positions=None,
) -> torch.Tensor:
    """Causal RoPE self-attention run the way inference runs it: prefill, then one token at a time.

    The first ``prefill`` tokens go through in one call; every later token is rotated at its
    position, its rotated key and raw value are appended to a
    :class:`posenc.attention.KVCache`, and its query attends to everything cached. With the
    default ``positions`` (taken from the cache length) the result equals
    ``rope_attention(q, k, v, arange(s), causal=True)[0]`` up to float rounding.

    Args:
        q, k: ``(..., s, d)``; v: ``(..., s, d_v)`` — the projections of all ``s`` tokens.
        prefill: tokens processed in the first call, ``1 <= prefill <= s``.
        layout, inv_freq, base: as in :func:`~posenc.rope.apply_rope`.
        positions: optional ``(s,)`` integer positions to use instead of the cache's
            bookkeeping — e.g. to show what restarting every decode step at 0 does.

    Returns:
        ``(..., s, d_v)`` outputs, one row per token.

    Raises:
        ValueError: ``prefill`` out of range; ``positions`` not of shape ``(s,)``; the
            errors of :func:`~posenc.rope.apply_rope` and :func:`posenc.attention.attention`.
    """
    from .attention import KVCache, attention

    s = _check_x(q).shape[-2]
    for name, t in (("k", k), ("v", v)):
        if _check_x(t).shape[-2] != s:
            raise ValueError(
                f"q, k and v must have the same sequence length, got q {tuple(q.shape)} and "
                f"{name} {tuple(t.shape)}"
            )
    prefill = check_int("prefill", prefill, minimum=1)
    if prefill > s:
        raise ValueError(f"prefill must be <= the sequence length {s}, got {prefill}")
    if positions is not None:
        positions = as_positions("positions", positions, minimum=None)
        if positions.shape != (s,):
            raise ValueError(f"positions must have shape ({s},), got {tuple(positions.shape)}")
    cache = KVCache(num_layers=1)
    outputs = []
    start = 0
    for stop in [prefill, *range(prefill + 1, s + 1)]:
        pos = cache.positions(stop - start) if positions is None else positions[start:stop]
        qr = apply_rope(q[..., start:stop, :], pos, inv_freq=inv_freq, base=base, layout=layout)
        kr = apply_rope(k[..., start:stop, :], pos, inv_freq=inv_freq, base=base, layout=layout)
        k_all, v_all = cache.update(0, kr, v[..., start:stop, :])
        outputs.append(attention(qr, k_all, v_all, causal=True)[0])
        start = stop
    return torch.cat(outputs, dim=-2)
