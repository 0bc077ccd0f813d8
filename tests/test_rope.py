"""Tests for posenc.rope: RoFormer's formulas, theorems as properties, transformers parity.

Reference functions (one per formula) are written from the paper, independently of the
package: ``ref_rope_pairwise`` (the 2-D rotation of every pair, RoFormer eq. 13/15),
``ref_rotation_matrix`` (RoFormer's block-diagonal R^d_{Θ,m}, built entry by entry) and
``ref_decay_bound`` (section 3.4.3, the average of |S_j|).
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.rope import (
    apply_rope,
    apply_rope_complex,
    convert_layout,
    layout_permutation,
    rope_angles,
    rope_attention,
    rope_cos_sin,
    rope_decay_bound,
    rope_decode,
    rope_inv_freq,
    rotation_matrix,
)

LAYOUTS = ["half", "interleaved"]
F64 = torch.float64


# --------------------------------------------------------------------------- references
def ref_rope_pairwise(x, positions, inv_freq, layout):
    """Plain loop over pairs: a' = a cos − b sin, b' = a sin + b cos (RoFormer eq. 13)."""
    x = x.to(F64)
    out = x.clone()
    r = 2 * len(inv_freq)
    for si, m in enumerate(positions):
        for i, theta in enumerate(inv_freq.tolist()):
            a_idx, b_idx = (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + r // 2)
            c, s = math.cos(m * theta), math.sin(m * theta)
            a, b = x[..., si, a_idx], x[..., si, b_idx]
            out[..., si, a_idx] = a * c - b * s
            out[..., si, b_idx] = a * s + b * c
    return out


def ref_rotation_matrix(m, d, base=10000.0):
    """RoFormer eq. (15): block diag of [[cos mθ_i, −sin mθ_i], [sin mθ_i, cos mθ_i]],
    θ_i = base^(−2(i−1)/d), i = 1 … d/2 (1-based, as in the paper)."""
    R = [[0.0] * d for _ in range(d)]
    for i in range(1, d // 2 + 1):
        theta = base ** (-2 * (i - 1) / d)
        c, s = math.cos(m * theta), math.sin(m * theta)
        a, b = 2 * (i - 1), 2 * (i - 1) + 1
        R[a][a], R[a][b], R[b][a], R[b][b] = c, -s, s, c
    return torch.tensor(R, dtype=F64)


def ref_decay_bound(delta, d, base=10000.0):
    """(1/(d/2)) Σ_{j=1}^{d/2} |Σ_{i=0}^{j−1} exp(i·Δ·θ_i)| with a Python loop."""
    total, partial = 0.0, 0j
    for i in range(d // 2):
        theta = base ** (-2 * i / d)
        partial += complex(math.cos(delta * theta), math.sin(delta * theta))
        total += abs(partial)
    return total / (d // 2)


def rand(*shape, seed=0, dtype=F64):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


# ------------------------------------------------------------------- worked numbers
@pytest.mark.parametrize("layout,expected", [
    ("interleaved", [-1.14264, 1.92208, 2.95985, 4.02980]),
    ("half", [-1.98411, 1.95990, 2.46238, 4.01980]),
])
def test_issue_numbers_head_dim_4(layout, expected):
    q = torch.tensor([[1.0, 2.0, 3.0, 4.0]])
    out = apply_rope(q, [1], layout=layout)
    assert torch.allclose(out[0], torch.tensor(expected), atol=5e-6)


def test_source_d8_example():
    """The notes' "我" query rotated at positions 0, 1, 2 with θ = 1, 0.1, 0.01, 0.001."""
    theta = torch.tensor([1, 0.1, 0.01, 0.001], dtype=F64)
    assert torch.allclose(rope_inv_freq(8, dtype=F64), theta)
    q = torch.tensor([1.0, 0.5, 0.8, -0.3, 0.6, 0.2, -0.4, 0.7], dtype=F64).expand(3, 8)
    out = apply_rope(q, [0, 1, 2], layout="interleaved")
    assert torch.equal(out[0], q[0])
    # (1.0, 0.5) at position 1: 0.119567…, 1.111622… — the notes print 1.111 because they
    # rounded cos(1) and sin(1) to 3 decimals before adding; the value rounds to 1.112.
    assert out[1, :2].tolist() == pytest.approx([0.1195668, 1.1116221], abs=1e-7)
    assert round(out[1, 0].item(), 3) == 0.120 and round(out[1, 1].item(), 3) == 1.112
    assert torch.allclose(out, ref_rope_pairwise(q, [0, 1, 2], rope_inv_freq(8, dtype=F64),
                                                 "interleaved"))


