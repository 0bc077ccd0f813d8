"""Tests for posenc.rope: formulas against RoFormer's matrix and transformers' code."""

from __future__ import annotations

import math

import pytest
import torch

from posenc.rope import apply_rope, rope_angles, rope_cos_sin, rope_inv_freq


def ref_rope_pairwise(x, positions, inv_freq, layout):
    """Plain loop over pairs: a' = a cos − b sin, b' = a sin + b cos (RoFormer eq. 13)."""
    x = x.to(torch.float64)
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


@pytest.mark.parametrize("layout,expected", [
    ("interleaved", [-1.14264, 1.92208, 2.95985, 4.02980]),
    ("half", [-1.98411, 1.95990, 2.46238, 4.01980]),
])
def test_issue_numbers_head_dim_4(layout, expected):
    q = torch.tensor([[1.0, 2.0, 3.0, 4.0]])
    out = apply_rope(q, [1], layout=layout)
    assert torch.allclose(out[0], torch.tensor(expected), atol=5e-6)


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("d,r", [(2, None), (8, None), (8, 4), (16, 6), (64, None)])
def test_apply_rope_matches_pairwise_reference(layout, d, r):
    g = torch.Generator().manual_seed(d)
    x = torch.randn(2, 5, d, generator=g, dtype=torch.float64)
    pos = [0, 1, 7, 100, 4096]
    inv = rope_inv_freq(d, 10000.0, r, dtype=torch.float64)
    out = apply_rope(x, pos, inv_freq=inv, layout=layout)
    assert torch.allclose(out, ref_rope_pairwise(x, pos, inv, layout), atol=1e-12)


def test_cos_sin_layouts_and_angles_dtype():
    inv = rope_inv_freq(4)
    ang = rope_angles(torch.tensor([2], dtype=torch.int16), inv)
    assert ang.dtype == torch.float32 and ang.shape == (1, 2)
    cos, _ = rope_cos_sin([2], inv, layout="half")
    cos_i, _ = rope_cos_sin([2], inv, layout="interleaved")
    c = torch.cos(torch.tensor([2.0, 0.02]))
    assert torch.allclose(cos[0], torch.cat((c, c)))
    assert torch.allclose(cos_i[0], c.repeat_interleave(2))
