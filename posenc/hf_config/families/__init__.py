"""The family registry: what each ``model_type``'s config class and modeling code do with positions.

One :class:`Family` record per ``model_type`` in :data:`FAMILIES`, in the spirit of
``transformers``' own auto mappings: a reader finds a model by its ``model_type`` and reads
its rules at a glance. Fields are data — values and small named types (:class:`Every`,
:class:`NopeFlags`, :class:`TypeBase` …) that the readers interpret; where a family's rule
is not a value, the record names one function of ``hf_config._rules`` (``translate``,
``rope_rule``) that mirrors the few lines of that family's ``transformers`` code it stands
for. A ``model_type`` missing from the table is refused by name (:func:`family`), with the
reason where posenc knows it (:data:`UNVERIFIED`).

The rules encode ``transformers`` 5.24 (the pinned version): its ``Config.__post_init__``
defaults (the layer pattern a ``config.json`` without ``layer_types`` gets, NoPE flags), the
modeling code (which channels rotate and how they pair, which layer types skip RoPE, extra
position terms) and ``convert_rope_params_to_dict`` overrides (OLMo 3's scaling on full
attention only, ModernBERT's two bases), the class defaults a ``config.json`` may leave
out, and the legacy keys a constructor translates. ``tests/test_hf_sweep.py`` checks every
record against the family's own rotary module and attention layers, layer by layer (on a
repaired default where ``transformers`` cannot run its own, and fails when a record it
uses was never verified); ``tests/test_hf_config.py`` checks the class defaults of every
record and published configs that carry legacy keys and switches.

Layout: ``_record`` holds the record type (:class:`Family` and its typed parts), ``_table``
the record of every family; this module builds :data:`FAMILIES` from the table and the
class facts of ``hf_config._class_facts``, and holds the layer-type names
(:data:`ATTENTION_TYPES`, :data:`LEGACY_LAYER_TYPES`) and the refusals
(:data:`UNVERIFIED`, :func:`family`). Everything public is imported from here.
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

from .._class_facts import (
    _CLASS_DEFAULTS,
    _CLASS_ROPE_DICTS,
    _DEFAULT_ROPE_IGNORES_PARTIAL,
    _TOP_LEVEL_ROPE,
)
from ._record import (
    AllLayers,
    BlockTypes,
    Every,
    Family,
    NopeFlags,
    TypeBase,
    TypeHeadDim,
)
from ._table import _RECORDS

__all__ = [
    "ATTENTION_TYPES", "FAMILIES", "FLAT_TEXT_CONFIGS", "LEGACY_LAYER_TYPES", "UNVERIFIED",
    "AllLayers",
    "BlockTypes", "Every", "Family", "NopeFlags", "TypeBase", "TypeHeadDim", "family",
]

#: Layer types whose attention rotates q and k (unless a family rule says otherwise).
ATTENTION_TYPES = frozenset({"full_attention", "sliding_attention", "chunked_attention"})

#: Old layer-type names every ``transformers`` config renames when it is built
#: (``PreTrainedConfig.__post_init__`` calls ``remap_legacy_layer_types``: transformers 5.24
#: ``configuration_utils._LEGACY_LAYER_TYPE_REMAP``); posenc reads ``layer_types`` the same way.
LEGACY_LAYER_TYPES = MappingProxyType({
    "mamba": "linear_attention",
    "attention": "full_attention",
    "deepseek_sparse_attention": "indexed_attention",
    "qwen_sparse_attention": "indexed_attention",
})

#: ``model_type`` -> :class:`~posenc.hf_config.Family`. Families not listed are refused by
#: name.
FAMILIES: MappingProxyType[str, Family] = MappingProxyType({
    mt: replace(rec, defaults=_CLASS_DEFAULTS.get(mt, rec.defaults),
                default_rope_partial=mt not in _DEFAULT_ROPE_IGNORES_PARTIAL,
                default_rope_parameters=tuple(_CLASS_ROPE_DICTS.get(mt, {}).items()),
                top_level_rope=_TOP_LEVEL_ROPE.get(mt, rec.top_level_rope))
    for mt, rec in _RECORDS.items()
})

#: Multimodal ``model_type`` -> its text config's, for config.json files saved flat (the
#: text keys at the top level, no ``text_config``): these config classes move the top-level
#: keys their text config accepts into ``text_config`` (``Qwen2VLConfig.__post_init__``,
#: ``Qwen2_5_VLConfig``, ``PaddleOCRVLConfig``: "Hub configs are saved as flat dicts").
FLAT_TEXT_CONFIGS: MappingProxyType[str, str] = MappingProxyType({
    "qwen2_vl": "qwen2_vl_text",
    "qwen2_5_vl": "qwen2_5_vl_text",
    "paddleocr_vl": "paddleocr_vl_text",
})

_CANNOT_RUN = ("transformers 5.24 cannot run its default config ({}), so no check has "
               "compared a record with its modules and posenc keeps none")

#: ``model_type`` -> why posenc has no record: families with a text rotary module whose
#: default config ``transformers`` itself cannot run, so the family sweep could not verify
#: a record (``tests/test_hf_sweep.py`` checks this list is exactly those families). A
#: family leaves this list when a check on a repaired config verifies its record.
UNVERIFIED: MappingProxyType[str, str] = MappingProxyType({
    "beam": _CANNOT_RUN.format("its rotary module has no 'full_attention' entry"),
    "blt": _CANNOT_RUN.format("its default has no text hidden_size for the rotary module"),
    "chameleon": _CANNOT_RUN.format("building the model fails on a missing sub-config"),
    "cohere_compass_text": _CANNOT_RUN.format(
        "its rotary module has no 'full_attention' entry"),
    "dbrx": _CANNOT_RUN.format("its attention config has no rope_theta"),
    "deepseek_ocr2_text": _CANNOT_RUN.format("building the model fails on a missing size"),
    "diffusion_gemma_text": _CANNOT_RUN.format("building the model fails on a missing size"),
    "dots1": _CANNOT_RUN.format("building the model fails on a missing size"),
    "esm": _CANNOT_RUN.format("building the model fails on a missing size"),
    "glm4v_moe_text": _CANNOT_RUN.format("its M-RoPE sections do not fit the default head"),
    "glm4v_text": _CANNOT_RUN.format("its M-RoPE sections do not fit the default head"),
    "hunyuan_vl_text": _CANNOT_RUN.format("its rotary module needs an mrope_section the "
                                          "default lacks"),
    "lfm2_moe": _CANNOT_RUN.format("building the model fails on a missing layer list"),
    "nemotron": _CANNOT_RUN.format("building the model fails on a missing head width"),
    "nemotron_h": _CANNOT_RUN.format("no text rotary module is built from it"),
    "qwen4_exp_text": _CANNOT_RUN.format("building the model fails on missing head widths"),
    "t5gemma2_decoder": _CANNOT_RUN.format("its decoder config has no dropout_rate"),
})


def family(model_type: str) -> Family:
    """The :class:`Family` record of ``model_type``.

    Raises:
        ValueError: ``model_type`` is not in :data:`FAMILIES` (the message names it), or
            the family is one ``posenc`` refuses or has no verified record for
            (:data:`~posenc.hf_config.families.UNVERIFIED`; the message gives the reason).
    """
    if not model_type:
        raise ValueError("config has no 'model_type'; posenc reads a family by its model_type")
    rec = FAMILIES.get(model_type)
    if rec is None and model_type in UNVERIFIED:
        raise ValueError(f"model_type {model_type!r} is refused: {UNVERIFIED[model_type]}")
    if rec is None:
        raise ValueError(
            f"model_type {model_type!r} is not in posenc.hf_config.FAMILIES; posenc does "
            "not guess how an unknown family uses positions (see the atlas for the "
            "families it reads)"
        )
    if rec.refuse:
        raise ValueError(f"model_type {model_type!r} is refused: {rec.refuse}")
    return rec
