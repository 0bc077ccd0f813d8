"""Tests for posenc.alibi: slopes for any head count and the three bias layouts.

Reference functions are written from Press et al. (2022) and their code's slope rule;
parity tests compare against Hugging Face ``transformers``' BLOOM and MPT ALiBi code.
"""

from __future__ import annotations

import math

import pytest
import torch
from conftest import OptionalModule
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.alibi import alibi_bias, alibi_slopes
from posenc.attention import attention, causal_mask

bloom = OptionalModule("transformers.models.bloom.modeling_bloom")
mpt = OptionalModule("transformers.models.mpt.modeling_mpt")


def ref_get_slopes(n: int) -> list[float]:
    """The slope rule of Press et al.'s reference code (``get_slopes``), in plain Python."""
    def power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + ref_get_slopes(2 * closest)[0::2][: n - closest]


def ref_causal_bias(slopes, q_len, k_len):
    """−m·(pos_i − j) for j <= pos_i, −inf after (paper, section 3); pos_i = k − q + i."""
    out = torch.full((len(slopes), q_len, k_len), float("-inf"), dtype=torch.float64)
    for h, m in enumerate(slopes):
        for i in range(q_len):
            pos = k_len - q_len + i
            for j in range(pos + 1):
                out[h, i, j] = -m * (pos - j)
    return out


def naive_slopes(n: int) -> list[float]:
    return [2 ** (-8 * (h + 1) / n) for h in range(n)]


SIMPLIFIED = [0.5, 0.25, 0.125, 0.0625]
F32_EPS = torch.finfo(torch.float32).eps
BLOOM_RTOL = 32 * F32_EPS


# ----------------------------------------------------------------- slopes
def test_slopes_four_heads():
    assert alibi_slopes(4).tolist() == [0.25, 0.0625, 0.015625, 0.00390625]


def test_slopes_eight_heads_are_halvings():
    assert alibi_slopes(8).tolist() == [2.0**-k for k in range(1, 9)]


def test_slopes_twelve_heads():
    expected = [2.0**-k for k in range(1, 9)] + [0.7071068, 0.3535534, 0.1767767, 0.0883883]
    got = alibi_slopes(12, dtype=torch.float64)
    assert got[:8].tolist() == expected[:8]
    assert torch.allclose(got[8:], torch.tensor(expected[8:], dtype=torch.float64), atol=5e-8)
    assert torch.allclose(got[8:], 2.0 ** -torch.tensor([0.5, 1.5, 2.5, 3.5],
                                                        dtype=torch.float64))


def test_slopes_six_heads():
    assert alibi_slopes(6).tolist() == [0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125]


@pytest.mark.parametrize("n", [6, 12])
def test_naive_formula_is_wrong_for_non_powers_of_two(n):
    naive = torch.tensor(naive_slopes(n), dtype=torch.float64)
    assert not torch.allclose(naive, alibi_slopes(n, dtype=torch.float64))
    # not even as a set: the rule reuses slopes of the neighbouring powers of two
    assert not torch.allclose(naive.sort().values,
                              alibi_slopes(n, dtype=torch.float64).sort().values)


@pytest.mark.parametrize("n", [1, 2, 4, 8, 16, 32, 64])
def test_naive_formula_is_right_for_powers_of_two(n):
    assert torch.allclose(torch.tensor(naive_slopes(n), dtype=torch.float64),
                          alibi_slopes(n, dtype=torch.float64), rtol=1e-15, atol=0)


@pytest.mark.parametrize("n", range(1, 97))
def test_slopes_match_reference_rule(n):
    got = alibi_slopes(n, dtype=torch.float64)
    assert got.shape == (n,)
    assert torch.allclose(got, torch.tensor(ref_get_slopes(n), dtype=torch.float64),
                          rtol=1e-14, atol=0)
    assert (got > 0).all() and (got < 1).all()
    assert len(set(got.tolist())) == n, "every head gets its own slope"


@pytest.mark.parametrize("n", range(1, 97))
def test_slopes_parity_with_bloom_and_mpt(n):
    ours = alibi_slopes(n, dtype=torch.float64)
    # BLOOM raises a float32-rounded base to integer powers (up to 2n), so its float32
    # slopes drift by a few ulp per doubling; ours are correctly rounded from float64.
    theirs = bloom._get_alibi_slopes(n, torch.device("cpu")).double()
    torch.testing.assert_close(ours, theirs, rtol=BLOOM_RTOL, atol=0)
    mpt_bias = mpt.build_mpt_alibi_tensor(n, 2).double()  # (h, 1, 2): [−m, 0] per head
    torch.testing.assert_close(ours, -mpt_bias[:, 0, 0], rtol=2 * F32_EPS, atol=0)


def test_slopes_bad_input():
    with pytest.raises(ValueError, match="num_heads"):
        alibi_slopes(0)
    with pytest.raises(TypeError, match="num_heads"):
        alibi_slopes(4.0)
    with pytest.raises(ValueError, match="dtype"):
        alibi_slopes(4, dtype=torch.float16)


