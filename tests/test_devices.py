"""Device following: every public function computes on its inputs' device.

Two checks, both across modules (so this file mirrors no single module):

* each call is run with its tensors on every available device (CUDA when present, skipped
  otherwise) and must return tensors on that device, equal to the CPU result;
* on any machine, torch's *default* device is set to ``"meta"`` (tensors there have no
  data) while the inputs stay on the CPU: a function that builds anything internally
  without naming its inputs' device then fails at once. This is how the bug of the issue
  (``apply_rope`` building its tables on the CPU for a CUDA ``x``) is caught without a GPU.

Functions of plain numbers only (``rope_inv_freq``, the scaling methods, the config
reader) build on torch's default device, as ``torch.arange`` does; their consumers move
the tables to ``x``'s device (``apply_rope`` with a CPU ``inv_freq`` and a CUDA ``x``).
"""

from __future__ import annotations

import pytest
import torch

from posenc import scaling
from posenc.alibi import alibi_bias
from posenc.attention import (
    KVCache,
    attention,
    causal_mask,
    llama4_attn_scale,
    sliding_window_mask,
)
from posenc.learned import LearnedPositionalEmbedding
from posenc.relative import RelativePositionBias
from posenc.rope import (
    apply_rope,
    apply_rope_complex,
    convert_layout,
    rope_angles,
    rope_attention,
    rope_cos_sin,
    rope_decay_bound,
    rope_decode,
    rope_inv_freq,
    rotation_matrix,
)

DEVICES = [
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                  reason="no CUDA device")),
]


def inputs(device):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 6, 8, generator=g, dtype=torch.float64)
    return x.to(device), torch.arange(6, device=device), rope_inv_freq(8).to(device)


def _kv(x):
    cache = KVCache()
    cache.update(0, x[..., :4, :], x[..., :4, :])
    return cache.positions(2)


#: name -> f(x, positions, inv_freq, device) returning a tensor or a tuple of tensors.
CALLS = {
    "apply_rope positions": lambda x, p, f, d: apply_rope(x, p),
    "apply_rope list positions": lambda x, p, f, d: apply_rope(x, list(range(6))),
    "apply_rope interleaved": lambda x, p, f, d: apply_rope(x, p, layout="interleaved"),
    "apply_rope cpu inv_freq": lambda x, p, f, d: apply_rope(x, p, inv_freq=f.cpu()),
    "apply_rope partial": lambda x, p, f, d: apply_rope(x, p, rotary_dim=4),
    "apply_rope tables": lambda x, p, f, d: apply_rope(x, cos=rope_cos_sin(p, f)[0],
                                                       sin=rope_cos_sin(p, f)[1]),
    "apply_rope bf16": lambda x, p, f, d: apply_rope(x.to(torch.bfloat16), p),
    "apply_rope_complex": lambda x, p, f, d: apply_rope_complex(x, p),
    "rope_angles": lambda x, p, f, d: rope_angles(p, f),
    "rope_cos_sin": lambda x, p, f, d: rope_cos_sin(p, f, attention_factor=1.2),
    "rotation_matrix": lambda x, p, f, d: rotation_matrix(3, f),
    "convert_layout": lambda x, p, f, d: convert_layout(x, src="interleaved", dst="half"),
    "rope_decay_bound": lambda x, p, f, d: rope_decay_bound(p, f),
    "rope_attention vo": lambda x, p, f, d: rope_attention(x, x, x, p, values="vo",
                                                           causal=True),
    "rope_decode": lambda x, p, f, d: rope_decode(x, x, x, prefill=3),
    "attention causal": lambda x, p, f, d: attention(x, x, x, causal=True),
    "attention cpu mask and bias": lambda x, p, f, d: attention(
        x, x, x, mask=sliding_window_mask(6, 6, 2), bias=torch.zeros(6, 6)),
    "causal_mask": lambda x, p, f, d: causal_mask(2, 6, device=d),
    "sliding_window_mask": lambda x, p, f, d: sliding_window_mask(2, 6, 3, device=d),
    "KVCache": lambda x, p, f, d: _kv(x),
    "llama4_attn_scale": lambda x, p, f, d: llama4_attn_scale(p, floor_scale=2),
    "per_pair_scale": lambda x, p, f, d: scaling.per_pair_scale(f, 8),
    "alibi_bias": lambda x, p, f, d: alibi_bias(3, 4, 6, device=d),
    "alibi_bias slopes tensor": lambda x, p, f, d: alibi_bias(2, 4, 6, slopes=f[:2]),
    "RelativePositionBias": lambda x, p, f, d: RelativePositionBias(3).to(d)(4, 6),
    "LearnedPositionalEmbedding": lambda x, p, f, d: LearnedPositionalEmbedding(8, 4).to(d)(p),
}


def as_tuple(out):
    return out if isinstance(out, tuple) else (out,)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(CALLS))
def test_result_lives_on_the_inputs_device(name, device):
    torch.manual_seed(0)
    got = as_tuple(CALLS[name](*inputs(device), torch.device(device)))
    torch.manual_seed(0)
    ref = as_tuple(CALLS[name](*inputs("cpu"), torch.device("cpu")))
    for g, r in zip(got, ref, strict=True):
        assert g.device.type == device
        if g.is_floating_point():
            torch.testing.assert_close(g.cpu(), r, rtol=1e-5, atol=1e-6)
        else:
            assert torch.equal(g.cpu(), r)


# Tensor-in functions only: the meta default device must never be touched.
# (the excluded calls build their inputs from numbers, on the default device by design)
META_SAFE = sorted(set(CALLS) - {"causal_mask", "sliding_window_mask", "alibi_bias",
                                 "RelativePositionBias", "LearnedPositionalEmbedding",
                                 "attention cpu mask and bias"})


@pytest.mark.parametrize("name", META_SAFE)
def test_nothing_is_built_on_the_default_device(name):
    x, p, f = inputs("cpu")
    torch.set_default_device("meta")
    try:
        out = as_tuple(CALLS[name](x, p, f, torch.device("cpu")))
    finally:
        torch.set_default_device(None)
    assert all(t.device.type == "cpu" for t in out)
