"""Tests for posenc.relative: Shaw et al. (2018) clipped relative keys and T5 buckets/bias.

Reference functions below are written from the papers; parity tests compare against the
Hugging Face ``transformers`` T5 code.
"""

from __future__ import annotations

import math

import pytest
import torch
from conftest import OptionalModule
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.attention import attention
from posenc.relative import (
    RelativePositionBias,
    ShawRelativeKeys,
    clipped_relative_positions,
    relative_key_logits,
    relative_position_bucket,
    relative_positions,
)

T5 = OptionalModule("transformers.models.t5.modeling_t5")


def ref_bucket(r: int, bidirectional: bool, num_buckets: int, max_distance: int) -> int:
    """T5 bucket of one relative position ``key − query`` (Raffel et al., 2020, sec. 2.1)."""
    offset = 0
    if bidirectional:
        num_buckets //= 2
        offset = num_buckets if r > 0 else 0
        n = abs(r)
    else:
        n = max(-r, 0)
    exact = num_buckets // 2
    if n < exact:
        return offset + n
    log_bucket = exact + int(math.log(n / exact) / math.log(max_distance / exact)
                             * (num_buckets - exact))
    return offset + min(num_buckets - 1, log_bucket)


# (relative position, bucket) for the defaults (32 buckets, max_distance 128).
BIDIRECTIONAL = [(0, 0), (-1, 1), (1, 17), (-7, 7), (-8, 8), (-20, 10), (20, 26),
                 (-127, 15), (-128, 15), (-300, 15), (-10_000, 15),
                 (127, 31), (128, 31), (300, 31), (10_000, 31)]
CAUSAL = [(0, 0), (-1, 1), (-8, 8), (-20, 17), (-127, 31), (-128, 31), (-300, 31),
          (-10_000, 31), (5, 0), (1, 0), (300, 0)]


# ----------------------------------------------------------------- relative positions
def test_relative_positions_is_key_minus_query():
    r = relative_positions(3, 5)
    assert r.dtype == torch.int64 and r.shape == (3, 5)
    # queries are the last 3 of 5 keys: positions 2, 3, 4
    assert r.tolist() == [[-2, -1, 0, 1, 2], [-3, -2, -1, 0, 1], [-4, -3, -2, -1, 0]]
    assert relative_positions(2, 4, query_offset=0).tolist() == [[0, 1, 2, 3], [-1, 0, 1, 2]]
    assert relative_positions(0, 4).shape == (0, 4)


def test_clipped_relative_positions():
    c = clipped_relative_positions(5, max_relative_position=2)
    expected = [[max(-2, min(2, j - i)) for j in range(5)] for i in range(5)]
    assert c.tolist() == expected
    assert clipped_relative_positions(3, 3, 0).abs().sum() == 0


# ----------------------------------------------------------------- buckets
@pytest.mark.parametrize(("r", "bucket"), BIDIRECTIONAL)
def test_bidirectional_bucket_values(r, bucket):
    assert int(relative_position_bucket(r)) == bucket
    assert ref_bucket(r, True, 32, 128) == bucket


@pytest.mark.parametrize(("r", "bucket"), CAUSAL)
def test_causal_bucket_values(r, bucket):
    assert int(relative_position_bucket(r, bidirectional=False)) == bucket
    assert ref_bucket(r, False, 32, 128) == bucket