# ----------------------------------------------------------------- the notes' example
def test_distance_matrix_of_the_notes():
    d = alibi_bias(1, 5, causal=False, slopes=[1.0])[0]
    assert d.tolist() == [[-abs(i - j) for j in range(5)] for i in range(5)]


def test_head0_and_head2_matrices_of_the_notes():
    b = alibi_bias(4, 5, causal=False, slopes=SIMPLIFIED)
    assert b[0].tolist() == [
        [0.0, -0.5, -1.0, -1.5, -2.0],
        [-0.5, 0.0, -0.5, -1.0, -1.5],
        [-1.0, -0.5, 0.0, -0.5, -1.0],
        [-1.5, -1.0, -0.5, 0.0, -0.5],
        [-2.0, -1.5, -1.0, -0.5, 0.0],
    ]
    assert b[2].tolist() == [
        [0.0, -0.125, -0.25, -0.375, -0.5],
        [-0.125, 0.0, -0.125, -0.25, -0.375],
        [-0.25, -0.125, 0.0, -0.125, -0.25],
        [-0.375, -0.25, -0.125, 0.0, -0.125],
        [-0.5, -0.375, -0.25, -0.125, 0.0],
    ]
    assert float(b[0, 4, 0]) == -2.0 and float(b[2, 4, 0]) == -0.5
    assert float(b[0, 0, 4]) == -2.0 and float(b[2, 0, 4]) == -0.5


def test_causal_form_is_lower_triangle_of_symmetric_form():
    sym = alibi_bias(4, 5, causal=False, slopes=SIMPLIFIED)
    cau = alibi_bias(4, 5, slopes=SIMPLIFIED)
    lower = causal_mask(5)
    assert torch.equal(cau[:, lower], sym[:, lower])
    assert torch.isneginf(cau[:, ~lower]).all()


# ----------------------------------------------------------------- bias forms
@pytest.mark.parametrize("num_heads", [1, 3, 4, 12])
@pytest.mark.parametrize(("q_len", "k_len"), [(5, 5), (1, 9), (3, 8), (0, 4)])
def test_causal_bias_matches_reference(num_heads, q_len, k_len):
    got = alibi_bias(num_heads, q_len, k_len, dtype=torch.float64)
    assert got.shape == (num_heads, q_len, k_len)
    ref = ref_causal_bias(ref_get_slopes(num_heads), q_len, k_len)
    assert torch.allclose(got, ref, rtol=1e-14, atol=0)


def test_symmetric_bias_matches_reference():
    m = alibi_slopes(6, dtype=torch.float64)
    got = alibi_bias(6, 7, causal=False, dtype=torch.float64)
    i = torch.arange(7)
    ref = -m[:, None, None] * (i[:, None] - i[None, :]).abs()
    assert torch.allclose(got, ref, rtol=1e-15, atol=0)
    assert torch.equal(got, got.transpose(1, 2))


def test_row_form_values():
    m = alibi_slopes(3)
    row = alibi_bias(3, 4, 6, form="row")
    for i in range(4):
        pos = 6 - 4 + i
        assert torch.equal(row[:, i, : pos + 1], m[:, None] * torch.arange(pos + 1))
        assert torch.isneginf(row[:, i, pos + 1:]).all()


