"""Tests for posenc.shared_kv: DeepSeek-V4's shared K = V attention with rotated values.

The parity test builds a tiny random ``DeepseekV4Attention`` (``transformers`` 5.24), runs
its forward pass, and recomputes the same output with the module's own projections and
``posenc`` for everything between them (RoPE on q and kv, attention with a sink, rotating
the output back). The reference ``ref_relative_sum`` writes ``Σ_n a_mn R_{n−m} kv_n`` term by
term from the chapter's formula.
"""

from __future__ import annotations

import math

import pytest
import torch

from posenc.rope import rope_attention, rope_inv_freq, rotation_matrix
from posenc.shared_kv import apply_rope_trailing, shared_kv_attention

F64 = torch.float64


def _tensors(seed=0, h=3, s=5, d=12):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(h, s, d, generator=g, dtype=F64)
    kv = torch.randn(1, s, d, generator=g, dtype=F64)
    return q, kv


def ref_relative_sum(weights, kv, r, base=10000.0):
    """o_m = Σ_n a_mn [kv_n^nope ; R_{n−m} kv_n^rope], one term at a time (interleaved)."""
    theta = rope_inv_freq(r, base, dtype=F64)
    h, s_q, s_k = weights.shape
    d = kv.shape[-1]
    out = torch.zeros(h, s_q, d, dtype=F64)
    for hh in range(h):
        for m in range(s_q):
            for n in range(s_k):
                v = kv[0, n]
                rot = rotation_matrix(n - m, theta, layout="interleaved") @ v[d - r :]
                out[hh, m] += weights[hh, m, n] * torch.cat([v[: d - r], rot])
    return out


@pytest.mark.parametrize("r", [2, 4, 12])
def test_output_is_relative_sum(r):
    q, kv = _tensors()
    pos = torch.arange(5)
    out, w = shared_kv_attention(q, kv, pos, rotary_dim=r)
    torch.testing.assert_close(out, ref_relative_sum(w, kv, r), rtol=0, atol=1e-12)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("t", [1, 100, 4096])
def test_shift_invariant(t, causal):
    q, kv = _tensors(1)
    pos = torch.arange(5)
    sinks = torch.tensor([0.5, -1.0, 2.0], dtype=F64)
    a, wa = shared_kv_attention(q, kv, pos, rotary_dim=6, sinks=sinks, causal=causal)
    b, wb = shared_kv_attention(q, kv, pos + t, rotary_dim=6, sinks=sinks, causal=causal)
    torch.testing.assert_close(a, b, rtol=0, atol=1e-10)
    torch.testing.assert_close(wa, wb, rtol=0, atol=1e-12)


def test_full_rotary_dim_is_vo_rope():
    """With r = d and half pairing, the construction is rope_attention(values="vo")."""
    q, kv = _tensors(2)
    pos = torch.arange(5) + 3
    ours, w = shared_kv_attention(q, kv, pos, rotary_dim=12, layout="half")
    vo, w_vo = rope_attention(q, kv, kv, pos, values="vo")
    torch.testing.assert_close(ours, vo, rtol=0, atol=1e-12)
    torch.testing.assert_close(w, w_vo, rtol=0, atol=1e-12)


def test_sinks_match_an_extra_softmax_entry():
    q, kv = _tensors(3)
    pos = torch.arange(5)
    sinks = torch.tensor([0.0, 1.5, -0.5], dtype=F64)
    _, w = shared_kv_attention(q, kv, pos, rotary_dim=4, sinks=sinks)
    qr = apply_rope_trailing(q, pos, rotary_dim=4)
    kr = apply_rope_trailing(kv, pos, rotary_dim=4)
    scores = qr @ kr.transpose(-1, -2) / math.sqrt(12)
    full = torch.cat([scores, sinks[:, None, None].expand(3, 5, 1)], dim=-1)
    ref = torch.softmax(full, dim=-1)[..., :-1]
    torch.testing.assert_close(w, ref, rtol=0, atol=1e-12)
    assert (w.sum(-1) < 1).all()


def test_trailing_slice_only():
    x = torch.randn(4, 10, dtype=F64)
    y = apply_rope_trailing(x, torch.arange(4), rotary_dim=4)
    torch.testing.assert_close(y[:, :6], x[:, :6], rtol=0, atol=0)
    torch.testing.assert_close(y.norm(dim=-1), x.norm(dim=-1), rtol=1e-12, atol=0)
    back = apply_rope_trailing(y, -torch.arange(4), rotary_dim=4)
    torch.testing.assert_close(back, x, rtol=0, atol=1e-12)


