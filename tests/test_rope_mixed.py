"""Tests for posenc.rope_mixed: RoPE-Mixed against the reference code's formulas.

``ref_init`` and ``ref_rotate`` transcribe naver-ai/rope-vit (``init_random_2d_freqs`` for one
head with a given angle, ``compute_mixed_cis`` and ``apply_rotary_emb``: complex
multiplication on consecutive channel pairs, positions ``t_x`` = column, ``t_y`` = row).
"""

from __future__ import annotations

import math

import pytest
import torch

from posenc.multi_axis import apply_multi_axis_rope, axial_inv_freq, grid_positions
from posenc.rope_mixed import apply_mixed_rope, mixed_angles, mixed_inv_freq

F64 = torch.float64


def ref_init(dim, theta, angle):
    mag = 1 / (theta ** (torch.arange(0, dim, 4)[: dim // 4].to(F64) / dim))
    a = torch.tensor([angle], dtype=F64)
    fx = torch.cat([mag * torch.cos(a), mag * torch.cos(torch.pi / 2 + a)])
    fy = torch.cat([mag * torch.sin(a), mag * torch.sin(torch.pi / 2 + a)])
    return fx, fy


def ref_rotate(x, t_x, t_y, fx, fy):
    angle = t_x[:, None] * fx + t_y[:, None] * fy  # (N, d/2)
    cis = torch.polar(torch.ones_like(angle), angle)
    xc = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2).contiguous())
    return torch.view_as_real(xc * cis).flatten(-2)


@pytest.mark.parametrize("dim", [8, 32])
@pytest.mark.parametrize("angle", [0.0, 1.234])
def test_matches_reference_code(dim, angle):
    fx, fy = ref_init(dim, 10.0, angle)
    freqs = mixed_inv_freq(dim, theta=10.0, angle=angle, dtype=F64)
    torch.testing.assert_close(freqs[:, 0], fy, rtol=0, atol=1e-15)
    torch.testing.assert_close(freqs[:, 1], fx, rtol=0, atol=1e-15)
    hw = grid_positions((3, 4))
    x = torch.randn(12, dim, dtype=F64, generator=torch.Generator().manual_seed(0))
    ours = apply_mixed_rope(x, hw, freqs, layout="interleaved")
    ref = ref_rotate(x, hw[:, 1].to(F64), hw[:, 0].to(F64), fx, fy)
    torch.testing.assert_close(ours, ref, rtol=0, atol=1e-12)


def test_axis_aligned_vectors_are_axial_rope():
    inv, axis = axial_inv_freq([8, 8], dtype=F64)
    freqs = torch.zeros(8, 2, dtype=F64)
    freqs[torch.arange(8), axis] = inv
    hw = grid_positions((4, 5))
    x = torch.randn(20, 16, dtype=F64, generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(apply_mixed_rope(x, hw, freqs),
                               apply_multi_axis_rope(x, hw, inv, axis), rtol=0, atol=1e-12)


def test_score_depends_on_the_offset_only():
    freqs = mixed_inv_freq(16, angle=0.7, dtype=F64)
    g = torch.Generator().manual_seed(2)
    q, k = torch.randn(2, 1, 16, generator=g, dtype=F64)
    p, p2 = torch.tensor([[3, -2]]), torch.tensor([[7, 5]])

    def score(a, b):
        return (apply_mixed_rope(q, a, freqs) * apply_mixed_rope(k, b, freqs)).sum()

    shift = torch.tensor([[11, -4]])
    torch.testing.assert_close(score(p, p2), score(p + shift, p2 + shift), rtol=0, atol=1e-12)
    torch.testing.assert_close(score(p, p2), score(torch.zeros_like(p), p2 - p),
                               rtol=0, atol=1e-12)


def test_angles_and_gradient():
    freqs = mixed_inv_freq(8, dtype=F64).requires_grad_()
    ang = mixed_angles([[2, 3]], freqs)
    torch.testing.assert_close(ang[0], freqs.detach() @ torch.tensor([2.0, 3.0], dtype=F64))
    apply_mixed_rope(torch.ones(1, 8, dtype=F64), [[2, 3]], freqs).sum().backward()
    assert freqs.grad is not None and freqs.grad.abs().sum() > 0
    assert math.isclose(mixed_inv_freq(8)[0, 1].item(), 1.0)  # angle 0: first pair on w


def test_bad_input():
    with pytest.raises(ValueError, match="multiple of 4"):
        mixed_inv_freq(6)
    with pytest.raises(ValueError, match="theta"):
        mixed_inv_freq(8, theta=1.0)
    with pytest.raises(ValueError, match="positions"):
        mixed_angles([[1, 2, 3]], mixed_inv_freq(8))
    with pytest.raises(TypeError, match="freqs"):
        mixed_angles([[1, 2]], torch.zeros(4, 2, dtype=torch.int64))
    with pytest.raises(ValueError, match="layout"):
        apply_mixed_rope(torch.ones(1, 8), [[1, 2]], mixed_inv_freq(8), layout="x")
