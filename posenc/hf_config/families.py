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
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import NamedTuple

from ._class_facts import (
    _CLASS_DEFAULTS,
    _CLASS_ROPE_DICTS,
    _DEFAULT_ROPE_IGNORES_PARTIAL,
    _TOP_LEVEL_ROPE,
)
from ._rules import (
    _bamba_half_rotary,
    _cohere2_moe_prefix,
    _cohere2_moe_rope,
    _gemma4_global_head_dim,
    _global_rope_without_window,
    _gpt_neox_one_head_size,
    _head_dim_from_hidden,
    _layer_theta_per_layer,
    _lfm2_full_attn_idxs,
    _llama4_layer_types,
    _mimo_window_size,
    _minimax_m2_rotary_dim,
    _mistral4_mla_head,
    _mllama_cross_layers,
    _modernbert_decoder_window,
    _modernbert_local_attention,
    _muse_nope_layers,
    _neomme_translate,
    _nope_where_theta_zero,
    _qwen2_moe_window_layers,
    _qwen2_window_layers,
    _rope_if_embedding_type_rope,
    _rope_only_with_window,
    _smollm3_layer_types,
    _window_only_with_switch,
    _zamba2_layer_types,
    _zamba2_mem_rope,
)

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


class Every(NamedTuple):
    """A layer pattern by period: layer ``i`` is ``"full_attention"`` iff
    ``(i + 1 + offset) % every == 0``, else ``other``; ``every`` is ``config[key]`` (``None``:
    always ``default``), or, when that value is a string such as EXAONE's ``"LLLG"``, the
    pattern spelt out (``G`` global)."""

    key: str | None
    default: int
    offset: int = 0
    other: str = "sliding_attention"


class AllLayers(NamedTuple):
    """Every layer has one type (Falcon-H1's ``"hybrid"``)."""

    layer_type: str


class NopeFlags(NamedTuple):
    """Per-layer RoPE flags: ``config[key][i] == 0`` marks a layer without RoPE; without
    the list, every ``config[interval_key]``-th layer (default ``default_interval``)."""

    key: str
    interval_key: str
    default_interval: int


class TypeBase(NamedTuple):
    """A per-type ``rope_theta`` read from its own key (``default`` when the key is absent)."""

    layer_type: str
    key: str
    default: float


class TypeHeadDim(NamedTuple):
    """A per-type head width read from its own key (Gemma 4's ``global_head_dim``)."""

    layer_type: str
    key: str
    default: int


