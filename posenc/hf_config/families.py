"""The family registry: what each ``model_type``'s config class and modeling code do with positions.

One :class:`Family` record per ``model_type`` in :data:`FAMILIES`, in the spirit of
``transformers``' own auto mappings: a reader finds a model by its ``model_type`` and reads
its rules at a glance. Every field is data — a name from a small vocabulary that
:mod:`posenc.hf_config.layers` interprets — never code. A ``model_type`` missing from the
table is refused by name (:func:`family`).

The rules encode ``transformers`` 5.24 (the pinned version): its ``Config.__post_init__``
defaults (the layer pattern a ``config.json`` without ``layer_types`` gets, NoPE flags), the
modeling code (which channels rotate and how they pair, which layer types skip RoPE, extra
position terms) and ``convert_rope_params_to_dict`` overrides (OLMo 3's scaling on full
attention only, ModernBERT's two bases). ``tests/test_hf_sweep.py`` checks every record
against the family's own rotary module and attention layers, layer by layer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["ATTENTION_TYPES", "FAMILIES", "Family", "family"]

#: Layer types whose attention rotates q and k (unless a family rule says otherwise).
ATTENTION_TYPES = frozenset({"full_attention", "sliding_attention", "chunked_attention"})


@dataclass(frozen=True)
class Family:
    """The position rules of one ``model_type`` (defaults: a Llama-like decoder).

    Attributes:
        layout: how channels pair — ``"half"`` (``(i, i + r/2)``, ``rotate_half``) or
            ``"interleaved"`` (``(2i, 2i + 1)``; GPT-J, Cohere, GLM, DeepSeek's MLA slice).
        channels: which channels of the head rotate — ``"leading"`` (the first ``r``; the
            rest pass through) or ``"trailing"`` (the last ``r``: DeepSeek MLA's
            ``[nope | rope]`` split, DeepSeek-V4).
        partial_rotary_factor: the family's default rotated fraction when the config has
            none (GLM 0.5, GPT-NeoX's ``rotary_pct`` 0.25); ``None`` means 1.
        head_dim_key: the config key that holds the rotated head's width
            (``"qk_rope_head_dim"`` for MLA: the rope slice is a head of its own).
        full_head_dim: ``(key, key)`` whose sum is the whole q/k head when
            ``head_dim_key`` names only the rope slice (MLA: nope + rope).
        layer_pattern: how ``layer_types`` is derived when a config has none — ``None``
            (every layer ``"full_attention"``, or ``"sliding_attention"`` if the config has
            a ``sliding_window`` and ``use_sliding_window`` is not false), or
            ``("every", key, default, offset)``: layer ``i`` is full iff
            ``(i + 1 + offset) % config[key] == 0`` (``key`` may be ``None`` for a fixed
            ``default``), else sliding.
        last_layer_full: the config class forces the last layer to ``"full_attention"``
            (Gemma 4).
        nope_flags: ``(key, interval_key, default_interval)`` — ``config[key][i] == 0``
            marks a layer **without** RoPE (SmolLM3, Llama 4: 1 = uses RoPE); without the
            list, every ``interval``-th layer is NoPE.
        nope_types: layer types that carry no RoPE (Cohere 2's and EXAONE 4's global
            layers; linear-attention and state-space layers of hybrids).
        block_types_key: ``(key, mapping)`` for hybrids that list blocks under another key
            (``layers_block_type``): each entry is mapped to a layer type.
        flat_rope_types: for a flat (not per-type) RoPE dict, the layer types it applies to;
            the other types get the default rope with the same ``rope_theta`` (OLMo 3
            scales full-attention layers only). ``None``: every type.
        type_bases: ``{layer_type: (key, default)}`` — a per-type ``rope_theta`` read from
            its own config key (Gemma 3's ``rope_local_base_freq``, ModernBERT's
            ``local_rope_theta`` / ``global_rope_theta``).
        type_head_dim: ``{layer_type: (key, default)}`` — a per-type head width (Gemma 4's
            ``global_head_dim``).
        window_offset: added to ``config.sliding_window`` to give the keys a query sees,
            itself included (bidirectional encoders that see ``w`` on each side: ``+1``).
        window_key: the config key of the window (``"local_attention"`` for ModernBERT).
        query_temperature: Llama 4's NoPE-layer query temperature
            (:func:`posenc.attention.llama4_attn_scale`) is on.
        query_scale_key: a RoPE-dict key that scales queries on every layer by position
            (Ministral 3's ``llama_4_scaling_beta``).
        values_rotated: the values carry RoPE too (DeepSeek-V4: K = V).
        ignored_keys: RoPE-dict keys ``transformers`` accepts but this family's code never
            reads, with the reason (reported in :class:`~posenc.hf_config.LayerSpec`'s
            ``ignored`` field instead of raised).
        refuse: a reason why ``posenc`` cannot represent this family; reading it raises.
        note: a remark for the atlas (e.g. where ``transformers`` looks wrong against the
            paper or reference code).
    """

    layout: str = "half"
    channels: str = "leading"
    partial_rotary_factor: float | None = None
    head_dim_key: str | None = None
    full_head_dim: tuple[str, str] | None = None
    layer_pattern: tuple | None = None
    last_layer_full: bool = False
    nope_flags: tuple[str, str, int] | None = None
    nope_types: frozenset[str] = frozenset()
    block_types_key: tuple[str, tuple[tuple[str, str], ...]] | None = None
    flat_rope_types: frozenset[str] | None = None
    type_bases: tuple[tuple[str, str, float], ...] = ()
    type_head_dim: tuple[tuple[str, str, int], ...] = ()
    window_offset: int = 0
    window_key: str = "sliding_window"
    query_temperature: bool = False
    query_scale_key: str | None = None
    values_rotated: bool = False
    ignored_keys: tuple[tuple[str, str], ...] = ()
    refuse: str | None = None
    note: str = ""
    extra: dict = field(default_factory=dict, compare=False, repr=False)


_LLAMA = Family()
_MLA = Family(layout="interleaved", channels="trailing", head_dim_key="qk_rope_head_dim",
              full_head_dim=("qk_nope_head_dim", "qk_rope_head_dim"))
_INTERLEAVED = Family(layout="interleaved")
_GEMMA3 = Family(layer_pattern=("every", "sliding_window_pattern", 6, 0),
                 type_bases=(("sliding_attention", "rope_local_base_freq", 10_000.0),
                             ("full_attention", "rope_theta", 1_000_000.0)))
_SLIDING_NOPE_GLOBAL = Family(layer_pattern=("every", "sliding_window_pattern", 4, 0),
                              nope_types=frozenset({"full_attention"}))
_LINEAR_HYBRID = Family(nope_types=frozenset({"linear_attention"}))

#: ``model_type`` -> :class:`Family`. Families not listed are refused by name.
FAMILIES: MappingProxyType[str, Family] = MappingProxyType({
    # --- Llama-like: every layer RoPE, half layout, whole head -------------------------
    **{name: _LLAMA for name in (
        "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe",
        "granite", "granitemoe", "granitemoeshared", "olmo", "olmo2", "olmoe", "flex_olmo",
        "phi3", "starcoder2", "seed_oss", "hyperclovax", "jais2", "kolibri1", "helium",
        "mellum", "minimax_m2", "apertus", "arcee", "aria_text", "bitnet", "cwm", "emu3",
        "diffllama", "doge", "hy_v3", "falcon_h1", "solar_open", "step3p7",
        "qwen2_vl_text", "qwen2_5_vl_text", "qwen3_vl_text", "qwen3_vl_moe_text",
        "smollm3", "gemma", "vaultgemma", "granite_swa", "granitemoe_swa",
        "phimoe", "mllama_text_model", "molmo2_text", "muse_glimmer_text",
        "muse_spark_text", "unlimited_ocr_text", "voxtral_realtime_text",
        "paddleocr_vl_text", "timesfm2_5", "gpt_neox_japanese", "eurobert",
    )},
    "gemma2": Family(layer_pattern=("every", None, 2, 0)),
    "gemma3_text": _GEMMA3,
    "gpt_oss": Family(layer_pattern=("every", None, 2, 0)),
    "olmo3": Family(layer_pattern=("every", None, 4, 0),
                    flat_rope_types=frozenset({"full_attention"})),
    "cohere": _INTERLEAVED,
    "cohere2": Family(layout="interleaved", layer_pattern=("every", "sliding_window_pattern", 4, 0),
                      nope_types=frozenset({"full_attention"})),
    "exaone4": _SLIDING_NOPE_GLOBAL,
    "ernie4_5": _INTERLEAVED,
    "ernie4_5_moe": _INTERLEAVED,
    "glm": Family(layout="interleaved", partial_rotary_factor=0.5),
    "glm4": Family(layout="interleaved", partial_rotary_factor=0.5),
    "gptj": Family(layout="interleaved"),
    "deepseek_v2": _MLA,
    "deepseek_v3": _MLA,
    "qwen3_next": _LINEAR_HYBRID,
    "gpt_neox": Family(partial_rotary_factor=0.25),
})


def family(model_type: str) -> Family:
    """The :class:`Family` record of ``model_type``.

    Raises:
        ValueError: ``model_type`` is not in :data:`FAMILIES` (the message names it), or
            the family is one ``posenc`` refuses (the message gives the reason).
    """
    rec = FAMILIES.get(model_type)
    if rec is None:
        raise ValueError(
            f"model_type {model_type!r} is not in posenc.hf_config.FAMILIES; posenc does "
            "not guess how an unknown family uses positions (see the atlas for the "
            "families it reads)"
        )
    if rec.refuse:
        raise ValueError(f"model_type {model_type!r} is refused: {rec.refuse}")
    return rec
