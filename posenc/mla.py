"""Multi-head latent attention (MLA) with decoupled RoPE: DeepSeek-V2/V3's key/value cache.

Shape notation: ``...`` leading batch dims, ``h`` heads, ``s_q`` queries, ``s_k`` keys,
``d_c`` = ``kv_lora_rank`` (latent width), ``d_n`` = ``qk_nope_head_dim``, ``d_r`` =
``qk_rope_head_dim`` (even), ``d_v`` = ``v_head_dim``. Up-projection weights are stored as
``torch.nn.Linear`` stores them, output × input: ``w_uk: (h, d_n, d_c)``,
``w_uv: (h, d_v, d_c)``.

MLA caches one latent ``c_n`` (width ``d_c``) per token and derives every head's key and
value from it, ``k_n^C = W_UK c_n`` and ``v_n = W_UV c_n``. Without positions the key
up-projection can be *absorbed* into the query, ``q^T W_UK c_n = (W_UKᵀ q)ᵀ c_n``, so the
keys are never materialised. RoPE on that key would put a rotation between the two,
``(R_m q)ᵀ R_n W_UK c_n = qᵀ R_{n−m} W_UK c_n``, a matrix that changes with every offset, so
nothing fixed can be absorbed. DeepSeek-V2 therefore *decouples* RoPE (paper section 2.1.3):
each head gets ``d_r`` extra query channels, all heads share one extra key ``k_n^R`` of
width ``d_r``, and only those carry RoPE::

    score_mn = q_m^C · W_UK c_n  +  (R_m q_m^R) · (R_n k_n^R)        (per head)
    o_m      = W_UV Σ_n a_mn c_n

The cache holds ``c_n`` and the rotated ``R_n k_n^R``: ``d_c + d_r`` numbers per token and
layer (:func:`mla_cache_elements`), against ``2 · n_kv · d_h`` for standard or grouped-query
attention (:func:`kv_cache_elements`; DeepSeek-V2's Table 1 compares MLA
with baselines of ``d_h``-wide keys and values, without decoupled channels).
"""

from __future__ import annotations

import math

import torch

from ._checks import check_choice, check_float_tensor, check_int, check_real
from .attention import attention, causal_mask
from .rope import LAYOUTS, apply_rope

__all__ = ["kv_cache_elements", "mla_attention", "mla_cache_elements"]


def kv_cache_elements(num_key_value_heads: int, head_dim: int, v_head_dim: int | None = None
                      ) -> int:
    """Numbers cached per token and layer by multi-head or grouped-query attention.

    ``n_kv · (d_k + d_v)``: one key and one value per key/value head (``n_kv = h`` for
    standard multi-head attention, ``n_kv < h`` for grouped-query, 1 for multi-query).

    Args:
        num_key_value_heads: ``n_kv >= 1``.
        head_dim: key width ``d_k >= 1``.
        v_head_dim: value width (default ``head_dim``).

    Returns:
        The element count (multiply by bytes per element and by layers for memory).

    Raises:
        ValueError: a non-positive argument.
        TypeError: a non-integer argument.

    Source: DeepSeek-V2 (DeepSeek-AI, 2024), Table 1 (``2 n_h d_h l`` for MHA,
    ``2 n_g d_h l`` for GQA, per token over ``l`` layers).
    """
    n = check_int("num_key_value_heads", num_key_value_heads, minimum=1)
    d_k = check_int("head_dim", head_dim, minimum=1)
    d_v = d_k if v_head_dim is None else check_int("v_head_dim", v_head_dim, minimum=1)
    return n * (d_k + d_v)


def mla_cache_elements(kv_lora_rank: int, qk_rope_head_dim: int) -> int:
    """Numbers MLA caches per token and layer: the latent and the shared rotated key.

    Args:
        kv_lora_rank: latent width ``d_c >= 1``.
        qk_rope_head_dim: width ``d_r >= 0`` of the decoupled (shared) RoPE key.

    Returns:
        ``d_c + d_r``.

    Raises:
        ValueError: an argument out of range.
        TypeError: a non-integer argument.

    Source: DeepSeek-V2, Table 1 (``(d_c + d_h^R) l``); matches what ``transformers``'
    ``DeepseekV3Attention`` passes to ``cache.update`` (``kv_nope`` of width
    ``kv_lora_rank`` and ``k_rot`` of width ``qk_rope_head_dim``, one head each).
    """
    d_c = check_int("kv_lora_rank", kv_lora_rank, minimum=1)
    d_r = check_int("qk_rope_head_dim", qk_rope_head_dim, minimum=0)
    return d_c + d_r


def _check_weight(name: str, w, heads: int, width: int) -> torch.Tensor:
    check_float_tensor(name, w, "(h, d_out, d_c)", min_ndim=3)
    if w.ndim != 3 or w.shape[0] != heads or w.shape[2] != width:
        raise ValueError(
            f"{name} must have shape ({heads}, d_out, {width}) = (heads, out, kv_lora_rank), "
            f"got {tuple(w.shape)}"
        )
    return w


