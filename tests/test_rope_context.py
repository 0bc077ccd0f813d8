"""Tests for posenc.rope_context: full turns, p-RoPE's numbers, Men et al.'s base bound.

``ref_margin`` writes ``B_m = Σ_i cos(m θ_i)`` with Python floats; ``ref_expected_advantage``
checks the reason for it (the similar-minus-random score difference) by Monte Carlo. The
bound is compared with the fitted curve of Men et al.'s Figure 1, ``0.0424 · L^1.628``
(read from a text rendering of the figure; the paper's table could not be read).
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


@pytest.mark.parametrize("L", [1024, 4096, 8192])
def test_base_bound_is_the_first_satisfying_grid_base(L):
    b = base_lower_bound(L, 128)
    assert min_similar_token_margin(L, rope_inv_freq(128, b, dtype=F64)) >= 0
    below = rope_inv_freq(128, b / 1.01, dtype=F64)  # the grid point below fails
    assert min_similar_token_margin(L, below) < 0
    # Men et al., Figure 1: fitted curve 0.0424 L^1.628 through their computed bounds.
    assert 0.7 < b / (0.0424 * L**1.628) < 1.4


def test_criterion_is_not_monotone_in_the_base():
    """Above the first satisfying base, some bases fail again (why the bound scans)."""
    b = base_lower_bound(4096, 128)
    assert 2.8e4 < b < 2.95e4
    again = rope_inv_freq(128, 5.31e4, dtype=F64)
    assert min_similar_token_margin(4096, again) < 0


def test_base_bound_bad_input():
    with pytest.raises(ValueError, match="start"):
        base_lower_bound(1024, 128, start=1e6)
    with pytest.raises(ValueError, match="max_base"):
        base_lower_bound(1024, 128, start=100.0, max_base=200.0)
    with pytest.raises(ValueError, match="head_dim"):
        base_lower_bound(1024, 127)
    with pytest.raises(ValueError, match="ratio"):
        base_lower_bound(1024, 128, ratio=1.0)
    with pytest.raises(ValueError, match="context_length"):
        base_lower_bound(0, 128)