BUCKET_CONFIGS = [
    (bid, nb, md)
    for bid in (True, False)
    for nb in (4, 8, 16, 32, 64, 128)
    for md in (16, 20, 64, 128, 256)
    if md > (nb // 2 if bid else nb) // 2
]


@pytest.mark.parametrize(("bidirectional", "num_buckets", "max_distance"), BUCKET_CONFIGS)
def test_bucket_parity_with_transformers_t5(bidirectional, num_buckets, max_distance):
    r = torch.arange(-300, 301)
    ours = relative_position_bucket(r, bidirectional, num_buckets, max_distance)
    theirs = T5.T5Attention._relative_position_bucket(
        r, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    assert torch.equal(ours, theirs.to(torch.int64))
    assert ours.tolist() == [ref_bucket(x, bidirectional, num_buckets, max_distance)
                             for x in r.tolist()]


@pytest.mark.parametrize(("bidirectional", "num_buckets", "max_distance"), BUCKET_CONFIGS)
def test_bucket_range_monotone_and_saturating(bidirectional, num_buckets, max_distance):
    past = relative_position_bucket(-torch.arange(0, 400), bidirectional, num_buckets,
                                     max_distance)
    assert int(past.min()) >= 0 and int(past.max()) < num_buckets
    assert (past.diff() >= 0).all(), "farther past keys never get a smaller bucket"
    assert (past[max_distance:] == past[max_distance]).all(), "saturates at max_distance"
    future = relative_position_bucket(torch.arange(1, 400), bidirectional, num_buckets,
                                      max_distance)
    if bidirectional:
        half = num_buckets // 2
        assert int(future.min()) >= half and int(future.max()) < num_buckets
        assert torch.equal(future - half, past[1:]), "the two directions mirror each other"
    else:
        assert (future == 0).all(), "a causal model puts every future key in bucket 0"


def test_exact_range_gets_one_bucket_per_distance():
    d = torch.arange(0, 8)
    assert relative_position_bucket(-d).tolist() == list(range(8))
    assert relative_position_bucket(-torch.arange(16), bidirectional=False).tolist() == list(
        range(16)
    )


def test_bucket_accepts_shapes_and_whole_floats():
    r = relative_positions(4, 6)
    assert relative_position_bucket(r).shape == (4, 6)
    assert relative_position_bucket(torch.tensor([-20.0])).tolist() == [10]
    assert relative_position_bucket([-1, 1]).tolist() == [1, 17]


@pytest.mark.parametrize(
    ("kwargs", "err"),
    [
        ({"num_buckets": 3}, ValueError),   # too few for bidirectional
        ({"num_buckets": 33}, ValueError),  # odd with bidirectional
        ({"num_buckets": 1, "bidirectional": False}, ValueError),
        ({"num_buckets": 32, "max_distance": 8}, ValueError),  # must exceed the exact range
        ({"num_buckets": 32, "max_distance": 16, "bidirectional": False}, ValueError),
        ({"num_buckets": 32.0}, TypeError),
        ({"bidirectional": "yes"}, TypeError),
    ],
)
def test_bucket_bad_arguments(kwargs, err):
    with pytest.raises(err, match="num_buckets|max_distance|bidirectional"):
        relative_position_bucket(torch.arange(-3, 4), **kwargs)


def test_bucket_bad_positions():
    with pytest.raises(ValueError, match="relative_position"):
        relative_position_bucket(torch.tensor([0.5]))
    with pytest.raises(TypeError, match="relative_position"):
        relative_position_bucket(torch.tensor([True]))


# ----------------------------------------------------------------- RelativePositionBias
def _t5_attention(bidirectional, num_buckets, max_distance, num_heads):
    config = T5.T5Config(
        d_model=16, d_kv=4, num_heads=num_heads, relative_attention_num_buckets=num_buckets,
        relative_attention_max_distance=max_distance, is_decoder=not bidirectional,
    )
    return T5.T5Attention(config, has_relative_attention_bias=True, layer_idx=0)


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize(("num_buckets", "max_distance"), [(32, 128), (16, 20), (8, 64)])
@pytest.mark.parametrize(("q_len", "k_len", "past"), [(7, 7, 0), (1, 40, 39), (3, 200, 197)])
def test_bias_parity_with_transformers_compute_bias(bidirectional, num_buckets, max_distance,
                                                    q_len, k_len, past):
    torch.manual_seed(0)
    ours = RelativePositionBias(3, num_buckets, max_distance, bidirectional, init_std=1.0)
    ref = _t5_attention(bidirectional, num_buckets, max_distance, 3)
    with torch.no_grad():
        ref.relative_attention_bias.weight.copy_(ours.weight)
        theirs = ref.compute_bias(q_len, k_len, past_seen_tokens=past)  # (1, h, q, k)
        got = ours(q_len, k_len, query_offset=past)
        assert torch.equal(got, theirs[0])
        assert torch.equal(ours(q_len, k_len), got), "default offset = k_len − q_len"


def test_bias_shape_params_and_toeplitz():
    torch.manual_seed(0)
    rpb = RelativePositionBias(8)
    assert rpb.weight.shape == (32, 8)
    assert sum(p.numel() for p in rpb.parameters()) == 256  # T5-small: 32 buckets × 8 heads
    b = rpb(6, 9)
    assert b.shape == (8, 6, 9)
    rel = relative_positions(6, 9)
    for r in rel.unique().tolist():
        vals = b[:, rel == r]
        assert torch.equal(vals, vals[:, :1].expand_as(vals)), "one value per head per offset"
    assert rpb(0, 4).shape == (8, 0, 4)


def test_bias_decoding_step_equals_full_row():
    torch.manual_seed(1)
    rpb = RelativePositionBias(4, bidirectional=False)
    full = rpb(10)
    for t in range(1, 11):
        assert torch.equal(rpb(1, t), full[:, t - 1: t, :t])


def test_bias_works_past_max_distance():
    torch.manual_seed(2)
    rpb = RelativePositionBias(2, num_buckets=8, max_distance=16, bidirectional=False)
    b = rpb(1, 1000)
    assert torch.isfinite(b).all()
    assert (b[:, 0, : 1000 - 16] == b[:, 0, :1]).all(), "all far keys share the last bucket"


def test_bias_plugs_into_attention_and_is_differentiable():
    torch.manual_seed(3)
    rpb = RelativePositionBias(2, bidirectional=False)
    q, k, v = (torch.randn(1, 2, 5, 4) for _ in range(3))
    out, w = attention(q, k, v, bias=rpb(5), causal=True)
    out.sum().backward()
    assert rpb.weight.grad is not None and rpb.weight.grad.abs().sum() > 0
    assert torch.allclose(w.sum(-1), torch.ones(1, 2, 5))


@pytest.mark.parametrize(
    ("args", "kwargs", "err", "match"),
    [
        ((0,), {}, ValueError, "num_heads"),
        ((2.0,), {}, TypeError, "num_heads"),
        ((2, 7), {}, ValueError, "num_buckets"),
        ((2,), {"init_std": -1.0}, ValueError, "init_std"),
    ],
)
def test_bias_bad_construction(args, kwargs, err, match):
    with pytest.raises(err, match=match):
        RelativePositionBias(*args, **kwargs)


def test_bias_bad_lengths():
    rpb = RelativePositionBias(2)
    with pytest.raises(ValueError, match="q_len"):
        rpb(-1)
    with pytest.raises(ValueError, match="k_len"):
        rpb(5, 3)
    with pytest.raises(ValueError, match="query_offset"):
        rpb(2, 3, query_offset=-1)
    assert rpb(5, 3, query_offset=0).shape == (2, 5, 3)  # explicit layout is allowed


# ----------------------------------------------------------------- Shaw et al.
def test_shaw_keys_lookup_and_params():
    torch.manual_seed(0)
    K, d = 2, 4
    table = ShawRelativeKeys(K, d, init_std=1.0)
    assert table.weight.shape == (2 * K + 1, d)
    a = table(5, 7)
    assert a.shape == (5, 7, d)
    rel = relative_positions(5, 7)
    for i in range(5):
        for j in range(7):
            r = max(-K, min(K, int(rel[i, j])))
            assert torch.equal(a[i, j], table.weight[r + K])


def test_shaw_score_matches_eq5():
    """softmax(q_i·(k_j + a_ij)/√d) via the bias term equals the paper's eq. (5) directly."""
    torch.manual_seed(1)
    h, n, d = 3, 6, 8
    table = ShawRelativeKeys(3, d, init_std=1.0)
    a = table(n)
    q, k, v = torch.randn(h, n, d), torch.randn(h, n, d), torch.randn(h, n, d)
    scale = 1 / math.sqrt(d)
    with torch.no_grad():
        _, w = attention(q, k, v, bias=relative_key_logits(q, a) * scale)
        e = torch.einsum("hid,hijd->hij", q, k[:, None, :, :] + a[None]) * scale
        assert torch.allclose(w, torch.softmax(e, -1), atol=1e-6)


def test_shaw_term_depends_on_query_content():
    """Unlike T5/ALiBi, the same offset gives different score terms for different queries."""
    torch.manual_seed(2)
    a = ShawRelativeKeys(2, 4, init_std=1.0)(4).detach()
    q = torch.randn(4, 4)
    logits = relative_key_logits(q, a)
    assert not torch.allclose(logits, relative_key_logits(2 * q, a))
    assert torch.allclose(relative_key_logits(2 * q, a), 2 * logits)
    # two queries with the same content see the same term along the same offsets
    q_same = q[:1].expand(4, 4)
    ls = relative_key_logits(q_same, a)
    assert torch.allclose(ls[1, :3], ls[2, 1:])


def test_shaw_bad_input():
    with pytest.raises(ValueError, match="max_relative_position"):
        ShawRelativeKeys(-1, 4)
    with pytest.raises(ValueError, match="dim"):
        ShawRelativeKeys(2, 0)
    with pytest.raises(ValueError, match="max_relative_position"):
        clipped_relative_positions(3, 3, -2)
    a = torch.zeros(3, 3, 4)
    with pytest.raises(ValueError, match="q must have shape"):
        relative_key_logits(torch.zeros(2, 4), a)
    with pytest.raises(ValueError, match="rel_keys"):
        relative_key_logits(torch.zeros(3, 4), torch.zeros(3, 4))
    with pytest.raises(TypeError, match="q"):
        relative_key_logits(torch.zeros(3, 4, dtype=torch.int64), a)


@settings(max_examples=40, deadline=None)
@given(q_len=st.integers(0, 12), extra=st.integers(0, 12), shift=st.integers(0, 50))
def test_relative_positions_translation_invariant(q_len, extra, shift):
    """Shifting every position by the same amount leaves key − query unchanged."""
    k_len = q_len + extra
    base = relative_positions(q_len, k_len, query_offset=extra)
    j = torch.arange(k_len) + shift
    i = torch.arange(q_len)[:, None] + extra + shift
    assert torch.equal(base, j - i)


@pytest.mark.parametrize(
    "bidirectional, max_distance, last_bucket, first_distance",
    [(True, 128, 15, 91), (False, 128, 31, 113), (False, 64, 31, 59)],
)
def test_where_the_last_bucket_starts(bidirectional, max_distance, last_bucket, first_distance):
    """The last bucket starts well before max_distance (chapter 8 prints these numbers)."""
    distance = torch.arange(0, 400)
    buckets = relative_position_bucket(-distance, bidirectional, 32, max_distance)
    in_last = distance[buckets == last_bucket]
    assert int(in_last.min()) == first_distance
    assert (buckets[first_distance:] == last_bucket).all()
    assert int(buckets[first_distance - 1]) == last_bucket - 1
