"""Bad-input audit of the public ``posenc`` API, and a hypothesis fuzz test across it.

Every public function and module constructor is called with wrong shapes, wrong dtypes,
out-of-range values, zero/negative sizes and NaN where they apply. Each case must raise a
``ValueError``/``TypeError``/``IndexError`` whose message names the offending argument
(checked with a regex) — or, where the input is legal, show the documented behaviour
(the second half of this file). The fuzz test then throws arbitrary argument mixes at the
whole API: the only exceptions allowed out are those three, with a message.

``posenc.experiments``' training and study runners (``train``, ``evaluate``, ``run_study``)
are exercised by ``tests/test_experiments.py``; here only the inputs a reader types
(``sample_batch``, ``summarize``, ``paired_difference``) are audited.
``posenc.notebook``/``posenc.plotting`` are book helpers.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from posenc import (
    alibi,
    attention,
    learned,
    model,
    relative,
    rope,
    rope_forms,
    scaling,
    sinusoidal,
)
from posenc import rope_attention as rope_attention_module
from posenc.alibi import alibi_bias, alibi_slopes
from posenc.attention import KVCache, causal_mask, llama4_attn_scale, sliding_window_mask
from posenc.attention import attention as attend
from posenc.experiments import load_results, paired_difference, sample_batch, summarize
from posenc.hf_config import layer_specs, rope_from_config, rope_parameters
from posenc.learned import LearnedPositionalEmbedding
from posenc.model import CausalSelfAttention, TinyDecoder, TransformerBlock
from posenc.relative import (
    RelativePositionBias,
    ShawRelativeKeys,
    clipped_relative_positions,
    relative_key_logits,
    relative_position_bucket,
    relative_positions,
)
from posenc.rope import (
    apply_rope,
    apply_rope_complex,
    convert_layout,
    layout_permutation,
    rope_angles,
    rope_attention,
    rope_cos_sin,
    rope_decay_bound,
    rope_decode,
    rope_inv_freq,
    rotate_every_two,
    rotate_half,
    rotation_matrix,
)
from posenc.sinusoidal import (
    concat_permutation,
    shift_matrix,
    sinusoidal_encoding,
    sinusoidal_encoding_at,
    sinusoidal_inv_freq,
)

NAN, INF = float("nan"), float("inf")
X = torch.randn(2, 4, 8, generator=torch.Generator().manual_seed(0))  # (b, s, d)
POS = torch.arange(4)
INV = torch.ones(4)
ERRORS = (ValueError, TypeError, IndexError)


def case(fn, exc, match, id):  # noqa: A002 - pytest's name for it
    return pytest.param(fn, exc, match, id=id)


# --------------------------------------------------------------------------- bad input

BAD = [
    # sinusoidal ------------------------------------------------------------------------
    case(lambda: sinusoidal_inv_freq(0), ValueError, r"dim .*>= 2", "sin_inv_freq-dim-zero"),
    case(lambda: sinusoidal_inv_freq(-4), ValueError, r"dim", "sin_inv_freq-dim-negative"),
    case(lambda: sinusoidal_inv_freq(7), ValueError, r"dim .*even", "sin_inv_freq-dim-odd"),
    case(lambda: sinusoidal_inv_freq(8.0), TypeError, r"dim must be an integer",
         "sin_inv_freq-dim-float"),
    case(lambda: sinusoidal_inv_freq(8, NAN), ValueError, r"base .*finite",
         "sin_inv_freq-base-nan"),
    case(lambda: sinusoidal_inv_freq(8, -1.0), ValueError, r"base must be > 0",
         "sin_inv_freq-base-negative"),
    case(lambda: sinusoidal_inv_freq(8, dtype=torch.int64), TypeError, r"dtype .*floating",
         "sin_inv_freq-dtype-int"),
    case(lambda: sinusoidal_encoding(-1, 8), ValueError, r"num_positions .*>= 0",
         "sin_enc-num-negative"),
    case(lambda: sinusoidal_encoding(3, 8, dtype=torch.int64), TypeError, r"dtype",
         "sin_enc-dtype-int"),
    case(lambda: sinusoidal_encoding(3, 8, dtype="float32"), TypeError, r"dtype",
         "sin_enc-dtype-str"),
    case(lambda: sinusoidal_encoding(3, 8, layout="half"), ValueError, r"layout",
         "sin_enc-layout"),
    case(lambda: sinusoidal_encoding_at(torch.tensor([NAN]), 8), ValueError,
         r"positions .*finite", "sin_at-positions-nan"),
    case(lambda: sinusoidal_encoding_at([-1], 8), ValueError, r"positions must be >= 0",
         "sin_at-positions-negative"),
    case(lambda: sinusoidal_encoding_at([0.5], 8), ValueError, r"positions .*whole",
         "sin_at-positions-fractional"),
    case(lambda: sinusoidal_encoding_at("abc", 8), TypeError, r"positions", "sin_at-str"),
    case(lambda: sinusoidal_encoding_at(None, 8), TypeError, r"positions", "sin_at-none"),
    case(lambda: sinusoidal_encoding_at([True], 8), TypeError, r"positions", "sin_at-bool"),
    case(lambda: shift_matrix(1.5, 8), TypeError, r"k must be an integer", "shift-k-float"),
    case(lambda: shift_matrix(1, 8, dtype=torch.int64), TypeError, r"dtype",
         "shift-dtype-int"),
    case(lambda: concat_permutation(3), ValueError, r"dim .*even", "concat_perm-odd"),
    # learned ---------------------------------------------------------------------------
    case(lambda: LearnedPositionalEmbedding(0, 8), ValueError, r"max_position_embeddings",
         "learned-rows-zero"),
    case(lambda: LearnedPositionalEmbedding(4, -1), ValueError, r"dim .*>= 1",
         "learned-dim-negative"),
    case(lambda: LearnedPositionalEmbedding(4, 8, init_std=NAN), ValueError, r"init_std",
         "learned-std-nan"),
    case(lambda: LearnedPositionalEmbedding(4, 8, init_std=-0.1), ValueError, r"init_std",
         "learned-std-negative"),
    case(lambda: LearnedPositionalEmbedding(4, 8)([4]), IndexError,
         r"max_position_embeddings=4", "learned-past-table"),
    case(lambda: LearnedPositionalEmbedding(4, 8)(torch.tensor([NAN])), ValueError,
         r"positions", "learned-positions-nan"),
    case(lambda: LearnedPositionalEmbedding(4, 8)([-1]), ValueError, r"positions",
         "learned-positions-negative"),
    case(lambda: LearnedPositionalEmbedding(4, 8).for_length(-1), ValueError, r"seq_len",
         "learned-for_length-negative"),
    case(lambda: LearnedPositionalEmbedding(4, 8).interpolate(1), ValueError, r"new_max",
         "learned-interpolate-one"),
    # attention -------------------------------------------------------------------------
    case(lambda: causal_mask(-1), ValueError, r"q_len", "causal_mask-negative"),
    case(lambda: sliding_window_mask(3, 3, 0), ValueError, r"window must be an integer >= 1",
         "sliding_window_mask-zero"),
    case(lambda: sliding_window_mask(3, 2, 1), ValueError, r"k_len must be >= q_len",
         "sliding_window_mask-short-keys"),
    case(lambda: llama4_attn_scale([-1, 0]), ValueError, r"positions must be >= 0",
         "llama4_attn_scale-negative"),
    case(lambda: llama4_attn_scale([0], floor_scale=0), ValueError, r"floor_scale",
         "llama4_attn_scale-floor"),
    case(lambda: llama4_attn_scale([0], attn_scale=-0.1), ValueError, r"attn_scale",
         "llama4_attn_scale-negative-scale"),
    case(lambda: scaling.longrope(8, 4.0, 4096, short_factor=[1.0], long_factor=[1.0] * 4),
         ValueError, r"short_factor must hold", "longrope-short"),
    case(lambda: scaling.longrope_attention_factor(4.0, 1), ValueError,
         r"original_max_position_embeddings must be an integer >= 2", "longrope-factor-L"),
    case(lambda: scaling.proportional(8, rotary_dim=12), ValueError,
         r"rotary_dim must be <= head_dim", "proportional-rotary"),
    case(lambda: scaling.default(8, 2.0), ValueError, r"factor must be 1", "default-factor"),
    case(lambda: rope_from_config({"model_type": "llama", "head_dim": 8,
                                   "rope_scaling": {"rope_type": "x"}}),
         ValueError, r"rope_type", "rope_from_config-type"),
    case(lambda: rope_parameters({"model_type": "llama", "head_dim": 8,
                                  "rope_scaling": {"rope_type": "linear", "factor": "2"}}),
         TypeError, r"factor", "rope_parameters-factor"),
    case(lambda: layer_specs({"model_type": "llama", "head_dim": 8}), ValueError,
         r"num_hidden_layers", "layer_specs-layers"),
    case(lambda: layer_specs({"head_dim": 8, "num_hidden_layers": 2}), ValueError,
         r"no 'model_type'", "layer_specs-model-type"),
    case(lambda: causal_mask(4, 3), ValueError, r"k_len must be >= q_len",
         "causal_mask-k-short"),
    case(lambda: attend(X.long(), X, X), TypeError, r"q must be a floating",
         "attention-q-int"),
    case(lambda: attend([1.0], X, X), TypeError, r"q must be a torch.Tensor",
         "attention-q-list"),
    case(lambda: attend(torch.ones(8), X, X), ValueError, r"q must have shape",
         "attention-q-1d"),
    case(lambda: attend(torch.ones(2, 4, 5), X, X), ValueError, r"q and k .*last dim",
         "attention-width-mismatch"),
    case(lambda: attend(X, X, X[:, :3]), ValueError, r"k and v .*sequence length",
         "attention-kv-length"),
    case(lambda: attend(torch.ones(3, 4, 8), X, X), ValueError, r"leading .*dims of q, k",
         "attention-batch-mismatch"),
    case(lambda: attend(X, X.double(), X), TypeError, r"q, k and v must share one dtype",
         "attention-dtype-mix"),
    case(lambda: attend(X, X, X, scale=NAN), ValueError, r"scale .*finite",
         "attention-scale-nan"),
    case(lambda: attend(X, X, X, scale=0.0), ValueError, r"scale must be > 0",
         "attention-scale-zero"),
    case(lambda: attend(X, X, X, bias=[[0.0] * 4] * 4), TypeError, r"bias must be a torch",
         "attention-bias-list"),
    case(lambda: attend(X, X, X, bias=torch.ones(4, 4, dtype=torch.bool)), TypeError,
         r"bias must be a real numeric tensor.*mask=", "attention-bias-bool"),
    case(lambda: attend(X, X, X, bias=torch.ones(3, 4)), ValueError,
         r"bias of shape \(3, 4\)", "attention-bias-shape"),
    case(lambda: attend(X, X, X, mask=torch.ones(4, 4)), ValueError, r"mask must be a bool",
         "attention-mask-float"),
    case(lambda: attend(X, X, X, mask=[[True] * 4] * 4), TypeError, r"mask must be a torch",
         "attention-mask-list"),
    case(lambda: attend(X, X, X, mask=torch.ones(3, 4, dtype=torch.bool)), ValueError,
         r"mask of shape", "attention-mask-shape"),
    case(lambda: attend(X, X, X, mask=torch.zeros(4, 4, dtype=torch.bool)), ValueError,
         r"no key", "attention-mask-empty-row"),
    case(lambda: attend(X, X, X, causal=1), TypeError, r"causal must be a bool",
         "attention-causal-int"),
    case(lambda: attend(X[:, :1], X[:, :0], X[:, :0]), ValueError, r"at least one key",
         "attention-no-keys"),
    case(lambda: attend(X, X[:, :2], X[:, :2], causal=True), ValueError,
         r"k_len must be >= q_len", "attention-causal-short-k"),
    case(lambda: KVCache(0), ValueError, r"num_layers", "kvcache-layers-zero"),
    case(lambda: KVCache(1, max_length=0), ValueError, r"max_length", "kvcache-max-zero"),
    case(lambda: KVCache(2).update(2, X, X), IndexError, r"layer must be in \[0, 1\]",
         "kvcache-layer-out-of-range"),
    case(lambda: KVCache(1).update(0, X.long(), X), TypeError, r"k must be a floating",
         "kvcache-k-int"),
    case(lambda: KVCache(1).update(0, X, X[:, :3]), ValueError, r"k and v must agree",
         "kvcache-kv-mismatch"),
    case(lambda: KVCache(1, max_length=3).update(0, X, X), IndexError, r"max_length is 3",
         "kvcache-overflow"),
    case(lambda: KVCache(1).positions(0), ValueError, r"n must be", "kvcache-positions-zero"),
    # rope ------------------------------------------------------------------------------
    case(lambda: rope_inv_freq(0), ValueError, r"head_dim", "inv_freq-zero"),
    case(lambda: rope_inv_freq(7), ValueError, r"head_dim .*even", "inv_freq-odd"),
    case(lambda: rope_inv_freq(8, NAN), ValueError, r"base .*finite", "inv_freq-base-nan"),
    case(lambda: rope_inv_freq(8, 0.0), ValueError, r"base must be > 0", "inv_freq-base-0"),
    case(lambda: rope_inv_freq(8, rotary_dim=10), ValueError, r"rotary_dim must be <=",
         "inv_freq-rotary-too-wide"),
    case(lambda: rope_inv_freq(8, dtype=torch.bfloat16), ValueError, r"dtype",
         "inv_freq-bf16"),
    case(lambda: rope_angles(POS, [1.0]), TypeError, r"inv_freq must be a torch.Tensor",
         "angles-inv-list"),
    case(lambda: rope_angles(POS, torch.ones(2, 2)), ValueError, r"inv_freq must have shape",
         "angles-inv-2d"),
    case(lambda: rope_angles(POS, torch.ones(0)), ValueError, r"inv_freq must have shape",
         "angles-inv-empty"),
    case(lambda: rope_angles(POS, torch.tensor([NAN])), ValueError, r"inv_freq must be finite",
         "angles-inv-nan"),
    case(lambda: rope_angles(POS, torch.ones(2, dtype=torch.float16)), TypeError,
         r"inv_freq must be float32 or float64", "angles-inv-fp16"),
    case(lambda: rope_angles(torch.tensor([NAN]), INV), ValueError, r"positions .*finite",
         "angles-positions-nan"),
    case(lambda: rope_angles([1.5], INV), ValueError, r"positions .*whole",
         "angles-positions-fractional"),
    case(lambda: rope_cos_sin(POS, INV, layout="x"), ValueError, r"layout", "cos_sin-layout"),
    case(lambda: rope_cos_sin(POS, INV, attention_factor=0.0), ValueError,
         r"attention_factor", "cos_sin-factor-zero"),
    case(lambda: rope_cos_sin(POS, INV, attention_factor=NAN), ValueError,
         r"attention_factor", "cos_sin-factor-nan"),
    case(lambda: rope_cos_sin(POS, INV, dtype=torch.int64), TypeError, r"dtype",
         "cos_sin-dtype-int"),
    case(lambda: apply_rope([[1.0, 2.0]], [0]), TypeError, r"x must be a torch.Tensor",
         "apply-x-list"),
    case(lambda: apply_rope(X.long(), POS), TypeError, r"x must be a floating",
         "apply-x-int"),
    case(lambda: apply_rope(X.to(torch.complex64), POS), TypeError, r"x must be a floating",
         "apply-x-complex"),
    case(lambda: apply_rope(torch.ones(8), [0]), ValueError, r"x must have shape",
         "apply-x-1d"),
    case(lambda: apply_rope(torch.ones(2, 5), [0, 1]), ValueError, r"head_dim .*even",
         "apply-x-odd-width"),
    case(lambda: apply_rope(X), ValueError, r"pass positions", "apply-no-positions"),
    case(lambda: apply_rope(X, [0, 1, 2]), ValueError, r"positions must have shape",
         "apply-positions-length"),
    case(lambda: apply_rope(X, torch.zeros(3, 4, dtype=torch.long)), ValueError,
         r"do not broadcast", "apply-positions-batch"),
    case(lambda: apply_rope(X, torch.tensor([0.0, 1.0, NAN, 3.0])), ValueError,
         r"positions .*finite", "apply-positions-nan"),
    case(lambda: apply_rope(X, POS, rotary_dim=3), ValueError, r"rotary_dim .*even",
         "apply-rotary-odd"),
    case(lambda: apply_rope(X, POS, rotary_dim=0), ValueError, r"rotary_dim",
         "apply-rotary-zero"),
    case(lambda: apply_rope(X, POS, rotary_dim=10), ValueError, r"rotary_dim must be <=",
         "apply-rotary-too-wide"),
    case(lambda: apply_rope(X, POS, base=-1.0), ValueError, r"base", "apply-base-negative"),
    case(lambda: apply_rope(X, POS, layout="HALF"), ValueError, r"layout", "apply-layout"),
    case(lambda: apply_rope(X, cos=torch.ones(4, 8)), ValueError, r"both cos and sin",
         "apply-cos-only"),
    case(lambda: apply_rope(X, cos=[[1.0] * 8] * 4, sin=[[0.0] * 8] * 4), TypeError,
         r"cos must be a real torch.Tensor", "apply-cos-list"),
    case(lambda: apply_rope(X, cos=torch.ones(4, 8, dtype=torch.bool),
                            sin=torch.ones(4, 8, dtype=torch.bool)), TypeError,
         r"cos must be a real", "apply-cos-bool"),
    case(lambda: apply_rope(X, cos=torch.ones(3, 8), sin=torch.ones(3, 8)), ValueError,
         r"cos/sin of shape \(3, 8\) do not broadcast", "apply-cos-shape"),
    case(lambda: apply_rope(X, cos=torch.ones(5, 4, 8), sin=torch.ones(5, 4, 8)),
         ValueError, r"cos/sin .*change the shape|do not broadcast", "apply-cos-batch"),
    case(lambda: apply_rope(X, cos=torch.ones(4, 8), sin=torch.ones(4, 6)), ValueError,
         r"cos and sin must have the same shape", "apply-cos-sin-mismatch"),
    case(lambda: apply_rope(X, cos=torch.ones(4, 3), sin=torch.ones(4, 3)), ValueError,
         r"rotary_dim.*even", "apply-cos-odd"),
    case(lambda: apply_rope(X, POS, cos=torch.ones(4, 8), sin=torch.ones(4, 8)), ValueError,
         r"either positions", "apply-positions-and-tables"),
    case(lambda: apply_rope(X, POS, inv_freq=INV, base=500.0), ValueError,
         r"either inv_freq or base", "apply-inv-and-base"),
    case(lambda: apply_rope(X, POS, inv_freq=torch.ones(5)), ValueError,
         r"rotary_dim must be <=", "apply-inv-too-long"),
    case(lambda: apply_rope_complex(X, [0, 1]), ValueError, r"positions must have shape",
         "complex-positions-length"),
    case(lambda: apply_rope_complex(X.long(), POS), TypeError, r"x must be a floating",
         "complex-x-int"),
    case(lambda: rotation_matrix(1.5, INV), TypeError, r"position must be an integer",
         "rotation_matrix-position-float"),
    case(lambda: rotation_matrix(1, INV, head_dim=6), ValueError, r"head_dim must be >=",
         "rotation_matrix-head-small"),
    case(lambda: rotate_half(torch.ones(3)), ValueError, r"x must have an even last dim",
         "rotate_half-odd"),
    case(lambda: rotate_half([1.0, 2.0]), TypeError, r"x must be a floating",
         "rotate_half-list"),
    case(lambda: rotate_every_two(torch.ones(2, 5)), ValueError, r"even last dim",
         "rotate_every_two-odd"),
    case(lambda: rotate_every_two(torch.tensor(1.0)), ValueError, r"even last dim",
         "rotate_every_two-0d"),
    case(lambda: layout_permutation(8, 10), ValueError, r"rotary_dim must be <=",
         "layout_perm-too-wide"),
    case(lambda: layout_permutation(8, src="paper"), ValueError, r"src", "layout_perm-src"),
    case(lambda: convert_layout(torch.ones(2, 5), src="half", dst="interleaved"), ValueError,
         r"head_dim .*even", "convert-odd"),
    case(lambda: rope_decay_bound([0.5], INV), ValueError, r"whole", "decay-fractional"),
    case(lambda: rope_attention(X, X, X, POS, values="all"), ValueError, r"values",
         "rope_attention-values"),
    case(lambda: rope_attention(X, X, torch.ones(2, 4, 5), POS, values="rotated"),
         ValueError, r"v.shape\[-1\]", "rope_attention-odd-v"),
    case(lambda: rope_decode(X, X, X, prefill=0), ValueError, r"prefill", "decode-prefill-0"),
    case(lambda: rope_decode(X, X, X, prefill=5), ValueError, r"prefill must be <=",
         "decode-prefill-too-long"),
    case(lambda: rope_decode(X, X[:, :3], X), ValueError, r"same sequence length",
         "decode-k-shorter"),
    case(lambda: rope_decode(X, X, X, positions=[0, 1]), ValueError, r"positions",
         "decode-positions-shape"),
    # scaling ---------------------------------------------------------------------------
    case(lambda: scaling.linear(8, 0.5), ValueError, r"factor must be >= 1",
         "linear-factor-below-1"),
    case(lambda: scaling.linear(8, NAN), ValueError, r"factor .*finite", "linear-factor-nan"),
    case(lambda: scaling.linear(8, 2.0, 0), ValueError, r"original_max_position_embeddings",
         "linear-L-zero"),
    case(lambda: scaling.ntk_aware(2, 2.0), ValueError, r"rotary_dim", "ntk-rotary-2"),
    case(lambda: scaling.ntk_aware_base(10000.0, 2.0, 3), ValueError, r"rotary_dim",
         "ntk_base-odd"),
    case(lambda: scaling.dynamic_ntk(8, 2.0, 16, seq_len=0), ValueError, r"seq_len",
         "dynamic-seq-zero"),
    case(lambda: scaling.dynamic_ntk(8, 2.0, None), TypeError,
         r"original_max_position_embeddings", "dynamic-L-none"),
    case(lambda: scaling.dynamic_ntk_base(-1.0, 2.0, 16, 32, 8), ValueError, r"base",
         "dynamic_base-negative"),
    case(lambda: scaling.yarn(8, 2.0, 16, beta_fast=1.0, beta_slow=2.0), ValueError,
         r"beta_fast must be >= beta_slow", "yarn-betas"),
    case(lambda: scaling.yarn(8, 2.0, 16, base=1.0), ValueError, r"base must be != 1",
         "yarn-base-1"),
    case(lambda: scaling.yarn(8, 2.0, 16, attention_factor=0.0), ValueError,
         r"attention_factor", "yarn-factor-zero"),
    case(lambda: scaling.yarn(8, 2.0, 16, mscale=1.0), ValueError, r"mscale_all_dim",
         "yarn-mscale-alone"),
    case(lambda: scaling.yarn(8, 2.0, 16, truncate=1), TypeError, r"truncate",
         "yarn-truncate-int"),
    case(lambda: scaling.yarn(8, 2.0, 16, dtype=torch.float16), ValueError, r"dtype",
         "yarn-dtype"),
    case(lambda: scaling.yarn_attention_factor(0.0), ValueError, r"factor",
         "yarn_attention_factor-zero"),
    case(lambda: scaling.yarn_correction_range(8, 10000.0, 16, beta_slow=NAN), ValueError,
         r"beta_slow", "yarn_range-nan"),
    case(lambda: scaling.yarn_paper(8, 2.0, 16, alpha=-1.0), ValueError, r"alpha",
         "yarn_paper-alpha"),
    case(lambda: scaling.yarn_paper_ramp(8, 16, alpha=2.0, beta=1.0), ValueError,
         r"beta must be > alpha", "yarn_paper_ramp-order"),
    case(lambda: scaling.yarn_ramp(8, 16, beta_fast=1.0, beta_slow=2.0), ValueError,
         r"beta_fast must be >= beta_slow", "yarn_ramp-betas"),
    case(lambda: scaling.llama3(8, 2.0, 16, low_freq_factor=0.0), ValueError,
         r"low_freq_factor", "llama3-low-zero"),
    case(lambda: scaling.llama3(8, 2.0, 16, low_freq_factor=4.0, high_freq_factor=1.0),
         ValueError, r"high_freq_factor must be >", "llama3-order"),
    case(lambda: scaling.per_pair_scale(torch.ones(3), 8), ValueError, r"inv_freq",
         "per_pair_scale-shape"),
    case(lambda: scaling.per_pair_scale(torch.tensor([NAN, 1.0, 1.0, 1.0]), 8), ValueError,
         r"inv_freq", "per_pair_scale-nan"),
    case(lambda: scaling.per_pair_scale([1.0] * 4, 8), TypeError, r"inv_freq",
         "per_pair_scale-list"),
    # alibi -----------------------------------------------------------------------------
    case(lambda: alibi_slopes(0), ValueError, r"num_heads", "slopes-zero"),
    case(lambda: alibi_slopes(-2), ValueError, r"num_heads", "slopes-negative"),
    case(lambda: alibi_slopes(2.0), TypeError, r"num_heads must be an integer",
         "slopes-float"),
    case(lambda: alibi_slopes(4, dtype=torch.bfloat16), ValueError, r"dtype", "slopes-bf16"),
    case(lambda: alibi_bias(4, 5, 3), ValueError, r"k_len must be >= q_len", "alibi-q>k"),
    case(lambda: alibi_bias(4, -1), ValueError, r"q_len", "alibi-q-negative"),
    case(lambda: alibi_bias(2, 3, slopes=[NAN, 1.0]), ValueError, r"slopes .*finite",
         "alibi-slopes-nan"),
    case(lambda: alibi_bias(2, 3, slopes=[-1.0, 1.0]), ValueError, r"slopes", "alibi-neg"),
    case(lambda: alibi_bias(2, 3, slopes=[1.0, 1.0, 1.0]), ValueError,
         r"slopes must have shape \(2,\)", "alibi-slopes-count"),
    case(lambda: alibi_bias(2, 3, causal=1), TypeError, r"causal must be a bool",
         "alibi-causal-int"),
    case(lambda: alibi_bias(2, 3, form="linear"), ValueError, r"form", "alibi-form"),
    case(lambda: alibi_bias(2, 3, causal=False, form="row"), ValueError, r"causal=True",
         "alibi-row-noncausal"),
    case(lambda: alibi_bias(2, 3, dtype=torch.float16), ValueError, r"dtype",
         "alibi-dtype"),
    # relative --------------------------------------------------------------------------
    case(lambda: relative_positions(-1), ValueError, r"q_len", "relpos-negative"),
    case(lambda: relative_positions(2, 3, query_offset=-1), ValueError, r"query_offset",
         "relpos-offset-negative"),
    case(lambda: clipped_relative_positions(2, 3, -1), ValueError, r"max_relative_position",
         "clipped-negative"),
    case(lambda: ShawRelativeKeys(-1, 8), ValueError, r"max_relative_position",
         "shaw-K-negative"),
    case(lambda: ShawRelativeKeys(2, 0), ValueError, r"dim", "shaw-dim-zero"),
    case(lambda: ShawRelativeKeys(2, 8)(5, 3), ValueError, r"k_len must be >= q_len",
         "shaw-forward-q>k"),
    case(lambda: relative_key_logits(torch.ones(2, 3, dtype=torch.long), torch.ones(2, 2, 3)),
         TypeError, r"q must be a floating", "shaw-logits-int"),
    case(lambda: relative_key_logits(torch.ones(2, 3), torch.ones(3, 2, 3)), ValueError,
         r"q must have shape", "shaw-logits-shape"),
    case(lambda: relative_key_logits(torch.ones(2, 3), torch.ones(2, 3)), ValueError,
         r"rel_keys must have shape", "shaw-logits-2d"),
    case(lambda: relative_position_bucket([1], num_buckets=7), ValueError,
         r"num_buckets must be even", "bucket-odd"),
    case(lambda: relative_position_bucket([1], num_buckets=2), ValueError, r"num_buckets",
         "bucket-too-few"),
    case(lambda: relative_position_bucket([1], max_distance=8), ValueError, r"max_distance",
         "bucket-max-distance"),
    case(lambda: relative_position_bucket([1], bidirectional=1), TypeError,
         r"bidirectional must be a bool", "bucket-bidirectional-int"),
    case(lambda: relative_position_bucket(torch.tensor([NAN])), ValueError,
         r"relative_position", "bucket-nan"),
    case(lambda: relative_position_bucket("near"), TypeError, r"relative_position",
         "bucket-str"),
    case(lambda: RelativePositionBias(0), ValueError, r"num_heads", "rpb-heads-zero"),
    case(lambda: RelativePositionBias(2, 7), ValueError, r"num_buckets", "rpb-buckets-odd"),
    case(lambda: RelativePositionBias(2, init_std=NAN), ValueError, r"init_std",
         "rpb-std-nan"),
    case(lambda: RelativePositionBias(2)(5, 3), ValueError, r"k_len must be >= q_len",
         "rpb-forward-q>k"),
    case(lambda: RelativePositionBias(2)(-1), ValueError, r"q_len", "rpb-forward-negative"),
    case(lambda: RelativePositionBias(2)(1.5), TypeError, r"q_len must be an integer",
         "rpb-forward-float"),
    # model / experiments ---------------------------------------------------------------
    case(lambda: CausalSelfAttention(0, 1), ValueError, r"d_model", "csa-width-zero"),
    case(lambda: CausalSelfAttention(8, 3), ValueError, r"divisible by num_heads",
         "csa-heads-not-dividing"),
    case(lambda: TransformerBlock(8, 2, -1), ValueError, r"d_ff", "block-dff-negative"),
    case(lambda: TinyDecoder(10, 2, "relative"), ValueError, r"position must be one of",
         "tiny-position"),
    case(lambda: TinyDecoder(0, 2, "rope"), ValueError, r"vocab_size", "tiny-vocab-zero"),
    case(lambda: TinyDecoder(10, 2, "rope", num_heads=0), ValueError, r"num_heads",
         "tiny-heads-zero"),
    case(lambda: TinyDecoder(10, 2, "rope", d_model=6, num_heads=2), ValueError,
         r"head_dim .*even", "tiny-rope-odd-head"),
    case(lambda: TinyDecoder(10, 2, "rope", rope_base=NAN), ValueError, r"rope_base",
         "tiny-base-nan"),
    case(lambda: TinyDecoder(10, 2, "learned", max_position_embeddings=0), ValueError,
         r"max_position_embeddings", "tiny-table-zero"),
    case(lambda: TinyDecoder(10, 2, "rope")(torch.rand(2, 5)), TypeError,
         r"tokens must be an integer tensor", "tiny-tokens-float"),
    case(lambda: TinyDecoder(10, 2, "rope")([[1, 2]]), TypeError, r"tokens",
         "tiny-tokens-list"),
    case(lambda: TinyDecoder(10, 2, "rope")(torch.full((2, 5), 10)), IndexError,
         r"tokens must be ids in \[0, 9\]", "tiny-tokens-past-vocab"),
    case(lambda: TinyDecoder(10, 2, "rope")(torch.full((2, 5), -1)), IndexError,
         r"tokens must be ids", "tiny-tokens-negative"),
    case(lambda: TinyDecoder(10, 2, "rope")(torch.zeros(5, dtype=torch.long)), ValueError,
         r"tokens must have shape", "tiny-tokens-1d"),
    case(lambda: TinyDecoder(10, 2, "learned", max_position_embeddings=4)(
        torch.zeros(1, 5, dtype=torch.long)), IndexError, r"max_position_embeddings=4",
         "tiny-learned-too-long"),
    case(lambda: TinyDecoder(10, 2, "rope")(torch.zeros(1, 5, dtype=torch.long),
                                             attention_window=0), ValueError,
         r"attention_window", "tiny-window-zero"),
    case(lambda: sample_batch(torch.zeros(100, dtype=torch.uint8), 0, 8, torch.Generator()),
         ValueError, r"batch_size", "sample_batch-batch-zero"),
    case(lambda: sample_batch(torch.zeros(8, dtype=torch.uint8), 2, 8, torch.Generator()),
         ValueError, r"data must hold more than seq_len=8", "sample_batch-too-short"),
    case(lambda: sample_batch(torch.zeros(100, dtype=torch.uint8), 2, 1.5, torch.Generator()),
         TypeError, r"seq_len", "sample_batch-float"),
    case(lambda: summarize(load_results(), 3), ValueError, r"depth must be one of",
         "summarize-depth"),
    case(lambda: summarize(load_results(), 2, "strided"), ValueError,
         r"protocol must be one of", "summarize-protocol"),
    case(lambda: summarize({}, 2), ValueError, r"study", "summarize-no-results"),
    case(lambda: paired_difference(load_results(), "rope", "gpt", 64, 2), ValueError,
         r"no results for variant 'gpt'", "paired-unknown"),
]


@pytest.mark.parametrize(("fn", "exc", "match"), BAD)
def test_bad_input_raises_a_clear_error(fn, exc, match):
    with pytest.raises(exc, match=match):
        fn()


def test_audit_covers_every_public_function():
    """Each public name of the audited modules appears in at least one bad-input case."""
    import inspect

    source = inspect.getsource(inspect.getmodule(test_audit_covers_every_public_function))
    bad_section = source.split("BAD = [", 1)[1].split("\n]\n", 1)[0]
    modules = (sinusoidal, learned, attention, rope, rope_forms, rope_attention_module, scaling,
               alibi, relative, model)
    missing = []
    for module in modules:
        for name in module.__all__:
            obj = getattr(module, name)
            if callable(obj) and f"{name}(" not in bad_section:
                missing.append(f"{module.__name__}.{name}")
    # Functions with no argument that can be wrong in type or range, other than what the
    # callers above already cover:
    assert missing == [], f"no bad-input case for {missing}"


# --------------------------------------------------------------------------- legal edge cases


def test_zero_sizes_give_empty_results():
    assert sinusoidal_encoding(0, 8).shape == (0, 8)
    assert sinusoidal_encoding_at([], 8).shape == (0, 8)
    assert LearnedPositionalEmbedding(4, 8)([]).shape == (0, 8)
    assert LearnedPositionalEmbedding(4, 8).for_length(0).shape == (0, 8)
    assert causal_mask(0).shape == (0, 0)
    assert apply_rope(torch.ones(2, 0, 8), []).shape == (2, 0, 8)
    assert alibi_bias(3, 0).shape == (3, 0, 0)
    assert alibi_bias(3, 0, 5).shape == (3, 0, 5)
    assert RelativePositionBias(3)(0, 4).shape == (3, 0, 4)
    assert RelativePositionBias(3)(2, 0, query_offset=0).shape == (3, 2, 0)
    out, w = attend(torch.ones(0, 8), torch.ones(3, 8), torch.ones(3, 2))
    assert out.shape == (0, 2) and w.shape == (0, 3)


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_nan_in_x_stays_in_its_own_pair(layout):
    """Documented in apply_rope: x is not scanned; NaN only reaches its pair partner."""
    x = torch.randn(3, 16, generator=torch.Generator().manual_seed(1))
    x[1, 2] = NAN
    out = apply_rope(x, [0, 5, 9], layout=layout)
    partner = 2 + 8 if layout == "half" else 3
    bad = torch.zeros_like(x, dtype=torch.bool)
    bad[1, [2, partner]] = True
    assert torch.isnan(out[bad]).all()
    assert torch.isfinite(out[~bad]).all()


def test_nan_in_cos_sin_tables_propagates():
    cos, sin = rope_cos_sin(POS, INV)
    cos[2, 0] = NAN
    out = apply_rope(X, cos=cos, sin=sin)
    assert torch.isnan(out[:, 2, 0]).all()
    assert torch.isfinite(out[:, [0, 1, 3]]).all()


def test_fp16_rotation_can_overflow_past_65504():
    """Documented in apply_rope: a rotated coordinate can reach the pair's length."""
    x = torch.tensor([[60000.0, 60000.0]], dtype=torch.float16)
    inv = torch.tensor([math.pi / 4])  # a 45° turn at position 1
    out = apply_rope(x, [1], inv_freq=inv)
    assert out.dtype == torch.float16
    assert torch.isinf(out).any()
    assert torch.isfinite(apply_rope(x.float(), [1], inv_freq=inv)).all()  # fine in fp32


