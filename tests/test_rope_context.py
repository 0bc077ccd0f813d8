"""Tests for posenc.rope_context: full turns, p-RoPE's numbers, Men et al.'s base bound.

``ref_margin`` writes ``B_m = Σ_i cos(m θ_i)`` with Python floats; a Monte Carlo test checks
the reason for it (the similar-minus-random score difference). The base bound is checked as
a bound: it satisfies the criterion (Python floats), a base 1e-7 below fails, and a grid 100
times finer than 1 % over the 8 % below it finds no earlier satisfying base. It is also
compared with the fitted curve of Men et al.'s Figure 1, ``0.0424 · L^1.628`` (read from a
text rendering of the figure; the paper's table could not be read).
"""

from __future__ import annotations

import math

import pytest
import torch

from posenc.rope import apply_rope, rope_inv_freq
from posenc.rope_context import (
    base_lower_bound,
    full_turns,
    min_similar_token_margin,
    similar_token_margin,
)
from posenc.scaling import proportional

F64 = torch.float64


def ref_margin(m, d, base):
    return sum(math.cos(m * base ** (-2 * i / d)) for i in range(d // 2))


@pytest.mark.parametrize("d", [8, 64, 128])
@pytest.mark.parametrize("base", [1e4, 5e5])
def test_margin_matches_reference(d, base):
    dist = [0, 1, 7, 100, 4095]
    got = similar_token_margin(dist, rope_inv_freq(d, base, dtype=F64))
    ref = torch.tensor([ref_margin(m, d, base) for m in dist], dtype=F64)
    torch.testing.assert_close(got, ref, rtol=0, atol=1e-10)
    assert got[0].item() == d // 2


def test_margin_is_the_expected_similar_minus_random_score():
    """E[<R_m q, R_0 (q + eps)>] - E[<R_m q, R_0 k_rand>] = 2 sigma^2 B_m (sigma = 1)."""
    g = torch.Generator().manual_seed(0)
    d, n, m = 16, 200_000, 5
    q = torch.randn(n, d, generator=g, dtype=F64)
    similar = q + 0.5 * torch.randn(n, d, generator=g, dtype=F64)
    random_k = torch.randn(n, d, generator=g, dtype=F64)
    qr = apply_rope(q, torch.full((n,), m))
    gap = (qr * similar).sum(-1).mean() - (qr * random_k).sum(-1).mean()
    expected = 2 * similar_token_margin([m], rope_inv_freq(d, dtype=F64))[0]
    assert abs(gap.item() - expected.item()) < 0.1


def test_min_margin_and_early_stop():
    inv = rope_inv_freq(128, 1e4, dtype=F64)
    full = similar_token_margin(torch.arange(4097), inv).min().item()
    assert min_similar_token_margin(4096, inv) == pytest.approx(full, abs=1e-12)
    assert min_similar_token_margin(4096, inv, stop_below=0.0) < 0
    assert min_similar_token_margin(8192, rope_inv_freq(128, 5e5, dtype=F64)) > 0


def test_full_turns():
    inv = rope_inv_freq(8, dtype=F64)
    torch.testing.assert_close(full_turns(inv, 4096), inv * 4096 / (2 * math.pi))
    assert full_turns(torch.zeros(3, dtype=F64), 10).tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="length"):
        full_turns(inv, 0)


def test_gemma4_global_layers_quoted_in_chapter_4():
    """transformers 5.24 Gemma 4 defaults: 512-wide global heads, p-RoPE with p = 1/4."""
    cfg_mod = pytest.importorskip("transformers.models.gemma4.configuration_gemma4")
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    cfg = cfg_mod.Gemma4TextConfig()
    full = cfg.rope_parameters["full_attention"]
    assert full == {"rope_type": "proportional", "partial_rotary_factor": 0.25,
                    "rope_theta": 1_000_000.0}
    layer = cfg.layer_types.index("full_attention")
    assert cfg.per_layer_config[layer].head_dim == 512
    assert cfg.max_position_embeddings == 131_072
    ref, _ = ROPE_INIT_FUNCTIONS["proportional"](cfg, layer_type="full_attention")
    ours, _ = proportional(512, base=1e6, rotary_dim=128)
    torch.testing.assert_close(ours, ref, rtol=1e-6, atol=0)
    assert int((ours > 0).sum()) == 64


def ref_min_margin(L, d, base):
    return min(ref_margin(m, d, base) for m in range(L + 1))


def first_on_grid(L, d, lo, hi, step):
    """First base of the grid ``lo·(1 + step)^k`` below ``hi`` meeting the criterion."""
    grid = lo * (1 + step) ** torch.arange(int(math.log(hi / lo) / math.log1p(step)) + 1,
                                           dtype=F64)
    w = torch.arange(0, d, 2, dtype=F64) / d
    for chunk in grid.split(64):
        theta = chunk[:, None] ** -w  # (nb, P)
        ok = torch.ones(len(chunk), dtype=torch.bool)
        for m0 in range(0, L + 1, 512):
            m = torch.arange(m0, min(L + 1, m0 + 512), dtype=F64)
            ok &= (torch.cos(m[None, :, None] * theta[:, None, :]).sum(-1) >= 0).all(-1)
        if ok.any():
            return chunk[ok][0].item()
    return None


@pytest.mark.parametrize("L", [1024, 2048])
def test_base_bound_is_the_smallest_satisfying_base(L):
    """The bound holds, fails just below, and no base on a dense grid below it holds."""
    b = base_lower_bound(L, 128)
    assert min_similar_token_margin(L, rope_inv_freq(128, b, dtype=F64)) >= 0
    assert ref_min_margin(L, 128, b) > -1e-9  # independent: Python floats
    assert ref_min_margin(L, 128, b * (1 - 1e-7)) < 0
    # a grid 100 times finer than 1 % over the 8 % below the bound finds nothing earlier
    hit = first_on_grid(L, 128, b / 1.08, b * 1.001, 1e-4)
    assert hit is not None and b <= hit < b * 1.0001
    # the same edge from another start (the grid-based version moved with its start)
    assert base_lower_bound(L, 128, start=b / 3) == pytest.approx(b, rel=1e-8)
    # Men et al., Figure 1: fitted curve 0.0424 L^1.628 through their computed bounds.
    assert 0.7 < b / (0.0424 * L**1.628) < 1.4


def test_base_bound_finds_the_island_a_coarse_grid_misses():
    """L = 4096: the criterion first holds on an island near 2.70e4 (1 % grid: 2.87e4)."""
    b = base_lower_bound(4096, 128, start=1e4)
    assert b == pytest.approx(26952.34, abs=0.01)
    assert ref_min_margin(4096, 128, b) > -1e-9
    assert ref_min_margin(4096, 128, b * (1 - 1e-7)) < 0
    hit = first_on_grid(4096, 128, 2.6e4, b * 1.001, 1e-4)  # nothing earlier on a fine grid
    assert hit is not None and b <= hit < b * 1.0001
    margin = {base: min_similar_token_margin(4096, rope_inv_freq(128, base, dtype=F64))
              for base in (26965.0, 27000.0, 28700.0, 5.31e4)}
    assert margin[26965.0] == pytest.approx(0.16, abs=0.005)  # inside the island
    assert margin[27000.0] < 0 and margin[5.31e4] < 0  # fails again above it
    assert margin[28700.0] > 0
    assert base_lower_bound(4096, 128, start=27000.0) == pytest.approx(28628.69, abs=0.01)
    # the first hit of a 1 % grid from 1e4 steps over the island
    coarse = first_on_grid(4096, 128, 1e4, 4e4, 0.01)
    assert 2.86e4 < coarse < 2.88e4


def test_base_bound_bad_input():
    with pytest.raises(ValueError, match="start"):
        base_lower_bound(1024, 128, start=1e6)
    with pytest.raises(ValueError, match="max_base"):
        base_lower_bound(1024, 128, start=100.0, max_base=200.0)
    with pytest.raises(ValueError, match="head_dim"):
        base_lower_bound(1024, 127)
    with pytest.raises(ValueError, match="rtol"):
        base_lower_bound(1024, 128, rtol=0.0)
    with pytest.raises(ValueError, match="rtol"):
        base_lower_bound(1024, 128, rtol=0.05)
    with pytest.raises(ValueError, match="context_length"):
        base_lower_bound(0, 128)