class BlockTypes(NamedTuple):
    """Blocks listed under another key, each mapped to a layer type (``(block, type)``
    pairs); the list repeats when it is shorter than the layer count (RecurrentGemma)."""

    key: str
    mapping: tuple[tuple[str, str], ...]



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
        default_rope_partial: whether the family's ``"default"`` rope reads
            ``partial_rotary_factor``. ``False`` where its rotary module's own
            ``compute_default_rope_parameters`` builds frequencies over the whole head
            (Llama's, copied into most families; DeepSeek's over the whole MLA rope slice)
            although the config class moves a top-level factor into the RoPE dict: the
            factor is then ignored (reported in ``LayerSpec.ignored``); the other rope
            types (``ROPE_INIT_FUNCTIONS``) read it everywhere. Set from
            ``_DEFAULT_ROPE_IGNORES_PARTIAL``.
        head_dim_key: the config key that holds the rotated head's width
            (``"qk_rope_head_dim"`` for MLA: the rope slice is a head of its own).
        full_head_dim: ``(key, key)`` whose sum is the whole q/k head when
            ``head_dim_key`` names only the rope slice (MLA: nope + rope).
        layer_pattern: how ``layer_types`` is derived when a config has none — ``None``
            (every layer ``"full_attention"``, or ``"sliding_attention"`` if the config has
            a ``sliding_window`` and ``use_sliding_window`` is not false);
            ``Every`` (a period read from a key: layer
            ``i`` is full iff ``(i + 1 + offset) % config[key] == 0``, else ``other``);
            ``AllLayers`` (every layer one type: Falcon-H1's
            ``"hybrid"``); or ``"listed"``: the family's pattern is not encoded here, so a
            config without ``layer_types`` is refused by name.
        last_layer_full: the config class forces the last layer to ``"full_attention"``
            (Gemma 4).
        nope_flags: ``NopeFlags`` — ``config[key][i] == 0``
            marks a layer **without** RoPE (SmolLM3, Llama 4: 1 = uses RoPE); without the
            list, every ``interval``-th layer is NoPE.
        nope_types: layer types that carry no RoPE (Cohere 2's and EXAONE 4's global
            layers; linear-attention and state-space layers of hybrids).
        block_types_key: ``BlockTypes`` for hybrids that list
            blocks under another key (``layers_block_type``): each entry is mapped to a layer type.
        flat_rope_types: for a flat (not per-type) RoPE dict, the layer types it applies to;
            the other types get the default rope with the same ``rope_theta`` (OLMo 3
            scales full-attention layers only). ``None``: every type.
        type_bases: ``TypeBase`` entries — a per-type
            ``rope_theta`` read from its own config key (Gemma 3's
            ``rope_local_base_freq``, ModernBERT's ``local_rope_theta`` /
            ``global_rope_theta``).
        type_head_dim: ``TypeHeadDim`` entries — a per-type
            head width (Gemma 4's ``global_head_dim``).
        window_offset: added to ``config.sliding_window`` to give the keys a query sees,
            itself included (bidirectional encoders that see ``w`` on each side: ``+1``).
        window_divisor: the window is ``config[window_key] // window_divisor`` before the
            offset (ModernBERT's ``local_attention`` is the full two-sided width).
        window_key: the config key of the window; ``None`` where the attention never
            receives it (Moshi stores ``sliding_window`` but passes ``None``).
        window_every_layer: the model applies ``config[window_key]`` to every layer, not
            only to the ``"sliding_attention"`` ones (MiniMax builds one sliding-window
            mask for all layers from ``sliding_window`` although ``layer_types`` lists full
            and linear-attention layers).
        rotary_dim_key: a top-level key that fixes the rotated width (GPT-J, CodeGen's
            ``rotary_dim``); other families ignore such a key.
        hardcoded_base: the base of frequencies the modeling code builds whatever the
            config's RoPE keys say (GPT-J and CodeGen's ``create_sinusoidal_positions``:
            10000, no scaling); ``rope_theta`` and the RoPE dict are then ignored (reported
            in ``LayerSpec.ignored``). ``None``: the config's RoPE keys are read.
        default_rope_parameters: the RoPE dict the config class sets when a file has none
            (``rope_parameters`` missing or null and no legacy ``rope_scaling``: Apertus's
            ``llama3`` scaling, Ministral 3's YaRN), as ``((key, value), …)``; it carries
            its own ``rope_theta``, so a top-level one is not read (the class only
            ``setdefault``s it into the dict). Set from ``_CLASS_ROPE_DICTS``.
        legacy_type_shadowed: the config class updates a default ``{"rope_type":
            "default"}`` with a legacy ``rope_scaling`` dict (Gemma 3, Gemma 3n, OLMo 3,
            ModernBERT's ``convert_rope_params_to_dict``), so a dict that spells its type
            with the old ``type`` key keeps ``rope_type`` ``"default"``: no scaling (the
            other keys are ignored, reported in ``LayerSpec.ignored``).
        reads_rope_scaling: whether the config class turns a legacy ``rope_scaling`` into
            the RoPE dict. ``False`` where it keeps ``rope_scaling`` as a plain field that
            nothing reads (Cohere 2 MoE: ``Cohere2MoeConfig`` has no ``rope_parameters``
            and its ``standardize_rope_params`` finds none): the default rope with
            ``rope_theta``, ``rope_scaling`` reported in ``LayerSpec.ignored``.
        top_level_rope: the top-level keys the config class moves into the RoPE dict
            (the mixin's ``convert_rope_params_to_dict``: ``rope_theta`` and
            ``partial_rotary_factor``). ``()`` where the class overrides it with a no-op
            (Mellum, Laguna, MiMo-V2-Flash, Gemma 4: "no old-format rope_scaling"): only the
            RoPE dict's own values count; Step 3.5 reads ``rope_theta`` but a per-layer
            ``partial_rotary_factors`` list, never the singular key.
        attention_types: layer types beyond
            :data:`~posenc.hf_config.families.ATTENTION_TYPES` that rotate q and k (Zaya's
            ``"hybrid"`` layers).
        mask_types: the layer types the model builds an attention mask for (its
            ``causal_mask_mapping``), where that is not every type a config may list: a
            listed type outside it is refused (Unlimited-OCR has no ``"sliding_attention"``
            mask). ``None``: not restricted.
        nope_index_key: a config key listing the indices of layers without RoPE (Mllama's
            ``cross_attention_layers``).
        attention_index_key: a config key listing the indices of the attention layers of
            an SSM hybrid (Bamba's ``attn_layer_indices``); the others are
            ``"linear_attention"``.
        default_theta: ``rope_theta`` when neither the RoPE dict nor the top level gives
            one: the config class's ``default_theta`` (or its ``rope_theta`` field's
            default), 10000 unless the class says otherwise; per-type bases are in
            :attr:`type_bases` (``tests/test_hf_config.py`` checks every record against its
            class).
        rope_type_aliases: ``((old, new), …)`` — legacy ``rope_type`` names the config
            class renames (Phi-3's ``"su"`` and ``"yarn"`` mean ``"longrope"``; Qwen2-VL's
            ``"mrope"`` means ``"default"``); elsewhere such a name is refused as unknown.
        defaults: ``((key, value), …)`` — position keys the config class fills in when a
            config.json leaves them out (a ``head_dim`` of 128 where ``hidden_size //
            num_attention_heads`` says otherwise, Mistral's ``sliding_window`` 4096); set on
            the dict before anything else reads it (from ``_CLASS_DEFAULTS``).
        translate: a named function ``(config dict) -> None`` that renames legacy keys the
            way the family's config class does in its constructor (MiniMax-M2's
            ``rotary_dim`` becomes ``partial_rotary_factor``; LFM2's ``full_attn_idxs``
            becomes ``layer_types``); it changes the dict in place and leaves a dict that
            already carries the new keys as it is.
        rope_rule: a named function ``(config dict, layer_types, flags) -> flags`` that
            decides which layers rotate where the modeling code reads a switch
            (Zamba 2's ``use_mem_rope``; Granite-H's ``position_embedding_type``; EXAONE 4's
            global layers rotate when ``sliding_window`` is null).
        interleave_switch: ``(key, default)`` — a config key that picks the pairing: true
            gives :attr:`layout`, false the ``"half"`` layout (DeepSeek's
            ``rope_interleave``).
        query_temperature: Llama 4's NoPE-layer query temperature
            (:func:`posenc.attention.llama4_attn_scale`) is on.
        query_scale_key: a RoPE-dict key that scales queries on every layer by position
            (Ministral 3's ``llama_4_scaling_beta``).
        ignored_keys: RoPE-dict keys ``transformers`` accepts but this family's code never
            reads, with the reason (reported in :class:`~posenc.hf_config.LayerSpec`'s
            ``ignored`` field instead of raised).
        ntk_alpha_key: a RoPE-dict key that turns ``"dynamic"`` into a static NTK-aware
            base ``rope_theta · alpha^(d/(d−2))`` (Hunyuan's ``alpha``).
        length_mscale: ``(short key, long key)`` — LongRoPE attention factors chosen by
            length (Phi-MoE's ``short_mscale`` / ``long_mscale``); ``transformers`` keeps the
            short factors at every length there (see the family's note).
        aliases: ``((standard key, family key), …)`` — the config class's
            ``attribute_map`` (GPT-J's ``n_layer`` for ``num_hidden_layers``).
        refuse: a reason why ``posenc`` cannot represent this family; reading it raises.
        note: a remark for the atlas (e.g. where ``transformers`` looks wrong against the
            paper or reference code).
    """

    layout: str = "half"
    channels: str = "leading"
    partial_rotary_factor: float | None = None
    default_rope_partial: bool = True
    head_dim_key: str | None = None
    full_head_dim: tuple[str, str] | None = None
    layer_pattern: Every | AllLayers | str | None = None
    last_layer_full: bool = False
    nope_flags: NopeFlags | None = None
    nope_types: frozenset[str] = frozenset()
    block_types_key: BlockTypes | None = None
    flat_rope_types: frozenset[str] | None = None
    type_bases: tuple[TypeBase, ...] = ()
    type_head_dim: tuple[TypeHeadDim, ...] = ()
    window_offset: int = 0
    window_divisor: int = 1
    window_key: str | None = "sliding_window"
    window_every_layer: bool = False
    rotary_dim_key: str | None = None
    hardcoded_base: float | None = None
    default_rope_parameters: tuple[tuple[str, object], ...] = ()
    legacy_type_shadowed: bool = False
    reads_rope_scaling: bool = True
    top_level_rope: tuple[str, ...] = ("rope_theta", "partial_rotary_factor")
    attention_types: frozenset[str] = frozenset()
    mask_types: frozenset[str] | None = None
    nope_index_key: str | None = None
    attention_index_key: str | None = None
    default_theta: float = 10_000.0
    rope_type_aliases: tuple[tuple[str, str], ...] = ()
    defaults: tuple[tuple[str, object], ...] = ()
    translate: Callable[[dict], None] | None = None
    rope_rule: Callable[[dict, list, list], list] | None = None
    interleave_switch: tuple[str, bool] | None = None
    query_temperature: bool = False
    query_scale_key: str | None = None
    ignored_keys: tuple[tuple[str, str], ...] = ()
    ntk_alpha_key: str | None = None
    length_mscale: tuple[str, str] | None = None
    aliases: tuple[tuple[str, str], ...] = ()
    refuse: str | None = None
    note: str = ""


_MLA = Family(layout="interleaved", channels="trailing", head_dim_key="qk_rope_head_dim",
              full_head_dim=("qk_nope_head_dim", "qk_rope_head_dim"))
_INTERLEAVED = Family(layout="interleaved")
_GEMMA3 = Family(layer_pattern=Every("sliding_window_pattern", 6, 0, "sliding_attention"),
                 legacy_type_shadowed=True,
                 flat_rope_types=frozenset({"full_attention"}),
                 type_bases=(TypeBase("sliding_attention", "rope_local_base_freq", 10_000.0),
                              TypeBase("full_attention", "rope_theta", 1_000_000.0)))
_SLIDING_NOPE_GLOBAL = Family(
    layer_pattern=Every("sliding_window_pattern", 4, 0, "sliding_attention"),
    nope_types=frozenset({"full_attention"}), rope_rule=_global_rope_without_window)
_LINEAR = frozenset({"linear_attention"})
_MAX_POS_IN_DICT = (("max_position_embeddings",
                     "kept in the RoPE dict; the rotary module reads the top-level value"),)
_GPT2_KEYS = (("max_position_embeddings", "n_positions"), ("hidden_size", "n_embd"),
              ("num_attention_heads", "n_head"), ("num_hidden_layers", "n_layer"))
_DSA = Family(layout="interleaved", channels="trailing", head_dim_key="qk_rope_head_dim",
              full_head_dim=("qk_nope_head_dim", "qk_rope_head_dim"),
              attention_types=frozenset({"indexed_attention"}), layer_pattern="listed")
_NOPE_FULL = frozenset({"full_attention"})
_HYBRID = frozenset({"hybrid"})
#: DeepSeek-style MLA whose attention reads ``rope_interleave`` (default true): false
#: rotates the rope slice in halves (``apply_rotary_pos_emb`` instead of ``…_interleave``).
_MLA_SWITCH = replace(_MLA, interleave_switch=("rope_interleave", True))

_RECORDS: dict[str, Family] = {
    # --- Llama-like: every layer RoPE, half layout, whole head -------------------------
    # name: the config class's default_theta (rope_theta when a file gives none)
    **{name: Family(default_theta=theta) for name, theta in {
        "apertus": 1.2e7, "apertus1p5_text": 1.2e7, "arcee": 1e4, "aria_text": 1e4,
        "bitnet": 5e5, "cosmos3_edge_text": 1e8, "diffllama": 1e4, "doge": 1e4,
        "emu3_text_model": 1e6, "esmc": 1e4, "eurobert": 1e4, "falcon": 1e4,
        "flex_olmo": 5e5, "gemma": 1e4, "gpt_neox_japanese": 1e4, "granite": 1e4,
        "granite_docling_text": 1e4, "granitemoe": 1e4, "granitemoeshared": 1e4,
        "gte": 1.6e5, "hy_v3": 11_158_840.0, "hyperclovax": 1e4, "idefics": 1e4,
        "jais2": 1e4, "jina_embeddings_v3": 2e4, "llama": 1e4,
        "mistral": 1e4, "mixtral": 1e6, "molmo2_text": 1e4, "nomic_bert": 1e3,
        "olmo": 1e4, "olmo2": 1e4, "olmoe": 1e4,
        "qwen3_vl_text": 5e5, "seed_oss": 1e4, "solar_open": 1e6,
        "starcoder2": 1e4, "timesfm2_5": 1e4,
        "voxtral_realtime_text": 1e4,
    }.items()},
    # PaddleOCRTextConfig sets no layer_types and its attention windows only layers listed
    # "sliding_attention": without the list no layer has a window
    "paddleocr_vl_text": Family(default_theta=5e5, layer_pattern=AllLayers("full_attention")),
    # Qwen3MoeConfig.__post_init__ keeps sliding_window (default 4096) only with
    # use_sliding_window (default false); every layer then slides
    "qwen3_moe": Family(translate=_window_only_with_switch),
    # Qwen3VLMoeTextConfig.__post_init__: self.sliding_window = None, whatever the file says
    "qwen3_vl_moe_text": Family(default_theta=5e5, window_key=None),
    # Step3p7TextConfig rebuilds its RoPE dicts as {"rope_type": "default", …} updated with
    # a legacy rope_scaling on full attention (an old "type" is shadowed)
    "step3p5": Family(default_theta=1e4, legacy_type_shadowed=True,
                      flat_rope_types=_NOPE_FULL),
    # PersimmonConfig, PhiConfig, StableLmConfig.__post_init__:
    # kwargs.setdefault("partial_rotary_factor", 0.5 / 0.5 / 0.25)  # assign default for BC
    "persimmon": Family(partial_rotary_factor=0.5),
    "phi": Family(partial_rotary_factor=0.5),
    "stablelm": Family(partial_rotary_factor=0.25),
    # Phi3Config / Phi4MultimodalConfig rename the first releases' "su" and "yarn"
    **{name: Family(rope_type_aliases=(("su", "longrope"), ("yarn", "longrope")))
       for name in ("phi3", "phi4_multimodal")},
    # Qwen2-VL's text config reads its old "mrope" type as the default 1-D frequencies;
    # the Qwen2 family keeps a window only with use_sliding_window, on the upper layers
    **{name: Family(default_theta=1e6, rope_type_aliases=(("mrope", "default"),),
                    translate=_qwen2_window_layers)
       for name in ("qwen2_vl_text", "qwen2_5_vl_text")},
    "qwen2": Family(translate=_qwen2_window_layers),
    "qwen3": Family(translate=_qwen2_window_layers),
    "qwen2_5_omni_text": Family(default_theta=1e6, translate=_qwen2_window_layers),
    "qwen2_moe": Family(translate=_qwen2_moe_window_layers),
    "falcon_h1": Family(layer_pattern=AllLayers("hybrid"), attention_types=_HYBRID),
    "lfm2": Family(default_theta=1e6, nope_types=frozenset({"conv"}),
                   translate=_lfm2_full_attn_idxs),
    "minimax_m2": Family(default_theta=5e6, translate=_minimax_m2_rotary_dim),
    # MiniCPM3Config sets head_dim = qk_rope_head_dim: the rotary module's head is the slice
    "minicpm3": Family(head_dim_key="qk_rope_head_dim"),
    # --- sliding / full patterns ---------------------------------------------------------
    **{name: Family(layer_pattern="listed") for name in (
        "laguna", "mellum", "vaultgemma",
    )},
    "mimo_v2_flash": Family(layer_pattern="listed", translate=_mimo_window_size),
    # a base per layer (0: no positions), decided by the model, not the attention
    **{name: Family(layer_pattern="listed", translate=_layer_theta_per_layer,
                    rope_rule=_nope_where_theta_zero)
       for name in ("granite_swa", "granitemoe_swa")},
    **{name: Family(layer_pattern="listed", rope_rule=_muse_nope_layers)
       for name in ("muse_glimmer_text", "muse_spark_text")},
    "cwm": Family(layer_pattern="listed", default_theta=1e6),
    "gemma3n_text": replace(_GEMMA3, layer_pattern="listed"),
    "modernbert-decoder": Family(
        legacy_type_shadowed=True, translate=_modernbert_decoder_window,
        layer_pattern=Every("global_attn_every_n_layers", 3, -1, "sliding_attention"),
        type_bases=(TypeBase("sliding_attention", "local_rope_theta", 10_000.0),
                     TypeBase("full_attention", "global_rope_theta", 160_000.0))),
    "gemma2": Family(layer_pattern=Every(None, 2, 0, "sliding_attention")),
    "gemma3_text": _GEMMA3,
    **{name: Family(layer_pattern=Every(None, 6, 0, "sliding_attention"),
                    last_layer_full=True, translate=_gemma4_global_head_dim)
       for name in ("gemma4_text", "gemma4_unified_text")},
    "gpt_oss": Family(layer_pattern=Every(None, 2, 0, "sliding_attention"),
                      default_theta=150_000.0),
    "olmo3": Family(layer_pattern=Every(None, 4, 0, "sliding_attention"),
                    legacy_type_shadowed=True,
                    flat_rope_types=_NOPE_FULL, default_theta=5e5),
    "modernbert": Family(legacy_type_shadowed=True, translate=_modernbert_local_attention,
                         layer_pattern=Every("global_attn_every_n_layers", 3, -1,
                                        "sliding_attention"), window_key="local_attention",
                         window_divisor=2, window_offset=1,
                         type_bases=(TypeBase("sliding_attention", "local_rope_theta", 10_000.0),
                                      TypeBase("full_attention", "global_rope_theta", 160_000.0))),
    "ultrabert": Family(layer_pattern="listed", window_offset=1),
    "neomme": Family(layer_pattern="listed", window_offset=1, translate=_neomme_translate),
    "moshi": Family(window_key=None,
                    note="config.sliding_window is stored on the attention module but the "
                         "attention function receives None (eager and masks: causal)"),
    # --- NoPE layers ---------------------------------------------------------------------
    "smollm3": Family(nope_flags=NopeFlags("no_rope_layers", "no_rope_layer_interval", 4),
                      translate=_smollm3_layer_types,
                      default_theta=2e6),
    "cohere2": Family(layout="interleaved", nope_types=_NOPE_FULL,
                      layer_pattern=Every("sliding_window_pattern", 4, 0,
                                     "sliding_attention"), rope_rule=_rope_only_with_window),
    # Cohere2MoeConfig keeps rope_scaling as a field that nothing reads
    "cohere2_moe": Family(layout="interleaved", nope_types=_NOPE_FULL, layer_pattern="listed",
                          reads_rope_scaling=False,
                          translate=_cohere2_moe_prefix, rope_rule=_cohere2_moe_rope),
    "exaone4": _SLIDING_NOPE_GLOBAL,
    "exaone_moe": _SLIDING_NOPE_GLOBAL,
    "afmoe": Family(nope_types=_NOPE_FULL,
                    layer_pattern=Every("global_attn_every_n_layers", 4, 0,
                                   "sliding_attention")),
    "flint": Family(nope_types=_NOPE_FULL, layer_pattern="listed",
                    rope_rule=_rope_only_with_window),
    "kolibri1": Family(nope_types=_NOPE_FULL,
                       layer_pattern=Every(None, 5, 0, "sliding_attention"),
                       rope_rule=_global_rope_without_window),
    "mllama_text_model": Family(nope_index_key="cross_attention_layers", default_theta=5e5,
                                translate=_mllama_cross_layers),
    "llama4_text": Family(layout="interleaved",
                          nope_flags=NopeFlags("no_rope_layers", "no_rope_layer_interval", 4),
                          query_temperature=True, default_theta=5e5,
                          translate=_llama4_layer_types),
    # --- linear-attention / SSM hybrids (no positions in those blocks) ------------------
    "qwen3_next": Family(nope_types=_LINEAR, partial_rotary_factor=0.25,
                         layer_pattern=Every("full_attention_interval", 4, 0,
                                        "linear_attention")),
    "qwen3_5_text": Family(nope_types=_LINEAR, partial_rotary_factor=0.25,
                           layer_pattern=Every("full_attention_interval", 4, 0,
                                          "linear_attention")),
    "qwen3_5_moe_text": Family(nope_types=_LINEAR, partial_rotary_factor=0.25,
                               layer_pattern=Every("full_attention_interval", 4, 0,
                                              "linear_attention")),
    "bailing_hybrid": Family(layout="interleaved", channels="trailing",
                             head_dim_key="qk_rope_head_dim",
                             full_head_dim=("qk_nope_head_dim", "qk_rope_head_dim"),
                             nope_types=_LINEAR, default_theta=6e6,  # its rope_theta field
                             layer_pattern=Every("layer_group_size", 6, 0,
                                            "linear_attention")),
    "olmo_hybrid": Family(nope_types=_LINEAR,
                          layer_pattern=Every(None, 4, 0, "linear_attention")),
    # MiniMaxModel builds one sliding-window mask for every layer from config.sliding_window
    # (and its attention passes the window) whatever layer_types says
    "minimax": Family(nope_types=_LINEAR, layer_pattern=Every(None, 2, 1,
                                                         "linear_attention"),
                      default_theta=1e6, window_every_layer=True),
    "lara_mini": Family(nope_types=_LINEAR, layer_pattern="listed"),
    "bamba": Family(nope_types=_LINEAR, translate=_bamba_half_rotary,
                    attention_index_key="attn_layer_indices"),
    "granitemoehybrid": Family(nope_types=_LINEAR, layer_pattern="listed",
                               aliases=(("layer_types", "layers_block_type"),),
                               rope_rule=_rope_if_embedding_type_rope),
    # RecurrentGemmaConfig.attribute_map: a file's "sliding_window" is attention_window_size
    "recurrent_gemma": Family(nope_types=_LINEAR, partial_rotary_factor=0.5,
                              window_key="attention_window_size",
                              aliases=(("attention_window_size", "sliding_window"),),
                              block_types_key=BlockTypes("block_types", (
                                  ("recurrent", "linear_attention"),
                                  ("attention", "sliding_attention")))),
    "lfm3": Family(nope_types=frozenset({"conv"}), layer_pattern="listed", default_theta=1e6),
    # Zamba2Config renames a "mamba" block to "linear_attention"
    "zamba2": Family(nope_types=_LINEAR, attention_types=_HYBRID, rope_rule=_zamba2_mem_rope,
                     translate=_zamba2_layer_types,
                     block_types_key=BlockTypes("layers_block_type", (
                         ("linear_attention", "linear_attention"), ("hybrid", "hybrid"),
                         ("mamba", "linear_attention")))),
    "zaya": Family(attention_types=_HYBRID, layer_pattern="listed"),
    # UnlimitedOcrTextModel.forward's causal_mask_mapping has these two keys only
    "unlimited_ocr_text": Family(attention_types=frozenset({"reference_sliding_attention"}),
                                 layer_pattern="listed", translate=_head_dim_from_hidden,
                                 mask_types=frozenset({"full_attention",
                                                       "reference_sliding_attention"})),
    # --- interleaved pairs -----------------------------------------------------------------
    "cohere": replace(_INTERLEAVED, default_theta=5e5),
    "ernie4_5": replace(_INTERLEAVED, default_theta=5e5),
    "ernie4_5_moe": replace(_INTERLEAVED, default_theta=5e5),
    "ernie4_5_vl_moe_text": replace(_INTERLEAVED, default_theta=5e5),
    "glm_ocr_text": _INTERLEAVED,
    "helium": replace(_INTERLEAVED, default_theta=1e5),
    "glm": Family(layout="interleaved", partial_rotary_factor=0.5),
    "glm4": Family(layout="interleaved", partial_rotary_factor=0.5),
    # GLM-4-MoE pairs halves (its apply_rotary_pos_emb uses rotate_half), unlike GLM-4
    "glm4_moe": Family(partial_rotary_factor=0.5),
    # GPT-J, CodeGen: create_sinusoidal_positions(max_positions, rotary_dim) hard-codes
    # base 10000 and no scaling; the config class keeps any RoPE keys but nothing reads them
    **{name: Family(layout="interleaved", rotary_dim_key="rotary_dim", aliases=_GPT2_KEYS,
                    hardcoded_base=10_000.0) for name in ("gptj", "codegen")},
    # --- MLA: a decoupled rope slice at the end of each head ------------------------------
    "deepseek_v2": _MLA,
    "deepseek_v3": _MLA_SWITCH,
    # Glm4MoeLiteConfig.attribute_map: a config.json "head_dim" is qk_rope_head_dim
    "glm4_moe_lite": replace(_MLA_SWITCH, aliases=(("qk_rope_head_dim", "head_dim"),)),
    "youtu": _MLA_SWITCH,
    "axk1": _MLA_SWITCH,
    # --- DeepSeek sparse attention (an indexer picks the keys; MLA rope slice) ------------
    "deepseek_v32": _DSA,
    "glm_moe_dsa": _DSA,
    "axk2": _DSA,
    "mistral_large4_text": Family(
        layout="interleaved", channels="trailing", head_dim_key="qk_rope_head_dim",
        full_head_dim=("qk_nope_head_dim", "qk_rope_head_dim"),
        attention_types=frozenset({"indexed_attention"}), layer_pattern="listed",
        nope_flags=NopeFlags("no_rope_layers", "no_rope_layer_interval", 4)),
    # --- partial rotation ----------------------------------------------------------------
    "gpt_neox": Family(partial_rotary_factor=0.25, translate=_gpt_neox_one_head_size),
    "ministral": Family(),
    "minimax_m3_vl_text": Family(default_theta=5e6),
    # --- scaling rules of their own ----------------------------------------------------------
    **{name: Family(ntk_alpha_key="alpha") for name in (
        "hunyuan_v1_dense", "hunyuan_v1_moe")},
    "phimoe": Family(length_mscale=("short_mscale", "long_mscale"), default_theta=1e6,
                     note="transformers 5.24's PhimoeRotaryEmbedding.forward rebuilds "
                          "inv_freq without the sequence length, so LongRoPE's short "
                          "factors apply at every length while the attention factor "
                          "switches to long_mscale past original_max_position_embeddings; "
                          "the LongRoPE rule switches both (posenc matches transformers)"),
    # --- a query scale by position on every layer (Ministral 3's llama_4_scaling_beta) -----
    "ministral3": Family(query_scale_key="llama_4_scaling_beta", ignored_keys=_MAX_POS_IN_DICT),
    "mistral4": Family(layout="interleaved", channels="trailing",
                       query_scale_key="llama_4_scaling_beta", ignored_keys=_MAX_POS_IN_DICT,
                       interleave_switch=("rope_interleave", True),
                       translate=_mistral4_mla_head),
    # --- refused ---------------------------------------------------------------------------
    "nanochat": Family(refuse="its rotate_half flips the signs (x2, -x1), so it rotates by "
                              "-theta; posenc rotates by +theta as RoFormer and Llama do"),
    "hrm_text": Family(refuse="the hierarchical reasoning model applies its layer stacks "
                              "recurrently; num_hidden_layers is not the layer list"),
    "longcat_flash": Family(refuse="each layer holds two MLA attention blocks; posenc "
                                   "lists one spec per layer"),
    "dory": Family(refuse="its layer list interleaves attention and recurrent MLP blocks "
                           "(n_input_layers, n_recurrent_layers, n_output_layers) that "
                           "num_hidden_layers does not describe"),
    "deepseek_v4": Family(refuse="its compressed-attention layers (CSA/HCA) attend to "
                                 "compressed keys placed at block positions and share one "
                                 "rotated K = V head; a per-layer LayerSpec cannot describe "
                                 "them (chapter 5 works through its sliding layers)"),
    "dots3_note_text": Family(refuse="its MLA rope slice is rotated at full width although "
                                     "the RoPE dict carries a partial_rotary_factor; posenc "
                                     "has not pinned down which rule sets the frequencies"),
    "evolla": Family(refuse="a protein model whose SaProt encoder and decoder stacks have "
                            "different widths; posenc reads one decoder layer list"),
    "t5_gemma_module": Family(refuse="an encoder-decoder model; posenc reads decoder-only "
                                     "layer lists"),
    "hy_v4": Family(refuse="its shared sparse-attention layers reuse the top-k indices of an "
                           "earlier layer, so the sweep cannot run them one at a time and "
                           "posenc has not checked this family against transformers"),
    "hy_v4_vl_text": Family(refuse="as hy_v4: shared sparse-attention layers the sweep cannot "
                                   "run one at a time; not checked against transformers"),
    "qwen3_omni_moe_text": Family(refuse="its thinker attention does not run on the meta "
                                         "device with 1-D positions, so the sweep cannot "
                                         "observe it and posenc has not checked it against "
                                         "transformers"),
    "jetmoe": Family(refuse="its attention cannot run on the meta device, so the sweep "
                            "cannot observe it and posenc has not checked it against "
                            "transformers"),
}

#: ``model_type`` -> :class:`Family`. Families not listed are refused by name.
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