def test_nan_in_attention_inputs_reaches_only_their_rows():
    """Documented in attention: a NaN query spoils its own output row, not the others."""
    q, k, v = (torch.randn(4, 8, generator=torch.Generator().manual_seed(i)) for i in range(3))
    q[2, 0] = NAN
    out, w = attend(q, k, v)
    assert torch.isnan(out[2]).all() and torch.isfinite(out[[0, 1, 3]]).all()
    bias = torch.zeros(4, 4)
    bias[1, 3] = NAN
    out, _ = attend(q.nan_to_num(), k, v, bias=bias)
    assert torch.isnan(out[1]).all() and torch.isfinite(out[[0, 2, 3]]).all()


def test_huge_relative_positions_land_in_the_last_bucket():
    rel = torch.tensor([-(2**62), -(10**9), 10**9, 2**62])
    assert relative_position_bucket(rel).tolist() == [15, 15, 31, 31]
    assert relative_position_bucket(rel, bidirectional=False).tolist() == [31, 31, 0, 0]


def test_numpy_positions_are_accepted_like_lists():
    pos = np.arange(4)
    assert torch.equal(apply_rope(X, pos), apply_rope(X, pos.tolist()))
    assert torch.equal(sinusoidal_encoding_at(pos, 8), sinusoidal_encoding_at(list(pos), 8))


