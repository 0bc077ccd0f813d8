"""posenc.attention: the formula, masks, biases, and permutation equivariance."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.attention import attention, causal_mask, sliding_window_mask


def reference_attention(q, k, v, bias=None, keep=None):
    """Vaswani et al. (2017) eq. 1 written with explicit loops over query rows."""
    d = q.shape[-1]
    out = torch.empty(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
    for i in range(q.shape[-2]):
        s = (k @ q[..., i, :, None])[..., 0] / math.sqrt(d)
        if bias is not None:
            s = s + bias[..., i, :]
        if keep is not None:
            s = s.masked_fill(~keep[..., i, :], float("-inf"))
        w = torch.exp(s - s.max(dim=-1, keepdim=True).values)
        out[..., i, :] = (w / w.sum(dim=-1, keepdim=True))[..., None, :].matmul(v)[..., 0, :]
    return out


def test_matches_reference_and_sdpa():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5, 8, generator=g, dtype=torch.float64) for _ in range(3))
    bias = torch.randn(3, 5, 5, generator=g, dtype=torch.float64)
    out, w = attention(q, k, v, bias=bias, causal=True)
    keep = causal_mask(5)
    torch.testing.assert_close(out, reference_attention(q, k, v, bias, keep))
    sdpa = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=bias.masked_fill(~keep, float("-inf"))
    )
    torch.testing.assert_close(out, sdpa)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 3, 5, dtype=torch.float64))


def test_causal_mask_aligned_to_last_keys():
    m = causal_mask(2, 4)
    assert m.tolist() == [[True, True, True, False], [True, True, True, True]]
    assert causal_mask(3).tolist() == [
        [True, False, False], [True, True, False], [True, True, True]
    ]


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 12), seed=st.integers(0, 10_000))
def test_permutation_equivariance(n, seed):
    """Without positions or masks, permuting the tokens permutes the outputs."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 6, generator=g, dtype=torch.float64)
    perm = torch.randperm(n, generator=g)
    out, _ = attention(x, x, x)
    out_p, _ = attention(x[perm], x[perm], x[perm])
    torch.testing.assert_close(out_p, out[perm], rtol=0, atol=1e-12)


def test_scale_and_weights():
    q = torch.tensor([[1.0, 0.0]])
    k = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    v = torch.tensor([[1.0], [0.0]])
    _, w = attention(q, k, v, scale=1.0)
    torch.testing.assert_close(w, torch.softmax(torch.tensor([[1.0, 0.0]]), -1))


@pytest.mark.parametrize(
    "make, exc, match",
    [
        (lambda q, k, v: attention(q, k[..., :3], v), ValueError, "share their last dim"),
        (lambda q, k, v: attention(q, k, v[:2]), ValueError, "share their sequence length"),
        (lambda q, k, v: attention(q, k, v, mask=torch.ones(4, 4)), ValueError, "bool"),
        (lambda q, k, v: attention(q, k, v, mask=torch.zeros(4, 4, dtype=torch.bool)),
         ValueError, "no key"),
        (lambda q, k, v: attention(q, k, v, bias=torch.zeros(3, 3)), ValueError, "broadcast"),
        (lambda q, k, v: attention(q, k, v, scale=0.0), ValueError, "scale must be > 0"),
        (lambda q, k, v: attention(q, k, v, scale=float("nan")), ValueError, "finite"),
        (lambda q, k, v: attention(q.long(), k, v), TypeError, "floating"),
        (lambda q, k, v: attention(q[0], k, v), ValueError, r"shape \(\.\.\., seq, dim\)"),
        (lambda q, k, v: attention([[1.0]], k, v), TypeError, "torch.Tensor"),
    ],
)
def test_bad_input(make, exc, match):
    q = k = v = torch.randn(4, 4)
    with pytest.raises(exc, match=match):
        make(q, k, v)


def test_causal_mask_bad_lengths():
    with pytest.raises(ValueError, match="k_len must be >= q_len"):
        causal_mask(4, 2)
    with pytest.raises(ValueError, match="q_len must be an integer >= 0"):
        causal_mask(-1)