def test_rope_inv_freq_partial_and_bad_input():
    assert rope_inv_freq(8, rotary_dim=4).tolist() == pytest.approx([1.0, 0.01])
    for bad in (7, 0):
        with pytest.raises(ValueError, match="head_dim"):
            rope_inv_freq(bad)
    with pytest.raises(ValueError, match="rotary_dim"):
        rope_inv_freq(8, rotary_dim=10)
    with pytest.raises(ValueError, match="rotary_dim"):
        rope_inv_freq(8, rotary_dim=3)
    with pytest.raises(ValueError, match="base"):
        rope_inv_freq(8, base=0)
    with pytest.raises(ValueError, match="dtype"):
        rope_inv_freq(8, dtype=torch.float16)


# ------------------------------------------------------------- formula vs references
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("d,r", [(2, None), (8, None), (8, 4), (16, 6), (64, None), (128, 64)])
def test_apply_rope_matches_pairwise_reference(layout, d, r):
    x = rand(2, 5, d, seed=d)
    pos = [0, 1, 7, 100, 4096]
    inv = rope_inv_freq(d, 10000.0, r, dtype=F64)
    out = apply_rope(x, pos, inv_freq=inv, layout=layout)
    assert torch.allclose(out, ref_rope_pairwise(x, pos, inv, layout), atol=1e-12)
    if r is not None:
        assert torch.equal(out[..., r:], x[..., r:])  # pass-through channels untouched


@pytest.mark.parametrize("d", [2, 4, 8, 32])
@pytest.mark.parametrize("m", [0, 1, 5, 1000, -3])
@pytest.mark.parametrize("base", [10000.0, 500000.0, 100.0])
def test_interleaved_equals_paper_matrix(d, m, base):
    inv = rope_inv_freq(d, base, dtype=F64)
    R = ref_rotation_matrix(m, d, base)
    assert torch.allclose(rotation_matrix(m, inv, layout="interleaved"), R, atol=1e-12)
    x = rand(3, d, seed=m % 7)
    out = apply_rope(x[:, None, :], [m], inv_freq=inv, layout="interleaved")[:, 0]
    assert torch.allclose(out, x @ R.T, atol=1e-12)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("d,r", [(8, None), (16, 8), (64, None)])
def test_three_forms_agree(layout, d, r):
    """Element-wise (apply_rope), complex (apply_rope_complex), explicit matrix."""
    x = rand(2, 3, 6, d, seed=1)
    pos = torch.tensor([0, 3, 4, 9, 31, 2047])
    inv = rope_inv_freq(d, rotary_dim=r, dtype=F64)
    a = apply_rope(x, pos, inv_freq=inv, layout=layout)
    b = apply_rope_complex(x, pos, inv_freq=inv, layout=layout)
    R = torch.stack([rotation_matrix(int(m), inv, layout=layout, head_dim=d) for m in pos])
    c = torch.einsum("sij,bhsj->bhsi", R, x)
    assert torch.allclose(a, b, atol=1e-12)
    assert torch.allclose(a, c, atol=1e-12)


def test_names_moved_by_the_split_are_still_found_in_posenc_rope():
    """posenc.rope was split (rope_forms, rope_attention); the old paths keep working and
    name the same objects; an unknown name still raises AttributeError."""
    import posenc.rope as rope_module
    import posenc.rope_attention as attention_module
    import posenc.rope_forms as forms_module

    for name in forms_module.__all__:
        assert getattr(rope_module, name) is getattr(forms_module, name)
    for name in attention_module.__all__:
        assert getattr(rope_module, name) is getattr(attention_module, name)
    with pytest.raises(AttributeError, match="no_such_name"):
        rope_module.no_such_name  # noqa: B018


def test_every_layout_default_is_half():
    """One default for the three RoPE modules, so no pair of functions disagrees silently."""
    import inspect

    import posenc.rope as rope_module
    import posenc.rope_attention as attention_module
    import posenc.rope_forms as forms_module

    defaults = {
        name: inspect.signature(fn).parameters["layout"].default
        for module in (rope_module, forms_module, attention_module)
        for name, fn in inspect.getmembers(module, inspect.isfunction)
        if name in module.__all__ and "layout" in inspect.signature(fn).parameters
    }
    assert {"apply_rope", "apply_rope_complex", "rotation_matrix", "rope_cos_sin",
            "rope_attention", "rope_decode"} <= set(defaults)
    assert set(defaults.values()) == {"half"}, defaults