def test_interleaved_tables_that_are_not_paired_use_the_real_formula():
    """Hand-made interleaved cos/sin whose two entries per pair differ are honoured exactly."""
    g = torch.Generator().manual_seed(3)
    cos, sin = torch.rand(4, 8, generator=g), torch.rand(4, 8, generator=g)
    out = apply_rope(X, cos=cos, sin=sin, layout="interleaved")
    assert torch.equal(out, X * cos + rotate_every_two(X) * sin)


# --------------------------------------------------------------------------- fuzz


def _tensors(draw, *, floating=True):
    dtype = draw(st.sampled_from(
        [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.bool]
        if not floating else [torch.float32, torch.float64, torch.float16]))
    shape = draw(st.lists(st.integers(0, 5), min_size=0, max_size=4))
    values = draw(st.sampled_from(["randn", "nan", "inf", "zeros"]))
    t = torch.randn(shape, generator=torch.Generator().manual_seed(draw(st.integers(0, 9))))
    if values == "nan" and t.numel():
        t.view(-1)[0] = NAN
    elif values == "inf" and t.numel():
        t.view(-1)[0] = INF
    elif values == "zeros":
        t.zero_()
    return t.to(dtype) if dtype != torch.bool else t > 0


SIZES = st.one_of(
    st.integers(-3, 12), st.sampled_from([0, 1, 2, 64]), st.floats(allow_nan=True),
    st.booleans(), st.none(), st.text(max_size=3), st.just(torch.tensor(4)),
)
REALS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.integers(-(10**6), 10**6),
    st.sampled_from([0.0, -1.0, 1.0, 1.5, 10000.0]), st.none(), st.text(max_size=2),
    st.booleans(),
)
POSITIONS = st.one_of(
    st.lists(st.integers(-5, 10**6), max_size=6),
    st.lists(st.floats(allow_nan=True), max_size=4),
    st.integers(-3, 2**62), st.none(), st.text(max_size=3),
    st.sampled_from([[2**62], [-(2**62)], [[0, 1], [2, 3]], np.arange(3)]),
)
CHOICES = st.sampled_from(["half", "interleaved", "concat", "distance", "row", "raw", "vo",
                           "x", "", None, 1])
