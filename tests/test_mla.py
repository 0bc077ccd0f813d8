"""Tests for posenc.mla: DeepSeek-V2/V3 multi-head latent attention with decoupled RoPE.

``ref_scores`` writes the decoupled score of DeepSeek-V2 eq. (16)-(18) one head and one
pair of tokens at a time; the parity test runs a tiny random ``DeepseekV3Attention``
(``transformers`` 5.24) and recomputes its output with the module's projections and
``posenc.mla`` in between.
"""

from __future__ import annotations

import math

import pytest
import torch

from posenc.mla import kv_cache_elements, mla_attention, mla_cache_elements
from posenc.rope import rope_inv_freq, rotation_matrix

F64 = torch.float64


def _inputs(seed=0, h=3, s=5, d_n=6, d_r=4, d_c=8, d_v=5):
    g = torch.Generator().manual_seed(seed)
    def r(*shape):
        return torch.randn(*shape, generator=g, dtype=F64)
    return r(h, s, d_n), r(h, s, d_r), r(s, d_c), r(s, d_r), r(h, d_n, d_c), r(h, d_v, d_c)


def ref_scores(q_nope, q_rope, c_kv, k_rope, w_uk, pos, layout="interleaved"):
    """score_mn = q^C_m · W_UK c_n + (R_m q^R_m) · (R_n k^R_n), scaled by 1/sqrt(d_n + d_r)."""
    h, s, d_n = q_nope.shape
    d_r = q_rope.shape[-1]
    theta = rope_inv_freq(d_r, dtype=F64)
    out = torch.zeros(h, s, s, dtype=F64)
    for hh in range(h):
        for m in range(s):
            qr = rotation_matrix(int(pos[m]), theta, layout=layout) @ q_rope[hh, m]
            for n in range(s):
                kr = rotation_matrix(int(pos[n]), theta, layout=layout) @ k_rope[n]
                out[hh, m, n] = q_nope[hh, m] @ (w_uk[hh] @ c_kv[n]) + qr @ kr
    return out / math.sqrt(d_n + d_r)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_weights_are_the_decoupled_scores(layout):
    args = _inputs()
    pos = torch.arange(5) + 7
    _, w = mla_attention(*args, pos, layout=layout)
    ref = torch.softmax(ref_scores(*args[:5], pos, layout), dim=-1)
    torch.testing.assert_close(w, ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("causal", [False, True])
def test_absorbed_equals_expanded(causal):
    args = _inputs(1)
    pos = torch.arange(5)
    a, wa = mla_attention(*args, pos, causal=causal)
    b, wb = mla_attention(*args, pos, causal=causal, absorb=True)
    torch.testing.assert_close(a, b, rtol=0, atol=1e-12)
    torch.testing.assert_close(wa, wb, rtol=0, atol=1e-12)


def test_shift_invariant():
    args = _inputs(2)
    pos = torch.arange(5)
    a, _ = mla_attention(*args, pos, absorb=True)
    b, _ = mla_attention(*args, pos + 5000, absorb=True)
    torch.testing.assert_close(a, b, rtol=0, atol=1e-10)


def test_rope_inside_the_product_cannot_be_absorbed():
    """With the key R_n W_UK c_n, the matrix between q and c is R_{n-m}-dependent."""
    g = torch.Generator().manual_seed(3)
    w_uk = torch.randn(4, 6, generator=g, dtype=F64)  # (d_key, d_c)
    theta = rope_inv_freq(4, dtype=F64)
    mats = [rotation_matrix(delta, theta).T @ w_uk for delta in range(4)]
    for delta in range(1, 4):
        assert (mats[delta] - mats[0]).abs().max() > 0.1


def test_cache_sizes_deepseek_v2_table_1():
    """DeepSeek-V2: d_c = 4 d_h and d_r = d_h / 2, so MLA caches 4.5 d_h (GQA with 2.25 groups)."""
    d_h = 128
    assert mla_cache_elements(4 * d_h, d_h // 2) == 576
    assert mla_cache_elements(512, 64) / kv_cache_elements(1, d_h) == 2.25
    assert kv_cache_elements(128, 192, 128) == 128 * 320
    assert kv_cache_elements(8, 128) == 2048
    # chapter 6's ratios, in Table 1's frame (baseline keys and values of d_h = 128)
    mla = mla_cache_elements(512, 64)
    assert round(kv_cache_elements(128, d_h) / mla, 1) == 56.9
    assert round(mla / kv_cache_elements(8, d_h), 2) == 0.28  # not "under a quarter"


def test_bad_input():
    q_nope, q_rope, c_kv, k_rope, w_uk, w_uv = _inputs()
    pos = torch.arange(5)
    with pytest.raises(ValueError, match="k_rope"):
        mla_attention(q_nope, q_rope, c_kv, k_rope[:, :2], w_uk, w_uv, pos)
    with pytest.raises(ValueError, match="w_uk"):
        mla_attention(q_nope, q_rope, c_kv, k_rope, w_uk[:, :, :3], w_uv, pos)
    with pytest.raises(ValueError, match="w_uk"):
        mla_attention(q_nope, q_rope, c_kv, k_rope, w_uk[:, :2], w_uv, pos)
    with pytest.raises(ValueError, match="w_uv"):
        mla_attention(q_nope, q_rope, c_kv, k_rope, w_uk, w_uv[:2], pos)
    with pytest.raises(ValueError, match="layout"):
        mla_attention(q_nope, q_rope, c_kv, k_rope, w_uk, w_uv, pos, layout="x")
    with pytest.raises(TypeError, match="absorb"):
        mla_attention(q_nope, q_rope, c_kv, k_rope, w_uk, w_uv, pos, absorb=1)
    with pytest.raises(ValueError, match="scale"):
        mla_attention(q_nope, q_rope, c_kv, k_rope, w_uk, w_uv, pos, absorb=True, scale=0)
    with pytest.raises(ValueError, match="kv_lora_rank"):
        mla_cache_elements(0, 64)
    with pytest.raises(ValueError, match="num_key_value_heads"):
        kv_cache_elements(0, 64)


# ------------------------------------------------------------------ transformers parity
@pytest.mark.parametrize("interleave", [True, False])
@pytest.mark.parametrize("start", [0, 21])
def test_parity_with_transformers_deepseek_v3(interleave, start):
    v3 = pytest.importorskip("transformers.models.deepseek_v3.modeling_deepseek_v3")
    from transformers.models.deepseek_v3.configuration_deepseek_v3 import DeepseekV3Config

    h, d_n, d_r, d_v, d_c, s = 4, 8, 4, 6, 12, 6
    cfg = DeepseekV3Config(
        vocab_size=32, hidden_size=32, num_attention_heads=h, num_key_value_heads=h,
        q_lora_rank=16, kv_lora_rank=d_c, qk_nope_head_dim=d_n, qk_rope_head_dim=d_r,
        v_head_dim=d_v, head_dim=d_r, num_hidden_layers=1, rope_interleave=interleave,
    )
    cfg._attn_implementation = "eager"
    torch.manual_seed(0)
    att = v3.DeepseekV3Attention(cfg, 0).to(F64)
    with torch.no_grad():
        for p in att.parameters():
            p.normal_(0.0, 0.3)
    x = torch.randn(1, s, 32, dtype=F64, generator=torch.Generator().manual_seed(1))
    pos = torch.arange(start, start + s)[None]
    cos, sin = v3.DeepseekV3RotaryEmbedding(cfg)(x, pos)
    mask = torch.full((s, s), float("-inf"), dtype=F64).triu(1)[None, None]
    with torch.no_grad():
        ref, ref_w = att(x, (cos, sin), mask)
        q = att.q_b_proj(att.q_a_layernorm(att.q_a_proj(x))).view(1, s, h, -1).transpose(1, 2)
        q_nope, q_rope = q.split([d_n, d_r], dim=-1)
        c_kv, k_rope = att.kv_a_proj_with_mqa(x).split([d_c, d_r], dim=-1)
        c_kv = att.kv_a_layernorm(c_kv)
        w_uk, w_uv = att.kv_b_proj.weight.view(h, d_n + d_v, d_c).split([d_n, d_v], dim=1)
        layout = "interleaved" if interleave else "half"
        for absorb in (False, True):
            out, w = mla_attention(
                q_nope, q_rope, c_kv, k_rope, w_uk, w_uv, pos[0], layout=layout,
                causal=True, absorb=absorb,
            )
            ours = att.o_proj(out.transpose(1, 2).reshape(1, s, -1))
            # transformers' eager softmax runs in float32 (dtype=torch.float32).
            torch.testing.assert_close(w, ref_w, rtol=0, atol=1e-6)
            torch.testing.assert_close(ours, ref, rtol=1e-5, atol=1e-6)


def test_v3_defaults_quoted_in_chapter_6():
    cfg_mod = pytest.importorskip("transformers.models.deepseek_v3.configuration_deepseek_v3")
    cfg = cfg_mod.DeepseekV3Config()
    got = (cfg.num_attention_heads, cfg.kv_lora_rank, cfg.qk_nope_head_dim,
           cfg.qk_rope_head_dim, cfg.v_head_dim, cfg.num_hidden_layers, cfg.rope_interleave)
    assert got == (128, 512, 128, 64, 128, 61, True)
