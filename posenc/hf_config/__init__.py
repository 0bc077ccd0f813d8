"""Read positions from a Hugging Face model config: what each layer of a checkpoint does.

A ``transformers`` config object (``LlamaConfig``, ``Gemma3Config``, …), the plain dict of
a ``config.json`` or the path to one goes in; what ``transformers`` 5.24 does with
positions comes out:

* :func:`rope_parameters` — the resolved RoPE settings of one layer type, every default and
  legacy spelling applied the way ``transformers`` applies them (:mod:`.params`);
* :func:`rope_from_config` — ``(inv_freq, attention_factor)`` for those settings, in the form
  of :mod:`posenc.scaling`;
* :func:`layer_specs` — one :class:`LayerSpec` per layer: positions or not, attention type
  and window, frequencies and attention factor, head and rotated width, which channels
  rotate and how they pair, extra position terms, rotated values (:mod:`.layers`);
* :func:`config_report` — the same in a few lines: runs of identical layers, the layer
  pattern, scaling factors (:mod:`.report`; ``python -m posenc inspect CONFIG`` prints
  it from the command line);
* :func:`apply_layer_rope` — rotate a q/k head exactly as that layer does;
* :data:`FAMILIES` — the registry of family rules keyed by ``model_type``
  (:mod:`.families`); an unknown ``model_type`` is refused by name.

Module layout (no import cycle): :mod:`.families` holds the records; ``_config`` turns a
config object or ``config.json`` into the dict every reader reads (aliases, class defaults,
the record's legacy-key translation); ``_patterns`` derives the layer types and which
layers rotate; :mod:`.params` reads RoPE settings through one reader and one builder per
``rope_type``; :mod:`.layers` combines them per layer; :mod:`.summary` says a layer list
in words (the layer pattern, the rotated part) for :mod:`.report` and the book's atlas.

Shape notation: ``d`` = ``head_dim``, ``r`` = ``rotary_dim``; ``inv_freq`` is ``(r/2,)``
(``(d/2,)`` for ``proportional``), radians per position.

What the RoPE reader applies, in ``transformers``' order of precedence:

* the RoPE dict: ``rope_scaling`` (older configs) if non-empty, else ``rope_parameters``;
  it may be nested per layer type (``{"sliding_attention": {...}, "full_attention": {...}}``);
  ``rope_type`` or its old name ``type``, with the family's legacy names (``"su"`` and
  ``"yarn"`` mean ``"longrope"`` in Phi-3 configs; ``"mrope"`` means the default 1-D
  frequencies in Qwen2-VL's);
* ``rope_theta``: the RoPE dict, then the top level, then ``rotary_emb_base`` (GPT-NeoX),
  then the config class's default (``Family.default_theta``), or the family's per-type
  base keys (Gemma 3, Gemma 3n, ModernBERT);
* the rotated width: ``rotary_dim`` at the top level (GPT-J, CodeGen), else
  ``int(head_dim · partial_rotary_factor)`` with the factor from the RoPE dict, the top
  level, ``rotary_pct`` (GPT-NeoX), or the family's default (GLM 0.5);
* ``head_dim``: the family's key (``qk_rope_head_dim`` for MLA), a per-type width
  (Gemma 4's ``global_head_dim``), ``head_dim``, else ``hidden_size // num_attention_heads``;
* ``original_max_position_embeddings`` (yarn, longrope, llama3): the top level first (Phi-3
  keeps it there), then the RoPE dict, then ``max_position_embeddings``; dynamic NTK uses
  ``max_position_embeddings`` itself, as ``transformers`` does.

Legacy keys a family's config class renames in its constructor (MiniMax-M2's
``rotary_dim``, LFM2's ``full_attn_idxs``, old layer-type names such as ``"mamba"``) are
renamed first, by the family record's ``translate`` function and
:data:`~posenc.hf_config.families.LEGACY_LAYER_TYPES`.

A multimodal config is read through its ``text_config``. Unknown keys in the RoPE dict, an
unknown ``rope_type``, missing required keys and malformed values raise an error that names
the key. ``tests/test_hf_config.py`` checks published configs against each model's rotary
module and attention; ``tests/test_hf_sweep.py`` checks every family in the pinned
``transformers`` layer by layer.
"""

from .families import FAMILIES, Family, family
from .files import ConfigFileError, read_config
from .layers import LAYER_SPEC_FIELDS, LayerSpec, apply_layer_rope, layer_specs, layer_types
from .params import ROPE_KEYS, rope_from_config, rope_parameters
from .report import ConfigReport, LayerGroup, config_report

__all__ = [
    "FAMILIES", "LAYER_SPEC_FIELDS", "ROPE_KEYS", "ConfigFileError", "ConfigReport",
    "Family", "LayerGroup", "LayerSpec", "apply_layer_rope", "config_report",
    "family", "layer_specs", "layer_types", "read_config", "rope_from_config",
    "rope_parameters",
]