def test_bad_input():
    q, kv = _tensors()
    pos = torch.arange(5)
    with pytest.raises(ValueError, match="rotary_dim"):
        shared_kv_attention(q, kv, pos, rotary_dim=3)
    with pytest.raises(ValueError, match="rotary_dim"):
        shared_kv_attention(q, kv, pos, rotary_dim=14)
    with pytest.raises(ValueError, match="sinks"):
        shared_kv_attention(q, kv, pos, rotary_dim=4, sinks=torch.zeros(2, dtype=F64))
    with pytest.raises(ValueError, match="layout"):
        shared_kv_attention(q, kv, pos, rotary_dim=4, layout="diagonal")
    with pytest.raises(TypeError):
        shared_kv_attention(q.long(), kv, pos, rotary_dim=4)


# ------------------------------------------------------------------ transformers parity
def _tiny_v4():
    v4 = pytest.importorskip("transformers.models.deepseek_v4.modeling_deepseek_v4")
    from transformers.models.deepseek_v4.configuration_deepseek_v4 import DeepseekV4Config

    cfg = DeepseekV4Config(
        vocab_size=32, hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
        head_dim=16, q_lora_rank=24, partial_rotary_factor=0.5,
        layer_types=["sliding_attention"], mlp_layer_types=["moe"], sliding_window=64,
        o_groups=2, o_lora_rank=8, n_routed_experts=4, num_experts_per_tok=2,
        moe_intermediate_size=16,
    )
    cfg._attn_implementation = "eager"
    torch.manual_seed(0)
    att = v4.DeepseekV4Attention(cfg, 0).to(F64)
    with torch.no_grad():
        for p in att.parameters():
            p.normal_(0.0, 0.3)
    return v4, cfg, att


@pytest.mark.parametrize("start", [0, 37])
def test_parity_with_transformers_deepseek_v4(start):
    v4, cfg, att = _tiny_v4()
    s = 6
    x = torch.randn(1, s, cfg.hidden_size, dtype=F64, generator=torch.Generator().manual_seed(1))
    pos = torch.arange(start, start + s)[None]
    rotary = v4.DeepseekV4RotaryEmbedding(cfg)
    cos, sin = rotary(x, pos, "main")
    mask = torch.full((s, s), float("-inf"), dtype=F64).triu(1)[None, None]
    with torch.no_grad():
        ref, ref_w = att(x, {"main": (cos, sin)}, pos, mask)
        # The module's projections before and after the position-dependent part.
        q = att.q_b_norm(att.q_b_proj(att.q_a_norm(att.q_a_proj(x))).view(1, s, -1, 16))
        q = q.transpose(1, 2)
        kv = att.kv_norm(att.kv_proj(x)).view(1, s, 1, 16).transpose(1, 2)
        r = cfg.qk_rope_head_dim
        out, w = shared_kv_attention(
            q, kv, pos[0], rotary_dim=r, inv_freq=rotary.main_inv_freq,  # float32 table
            sinks=att.sinks.to(F64), causal=True,
        )
        grouped = out.transpose(1, 2).reshape(1, s, cfg.o_groups, -1)
        ours = att.o_b_proj(att.o_a_proj(grouped).flatten(2))
    assert r == 8
    theta = cfg.rope_parameters["main"]["rope_theta"]
    torch.testing.assert_close(rotary.main_inv_freq, rope_inv_freq(r, theta), rtol=0, atol=0)
    # transformers rounds the rope slice to float32 before rotating (``rope.float()``), so
    # float64 runs agree to float32 rounding, not to float64 rounding.
    torch.testing.assert_close(w, ref_w, rtol=0, atol=1e-7)
    torch.testing.assert_close(ours, ref, rtol=1e-6, atol=1e-7)
    assert (ours - ref).abs().max() < 1e-6 * ref.abs().max()