@settings(max_examples=60, deadline=None)
@given(
    num_heads=st.integers(1, 12),
    q_len=st.integers(1, 10),
    extra=st.integers(0, 10),
    seed=st.integers(0, 2**16),
)
def test_row_form_gives_identical_softmax(num_heads, q_len, extra, seed):
    """+m·j differs from −m·(i − j) by m·i per row; softmax cannot see that."""
    k_len = q_len + extra
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(num_heads, q_len, 8, generator=g, dtype=torch.float64)
    k = torch.randn(num_heads, k_len, 8, generator=g, dtype=torch.float64)
    v = torch.randn(num_heads, k_len, 3, generator=g, dtype=torch.float64)
    kw = {"dtype": torch.float64}
    out_d, w_d = attention(q, k, v, bias=alibi_bias(num_heads, q_len, k_len, **kw))
    out_r, w_r = attention(q, k, v, bias=alibi_bias(num_heads, q_len, k_len, form="row", **kw))
    assert torch.allclose(w_d, w_r, rtol=0, atol=1e-12)
    assert torch.allclose(out_d, out_r, rtol=0, atol=1e-12)
    diff = alibi_bias(num_heads, q_len, k_len, form="row", **kw) - alibi_bias(
        num_heads, q_len, k_len, **kw)
    finite = torch.isfinite(diff)
    pos = torch.arange(q_len, dtype=torch.float64) + extra
    m = alibi_slopes(num_heads, dtype=torch.float64)
    per_row = (m[:, None] * pos)[:, :, None].expand_as(diff)
    assert torch.allclose(diff[finite], per_row[finite], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("num_heads", [1, 4, 6, 12, 16])
@pytest.mark.parametrize("seq_len", [1, 5, 17])
def test_row_form_parity_with_bloom(num_heads, seq_len):
    theirs = bloom.build_alibi_tensor(torch.ones(1, seq_len), num_heads, torch.float32)
    theirs = theirs.reshape(num_heads, 1, seq_len).expand(num_heads, seq_len, seq_len)
    ours = alibi_bias(num_heads, seq_len, form="row")
    lower = causal_mask(seq_len)
    torch.testing.assert_close(ours[:, lower], theirs[:, lower], rtol=BLOOM_RTOL, atol=0)
    # BLOOM adds the causal mask separately: the resulting weights are ours
    masked = theirs.masked_fill(~lower, float("-inf"))
    torch.testing.assert_close(torch.softmax(ours, -1), torch.softmax(masked, -1))
    torch.testing.assert_close(
        torch.softmax(alibi_bias(num_heads, seq_len), -1), torch.softmax(masked, -1)
    )


@pytest.mark.parametrize("num_heads", [2, 6, 8, 12])
def test_distance_form_parity_with_mpt_up_to_row_constant(num_heads):
    """MPT's bias is m·(j − (L−1)) for every row: equal to ours in the last row."""
    L = 9
    theirs = mpt.build_mpt_alibi_tensor(num_heads, L)  # (h, 1, L)
    ours = alibi_bias(num_heads, L)
    torch.testing.assert_close(ours[:, -1:, :], theirs, rtol=2 * F32_EPS, atol=0)
    masked = theirs.expand(num_heads, L, L).masked_fill(~causal_mask(L), float("-inf"))
    torch.testing.assert_close(torch.softmax(ours, -1), torch.softmax(masked, -1))


def test_kv_cache_rows_match_full_bias():
    full = alibi_bias(6, 12)
    for t in range(1, 13):
        assert torch.equal(alibi_bias(6, 1, t), full[:, t - 1: t, :t])
    assert torch.equal(alibi_bias(6, 4, 12), full[:, -4:, :])


@settings(max_examples=30, deadline=None)
@given(length=st.integers(1, 64), shift=st.integers(1, 64))
def test_bias_depends_only_on_distance(length, shift):
    """Any length works: the row of a query at distance-pattern d is the same at any length."""
    short = alibi_bias(4, 1, length)[:, 0]
    long = alibi_bias(4, 1, length + shift)[:, 0, shift:]
    assert torch.equal(short, long)


def test_uniform_content_gives_geometric_weights():
    """With q = 0 the weights over past keys are ∝ exp(−m·distance) (the bias alone)."""
    n, h = 6, 4
    q = k = torch.zeros(h, n, 2, dtype=torch.float64)
    v = torch.zeros(h, n, 1, dtype=torch.float64)
    _, w = attention(q, k, v, bias=alibi_bias(h, n, dtype=torch.float64))
    m = alibi_slopes(h, dtype=torch.float64)
    d = torch.arange(n - 1, -1, -1, dtype=torch.float64)  # distances of the last query
    ref = torch.exp(-m[:, None] * d)
    ref = ref / ref.sum(-1, keepdim=True)
    assert torch.allclose(w[:, -1], ref, rtol=1e-12, atol=0)
    assert torch.allclose(w, attention(q, k, v, bias=alibi_bias(h, n, dtype=torch.float64),
                                       causal=True)[1])


@pytest.mark.parametrize(
    ("args", "kwargs", "err", "match"),
    [
        ((0, 4), {}, ValueError, "num_heads"),
        ((4, -1), {}, ValueError, "q_len"),
        ((4, 3, -2), {}, ValueError, "k_len"),
        ((4, 5, 3), {}, ValueError, "k_len must be >= q_len"),
        ((4, 5), {"form": "linear"}, ValueError, "form"),
        ((4, 5), {"form": "row", "causal": False}, ValueError, "causal=True"),
        ((4, 5), {"slopes": [0.5, 0.25]}, ValueError, "slopes"),
        ((4, 5), {"slopes": [0.5, 0.25, -0.1, 0.1]}, ValueError, "slopes"),
        ((4, 5), {"slopes": [0.5, 0.25, float("nan"), 0.1]}, ValueError, "slopes"),
        ((4, 5), {"slopes": [[0.5, 0.25], [0.1, 0.1]]}, ValueError, "slopes"),
        ((4, 5), {"dtype": torch.bfloat16}, ValueError, "dtype"),
        ((4, 5.0), {}, TypeError, "q_len"),
        ((4, 5, 5, "yes"), {}, TypeError, "causal"),
    ],
)
def test_alibi_bias_bad_input(args, kwargs, err, match):
    with pytest.raises(err, match=match):
        alibi_bias(*args, **kwargs)


def test_alibi_bias_dtype_and_empty():
    assert alibi_bias(2, 3).dtype == torch.float32
    assert alibi_bias(2, 3, dtype=torch.float64).dtype == torch.float64
    assert alibi_bias(2, 0).shape == (2, 0, 0)
    assert alibi_bias(2, 0, 3).shape == (2, 0, 3)