@pytest.mark.parametrize("d,m", [(2, 1), (8, 3), (16, -5), (64, 1000)])
def test_default_identities(d, m):
    """With every default: apply_rope(x, [m]) == x @ R_mᵀ == apply_rope_complex(x, [m])."""
    x = rand(3, 1, d, seed=d + m % 11)
    inv = rope_inv_freq(d, dtype=F64)
    out = apply_rope(x, [m])
    assert torch.allclose(out, x @ rotation_matrix(m, inv).T, atol=1e-12)
    assert torch.allclose(out, apply_rope_complex(x, [m]), atol=1e-12)
    assert torch.allclose(out, apply_rope(x, [m], layout="half"), atol=0)


def test_cos_sin_layouts_attention_factor_and_dtype():
    inv = rope_inv_freq(4)
    ang = rope_angles(torch.tensor([2], dtype=torch.int16), inv)
    assert ang.dtype == torch.float32 and ang.shape == (1, 2)
    assert rope_angles([2], rope_inv_freq(4, dtype=F64)).dtype == F64
    assert rope_angles(torch.tensor([2.0], dtype=torch.bfloat16), inv).dtype == torch.float32
    cos, sin = rope_cos_sin([2], inv, layout="half")
    cos_i, sin_i = rope_cos_sin([2], inv, layout="interleaved")
    c, s = torch.cos(torch.tensor([2.0, 0.02])), torch.sin(torch.tensor([2.0, 0.02]))
    assert torch.allclose(cos[0], torch.cat((c, c))) and torch.allclose(sin[0], torch.cat((s, s)))
    assert torch.allclose(cos_i[0], c.repeat_interleave(2))
    assert torch.allclose(sin_i[0], s.repeat_interleave(2))
    cos2, sin2 = rope_cos_sin([2], inv, attention_factor=1.5, dtype=torch.bfloat16)
    assert cos2.dtype == torch.bfloat16
    assert torch.equal(cos2, (cos * 1.5).to(torch.bfloat16))
    # attention_factor a scales every q·k by a² (both q and k are multiplied by a)
    q, k = rand(1, 1, 8, seed=2), rand(1, 1, 8, seed=3)
    inv8 = rope_inv_freq(8, dtype=F64)
    cq, sq = rope_cos_sin([5], inv8, attention_factor=1.5, dtype=F64)
    ck, sk = rope_cos_sin([2], inv8, attention_factor=1.5, dtype=F64)
    scaled = (apply_rope(q, cos=cq, sin=sq) * apply_rope(k, cos=ck, sin=sk)).sum()
    plain = (apply_rope(q, [5]) * apply_rope(k, [2])).sum()
    assert scaled.item() == pytest.approx(2.25 * plain.item(), rel=1e-12)


def test_positions_broadcast_over_heads():
    x = rand(2, 3, 4, 8, seed=4)
    pos = torch.tensor([[0, 1, 2, 3], [10, 11, 12, 13]])
    out = apply_rope(x, pos[:, None, :])
    for b in range(2):
        assert torch.allclose(out[b], apply_rope(x[b], pos[b]))


# ------------------------------------------------------------------- transformers parity
needs_transformers = pytest.mark.needs("transformers")


def _llama_rotary(head_dim, theta):
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    cfg = LlamaConfig(hidden_size=head_dim * 4, num_attention_heads=4, head_dim=head_dim,
                      rope_parameters={"rope_type": "default", "rope_theta": theta})
    return LlamaRotaryEmbedding(cfg)


@needs_transformers
@pytest.mark.parametrize("head_dim,theta", [(16, 10000.0), (64, 10000.0), (128, 500000.0)])
def test_llama_parity_half_layout(head_dim, theta):
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    emb = _llama_rotary(head_dim, theta)
    # transformers builds inv_freq in float32 arithmetic; ours is float64 rounded once.
    assert torch.allclose(rope_inv_freq(head_dim, theta), emb.inv_freq, rtol=2e-7, atol=0)
    q, k = rand(2, 4, 7, head_dim, seed=5, dtype=torch.float32), rand(2, 4, 7, head_dim, seed=6,
                                                                        dtype=torch.float32)
    pid = torch.tensor([[0, 1, 2, 3, 4, 5, 6], [100, 101, 102, 103, 104, 105, 106]])
    cos, sin = emb(q, pid)
    q_hf, k_hf = apply_rotary_pos_emb(q, k, cos, sin)
    my_cos, my_sin = rope_cos_sin(pid, emb.inv_freq)
    assert torch.equal(my_cos, cos) and torch.equal(my_sin, sin)
    assert torch.allclose(apply_rope(q, pid[:, None], inv_freq=emb.inv_freq), q_hf, atol=1e-6)
    assert torch.allclose(apply_rope(k, cos=cos[:, None], sin=sin[:, None]), k_hf, atol=1e-6)
    # with our own inv_freq the difference is the 1-ulp inv_freq rounding times the position
    assert torch.allclose(apply_rope(q, pid[:, None], base=theta), q_hf, atol=1e-4)


