"""FIRE (Li et al., ICLR 2024) against its equations and its PyTorch listing, and the
study's other 2024–26 designs (p-RoPE, RoPE/NoPE hybrids) against the ``transformers``
code that defines their production forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from posenc.alibi import alibi_bias, alibi_slopes
from posenc.experiments import FULL, SCHEMES
from posenc.experiments.training import build_model
from posenc.fire import FIREBias, fire_bias, fire_inputs
from posenc.hf_config import layer_specs
from posenc.model import TinyDecoder


class PaperFIRE(nn.Module):
    """The paper's PyTorch listing, written out here as the reference (as public copies
    reproduce it; see posenc/fire.py)."""

    def __init__(self, num_heads=12, mlp_width=32, init_c=0.1, init_L=512.0, eps=1e-6):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(1, mlp_width), nn.ReLU(),
                                 nn.Linear(mlp_width, num_heads))
        self.c = nn.Parameter(torch.tensor(init_c))
        self.init_L = nn.Parameter(torch.tensor(init_L), requires_grad=False)
        self.L_multiplier = nn.Parameter(torch.tensor(1.0))
        self.eps = eps

    def forward(self, x):
        seq_length = x.size(1)
        positions = torch.arange(seq_length, dtype=torch.float, device=x.device)
        rel_distance = positions[:, None] - positions[None, :]
        threshold = torch.abs(self.L_multiplier * self.init_L)
        pos_normalizer = torch.max(positions, threshold)[:, None]
        rel_distance = torch.log(torch.abs(self.c * rel_distance) + 1)
        pos_normalizer = torch.log(torch.abs(self.c * pos_normalizer) + 1) + self.eps
        normalized_distance = rel_distance / pos_normalizer
        fire_bias = self.mlp(normalized_distance.unsqueeze(-1))
        return fire_bias.unsqueeze(0).permute(0, 3, 1, 2)


def test_fire_matches_the_papers_listing_after_training_steps():
    torch.manual_seed(0)
    ours, ref = FIREBias(4, init_threshold=64.0), PaperFIRE(num_heads=4, init_L=64.0)
    ref.mlp.load_state_dict(ours.mlp.state_dict())
    with torch.no_grad():  # move the learned scalars off their initial values
        for m in (ours, ref):
            m.c.fill_(0.37)
        ours.threshold_multiplier.fill_(0.8)
        ref.L_multiplier.fill_(0.8)
    for n in (1, 17, 64, 200):
        got = ours(n)
        want = ref(torch.zeros(1, n, 8))[0]
        assert got.shape == (4, n, n)
        torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_fire_inputs_follow_the_formula():
    """ψ(i − j) / (ψ(max(L, i)) + eps) with ψ(x) = log(c x + 1), in float64 by numpy."""
    c, L, eps = 0.3, 20.0, 1e-6
    got = fire_inputs(50, c=c, threshold=L, dtype=torch.float64).numpy()
    i, j = np.meshgrid(np.arange(50.0), np.arange(50.0), indexing="ij")
    want = np.log(c * np.abs(i - j) + 1) / (np.log(c * np.maximum(L, i) + 1) + eps)
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)


def test_progressive_interpolation_keeps_every_causal_input_in_0_1():
    x = fire_inputs(1024, c=0.1, threshold=64.0, dtype=torch.float64)
    causal = x[torch.ones(1024, 1024, dtype=torch.bool).tril()]
    assert causal.min() == 0.0 and causal.max() <= 1.0
    # Past the threshold the farthest key of every query maps to ~1 (at the training
    # length's scale), however long the context: the MLP sees no new inputs.
    far = x[torch.arange(64, 1024), 0]
    assert torch.all((1 - far) < 1e-5)
    # Below it the denominator is constant, so the input depends on i - j alone.
    below = x[:64, :64]
    for d in range(64):
        diag = torch.diagonal(below, -d)
        assert torch.all(diag == diag[0])


def test_the_fixed_normaliser_ablation_changes_only_queries_past_the_threshold():
    on = fire_inputs(200, c=0.1, threshold=64.0, dtype=torch.float64)
    off = fire_inputs(200, c=0.1, threshold=64.0, progressive=False, dtype=torch.float64)
    torch.testing.assert_close(on[:65], off[:65], rtol=0, atol=0)  # i <= L: identical
    assert not torch.equal(on[65:], off[65:])
    for d in range(200):  # the frozen normaliser: a function of i - j alone, everywhere
        diag = torch.diagonal(off, -d)
        assert torch.all(diag == diag[0])
    assert float(off[199, 0]) > 1.0  # past L its inputs leave the trained range [0, 1]
    torch.manual_seed(0)
    model = TinyDecoder(257, 256, "fire", max_position_embeddings=16).eval()
    x = torch.randint(0, 256, (1, 40))
    with torch.no_grad():
        a, b = model(x), model(x, fire_progressive=False)
    torch.testing.assert_close(a[0, :17], b[0, :17], rtol=0, atol=0)
    assert not torch.allclose(a[0, 17:], b[0, 17:])
    with pytest.raises(ValueError, match="fire_progressive"):
        TinyDecoder(257, 256, "t5")(x, fire_progressive=False)


def test_fire_is_alibi_below_the_threshold_with_the_right_f():
    """FIRE represents ALiBi (the paper's claim), below the threshold exactly, with
    f(x) = −m (e^{x (ψ(L) + eps)} − 1) / c."""
    h, L, c, eps = 4, 64.0, 0.1, 1e-6
    m = alibi_slopes(h, dtype=torch.float64)
    psi_L = math.log(c * L + 1) + eps

    def f(x):
        return -m * (torch.exp(x * psi_L) - 1) / c

    got = fire_bias(64, f=f, c=c, threshold=L, eps=eps, dtype=torch.float64)
    want = alibi_bias(h, 64, 64, causal=True, dtype=torch.float64)
    keep = torch.ones(64, 64, dtype=torch.bool).tril()
    torch.testing.assert_close(got[:, keep], want[:, keep], rtol=1e-12, atol=1e-12)


def test_fire_kv_cache_layout_and_device_dtype():
    torch.manual_seed(1)
    fire = FIREBias(2, init_threshold=16.0).double()
    full = fire(40)
    assert full.dtype == torch.float64
    torch.testing.assert_close(fire(1, 40), full[:, -1:], rtol=0, atol=0)
    torch.testing.assert_close(fire(3, 10, query_offset=30), full[:, 30:33, :10],
                               rtol=0, atol=0)


def test_fire_is_trained_end_to_end():
    torch.manual_seed(2)
    fire = FIREBias(3, init_threshold=8.0)
    fire(12).sum().backward()
    assert fire.c.grad is not None and fire.threshold_multiplier.grad is not None
    assert all(p.grad is not None for p in fire.mlp.parameters())
    w, h = 32, 3
    assert sum(p.numel() for p in fire.parameters()) == 2 * w + (w + 1) * h + 2


@pytest.mark.parametrize("kwargs, match", [
    ({"num_heads": 0}, "num_heads"), ({"num_heads": 2, "init_c": 0.0}, "init_c"),
    ({"num_heads": 2, "init_threshold": -1.0}, "init_threshold"),
    ({"num_heads": 2, "eps": -1e-3}, "eps"), ({"num_heads": 2, "mlp_width": 0}, "mlp_width"),
])
def test_fire_bad_arguments_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        FIREBias(**kwargs)


def test_tiny_decoder_fire_starts_from_the_shared_weights():
    torch.manual_seed(0)
    rope = TinyDecoder(257, 256, "rope")
    torch.manual_seed(0)
    fire = TinyDecoder(257, 256, "fire", max_position_embeddings=64)
    for a, b in zip(rope.blocks.parameters(), fire.blocks.parameters(), strict=True):
        assert torch.equal(a, b)
    assert float(fire.fire.threshold.detach()) == 64.0
    assert fire.num_position_parameters() == 2 * 32 + 33 * 4 + 2
    assert fire(torch.randint(0, 256, (2, 130))).shape == (2, 130, 256)


# ---------------------------------------------------------------------------------------
# p-RoPE and the RoPE/NoPE hybrids, as the study builds them.


def test_p_rope_frequencies_are_transformers_proportional():
    """rope_fraction = p keeps the fastest ⌊p d/2⌋ pairs: Gemma 4's ``proportional``."""
    from transformers import Gemma4TextConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    cfg = Gemma4TextConfig(head_dim=16, global_head_dim=16, hidden_size=64,
                           num_attention_heads=4, num_key_value_heads=4)
    cfg.rope_parameters["full_attention"] = {"rope_type": "proportional",
                                             "rope_theta": 10000.0,
                                             "partial_rotary_factor": 0.25}
    want, _ = ROPE_INIT_FUNCTIONS["proportional"](cfg, "cpu", layer_type="full_attention")
    model = build_model(FULL, "p-rope", 2, 0)
    torch.testing.assert_close(model.inv_freq, want.float(), rtol=0, atol=0)
    assert int((model.inv_freq > 0).sum()) == 2  # 2 of 8 pairs rotate


@pytest.mark.parametrize("depth", [2, 4])
def test_hybrid_layer_plans_are_smollm3_and_cohere2_with_interval_2(depth):
    """The hybrids' NoPE layers follow SmolLM3's rule at interval 2; the windowed hybrid is
    Cohere 2's plan (sliding RoPE layers, global NoPE layers) at pattern 2, as
    ``posenc.hf_config`` reads both families from ``transformers``' own configs."""
    smol = layer_specs({"model_type": "smollm3", "hidden_size": 64, "num_attention_heads": 4,
                        "num_key_value_heads": 4, "num_hidden_layers": depth,
                        "no_rope_layer_interval": 2})
    cohere = layer_specs({"model_type": "cohere2", "hidden_size": 64,
                          "num_attention_heads": 4, "num_key_value_heads": 4,
                          "num_hidden_layers": depth, "sliding_window": 32,
                          "sliding_window_pattern": 2})
    nope = FULL.nope_layers(depth)
    assert tuple(i for i, s in enumerate(smol) if not s.use_rope) == nope
    assert tuple(i for i, s in enumerate(cohere) if not s.use_rope) == nope
    assert all((s.sliding_window is not None) == s.use_rope for s in cohere)
    assert {s.sliding_window for s in cohere if s.use_rope} == {FULL.hybrid_rope_window}
    for scheme in ("rope-nope", "rope-swa-nope"):
        assert SCHEMES[scheme](FULL, depth)["nope_layers"] == nope
        assert build_model(FULL, scheme, depth, 0).nope_layers == nope


def test_windowed_rope_layers_see_only_their_window():
    """A 1-layer model with rope_window = w: the output at t ignores tokens before t − w + 1;
    the same model without the window does not."""
    torch.manual_seed(0)
    local = TinyDecoder(257, 256, "rope", num_layers=1, rope_window=8).eval()
    x = torch.randint(0, 256, (1, 40))
    y = x.clone()
    y[0, :20] = (y[0, :20] + 1) % 256
    with torch.no_grad():
        a, b = local(x), local(y)
        torch.testing.assert_close(a[0, 27:], b[0, 27:], rtol=0, atol=0)
        assert not torch.allclose(a[0, 26], b[0, 26])
        local.rope_window = None
        assert not torch.allclose(local(x)[0, 39], local(y)[0, 39])


def test_new_scheme_arguments_are_checked():
    with pytest.raises(ValueError, match="rope_fraction"):
        TinyDecoder(257, 256, "rope", rope_fraction=1.5)
    with pytest.raises(ValueError, match="rope_fraction"):
        TinyDecoder(257, 256, "alibi", rope_fraction=0.5)
    with pytest.raises(ValueError, match="rope_window"):
        TinyDecoder(257, 256, "t5", rope_window=4)
    with pytest.raises(ValueError, match="rope_window"):
        TinyDecoder(257, 256, "rope", rope_window=0)
