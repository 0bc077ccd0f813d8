"""posenc.model: per-layer position schemes (Llama 4's interleaved NoPE layers).

The fused attention path and the window mask are tested in tests/test_experiments.py; bad
input to the constructors and forward in tests/test_robustness.py.
"""

from __future__ import annotations

import pytest
import torch

from posenc.attention import llama4_attn_scale
from posenc.model import TinyDecoder
from posenc.rope import rope_cos_sin


def _pair(**kw):
    torch.manual_seed(0)
    return TinyDecoder(11, 7, "rope", d_model=16, num_heads=2, num_layers=4, **kw)


def _by_hand(model, tokens, q_scale=None):
    """The forward pass written out: RoPE in every layer but ``model.nope_layers``."""
    s = tokens.shape[1]
    rope = rope_cos_sin(torch.arange(s), model.inv_freq)
    x = model.embed(tokens)
    for i, block in enumerate(model.blocks):
        nope = i in model.nope_layers
        x = block(x, rope=None if nope else rope, q_scale=q_scale if nope else None)
    return model.head(model.ln_f(x))


def test_every_layer_without_rope_is_nope():
    tokens = torch.randint(0, 11, (2, 9))
    hybrid = _pair(nope_layers=(0, 1, 2, 3))
    torch.manual_seed(0)
    nope = TinyDecoder(11, 7, "none", d_model=16, num_heads=2, num_layers=4)
    nope.load_state_dict(hybrid.state_dict())
    torch.testing.assert_close(hybrid(tokens), nope(tokens), rtol=0, atol=0)


@pytest.mark.parametrize("nope_layers", [(), (3,), (1, 3)])
def test_interleaved_layers_match_the_written_out_pass(nope_layers):
    tokens = torch.randint(0, 11, (2, 9))
    model = _pair(nope_layers=nope_layers)
    torch.testing.assert_close(model(tokens), _by_hand(model, tokens), rtol=0, atol=0)
    if nope_layers:
        assert not torch.allclose(model(tokens), _pair()(tokens))


def test_llama4_temperature_on_the_nope_layers_only():
    tokens = torch.randint(0, 11, (2, 9))
    model = _pair(nope_layers=(3,), nope_attn_temperature=(2, 0.5))
    scale = llama4_attn_scale(torch.arange(9), floor_scale=2, attn_scale=0.5)
    assert float(scale.max()) > 1.0
    torch.testing.assert_close(model(tokens), _by_hand(model, tokens, scale), rtol=0, atol=0)
    # Llama 4's own floor (8192) leaves a 9-token sequence untouched.
    far = _pair(nope_layers=(3,), nope_attn_temperature=(8192, 0.1))
    torch.testing.assert_close(far(tokens), _pair(nope_layers=(3,))(tokens), rtol=0, atol=0)


@pytest.mark.parametrize(("kwargs", "match"), [
    (dict(position="alibi", nope_layers=(0,)), "position='rope'"),
    (dict(position="rope", nope_layers=(4,)), r"\[0, 4\)"),
    (dict(position="rope", nope_layers=(-1,)), "nope_layers"),
    (dict(position="rope", nope_attn_temperature=(8192, 0.1)), "needs nope_layers"),
])
def test_bad_hybrid_settings(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TinyDecoder(11, 7, d_model=16, num_heads=2, num_layers=4, **kwargs)