@needs_transformers
def test_llama_parity_bf16_tables():
    """Given transformers' bf16 cos/sin, apply_rope computes exactly what it computes."""
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    emb = _llama_rotary(64, 10000.0)
    q = rand(1, 2, 9, 64, seed=7, dtype=torch.float32).to(torch.bfloat16)
    pid = torch.arange(9)[None]
    cos, sin = emb(q, pid)
    assert cos.dtype == torch.bfloat16
    q_hf, _ = apply_rotary_pos_emb(q, q, cos, sin)
    assert torch.equal(apply_rope(q, cos=cos[:, None], sin=sin[:, None]), q_hf)


@needs_transformers
def test_gpt_neox_parity_partial_rotation():
    from transformers.models.gpt_neox.modeling_gpt_neox import apply_rotary_pos_emb

    head_dim, r = 32, 8  # partial_rotary_factor 0.25
    q, k = rand(1, 2, 5, head_dim, seed=8), rand(1, 2, 5, head_dim, seed=9)
    inv = rope_inv_freq(head_dim, rotary_dim=r, dtype=F64)
    cos, sin = rope_cos_sin(torch.arange(5)[None], inv, dtype=F64)
    q_hf, k_hf = apply_rotary_pos_emb(q, k, cos, sin)
    assert torch.allclose(apply_rope(q, torch.arange(5), rotary_dim=r), q_hf, atol=1e-12)
    assert torch.allclose(apply_rope(k, cos=cos[:, None], sin=sin[:, None]), k_hf, atol=1e-12)


@needs_transformers
@pytest.mark.parametrize("head_dim,rotary_pct,theta", [(64, 0.25, 10000.0), (32, 0.5, 10000.0),
                                                      (128, 0.25, 500000.0)])
