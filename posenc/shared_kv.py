"""Shared key/value attention with rotated values: DeepSeek-V4's attention, position part.

Shape notation: ``...`` leading batch dims, ``h`` query heads, ``s_q`` queries, ``s_k`` keys,
``d`` = ``head_dim``, ``r`` = ``rotary_dim`` (even, ``r <= d``). Each head is laid out as
``[nope | rope]``: the first ``d − r`` channels carry no position, the *trailing* ``r`` are
rotated by RoPE (here the trailing slice, unlike :func:`posenc.rope.apply_rope`, which
rotates the leading one).

DeepSeek-V4 (``transformers`` ``models/deepseek_v4``, ``DeepseekV4Attention``) projects
every token to *one* tensor ``kv_n`` of width ``d`` that serves as the key and the value of
all heads (multi-query attention with ``K = V``). RoPE rotates the trailing slice of each
query and of ``kv_n``, so the values carry a rotation by their own position; the attention
output's trailing slice is then rotated back at the query position (``cos, −sin``)::

    o_m = R_{−m} Σ_n a_mn R_n kv_n = Σ_n a_mn R_{n−m} kv_n      (on the rope slice)
    o_m = Σ_n a_mn kv_n                                         (on the nope slice)

That is the VO-RoPE construction of :func:`posenc.rope_attention.rope_attention` (``values="vo"``)
restricted to the rope slice; the output depends only on offsets ``n − m``. V4 also gives
every head a learned *attention sink*: one extra logit in the softmax with no value behind
it, so a head can attend to nothing (as gpt-oss does); ``sinks`` reproduces it.
"""

from __future__ import annotations

import torch

from ._checks import as_positions, check_choice, check_even, check_float_tensor
from .attention import attention, causal_mask
from .rope import LAYOUTS, apply_rope, rope_inv_freq

__all__ = ["apply_rope_trailing", "shared_kv_attention"]


def apply_rope_trailing(
    x: torch.Tensor,
    positions,
    *,
    rotary_dim: int,
    inv_freq: torch.Tensor | None = None,
    base: float = 10000.0,
    layout: str = "interleaved",
) -> torch.Tensor:
    """Rotate the *last* ``r`` channels of ``x`` by RoPE; pass the first ``d − r`` through.

    Args:
        x: ``(..., s, d)`` floating tensor.
        positions: integer positions ``(s,)`` or broadcastable ``(..., s)``; negative
            positions rotate backwards (``R_{−m} = R_mᵀ``).
        rotary_dim: ``r``, even, ``2 <= r <= d``.
        inv_freq: ``(r/2,)`` frequencies; default ``rope_inv_freq(r, base)``.
        base: ``rope_theta`` used when ``inv_freq`` is not given.
        layout: pairing inside the slice: ``"interleaved"`` (DeepSeek, default) or
            ``"half"``.

    Returns:
        Tensor shaped and typed like ``x``.

    Raises:
        ValueError: odd ``rotary_dim`` or one larger than ``d``; unknown ``layout``; the
            errors of :func:`posenc.rope.apply_rope`.
        TypeError: ``x`` not a floating tensor.

    Source: matches ``apply_rotary_pos_emb`` of ``transformers``' ``deepseek_v4``
    (``x[..., -rope_dim:]`` rotated with interleaved pairs; ``tests/test_shared_kv.py``).
    """
    check_float_tensor("x", x, "(..., s, d)", min_ndim=1)
    r = check_even("rotary_dim", rotary_dim)
    if r > x.shape[-1]:
        raise ValueError(f"rotary_dim must be <= d = {x.shape[-1]}, got {r}")
    layout = check_choice("layout", layout, LAYOUTS)
    if inv_freq is None:
        dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
        inv_freq = rope_inv_freq(r, base, dtype=dtype)
    pos = as_positions("positions", positions, minimum=None)
    rotated = apply_rope(x[..., -r:], pos, inv_freq=inv_freq, layout=layout)
    return torch.cat([x[..., :-r], rotated], dim=-1)