@settings(max_examples=200, deadline=None)
@given(shapes=st.lists(st.lists(st.sampled_from([1, 2, 3]), max_size=4), min_size=1, max_size=3))
def test_broadcast_shape_matches_torch(shapes):
    """posenc's sympy-free broadcast rule agrees with torch.broadcast_shapes."""
    from posenc._checks import broadcast_shape

    try:
        expected = tuple(torch.broadcast_shapes(*shapes))
    except RuntimeError:
        with pytest.raises(ValueError, match="do not broadcast"):
            broadcast_shape(*shapes)
    else:
        assert broadcast_shape(*shapes) == expected


# --- sliding-window mask -------------------------------------------------------------


def reference_sliding_window(q_len, k_len, window):
    """Query i (absolute position k_len - q_len + i) sees key j iff 0 <= p - j < window."""
    return [
        [0 <= (k_len - q_len + i) - j < window for j in range(k_len)] for i in range(q_len)
    ]


@pytest.mark.parametrize("q_len, k_len", [(1, 1), (5, 5), (2, 6), (1, 9), (4, 7), (0, 3)])
@pytest.mark.parametrize("window", [1, 2, 3, 5, 100])
def test_sliding_window_mask_matches_reference(q_len, k_len, window):
    m = sliding_window_mask(q_len, k_len, window)
    assert m.dtype == torch.bool and m.shape == (q_len, k_len)
    assert m.tolist() == reference_sliding_window(q_len, k_len, window)


@pytest.mark.parametrize("q_len, k_len", [(5, 5), (2, 6), (1, 9), (4, 7)])
@pytest.mark.parametrize("window", [1, 3, 4, 16])
def test_sliding_window_mask_matches_transformers(q_len, k_len, window):
    masking_utils = pytest.importorskip("transformers.masking_utils")
    ref = masking_utils.sdpa_mask(
        batch_size=1,
        q_length=q_len,
        kv_length=k_len,
        q_offset=k_len - q_len,
        mask_function=masking_utils.sliding_window_causal_mask_function(window),
        allow_is_causal_skip=False,
    )
    assert torch.equal(sliding_window_mask(q_len, k_len, window), ref[0, 0])


def test_sliding_window_mask_docstring_example_of_transformers():
    """The 5 x 5, sliding_window = 3 picture in transformers' sdpa_mask docstring."""
    assert sliding_window_mask(5, None, 3).int().tolist() == [
        [1, 0, 0, 0, 0],
        [1, 1, 0, 0, 0],
        [1, 1, 1, 0, 0],
        [0, 1, 1, 1, 0],
        [0, 0, 1, 1, 1],
    ]


@pytest.mark.parametrize("q_len, k_len", [(3, 3), (2, 8)])
def test_sliding_window_mask_wide_window_is_causal(q_len, k_len):
    assert torch.equal(sliding_window_mask(q_len, k_len, k_len), causal_mask(q_len, k_len))


def test_sliding_window_mask_in_attention_ignores_far_keys():
    """Keys outside the window get weight exactly 0, so changing them changes nothing."""
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 6, 4, generator=g, dtype=torch.float64) for _ in range(3))
    mask = sliding_window_mask(6, 6, 2)
    out, w = attention(q, k, v, mask=mask)
    assert torch.all(w[..., ~mask] == 0)
    k2, v2 = k.clone(), v.clone()
    k2[..., 0, :] += 10.0
    v2[..., 0, :] -= 10.0
    out2, _ = attention(q, k2, v2, mask=mask)
    torch.testing.assert_close(out2[..., 2:, :], out[..., 2:, :], rtol=0, atol=0)


@pytest.mark.parametrize(
    "args, exc, match",
    [
        ((3, 3, 0), ValueError, "window must be an integer >= 1"),
        ((3, 3, -2), ValueError, "window"),
        ((3, 3, 2.0), TypeError, "window must be an integer"),
        ((4, 3, 2), ValueError, "k_len must be >= q_len"),
        ((-1, 3, 2), ValueError, "q_len"),
        ((2, None, None), TypeError, "window"),
    ],
)
def test_sliding_window_mask_bad_input(args, exc, match):
    with pytest.raises(exc, match=match):
        sliding_window_mask(*args)
