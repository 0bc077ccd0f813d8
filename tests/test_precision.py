"""Precision audit: long positions (10^5, 10^6) in float32 against float64 and 50-digit
references, bf16/fp16 inputs, and the rounding of the fused RoPE kernels.

The bounds asserted here are the ones the docstrings state (``rope_angles``,
``apply_rope``, ``sinusoidal_encoding_at``); each test also checks that its bound is not
vacuous (the measured error reaches a fair fraction of it).
"""

from __future__ import annotations

import mpmath
import pytest
import torch

from posenc.alibi import alibi_bias, alibi_slopes
from posenc.rope import (
    apply_rope,
    rope_angles,
    rope_cos_sin,
    rope_inv_freq,
    rotate_every_two,
    rotate_half,
)
from posenc.scaling import ROPE_SCALING
from posenc.sinusoidal import sinusoidal_encoding_at

F64 = torch.float64
U32 = 2.0**-24  # float32 unit roundoff
LONG = [10**5, 10**6]


def window(m: int, n: int = 512) -> torch.Tensor:
    """``n`` consecutive positions ending at ``m`` (so ``m`` itself is included)."""
    return torch.arange(m - n + 1, m + 1)


def rand(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def pair_norms(x: torch.Tensor, layout: str) -> torch.Tensor:
    """``|(a, b)|`` of every pair, repeated on both of its channels (layout order)."""
    x = x.to(F64)
    h = x.shape[-1] // 2
    if layout == "half":
        n = torch.sqrt(x[..., :h] ** 2 + x[..., h:] ** 2)
        return torch.cat((n, n), dim=-1)
    n = torch.sqrt(x[..., 0::2] ** 2 + x[..., 1::2] ** 2)
    return torch.repeat_interleave(n, 2, dim=-1)


# --------------------------------------------------------------------------- angles


@pytest.mark.parametrize("m", LONG)
@pytest.mark.parametrize("base", [10000.0, 500000.0])
def test_float32_angle_error_bound(m, base):
    """|fp32 angle − m·θ_i| <= m·θ_i·2^-23: θ_i rounded to float32, then the product."""
    pos = window(m)
    exact = rope_angles(pos, rope_inv_freq(128, base, dtype=F64))
    err = (rope_angles(pos, rope_inv_freq(128, base)).to(F64) - exact).abs()
    bound = exact.abs() * 2.0**-23
    assert (err <= bound).all()
    assert (err / bound.clamp(min=1e-300)).max() > 0.5  # the bound is nearly reached
    # The numbers quoted in rope_angles' docstring: at most 0.012 / 0.12 rad.
    assert err.max() <= {10**5: 0.012, 10**6: 0.12}[m]
    assert err.max() >= {10**5: 0.003, 10**6: 0.03}[m]


@pytest.mark.parametrize("m", LONG)
def test_float64_angles_against_50_digit_arithmetic(m):
    """float64 inv_freq: angles within m·θ_i·2^-52 of the exact product (< 1e-9 rad)."""
    inv = rope_inv_freq(128, dtype=F64)
    got = rope_angles([m], inv)[0]
    mpmath.mp.dps = 50
    for i in (1, 17, 40, 63):
        theta = mpmath.mpf(10000) ** (-mpmath.mpf(2 * i) / 128)
        exact = m * theta
        err = abs(mpmath.mpf(float(got[i])) - exact)
        assert err <= float(exact) * 2.0**-52 * 2
        assert err < 1e-9


def test_positions_beyond_2_24_are_not_exact_in_float32():
    """Why rope_angles' docstring warns about float32 beyond 2^24 positions."""
    inv = torch.ones(1)
    assert rope_angles([2**24 + 1], inv).item() == 2**24  # rounded away
    assert rope_angles([2**24 + 1], inv.to(F64)).item() == 2**24 + 1


# --------------------------------------------------------------------------- apply_rope


@pytest.mark.parametrize("m", LONG)
@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_float32_rotation_error_bound(m, layout):
    """Each pair within |(a, b)|·(m·θ_i·2^-23 + 2^-22) of the float64 rotation."""
    pos = window(m, 256)
    x = rand(2, 256, 128, seed=m % 97)
    inv64 = rope_inv_freq(128, dtype=F64)
    ref = apply_rope(x.to(F64), pos, inv_freq=inv64, layout=layout)
    out = apply_rope(x, pos, layout=layout)
    assert out.dtype == torch.float32
    err = (out.to(F64) - ref).abs()
    delta = rope_angles(pos, inv64) * 2.0**-23  # (s, r/2): the angle bound per pair
    delta = torch.cat((delta, delta), -1) if layout == "half" else delta.repeat_interleave(2, -1)
    bound = pair_norms(x, layout) * (delta + 2 * 2.0**-23)
    assert (err <= bound).all()
    rel = (err / pair_norms(x, layout)).max().item()
    # apply_rope's docstring: relative error ~0.007 at 10^5 and ~0.06 at 10^6.
    assert {10**5: 0.002 < rel < 0.012, 10**6: 0.02 < rel < 0.12}[m]


@pytest.mark.parametrize("m", LONG)
def test_float64_inv_freq_makes_long_positions_exact(m):
    """With float64 frequencies a float32 x is rotated to float32 accuracy even at 10^6."""
    pos = window(m, 256)
    x = rand(2, 256, 128, seed=3)
    inv64 = rope_inv_freq(128, dtype=F64)
    out = apply_rope(x, pos, inv_freq=inv64)
    assert out.dtype == torch.float32
    ref = apply_rope(x.to(F64), pos, inv_freq=inv64)
    err = (out.to(F64) - ref).abs()
    assert (err <= pair_norms(x, "half") * 2 * U32).all()  # one float32 rounding
    assert err.max() < 3e-7 * pair_norms(x, "half").max()


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("m", LONG)
def test_half_precision_input_is_rounded_once(dtype, m):
    """bf16/fp16 x: rotated in float32 and rounded once, so within half a unit of the
    float32 result, and within that plus the float32 error of the float64 reference."""
    pos = window(m, 256)
    x = rand(2, 256, 64, seed=5).to(dtype)
    out = apply_rope(x, pos)
    assert out.dtype == dtype
    f32 = apply_rope(x.float(), pos)
    assert torch.equal(out, f32.to(dtype))
    info = torch.finfo(dtype)
    unit = info.eps / 2  # half a unit in the last place, relative
    sub = info.tiny * info.eps  # spacing of subnormals
    assert ((out.float() - f32).abs() <= f32.abs() * unit + sub).all()
    ref = apply_rope(x.to(F64), pos, inv_freq=rope_inv_freq(64, dtype=F64))
    delta = rope_angles(pos, rope_inv_freq(64, dtype=F64)) * 2.0**-23
    bound = ref.abs() * unit + pair_norms(x, "half") * (torch.cat((delta, delta), -1) + 2**-22)
    assert ((out.to(F64) - ref).abs() <= bound + sub).all()


def test_half_precision_angles_would_be_useless():
    """The reason angles are never computed in bf16: positions themselves round."""
    pos = window(10**5, 64)
    assert pos.to(torch.bfloat16).to(torch.int64).unique().numel() < 3  # 64 positions → ≤ 2
    with pytest.raises(ValueError, match="dtype"):
        rope_inv_freq(64, dtype=torch.bfloat16)


# --------------------------------------------------------------------------- fused kernels


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("r", [2, 6, 8, 128])
def test_half_layout_is_bit_identical_to_the_formula(dtype, r):
    """apply_rope(layout="half") computes x·cos + rotate_half(x)·sin exactly (transformers'
    arithmetic, each product and sum rounded once in the working dtype)."""
    x = rand(3, 5, 17, r, seed=r).to(dtype)
    cos, sin = rope_cos_sin(torch.arange(17), rope_inv_freq(r), dtype=dtype,
                            attention_factor=1.25)
    assert torch.equal(apply_rope(x, cos=cos, sin=sin), x * cos + rotate_half(x) * sin)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("r", [2, 6, 8, 128])
def test_interleaved_layout_is_within_one_rounding_of_the_formula(dtype, r):
    """The complex-multiply path (paired tables) may fuse a multiply–add in torch's scalar
    tail; it never moves a result by more than one rounding of the pair's size."""
    x = rand(3, 5, 17, r, seed=r, dtype=dtype)
    cos, sin = rope_cos_sin(torch.arange(10**5, 10**5 + 17), rope_inv_freq(r), dtype=dtype,
                            layout="interleaved")
    formula = x * cos + rotate_every_two(x) * sin
    out = apply_rope(x, cos=cos, sin=sin, layout="interleaved")
    eps = torch.finfo(dtype).eps
    assert ((out - formula).abs() <= pair_norms(x, "interleaved").to(dtype) * eps).all()


# --------------------------------------------------------------------------- other tables


@pytest.mark.parametrize("m", LONG)
def test_sinusoidal_float32_is_one_rounding_from_exact(m):
    """float64 angles, one cast: float32 PE within 2^-24 of 50-digit values at 10^5, 10^6."""
    d = 64
    pe = sinusoidal_encoding_at([m], d)[0].to(F64)
    mpmath.mp.dps = 50
    for i in range(d // 2):
        omega = mpmath.mpf(10000) ** (-mpmath.mpf(2 * i) / d)
        for ch, f in ((2 * i, mpmath.sin), (2 * i + 1, mpmath.cos)):
            assert abs(pe[ch].item() - float(f(m * omega))) <= U32


def test_alibi_float32_is_the_float64_bias_rounded_once_at_a_million():
    """Distances up to 10^6: the float32 bias is the correctly rounded float64 product."""
    b32 = alibi_bias(6, 1, 10**6 + 1)
    b64 = alibi_bias(6, 1, 10**6 + 1, dtype=F64)
    assert torch.equal(b32, b64.to(torch.float32))
    exact = -alibi_slopes(6, dtype=F64)[:, None] * torch.arange(10**6, -1, -1, dtype=F64)
    assert torch.equal(b64[:, 0], exact)


@pytest.mark.parametrize("method", sorted(ROPE_SCALING))
def test_scaled_frequencies_are_rounded_once(method):
    """Every scaling method computes in float64 and rounds to float32 once."""
    fn = ROPE_SCALING[method]
    inv32, att32 = fn(128, 8.0, 8192, base=500000.0)
    inv64, att64 = fn(128, 8.0, 8192, base=500000.0, dtype=F64)
    assert inv32.dtype == torch.float32 and inv64.dtype == F64
    assert torch.equal(inv32, inv64.to(torch.float32)) and att32 == att64