def test_transformers_v4_output_shifts_invariantly():
    """The shipped module itself: shifting every position leaves its output unchanged."""
    v4, cfg, att = _tiny_v4()
    x = torch.randn(1, 6, 32, dtype=F64, generator=torch.Generator().manual_seed(2))
    mask = torch.full((6, 6), float("-inf"), dtype=F64).triu(1)[None, None]
    rot = v4.DeepseekV4RotaryEmbedding(cfg)
    outs = []
    with torch.no_grad():
        for start in (0, 1000):
            pos = torch.arange(start, start + 6)[None]
            outs.append(att(x, {"main": rot(x, pos, "main")}, pos, mask)[0])
    # Its angles are float32 (position · inv_freq at 1000), hence float32-sized changes.
    scale = outs[0].abs().max()
    assert (outs[0] - outs[1]).abs().max() < 1e-5 * scale


def test_v4_defaults_quoted_in_chapter_5():
    """Chapter 5 quotes DeepseekV4Config's defaults: 512-wide shared head, last 64 rotated."""
    cfg_mod = pytest.importorskip("transformers.models.deepseek_v4.configuration_deepseek_v4")
    cfg = cfg_mod.DeepseekV4Config()
    assert (cfg.num_key_value_heads, cfg.head_dim, cfg.qk_rope_head_dim) == (1, 512, 64)
    assert cfg.rope_parameters["main"]["rope_theta"] == 10000.0
    assert cfg.rope_parameters["compress"]["rope_theta"] == 160000.0


def test_v4_layer_mix_cache_and_yarn_quoted_in_chapter_5():
    """The default layer mix, the cache arithmetic and YaRN's forced attention_factor."""
    cfg_mod = pytest.importorskip("transformers.models.deepseek_v4.configuration_deepseek_v4")
    cfg = cfg_mod.DeepseekV4Config()
    kinds = {t: cfg.layer_types.count(t) for t in set(cfg.layer_types)}
    assert kinds == {"heavily_compressed_attention": 23, "compressed_sparse_attention": 20}
    assert cfg.compress_rates == {"compressed_sparse_attention": 4,
                                  "heavily_compressed_attention": 128}
    assert (cfg.sliding_window, cfg.index_head_dim, cfg.head_dim) == (128, 128, 512)
    far = 20 * (512 + 128) / 4 + 23 * 512 / 128
    assert far == 3292 and 576 * 61 == 35136
    yarn = cfg_mod.DeepseekV4Config(rope_parameters={
        "rope_type": "yarn", "factor": 16.0, "original_max_position_embeddings": 65536})
    assert yarn.rope_parameters["main"]["rope_type"] == "default"
    assert yarn.rope_parameters["compress"]["rope_type"] == "yarn"
    assert yarn.rope_parameters["compress"]["attention_factor"] == 1.0


def _tiny_v4_hca():
    v4 = pytest.importorskip("transformers.models.deepseek_v4.modeling_deepseek_v4")
    from transformers.models.deepseek_v4.configuration_deepseek_v4 import DeepseekV4Config

    cfg = DeepseekV4Config(
        vocab_size=32, hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
        head_dim=16, q_lora_rank=24, partial_rotary_factor=0.5,
        layer_types=["heavily_compressed_attention"], mlp_layer_types=["moe"],
        sliding_window=64, compress_rates={"compressed_sparse_attention": 4,
                                           "heavily_compressed_attention": 4},
        o_groups=2, o_lora_rank=8, n_routed_experts=4, num_experts_per_tok=2,
        moe_intermediate_size=16,
    )
    cfg._attn_implementation = "eager"
    torch.manual_seed(0)
    att = v4.DeepseekV4Attention(cfg, 0).to(F64)
    with torch.no_grad():
        for p in att.parameters():
            p.normal_(0.0, 0.3)
    return v4, cfg, att


def test_transformers_v4_hca_layer_is_not_shift_invariant():
    """HCA layers rotate compressed entries at i*m from the cache start and gate them by
    position_ids, all with the compress base: relabelling positions moves the output."""
    v4, cfg, att = _tiny_v4_hca()
    assert att.rope_layer_type == "compress"  # the sliding branch too uses this base
    s = 16
    x = torch.randn(1, s, 32, dtype=F64, generator=torch.Generator().manual_seed(2))
    mask = torch.full((s, s), float("-inf"), dtype=F64).triu(1)[None, None]
    rot = v4.DeepseekV4RotaryEmbedding(cfg)
    outs = []
    with torch.no_grad():
        for start in (0, 100):
            pos = torch.arange(start, start + s)[None]
            emb = {"main": rot(x, pos, "main"), "compress": rot(x, pos, "compress")}
            outs.append(att(x, emb, pos, mask)[0])
    assert (outs[1] - outs[0]).norm() > 0.1 * outs[0].norm()
