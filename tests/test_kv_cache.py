"""Tests for posenc.attention.KVCache: rotated K and raw V in, decode == full forward out."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.attention import KVCache, attention
from posenc.rope import apply_rope

F64 = torch.float64


def rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=F64)


def test_append_length_positions_and_contents():
    cache = KVCache(num_layers=2)
    assert cache.length() == 0 and cache.keys(1) is None and cache.values(0) is None
    assert cache.positions(3).tolist() == [0, 1, 2]
    k, v = rand(2, 3, 8, seed=1), rand(2, 3, 4, seed=2)
    k_all, v_all = cache.update(0, k, v)
    assert torch.equal(k_all, k) and torch.equal(v_all, v)
    assert cache.length(0) == 3 and cache.length(1) == 0
    assert cache.positions(2).tolist() == [3, 4] and cache.positions(1, layer=1).tolist() == [0]
    k2, v2 = rand(2, 1, 8, seed=3), rand(2, 1, 4, seed=4)
    k_all, v_all = cache.update(0, k2, v2)
    assert k_all.shape == (2, 4, 8) and v_all.shape == (2, 4, 4)
    assert torch.equal(k_all[:, 3:], k2) and torch.equal(v_all[:, :3], v)
    cache.reset()
    assert cache.length(0) == 0 and cache.keys(0) is None


def test_cache_holds_rotated_keys_and_raw_values():
    """After prefill + decode, cached K equals apply_rope(K, 0…s−1) and cached V equals V."""
    k, v = rand(1, 2, 6, 16, seed=5), rand(1, 2, 6, 16, seed=6)
    cache = KVCache()
    cache.update(0, apply_rope(k[..., :4, :], cache.positions(4)), v[..., :4, :])
    for t in range(4, 6):
        pos = cache.positions(1)
        assert pos.tolist() == [t]
        cache.update(0, apply_rope(k[..., t:t + 1, :], pos), v[..., t:t + 1, :])
    assert torch.allclose(cache.keys(), apply_rope(k, torch.arange(6)), atol=1e-15)
    assert torch.equal(cache.values(), v)


def _layer_weights(num_layers, d_model, seed):
    g = torch.Generator().manual_seed(seed)
    return [
        [torch.randn(d_model, d_model, generator=g, dtype=F64) / d_model**0.5 for _ in range(4)]
        for _ in range(num_layers)
    ]


def _forward(x, weights, positions, cache=None, heads=2):
    """A tiny pre-norm-free stack: x += W_o · attn(RoPE(x W_q), RoPE(x W_k), x W_v)."""
    *_, s, d_model = x.shape
    hd = d_model // heads
    for layer, (wq, wk, wv, wo) in enumerate(weights):
        def split(t):
            return t.reshape(s, heads, hd).transpose(0, 1)  # (h, s, hd)

        q = apply_rope(split(x @ wq), positions)
        k = apply_rope(split(x @ wk), positions)
        v = split(x @ wv)
        if cache is not None:
            k, v = cache.update(layer, k, v)
        out = attention(q, k, v, causal=True)[0]  # queries are the last s of the keys
        x = x + out.transpose(0, 1).reshape(s, d_model) @ wo
    return x


@settings(max_examples=20, deadline=None)
@given(seq=st.integers(1, 10), prefill=st.integers(1, 10), seed=st.integers(0, 10**6))
def test_two_layer_decode_equals_full_forward(seq, prefill, seed):
    prefill = min(prefill, seq)
    weights = _layer_weights(2, 16, seed)
    x = rand(seq, 16, seed=seed + 1)
    full = _forward(x, weights, torch.arange(seq))
    cache = KVCache(num_layers=2, max_length=seq)
    rows = [_forward(x[:prefill], weights, cache.positions(prefill), cache)]
    for t in range(prefill, seq):
        pos = cache.positions(1)  # read before this step's updates
        rows.append(_forward(x[t:t + 1], weights, pos, cache))
    assert torch.allclose(torch.cat(rows), full, atol=1e-12)
    assert cache.length(0) == cache.length(1) == seq


def test_positions_restarted_at_zero_break_decoding():
    weights = _layer_weights(1, 16, 7)
    x = rand(6, 16, seed=8)
    full = _forward(x, weights, torch.arange(6))
    cache = KVCache()
    rows = [_forward(x[:3], weights, torch.arange(3), cache)]
    for t in range(3, 6):
        rows.append(_forward(x[t:t + 1], weights, torch.arange(1), cache))  # the bug
    assert (torch.cat(rows) - full).abs().max() > 1e-3


def test_bad_input():
    with pytest.raises(ValueError, match="num_layers"):
        KVCache(0)
    with pytest.raises(ValueError, match="max_length"):
        KVCache(1, max_length=0)
    cache = KVCache(num_layers=2, max_length=4)
    k, v = torch.zeros(1, 3, 8), torch.zeros(1, 3, 4)
    with pytest.raises(IndexError, match="layer"):
        cache.update(2, k, v)
    with pytest.raises(IndexError, match="layer"):
        cache.length(-1)
    with pytest.raises(TypeError, match="k must be a torch.Tensor"):
        cache.update(0, [0.0], v)
    with pytest.raises(TypeError, match="floating"):
        cache.update(0, k.long(), v)
    with pytest.raises(ValueError, match="agree"):
        cache.update(0, k, torch.zeros(1, 2, 4))
    with pytest.raises(ValueError, match="shape"):
        cache.update(0, torch.zeros(8), torch.zeros(4))
    cache.update(0, k, v)
    with pytest.raises(ValueError, match="does not extend"):
        cache.update(0, torch.zeros(1, 1, 6), torch.zeros(1, 1, 4))
    with pytest.raises(ValueError, match="does not extend"):
        cache.update(0, torch.zeros(2, 1, 8), torch.zeros(2, 1, 4))
    with pytest.raises(ValueError, match="dtype"):
        cache.update(0, torch.zeros(1, 1, 8, dtype=F64), torch.zeros(1, 1, 4, dtype=F64))
    with pytest.raises(IndexError, match="max_length"):
        cache.update(0, torch.zeros(1, 2, 8), torch.zeros(1, 2, 4))
    with pytest.raises(ValueError, match="n must be"):
        cache.positions(0)
    assert cache.length(0) == 3  # failed updates changed nothing
