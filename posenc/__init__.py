"""posenc: positional encodings for Transformers, small and exact.

One module per idea; torch tensors throughout (numpy at the edges, matplotlib only for the
book's figures, imported on first use). Every public module, grouped:

The encodings

* :mod:`posenc.sinusoidal` — Vaswani et al. (2017) sinusoidal table and its shift map.
* :mod:`posenc.learned` — a learned absolute table (BERT/GPT-2/ViT) with an explicit limit.
* :mod:`posenc.rope` — rotary embedding (RoFormer): frequencies, cos/sin tables, both layouts.
* :mod:`posenc.rope_forms` — the same rotation as a matrix, as complex multiplication, and
  between the layouts; RoFormer's decay bound.
* :mod:`posenc.rope_attention` — RoPE inside attention: rotating the values or not, and
  decoding with a KV cache.
* :mod:`posenc.rope_context` — RoPE frequencies against a context length: full turns per
  pair, p-RoPE, the similar-token margin and the base bound.
* :mod:`posenc.multi_axis` — RoPE over 2-D/3-D positions: axial RoPE and M-RoPE (Qwen2-VL,
  Qwen3-VL).
* :mod:`posenc.mrope_positions` — M-RoPE position ids of text + image + video sequences,
  with the numbering rules of each version of the reference code.
* :mod:`posenc.rope_mixed` — RoPE-Mixed (Heo et al., 2024): learned frequency vectors over
  all axes.
* :mod:`posenc.relative` — T5 relative-position buckets and bias, Shaw et al. relative keys.
* :mod:`posenc.alibi` — ALiBi slopes for any head count and the bias matrices.
* :mod:`posenc.fire` — FIRE (Li et al., 2024): a learned function of the normalised distance.

Long context and attention

* :mod:`posenc.scaling` — RoPE context extension (PI, NTK-aware, dynamic NTK, YaRN, Llama 3,
  LongRoPE, proportional), every method returning ``(inv_freq, attention_factor)``;
  registries ``ROPE_SCALING`` and ``ROPE_TYPES`` (by ``transformers`` rope_type).
* :mod:`posenc.attention` — readable scaled dot-product attention, causal and
  sliding-window masks, and a KV cache.
* :mod:`posenc.mla` — multi-head latent attention with decoupled RoPE (DeepSeek-V2/V3).
* :mod:`posenc.shared_kv` — shared key/value attention with rotated values (DeepSeek-V4).

Reading real models

* :mod:`posenc.hf_config` — what a ``transformers`` config or ``config.json`` does to RoPE:
  frequencies per layer type, NoPE layers, sliding windows; refusals by name.
* :mod:`posenc.cli` — ``posenc inspect CONFIG`` (also ``python -m posenc``).

The book's studies and helpers

* :mod:`posenc.model` — a tiny decoder whose position scheme is one argument.
* :mod:`posenc.experiments` — the measured length-extrapolation study (chapter 10).
* :mod:`posenc.grid_experiment` — the patch-grid study (chapter 11).
* :mod:`posenc.notebook` / :mod:`posenc.plotting` — the book's setup, printing and figure
  style; :mod:`posenc.interactive` — figures with a slider for the HTML pages (drawn as
  SVG by the site's own script).

The most used names are re-exported here; method-specific names (``posenc.scaling.yarn``)
stay in their module. ``posenc.attention`` is the module; its function is
``posenc.attention.attention``.
"""

from . import (
    alibi,
    attention,
    hf_config,
    learned,
    multi_axis,
    relative,
    rope,
    rope_attention,
    rope_forms,
    scaling,
    sinusoidal,
)
from .alibi import alibi_bias, alibi_slopes
from .attention import KVCache, causal_mask, sliding_window_mask
from .hf_config import layer_specs, rope_from_config
from .learned import LearnedPositionalEmbedding
from .relative import RelativePositionBias, relative_position_bucket
from .rope import apply_rope, rope_angles, rope_cos_sin, rope_inv_freq
from .rope_forms import rotation_matrix
from .scaling import ROPE_SCALING
from .sinusoidal import (
    concat_permutation,
    shift_matrix,
    sinusoidal_encoding,
    sinusoidal_encoding_at,
    sinusoidal_inv_freq,
)

__version__ = "0.1.0"

__all__ = [
    "ROPE_SCALING",
    "KVCache",
    "LearnedPositionalEmbedding",
    "RelativePositionBias",
    "alibi",
    "alibi_bias",
    "alibi_slopes",
    "apply_rope",
    "attention",
    "causal_mask",
    "concat_permutation",
    "hf_config",
    "layer_specs",
    "learned",
    "multi_axis",
    "relative",
    "relative_position_bucket",
    "rope",
    "rope_angles",
    "rope_attention",
    "rope_cos_sin",
    "rope_forms",
    "rope_from_config",
    "rope_inv_freq",
    "rotation_matrix",
    "scaling",
    "shift_matrix",
    "sinusoidal",
    "sinusoidal_encoding",
    "sinusoidal_encoding_at",
    "sinusoidal_inv_freq",
    "sliding_window_mask",
]
