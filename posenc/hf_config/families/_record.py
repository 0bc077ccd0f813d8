"""The family record's type: :class:`Family` and the small named types of its fields.

A :class:`Family` holds the position rules of one ``model_type`` as data, with defaults
for a Llama-like decoder; its typed parts (:class:`Every`, :class:`AllLayers`,
:class:`NopeFlags`, :class:`TypeBase`, :class:`TypeHeadDim`, :class:`BlockTypes`) name
what a field's value means. The readers (``hf_config._patterns``, ``hf_config.params``,
``hf_config.layers``) interpret them; the records themselves are in ``_table``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple


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