def shared_kv_attention(
    q: torch.Tensor,
    kv: torch.Tensor,
    q_positions,
    k_positions=None,
    *,
    rotary_dim: int,
    inv_freq: torch.Tensor | None = None,
    base: float = 10000.0,
    layout: str = "interleaved",
    sinks: torch.Tensor | None = None,
    causal: bool = False,
    scale: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention with one tensor as key and value, RoPE on its trailing slice, output back.

    Steps (DeepSeek-V4's ``DeepseekV4Attention.forward`` from the query/key projections to
    the output projection): rotate the last ``r`` channels of ``q`` and ``kv`` at their
    positions; attend with ``kv`` as keys *and* values (optionally with a sink logit per
    head); rotate the last ``r`` channels of the output by ``−q_positions``. The result is
    ``o_m = Σ_n a_mn [kv_n^nope ; R_{n−m} kv_n^rope]`` and does not change when all
    positions shift by the same amount.

    Args:
        q: queries ``(..., h, s_q, d)``.
        kv: the shared key/value tensor ``(..., 1, s_k, d)`` (one head, broadcast to all
            ``h``; ``(..., h, s_k, d)`` also works).
        q_positions: integer positions of the queries ``(s_q,)``.
        k_positions: positions of the keys ``(s_k,)`` (default: ``q_positions``).
        rotary_dim: ``r``, the trailing channels that are rotated.
        inv_freq, base, layout: as in :func:`apply_rope_trailing`.
        sinks: optional ``(h,)`` sink logits (one extra softmax entry per head with a zero
            value); the returned weights then sum to less than 1.
        causal: mask keys after each query (queries are the last ``s_q`` keys).
        scale: score multiplier, default ``1/√d``.

    Returns:
        ``(output, weights)``: ``(..., h, s_q, d)`` and ``(..., h, s_q, s_k)`` (the sink's
        weight left out, as ``transformers`` does).

    Raises:
        ValueError: ``sinks`` not of shape ``(h,)``; the errors of
            :func:`apply_rope_trailing` and :func:`posenc.attention.attention`.
        TypeError: ``q``/``kv``/``sinks`` not floating tensors.

    Source: ``transformers`` 5.24 ``models/deepseek_v4/modeling_deepseek_v4.py``
    (``DeepseekV4Attention``, ``apply_rotary_pos_emb``, ``eager_attention_forward``); the
    outputs match it on a random configuration (``tests/test_shared_kv.py``).
    """
    check_float_tensor("q", q, "(..., h, s_q, d)", min_ndim=3)
    check_float_tensor("kv", kv, "(..., 1, s_k, d)", min_ndim=3)
    k_positions = q_positions if k_positions is None else k_positions
    opts = {"rotary_dim": rotary_dim, "inv_freq": inv_freq, "base": base, "layout": layout}
    qr = apply_rope_trailing(q, q_positions, **opts)
    kvr = apply_rope_trailing(kv, k_positions, **opts)
    s_q, s_k = q.shape[-2], kv.shape[-2]
    if sinks is None:
        out, weights = attention(qr, kvr, kvr, scale=scale, causal=causal)
    else:
        heads = q.shape[-3]
        check_float_tensor("sinks", sinks, "(h,)", min_ndim=1)
        if tuple(sinks.shape) != (heads,):
            raise ValueError(f"sinks must have shape ({heads},) (one per head), got "
                             f"{tuple(sinks.shape)}")
        # The sink is one more key: score = its logit (zero key, logit as bias), value 0.
        zero = kvr.new_zeros(*kvr.shape[:-2], 1, kvr.shape[-1])
        kv_ext = torch.cat([kvr, zero], dim=-2)
        bias = torch.zeros(heads, 1, s_k + 1, dtype=q.dtype, device=q.device)
        bias[:, 0, -1] = sinks.to(q.dtype)
        mask = None
        if causal:
            keep = causal_mask(s_q, s_k, device=q.device)
            mask = torch.cat([keep, keep.new_ones(s_q, 1)], dim=-1)
        out, weights = attention(qr, kv_ext, kv_ext, bias=bias, mask=mask, scale=scale)
        weights = weights[..., :-1]
    neg = -as_positions("q_positions", q_positions, minimum=None)
    return apply_rope_trailing(out, neg, **opts), weights
