"""posenc.sinusoidal against the paper's formula (Vaswani et al., 2017, section 3.5)."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.sinusoidal import (
    concat_permutation,
    shift_matrix,
    sinusoidal_encoding,
    sinusoidal_encoding_at,
    sinusoidal_inv_freq,
)


def reference_pe(pos: int, dim: int, base: float = 10000.0) -> list[float]:
    """The paper's formula, written out with Python floats: PE(pos, 2i) and PE(pos, 2i+1)."""
    out = []
    for i in range(dim // 2):
        angle = pos / base ** (2 * i / dim)
        out += [math.sin(angle), math.cos(angle)]
    return out


@pytest.mark.parametrize("dim", [2, 4, 8, 16, 64, 512])
@pytest.mark.parametrize("base", [10000.0, 100.0, 1e6])
def test_matches_paper_formula(dim, base):
    table = sinusoidal_encoding(50, dim, base, dtype=torch.float64)
    expected = torch.tensor([reference_pe(p, dim, base) for p in range(50)], dtype=torch.float64)
    torch.testing.assert_close(table, expected, rtol=0, atol=1e-12)


def test_source_worked_example_d8():
    table = sinusoidal_encoding(3, 8)
    assert table[0].tolist() == [0.0, 1.0] * 4
    rounded = torch.round(table * 1000) / 1000
    assert rounded[1].tolist() == pytest.approx(
        [0.841, 0.540, 0.100, 0.995, 0.010, 1.000, 0.001, 1.000]
    )
    assert rounded[2].tolist() == pytest.approx(
        [0.909, -0.416, 0.199, 0.980, 0.020, 1.000, 0.002, 1.000]
    )


def test_d4_position1_interleaved():
    row = sinusoidal_encoding(2, 4)[1]
    torch.testing.assert_close(
        row, torch.tensor([0.841471, 0.540302, 0.0099998, 0.99995]), rtol=0, atol=1e-6
    )


def test_frequency_table_d8():
    torch.testing.assert_close(
        sinusoidal_inv_freq(8), torch.tensor([1.0, 0.1, 0.01, 0.001], dtype=torch.float64)
    )


def test_source_token_sums():
    tokens = torch.tensor([
        [0.12, -0.34, 0.56, 0.78, -0.11, 0.42, -0.67, 0.23],   # 我
        [0.45, 0.67, -0.23, 0.11, 0.89, -0.34, 0.56, -0.12],   # 爱
        [-0.33, 0.21, 0.44, -0.55, 0.33, 0.77, -0.11, 0.66],   # 猫
    ], dtype=torch.float64)
    sums = (tokens + sinusoidal_encoding(3, 8, dtype=torch.float64)).numpy().round(3)
    assert sums[0].tolist() == pytest.approx(
        [0.120, 0.660, 0.560, 1.780, -0.110, 1.420, -0.670, 1.230]
    )
    assert sums[1].tolist() == pytest.approx(
        [1.291, 1.210, -0.130, 1.105, 0.900, 0.660, 0.561, 0.880]
    )
    assert sums[2].tolist() == pytest.approx(
        [0.579, -0.206, 0.639, 0.430, 0.350, 1.770, -0.108, 1.660]
    )


def test_float32_is_rounded_float64():
    t32 = sinusoidal_encoding(4096, 64)
    t64 = sinusoidal_encoding(4096, 64, dtype=torch.float64)
    assert t32.dtype == torch.float32
    torch.testing.assert_close(t32, t64.float(), rtol=0, atol=0)


def test_positions_at_matches_table():
    table = sinusoidal_encoding(20, 16)
    pos = torch.tensor([[3, 7], [19, 0]])
    torch.testing.assert_close(sinusoidal_encoding_at(pos, 16), table[pos])
    torch.testing.assert_close(sinusoidal_encoding_at(5, 16), table[5])
    torch.testing.assert_close(sinusoidal_encoding_at(torch.tensor([2.0, 4.0]), 16), table[[2, 4]])


@settings(max_examples=60, deadline=None)
@given(
    p=st.integers(0, 5000),
    k=st.integers(-2000, 2000),
    half=st.integers(1, 32),
    layout=st.sampled_from(["interleaved", "concat"]),
)
def test_shift_matrix_property(p, k, half, layout):
    """PE[p + k] = M_k PE[p] for every p (and M_k does not depend on p)."""
    dim = 2 * half
    if p + k < 0:
        k = -p
    pe = sinusoidal_encoding_at(torch.tensor([p, p + k]), dim, layout=layout, dtype=torch.float64)
    m = shift_matrix(k, dim, layout=layout)
    torch.testing.assert_close(m @ pe[0], pe[1], rtol=0, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(k=st.integers(-10_000, 10_000), half=st.integers(1, 64))
def test_shift_matrix_is_orthogonal_and_inverse(k, half):
    dim = 2 * half
    m = shift_matrix(k, dim)
    torch.testing.assert_close(m @ m.T, torch.eye(dim, dtype=torch.float64), rtol=0, atol=1e-12)
    torch.testing.assert_close(shift_matrix(-k, dim), m.T, rtol=0, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(half=st.integers(1, 64), n=st.integers(0, 40))
def test_concat_is_column_permutation(half, n):
    dim = 2 * half
    perm = concat_permutation(dim)
    inter = sinusoidal_encoding(n, dim)
    torch.testing.assert_close(sinusoidal_encoding(n, dim, layout="concat"), inter[:, perm])
    assert sorted(perm.tolist()) == list(range(dim))
    concat = sinusoidal_encoding(n, dim, layout="concat")
    torch.testing.assert_close(concat[:, torch.argsort(perm)], inter)


@settings(max_examples=30, deadline=None)
@given(half=st.integers(1, 64), base=st.floats(1.5, 1e6))
def test_pair_columns_share_one_frequency(half, base):
    """Columns 2i and 2i+1 are sin and cos of the same angle: sin² + cos² = 1, and the
    angle recovered by atan2 grows by exactly ω_i per position."""
    dim = 2 * half
    pe = sinusoidal_encoding(3, dim, base, dtype=torch.float64)
    s, c = pe[:, 0::2], pe[:, 1::2]
    torch.testing.assert_close(s**2 + c**2, torch.ones_like(s), rtol=0, atol=1e-12)
    omega = torch.atan2(s[1], c[1])
    torch.testing.assert_close(omega, sinusoidal_inv_freq(dim, base), rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"num_positions": -1, "dim": 8}, ValueError, "num_positions must be an integer >= 0"),
        ({"num_positions": 2.5, "dim": 8}, TypeError, "num_positions must be an integer"),
        ({"num_positions": 4, "dim": 7}, ValueError, "dim must be an even integer"),
        ({"num_positions": 4, "dim": 0}, ValueError, "dim must be an integer >= 2"),
        ({"num_positions": 4, "dim": 8, "base": 0.0}, ValueError, "base must be > 0"),
        ({"num_positions": 4, "dim": 8, "base": -3.0}, ValueError, "base must be > 0"),
        ({"num_positions": 4, "dim": 8, "base": float("nan")}, ValueError, "base must be a finite"),
        ({"num_positions": 4, "dim": 8, "layout": "pairs"}, ValueError, "layout must be one of"),
        ({"num_positions": True, "dim": 8}, TypeError, "num_positions must be an integer"),
    ],
)
def test_bad_input(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        sinusoidal_encoding(**kwargs)


@pytest.mark.parametrize(
    "positions, match",
    [
        ([0, 1.5], "whole numbers"),
        ([-1, 2], "must be >= 0"),
        (torch.tensor([float("nan")]), "finite"),
    ],
)
def test_bad_positions(positions, match):
    with pytest.raises(ValueError, match=match):
        sinusoidal_encoding_at(positions, 8)


def test_bad_shift_args():
    with pytest.raises(TypeError, match="k must be an integer"):
        shift_matrix(1.5, 8)
    with pytest.raises(ValueError, match="dim must be an even"):
        shift_matrix(1, 9)


def test_zero_positions_is_empty():
    assert sinusoidal_encoding(0, 8).shape == (0, 8)