def test_gpt_neox_parity_own_frequencies(head_dim, rotary_pct, theta):
    """transformers' GPT-NeoX rotary module computes its own partial-rotary frequencies
    (``partial_rotary_factor``, read from ``rotary_pct``); apply_rope with ``rotary_dim``
    reproduces the whole pipeline, not only the rotation given posenc's tables."""
    from transformers import GPTNeoXConfig
    from transformers.models.gpt_neox.modeling_gpt_neox import (
        GPTNeoXRotaryEmbedding,
        apply_rotary_pos_emb,
    )

    cfg = GPTNeoXConfig(hidden_size=head_dim * 4, num_attention_heads=4,
                        rotary_pct=rotary_pct,
                        rope_parameters={"rope_type": "default", "rope_theta": theta})
    assert cfg.rope_parameters["partial_rotary_factor"] == rotary_pct
    emb = GPTNeoXRotaryEmbedding(cfg)
    r = int(head_dim * rotary_pct)
    assert emb.inv_freq.shape == (r // 2,)
    # float32 arithmetic in transformers, float64 rounded once here: within one ulp
    assert torch.allclose(rope_inv_freq(head_dim, theta, rotary_dim=r), emb.inv_freq,
                          rtol=2e-7, atol=0)
    q = rand(2, 4, 9, head_dim, seed=18, dtype=torch.float32)
    k = rand(2, 4, 9, head_dim, seed=19, dtype=torch.float32)
    pid = torch.tensor([list(range(9)), list(range(500, 509))])
    cos, sin = emb(q, pid)
    q_hf, k_hf = apply_rotary_pos_emb(q, k, cos, sin)
    assert torch.allclose(apply_rope(q, pid[:, None], inv_freq=emb.inv_freq), q_hf, atol=1e-6)
    assert torch.allclose(apply_rope(k, pid[:, None], base=theta, rotary_dim=r), k_hf,
                          atol=1e-4)
    assert torch.equal(q_hf[..., r:], q[..., r:])


@needs_transformers
def test_bf16_posenc_rotates_in_fp32_transformers_in_bf16():
    """The module docstring's precision statement: with positions, apply_rope rotates a bf16
    tensor in float32 and rounds once (Meta's recipe); transformers casts its tables to
    bf16 and rotates in bf16. Given transformers' tables, apply_rope reproduces it bit for
    bit; the two recipes differ, and the bf16 one is further from the float32 rotation."""
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    emb = _llama_rotary(64, 10000.0)
    x = rand(1, 1, 8192, 64, seed=20, dtype=torch.float32).to(torch.bfloat16)
    pid = torch.arange(8192)[None]
    cos, sin = emb(x, pid)
    assert cos.dtype == torch.bfloat16
    hf, _ = apply_rotary_pos_emb(x, x, cos, sin)
    assert torch.equal(apply_rope(x, cos=cos[:, None], sin=sin[:, None]), hf)
    my_cos, my_sin = rope_cos_sin(pid, emb.inv_freq, dtype=torch.bfloat16)
    assert torch.equal(my_cos, cos) and torch.equal(my_sin, sin)
    ours = apply_rope(x, torch.arange(8192), inv_freq=emb.inv_freq)
    fp32 = apply_rope(x.float(), torch.arange(8192), inv_freq=emb.inv_freq)
    assert torch.equal(ours, fp32.to(torch.bfloat16))
    differ = (ours != hf).float().mean().item()
    assert 0.3 < differ < 0.5
    err_hf = (hf.float() - fp32).abs().max().item()
    err_ours = (ours.float() - fp32).abs().max().item()
    assert err_ours < err_hf


@needs_transformers
def test_gptj_parity_interleaved_layout():
    from transformers.models.gptj.modeling_gptj import (
        apply_rotary_pos_emb,
        create_sinusoidal_positions,
    )

    d, s = 16, 6
    table = create_sinusoidal_positions(64, d)  # float32, sin | cos
    pid = torch.tensor([[0, 1, 2, 30, 40, 63]])
    sin, cos = torch.split(table[pid], d // 2, dim=-1)
    x = rand(1, s, 2, d, seed=10, dtype=torch.float32)  # GPT-J rotates (b, s, h, d)
    ref = apply_rotary_pos_emb(x, sin, cos)
    mine = apply_rope(x.transpose(1, 2), pid[:, None], inv_freq=rope_inv_freq(d),
                      layout="interleaved").transpose(1, 2)
    assert torch.allclose(mine, ref, atol=1e-5)


# ----------------------------------------------------------------------------- layouts
@needs_transformers
def test_layout_permutation_values():
    assert layout_permutation(8).tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    assert layout_permutation(8, src="half", dst="interleaved").tolist() == [
        0, 4, 1, 5, 2, 6, 3, 7]
    assert layout_permutation(8, 4).tolist() == [0, 2, 1, 3, 4, 5, 6, 7]
    assert layout_permutation(6, src="half", dst="half").tolist() == list(range(6))
    q = torch.tensor([[1.0, 2.0, 3.0, 4.0]], dtype=F64)
    p = layout_permutation(4)
    assert torch.allclose(apply_rope(q[:, p], [1], layout="half"),
                          apply_rope(q, [1], layout="interleaved")[:, p])
    with pytest.raises(ValueError, match="src"):
        layout_permutation(8, src="neox")
    with pytest.raises(ValueError, match="rotary_dim"):
        layout_permutation(8, 10)


@needs_transformers
@settings(max_examples=40, deadline=None)
@given(half_d=st.integers(1, 32), seed=st.integers(0, 10**6), m=st.integers(0, 10**5),
       n=st.integers(0, 10**5), src=st.sampled_from(LAYOUTS))
def test_layout_round_trip_and_dot_products(half_d, seed, m, n, src):
    d = 2 * half_d
    dst = "half" if src == "interleaved" else "interleaved"
    q, k = rand(1, d, seed=seed), rand(1, d, seed=seed + 1)
    back = convert_layout(convert_layout(q, src=src, dst=dst), src=dst, dst=src)
    assert torch.equal(back, q)
    qc, kc = convert_layout(q, src=src, dst=dst), convert_layout(k, src=src, dst=dst)
    assert torch.allclose(apply_rope(qc, [m], layout=dst),
                          convert_layout(apply_rope(q, [m], layout=src), src=src, dst=dst),
                          atol=1e-12)
    s_src = (apply_rope(q, [m], layout=src) * apply_rope(k, [n], layout=src)).sum()
    s_dst = (apply_rope(qc, [m], layout=dst) * apply_rope(kc, [n], layout=dst)).sum()
    assert s_src.item() == pytest.approx(s_dst.item(), abs=1e-9)


# ---------------------------------------------------------------------------- theorems
@needs_transformers
@settings(max_examples=60, deadline=None)
@given(half_d=st.integers(1, 32), seed=st.integers(0, 10**6), m=st.integers(0, 10**5),
       n=st.integers(0, 10**5), shift=st.integers(0, 10**5), layout=st.sampled_from(LAYOUTS),
       base=st.sampled_from([100.0, 10000.0, 500000.0]))
def test_relative_position_theorem(half_d, seed, m, n, shift, layout, base):
    """⟨R_m q, R_n k⟩ = ⟨R_{m−n} q, k⟩ = ⟨R_{m+t} q, R_{n+t} k⟩."""
    d = 2 * half_d
    q, k = rand(1, d, seed=seed), rand(1, d, seed=seed + 1)

    def score(a, b):
        return (apply_rope(q, [a], base=base, layout=layout)
                * apply_rope(k, [b], base=base, layout=layout)).sum().item()

    rel = (apply_rope(q, [m - n], base=base, layout=layout) * k).sum().item()
    scale = float(q.norm() * k.norm())
    assert score(m, n) == pytest.approx(rel, abs=1e-9 * scale)
    assert score(m, n) == pytest.approx(score(m + shift, n + shift), abs=1e-9 * scale)


@needs_transformers
@settings(max_examples=60, deadline=None)
@given(half_d=st.integers(1, 64), seed=st.integers(0, 10**6), m=st.integers(-10**6, 10**6),
       layout=st.sampled_from(LAYOUTS))
def test_norm_preservation_and_orthogonality(half_d, seed, m, layout):
    d = 2 * half_d
    x = rand(3, d, seed=seed)
    out = apply_rope(x[:, None, :], [m], layout=layout)[:, 0]
    assert torch.allclose(out.norm(dim=-1), x.norm(dim=-1), rtol=1e-12)
    R = rotation_matrix(m, rope_inv_freq(d, dtype=F64), layout=layout)
    assert torch.allclose(R.T @ R, torch.eye(d, dtype=F64), atol=1e-12)
    assert torch.allclose(R.T, rotation_matrix(-m, rope_inv_freq(d, dtype=F64), layout=layout),
                          atol=1e-12)


@needs_transformers
@settings(max_examples=30, deadline=None)
@given(offset=st.integers(0, 10**5), length=st.integers(1, 12), seed=st.integers(0, 10**6),
       layout=st.sampled_from(LAYOUTS))
def test_offset_consistency(offset, length, seed, layout):
    """Rotating tokens at offset o equals rows o … o+len−1 of rotating from 0."""
    x = rand(2, offset + length, 8, seed=seed)
    full = apply_rope(x, torch.arange(offset + length), layout=layout)
    part = apply_rope(x[:, offset:], offset + torch.arange(length), layout=layout)
    assert torch.allclose(part, full[:, offset:], atol=1e-12)


@needs_transformers
def test_offset_issue_case():
    x = rand(1, 9, 16, seed=11, dtype=torch.float32)
    full = apply_rope(x, torch.arange(9))
    assert torch.equal(apply_rope(x[:, 5:], torch.arange(5, 9)), full[:, 5:])


@needs_transformers
@settings(max_examples=30, deadline=None)
@given(half_d=st.integers(1, 16), seed=st.integers(0, 10**6), m=st.integers(0, 10**4),
       layout=st.sampled_from(LAYOUTS))
def test_autograd_gradient_is_inverse_rotation(half_d, seed, m, layout):
    """∂L/∂x = R_mᵀ ∂L/∂y for y = R_m x (RoPE has no parameters)."""
    d = 2 * half_d
    x = rand(1, d, seed=seed).requires_grad_(True)
    g = rand(1, d, seed=seed + 1)
    apply_rope(x, [m], layout=layout).backward(g)
    R = rotation_matrix(m, rope_inv_freq(d, dtype=F64), layout=layout)
    assert torch.allclose(x.grad, g @ R, atol=1e-12)  # row-vector form of Rᵀ g
    assert torch.allclose(x.grad, apply_rope(g, [-m], layout=layout), atol=1e-12)


# ----------------------------------------------------------------------- precision
@needs_transformers
def test_bf16_positions_collapse():
    pos = torch.arange(8192)
    as_bf16 = pos.to(torch.bfloat16)
    assert as_bf16[8191].item() == 8192.0
    assert torch.unique(as_bf16).numel() == 897


@needs_transformers
def test_fp16_table_error_at_2048():
    inv = rope_inv_freq(64, dtype=F64)
    pos = torch.arange(2048)
    exact = torch.cos(pos.to(F64)[:, None] * inv)
    fp16 = torch.cos((pos.half()[:, None] * inv.half()).float()).to(F64)
    err = (fp16 - exact).abs().max().item()
    assert 0.75 < err < 0.80
    fp32 = rope_cos_sin(pos, rope_inv_freq(64), layout="interleaved")[0][:, 0::2]
    assert (fp32.to(F64) - exact).abs().max().item() < 5e-4


@needs_transformers
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_precision_input_uses_fp32_angles(dtype):
    x = rand(2, 8192, 64, seed=12, dtype=torch.float32).to(dtype)
    pos = torch.arange(8192)
    out = apply_rope(x, pos)
    assert out.dtype == dtype
    assert torch.equal(out, apply_rope(x.float(), pos).to(dtype))
    naive_pos = pos.to(dtype).float()  # what you get if positions are cast with x
    naive = apply_rope(x.float(), naive_pos.round().long()).to(dtype)
    assert not torch.equal(out, naive)


@needs_transformers
def test_float64_input_uses_float64_tables():
    x = rand(1, 3, 8, seed=13)
    inv64 = rope_inv_freq(8, dtype=F64)
    assert torch.equal(apply_rope(x, [0, 1, 100000]), apply_rope(x, [0, 1, 100000],
                                                                 inv_freq=inv64))


# --------------------------------------------------------------------- long-term decay
@needs_transformers
@pytest.mark.parametrize("delta", [0, 1, 7, 50, 200, 1000])
@pytest.mark.parametrize("d", [8, 128])
def test_decay_bound_matches_reference(delta, d):
    got = rope_decay_bound([delta], rope_inv_freq(d, dtype=F64))[0].item()
    assert got == pytest.approx(ref_decay_bound(delta, d), rel=1e-12)


@needs_transformers
def test_decay_bound_falls_on_average_but_not_monotonically():
    inv = rope_inv_freq(128, dtype=F64)
    b = rope_decay_bound(torch.arange(0, 256), inv)
    assert b[0].item() == pytest.approx(32.5)  # (d/2 + 1)/2 at Δ = 0
    assert b[:32].mean() > b[64:128].mean() > b[192:256].mean()
    assert (b[1:] > b[:-1]).any()  # the bound itself wiggles


# -------------------------------------------------------------------- rope_attention
@needs_transformers
@pytest.mark.parametrize("layout", LAYOUTS)
def test_value_modes_shift_behaviour(layout):
    x = rand(3, 6, 16, seed=14)
    q, k, v = x[0], x[1], x[2]
    pos = torch.arange(6)
    outs = {}
    for mode in ("raw", "rotated", "vo"):
        a = rope_attention(q, k, v, pos, values=mode, layout=layout)[0]
        b = rope_attention(q, k, v, pos + 1000, values=mode, layout=layout)[0]
        outs[mode] = (a - b).abs().max().item()
    assert outs["raw"] < 1e-12 and outs["vo"] < 1e-12 and outs["rotated"] > 0.1


@needs_transformers
def test_vo_mode_equals_relative_value_rotation():
    """o_m = Σ_n a_mn R_{n−m} v_n."""
    q, k, v = rand(5, 8, seed=15), rand(5, 8, seed=16), rand(5, 8, seed=17)
    pos = torch.tensor([3, 4, 5, 6, 7])
    out, w = rope_attention(q, k, v, pos, values="vo", layout="interleaved")
    inv = rope_inv_freq(8, dtype=F64)
    ref = torch.stack([
        sum(w[i, j] * rotation_matrix(int(pos[j] - pos[i]), inv, layout="interleaved") @ v[j]
            for j in range(5))
        for i in range(5)
    ])
    assert torch.allclose(out, ref, atol=1e-12)


@needs_transformers
@pytest.mark.parametrize("prefill", [1, 3, 8])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_rope_decode_equals_full_forward(prefill, layout):
    q, k, v = rand(3, 2, 2, 8, 16, seed=18).unbind(0)
    full = rope_attention(q, k, v, torch.arange(8), causal=True, layout=layout)[0]
    dec = rope_decode(q, k, v, prefill=prefill, layout=layout)
    assert torch.allclose(dec, full, atol=1e-12)
    restarted = torch.cat((torch.arange(prefill), torch.zeros(8 - prefill, dtype=torch.long)))
    if prefill < 8:
        bad = rope_decode(q, k, v, prefill=prefill, layout=layout, positions=restarted)
        assert (bad - full).abs().max() > 1e-3


# ------------------------------------------------------------------------- bad input
@needs_transformers
def test_apply_rope_bad_input():
    x = torch.zeros(1, 3, 8)
    with pytest.raises(ValueError, match="positions"):
        apply_rope(x)
    with pytest.raises(ValueError, match="s = x.shape"):
        apply_rope(x, [0, 1])
    with pytest.raises(ValueError, match="whole numbers"):
        apply_rope(x, [0.0, 1.5, 2.0])
    with pytest.raises(TypeError, match="positions"):
        apply_rope(x, [True, False, True])
    with pytest.raises(ValueError, match="head_dim"):
        apply_rope(torch.zeros(1, 3, 7), [0, 1, 2])
    with pytest.raises(ValueError, match="rotary_dim"):
        apply_rope(x, [0, 1, 2], rotary_dim=10)
    with pytest.raises(ValueError, match="rotary_dim"):
        apply_rope(x, [0, 1, 2], inv_freq=rope_inv_freq(8), rotary_dim=4)
    with pytest.raises(ValueError, match="rotary_dim must be <= head_dim"):
        apply_rope(x, [0, 1, 2], inv_freq=rope_inv_freq(16))
    with pytest.raises(ValueError, match="base"):
        apply_rope(x, [0, 1, 2], inv_freq=rope_inv_freq(8), base=500000.0)
    with pytest.raises(ValueError, match="layout"):
        apply_rope(x, [0, 1, 2], layout="neox")
    with pytest.raises(TypeError, match="floating"):
        apply_rope(torch.zeros(1, 3, 8, dtype=torch.long), [0, 1, 2])
    with pytest.raises(ValueError, match="shape"):
        apply_rope(torch.zeros(8), [0])
    with pytest.raises(TypeError, match="inv_freq"):
        apply_rope(x, [0, 1, 2], inv_freq=rope_inv_freq(8).half())
    cos, sin = rope_cos_sin(torch.arange(3), rope_inv_freq(8))
    with pytest.raises(ValueError, match="both cos and sin"):
        apply_rope(x, cos=cos)
    with pytest.raises(ValueError, match="not both"):
        apply_rope(x, [0, 1, 2], cos=cos, sin=sin)
    with pytest.raises(ValueError, match="broadcast"):
        apply_rope(x, cos=cos[:2], sin=sin[:2])
    with pytest.raises(ValueError, match="rotary_dim"):
        apply_rope(x, cos=cos[..., :7], sin=sin[..., :7])
    with pytest.raises(ValueError, match="rotary_dim"):
        apply_rope(torch.zeros(1, 3, 4), cos=cos, sin=sin)


@needs_transformers
def test_other_functions_bad_input():
    inv = rope_inv_freq(8)
    with pytest.raises(ValueError, match="attention_factor"):
        rope_cos_sin([0], inv, attention_factor=0.0)
    with pytest.raises(ValueError, match="layout"):
        rope_cos_sin([0], inv, layout="concat")
    with pytest.raises(TypeError, match="dtype"):
        rope_cos_sin([0], inv, dtype=torch.int32)
    with pytest.raises(TypeError, match="inv_freq"):
        rope_angles([0], [1.0, 0.1])
    with pytest.raises(ValueError, match="inv_freq"):
        rope_angles([0], torch.ones(2, 2))
    with pytest.raises(TypeError, match="position"):
        rotation_matrix(1.5, inv)
    with pytest.raises(ValueError, match="head_dim"):
        rotation_matrix(1, inv, head_dim=4)
    q = torch.zeros(4, 8)
    with pytest.raises(ValueError, match="values"):
        rope_attention(q, q, q, torch.arange(4), values="both")
    with pytest.raises(ValueError, match="pairs"):
        rope_attention(q, q, torch.zeros(4, 5), torch.arange(4), values="vo")
    with pytest.raises(ValueError, match="prefill"):
        rope_decode(q, q, q, prefill=0)
    with pytest.raises(ValueError, match="prefill"):
        rope_decode(q, q, q, prefill=5)
    with pytest.raises(ValueError, match="positions"):
        rope_decode(q, q, q, positions=[0, 1])