def mla_attention(
    q_nope: torch.Tensor,
    q_rope: torch.Tensor,
    c_kv: torch.Tensor,
    k_rope: torch.Tensor,
    w_uk: torch.Tensor,
    w_uv: torch.Tensor,
    q_positions,
    k_positions=None,
    *,
    inv_freq: torch.Tensor | None = None,
    base: float = 10000.0,
    layout: str = "interleaved",
    absorb: bool = False,
    causal: bool = False,
    scale: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Multi-head latent attention with decoupled RoPE, with or without weight absorption.

    ``absorb=False`` expands the latent into per-head keys ``[W_UK c_n ; R_n k_n^R]`` and
    values ``W_UV c_n`` and runs ordinary attention (what ``transformers`` does).
    ``absorb=True`` never forms them: the query is mapped into the latent space,
    ``W_UKᵀ q^C``, scored against ``c_n`` directly, the rope part is added, and ``W_UV`` is
    applied once to the weighted sum of latents. Both give the same result.

    Args:
        q_nope: ``(..., h, s_q, d_n)`` query channels without position.
        q_rope: ``(..., h, s_q, d_r)`` decoupled query channels (rotated here).
        c_kv: ``(..., s_k, d_c)`` cached latents.
        k_rope: ``(..., s_k, d_r)`` the shared decoupled key before rotation (rotated here;
            in a cache it is stored rotated).
        w_uk: ``(h, d_n, d_c)`` key up-projection; w_uv: ``(h, d_v, d_c)`` value one.
        q_positions, k_positions: integer positions ``(s_q,)`` and ``(s_k,)`` (default
            ``k_positions = q_positions``).
        inv_freq, base: frequencies of the ``d_r`` rope channels (default
            ``rope_inv_freq(d_r, base)``).
        layout: pairing of the rope channels, ``"interleaved"`` (DeepSeek's checkpoints,
            ``rope_interleave=True``) or ``"half"``.
        absorb: compute through the latent (see above).
        causal: mask keys after each query (queries are the last ``s_q`` keys).
        scale: score multiplier, default ``1/√(d_n + d_r)``: ``DeepseekV3Attention``'s
            value for ``rope_type="default"`` only. Under YaRN it multiplies that by
            ``mscale²``, ``mscale = 0.1·mscale_all_dim·ln(factor) + 1``
            (``yarn_apply_mscale``); pass the product here.

    Returns:
        ``(output, weights)``: ``(..., h, s_q, d_v)`` and ``(..., h, s_q, s_k)``.

    Raises:
        ValueError: mismatched widths (``q_rope``/``k_rope``, ``q_nope``/``w_uk``,
            ``c_kv``/``w_uk``/``w_uv``), unknown ``layout``; the errors of
            :func:`posenc.rope.apply_rope` and :func:`posenc.attention.attention`.
        TypeError: non-floating tensors, a non-bool ``absorb``.

    Source: DeepSeek-V2 (DeepSeek-AI, 2024), section 2.1 (eqs. 9–19); matches
    ``transformers`` 5.24 ``DeepseekV3Attention`` on a random configuration
    (``tests/test_mla.py``).
    """
    for name, t, shape in (("q_nope", q_nope, "(..., h, s_q, d_n)"),
                           ("q_rope", q_rope, "(..., h, s_q, d_r)"),
                           ("c_kv", c_kv, "(..., s_k, d_c)"),
                           ("k_rope", k_rope, "(..., s_k, d_r)")):
        check_float_tensor(name, t, shape, min_ndim=2)
    if not isinstance(absorb, bool):
        raise TypeError(f"absorb must be a bool, got {absorb!r}")
    layout = check_choice("layout", layout, LAYOUTS)
    heads, d_n, d_r = q_nope.shape[-3], q_nope.shape[-1], q_rope.shape[-1]
    if k_rope.shape[-1] != d_r:
        raise ValueError(f"q_rope and k_rope must share d_r, got {d_r} and {k_rope.shape[-1]}")
    d_c = c_kv.shape[-1]
    w_uk = _check_weight("w_uk", w_uk, heads, d_c)
    w_uv = _check_weight("w_uv", w_uv, heads, d_c)
    if w_uk.shape[1] != d_n:
        raise ValueError(f"w_uk must map to d_n = {d_n} channels, got {tuple(w_uk.shape)}")
    k_positions = q_positions if k_positions is None else k_positions
    opts = {"inv_freq": inv_freq, "base": base, "layout": layout}
    q_r = apply_rope(q_rope, q_positions, **opts)
    k_r = apply_rope(k_rope, k_positions, **opts).unsqueeze(-3)  # one head, shared
    scale = 1.0 / math.sqrt(d_n + d_r) if scale is None else check_real("scale", scale, gt=0.0)
    if not absorb:
        c = c_kv.unsqueeze(-3)
        k_c = c @ w_uk.transpose(-1, -2)  # (..., h, s_k, d_n)
        v = c @ w_uv.transpose(-1, -2)  # (..., h, s_k, d_v)
        keys = torch.cat([k_c, k_r.expand(*k_c.shape[:-1], d_r)], dim=-1)
        return attention(torch.cat([q_nope, q_r], dim=-1), keys, v, scale=scale, causal=causal)
    q_latent = q_nope @ w_uk  # (..., h, s_q, d_c): W_UKᵀ q^C, absorbed
    c = c_kv.unsqueeze(-3)
    scores = (q_latent @ c.transpose(-1, -2) + q_r @ k_r.transpose(-1, -2)) * scale
    if causal:
        keep = causal_mask(q_nope.shape[-2], c_kv.shape[-2], device=scores.device)
        scores = scores.masked_fill(~keep, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return (weights @ c) @ w_uv.transpose(-1, -2), weights