DTYPES = st.sampled_from([torch.float32, torch.float64, torch.float16, torch.bfloat16,
                          torch.int64, torch.bool, "float32", None, float])
BOOLS = st.one_of(st.booleans(), st.integers(0, 1), st.none())


@st.composite
def tensors(draw):
    return _tensors(draw, floating=draw(st.booleans()))


@st.composite
def inv_freqs(draw):
    return draw(st.one_of(tensors(), st.just(torch.ones(4)), st.just(rope_inv_freq(8)),
                          st.lists(st.floats(), max_size=3)))


# (callable, positional argument strategies, keyword argument strategies)
API = [
    (sinusoidal_inv_freq, [SIZES, REALS], {"dtype": DTYPES}),
    (sinusoidal_encoding, [SIZES, SIZES, REALS, CHOICES], {"dtype": DTYPES}),
    (sinusoidal_encoding_at, [POSITIONS, SIZES, REALS, CHOICES], {"dtype": DTYPES}),
    (concat_permutation, [SIZES], {}),
    (shift_matrix, [SIZES, SIZES, REALS, CHOICES], {"dtype": DTYPES}),
    (LearnedPositionalEmbedding, [SIZES, SIZES], {"init_std": REALS}),
    (lambda n, pos: LearnedPositionalEmbedding(4, 3)(pos), [SIZES, POSITIONS], {}),
    (lambda n, off: LearnedPositionalEmbedding(4, 3).for_length(n, off), [SIZES, SIZES], {}),
    (lambda n: LearnedPositionalEmbedding(4, 3).interpolate(n), [SIZES], {}),
    (causal_mask, [SIZES, SIZES], {}),
    (sliding_window_mask, [SIZES, SIZES, SIZES], {}),
    (llama4_attn_scale, [POSITIONS], {"floor_scale": SIZES, "attn_scale": REALS}),
    (attend, [tensors(), tensors(), tensors()],
     {"bias": st.one_of(st.none(), tensors()), "mask": st.one_of(st.none(), tensors()),
      "scale": st.one_of(st.none(), REALS), "causal": BOOLS}),
    (KVCache, [SIZES, SIZES], {}),
    (lambda layer, k, v: KVCache(2).update(layer, k, v), [SIZES, tensors(), tensors()], {}),
    (rope_inv_freq, [SIZES, REALS, SIZES], {"dtype": DTYPES}),
    (rope_angles, [POSITIONS, inv_freqs()], {}),
    (rope_cos_sin, [POSITIONS, inv_freqs()],
     {"layout": CHOICES, "attention_factor": REALS, "dtype": DTYPES}),
    (apply_rope, [tensors(), st.one_of(POSITIONS, tensors())],
     {"inv_freq": st.one_of(st.none(), inv_freqs()), "rotary_dim": st.one_of(st.none(), SIZES),
      "layout": CHOICES}),
    (lambda x, c, s, layout: apply_rope(x, cos=c, sin=s, layout=layout),
     [tensors(), st.one_of(st.none(), tensors()), st.one_of(st.none(), tensors()), CHOICES],
     {}),
    (apply_rope_complex, [tensors(), st.one_of(POSITIONS, tensors())],
     {"rotary_dim": st.one_of(st.none(), SIZES), "layout": CHOICES}),
    (rotation_matrix, [SIZES, inv_freqs()], {"layout": CHOICES, "head_dim": SIZES}),
    (rotate_half, [tensors()], {}),
    (rotate_every_two, [tensors()], {}),
    (layout_permutation, [SIZES, SIZES], {"src": CHOICES, "dst": CHOICES}),
    (convert_layout, [tensors()], {"src": CHOICES, "dst": CHOICES}),
    (rope_decay_bound, [POSITIONS, inv_freqs()], {}),
    (rope_attention, [tensors(), tensors(), tensors(), POSITIONS],
     {"values": CHOICES, "causal": st.booleans()}),
    (rope_decode, [tensors(), tensors(), tensors()],
     {"prefill": SIZES, "positions": st.one_of(st.none(), POSITIONS)}),
    (scaling.linear, [SIZES, REALS, SIZES], {"base": REALS, "dtype": DTYPES}),
    (scaling.ntk_aware, [SIZES, REALS, SIZES], {"base": REALS}),
    (scaling.dynamic_ntk, [SIZES, REALS, SIZES], {"seq_len": SIZES, "base": REALS}),
    (scaling.yarn, [SIZES, REALS, SIZES],
     {"base": REALS, "beta_fast": REALS, "beta_slow": REALS, "truncate": BOOLS,
      "attention_factor": st.one_of(st.none(), REALS)}),
    (scaling.yarn_paper, [SIZES, REALS, SIZES], {"alpha": REALS, "beta": REALS}),
    (scaling.llama3, [SIZES, REALS, SIZES],
     {"low_freq_factor": REALS, "high_freq_factor": REALS}),
    (scaling.longrope, [SIZES, REALS, SIZES],
     {"short_factor": st.one_of(st.lists(REALS, max_size=4), SIZES),
      "long_factor": st.lists(REALS, max_size=4), "seq_len": SIZES,
      "attention_factor": st.one_of(st.none(), REALS)}),
    (scaling.longrope_attention_factor, [REALS, SIZES], {}),
    (scaling.proportional, [SIZES, REALS, SIZES], {"rotary_dim": SIZES, "base": REALS}),
    (scaling.default, [SIZES, REALS], {"rotary_dim": SIZES, "base": REALS}),
    (rope_from_config, [st.one_of(
        st.dictionaries(st.sampled_from(["head_dim", "hidden_size", "num_attention_heads",
                                         "max_position_embeddings", "rope_theta",
                                         "partial_rotary_factor", "rotary_dim",
                                         "original_max_position_embeddings"]), SIZES),
        st.fixed_dictionaries({"head_dim": st.just(8), "max_position_embeddings": SIZES,
                               "rope_scaling": st.dictionaries(
                                   st.sampled_from(["rope_type", "factor", "short_factor",
                                                    "long_factor", "low_freq_factor",
                                                    "high_freq_factor", "truncate",
                                                    "beta_fast", "mscale", "x"]),
                                   st.one_of(REALS, CHOICES,
                                             st.sampled_from(["yarn", "longrope", "llama3",
                                                              "linear", "dynamic"])))}),
        SIZES)], {"seq_len": SIZES}),
    (scaling.ntk_aware_base, [REALS, REALS, SIZES], {}),
    (scaling.dynamic_ntk_base, [REALS, REALS, SIZES, SIZES, SIZES], {}),
    (scaling.yarn_attention_factor, [REALS, st.one_of(st.none(), REALS),
                                     st.one_of(st.none(), REALS)], {}),
    (scaling.yarn_correction_range, [SIZES, REALS, SIZES, REALS, REALS], {}),
    (scaling.per_pair_scale, [inv_freqs(), SIZES], {}),
    (alibi_slopes, [SIZES], {"dtype": DTYPES}),
    (alibi_bias, [SIZES, SIZES, st.one_of(st.none(), SIZES), BOOLS],
     {"form": CHOICES, "slopes": st.one_of(st.none(), st.lists(REALS, max_size=3), tensors()),
      "dtype": DTYPES}),
    (relative_positions, [SIZES, SIZES], {"query_offset": st.one_of(st.none(), SIZES)}),
    (clipped_relative_positions, [SIZES, SIZES, SIZES], {}),
    (ShawRelativeKeys, [SIZES, SIZES], {"init_std": REALS}),
    (relative_key_logits, [tensors(), tensors()], {}),
    (relative_position_bucket, [POSITIONS, BOOLS, SIZES, SIZES], {}),
    (RelativePositionBias, [SIZES, SIZES, SIZES, BOOLS], {}),
    (lambda q, k, off: RelativePositionBias(2, 8, 20)(q, k, query_offset=off),
     [SIZES, st.one_of(st.none(), SIZES), st.one_of(st.none(), SIZES)], {}),
    (TinyDecoder, [SIZES, SIZES, st.sampled_from([*model.POSITIONS, "x", None])],
     {"d_model": SIZES, "num_heads": SIZES, "max_position_embeddings": SIZES}),
    (lambda position, tokens: TinyDecoder(10, 2, position, d_model=8, num_heads=2,
                                          num_layers=1, max_position_embeddings=4)(tokens),
     [st.sampled_from(model.POSITIONS), st.one_of(tensors(), POSITIONS)], {}),
]


@st.composite
def api_calls(draw):
    fn, args, kwargs = draw(st.sampled_from(API))
    drawn_args = [draw(a) for a in args]
    drawn_kwargs = {k: draw(v) for k, v in kwargs.items() if draw(st.booleans())}
    return fn, drawn_args, drawn_kwargs


@settings(max_examples=1500, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(api_calls())
def test_fuzz_public_api_raises_only_documented_errors(call):
    """Arbitrary arguments: a result, or a ValueError/TypeError/IndexError with a message."""
    fn, args, kwargs = call
    try:
        fn(*args, **kwargs)
    except ERRORS as err:
        assert str(err), f"{type(err).__name__} without a message"
