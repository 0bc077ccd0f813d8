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

from dataclasses import dataclass
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
            a ``sliding_window`` and ``use_sliding_window`` is not false);
            ``("every", key, default, offset, other)``: layer ``i`` is full iff
            ``(i + 1 + offset) % config[key] == 0`` (``key`` may be ``None`` for a fixed
            ``default``), else ``other``; or ``"listed"``: the family's pattern is not
            encoded here, so a config without ``layer_types`` is refused by name.
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
        window_divisor: the window is ``config[window_key] // window_divisor`` before the
            offset (ModernBERT's ``local_attention`` is the full two-sided width).
        window_key: the config key of the window; ``None`` where the attention never
            receives it (Moshi stores ``sliding_window`` but passes ``None``).
        rotary_dim_key: a top-level key that fixes the rotated width (GPT-J, CodeGen's
            ``rotary_dim``); other families ignore such a key.
        attention_types: layer types beyond
            :data:`~posenc.hf_config.families.ATTENTION_TYPES` that rotate q and k (Zaya's
            ``"hybrid"`` layers).
        nope_index_key: a config key listing the indices of layers without RoPE (Mllama's
            ``cross_attention_layers``).
        attention_index_key: a config key listing the indices of the attention layers of
            an SSM hybrid (Bamba's ``attn_layer_indices``); the others are
            ``"linear_attention"``.
        rope_switch: ``(key, default)`` — RoPE is on only when ``config[key]`` is true
            (Zamba 2's ``use_mem_rope``, default false).
        query_temperature: Llama 4's NoPE-layer query temperature
            (:func:`posenc.attention.llama4_attn_scale`) is on.
        query_scale_key: a RoPE-dict key that scales queries on every layer by position
            (Ministral 3's ``llama_4_scaling_beta``).
        values_rotated: the values carry RoPE too (DeepSeek-V4: K = V).
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
    window_divisor: int = 1
    window_key: str | None = "sliding_window"
    rotary_dim_key: str | None = None
    attention_types: frozenset[str] = frozenset()
    nope_index_key: str | None = None
    attention_index_key: str | None = None
    rope_switch: tuple[str, bool] | None = None
    query_temperature: bool = False
    query_scale_key: str | None = None
    values_rotated: bool = False
    ignored_keys: tuple[tuple[str, str], ...] = ()
    ntk_alpha_key: str | None = None
    length_mscale: tuple[str, str] | None = None
    aliases: tuple[tuple[str, str], ...] = ()
    refuse: str | None = None
    note: str = ""


_LLAMA = Family()
_MLA = Family(layout="interleaved", channels="trailing", head_dim_key="qk_rope_head_dim",
              full_head_dim=("qk_nope_head_dim", "qk_rope_head_dim"))
_INTERLEAVED = Family(layout="interleaved")
_GEMMA3 = Family(layer_pattern=("every", "sliding_window_pattern", 6, 0, "sliding_attention"),
                 flat_rope_types=frozenset({"full_attention"}),
                 type_bases=(("sliding_attention", "rope_local_base_freq", 10_000.0),
                             ("full_attention", "rope_theta", 1_000_000.0)))
_SLIDING_NOPE_GLOBAL = Family(
    layer_pattern=("every", "sliding_window_pattern", 4, 0, "sliding_attention"),
    nope_types=frozenset({"full_attention"}))
_LINEAR = frozenset({"linear_attention"})
_MAX_POS_IN_DICT = (("max_position_embeddings",
                     "kept in the RoPE dict; the rotary module reads the top-level value"),)
_GPT2_KEYS = (("max_position_embeddings", "n_positions"), ("hidden_size", "n_embd"),
              ("num_attention_heads", "n_head"), ("num_hidden_layers", "n_layer"))
_DSA = Family(layout="interleaved", channels="trailing", head_dim_key="qk_rope_head_dim",
              full_head_dim=("qk_nope_head_dim", "qk_rope_head_dim"),
              attention_types=frozenset({"indexed_attention"}), layer_pattern="listed")
_NOPE_FULL = frozenset({"full_attention"})

#: ``model_type`` -> :class:`Family`. Families not listed are refused by name.
FAMILIES: MappingProxyType[str, Family] = MappingProxyType({
    # --- Llama-like: every layer RoPE, half layout, whole head -------------------------
    **{name: _LLAMA for name in (
        "apertus", "apertus1p5_text", "arcee", "aria_text", "bitnet",
        "cosmos3_edge_text", "diffllama", "doge", "emu3_text_model", "esmc", "eurobert",
        "falcon", "falcon_h1", "flex_olmo", "gemma", "gpt_neox_japanese", "granite",
        "granite_docling_text", "granitemoe", "granitemoeshared", "gte", "hy_v3",
        "hyperclovax", "idefics", "jais2", "jina_embeddings_v3", "lfm2", "llama",
        "minicpm3", "minimax_m2", "mistral", "mixtral", "molmo2_text", "nomic_bert",
        "olmo", "olmo2", "olmoe", "paddleocr_vl_text", "persimmon", "phi", "phi3",
        "phi4_multimodal", "qwen2", "qwen2_5_omni_text", "qwen2_5_vl_text", "qwen2_moe",
        "qwen2_vl_text", "qwen3", "qwen3_moe", "qwen3_vl_moe_text", "qwen3_vl_text",
        "seed_oss", "solar_open", "stablelm", "starcoder2", "step3p5", "step3p7",
        "timesfm2_5", "voxtral_realtime_text",
    )},
    # --- sliding / full patterns ---------------------------------------------------------
    **{name: Family(layer_pattern="listed") for name in (
        "cwm", "granite_swa", "granitemoe_swa", "laguna", "mellum", "mimo_v2_flash",
        "muse_glimmer_text", "muse_spark_text", "vaultgemma", "modernbert-decoder",
        "gemma3n_text",
    )},
    "gemma2": Family(layer_pattern=("every", None, 2, 0, "sliding_attention")),
    "gemma3_text": _GEMMA3,
    **{name: Family(layer_pattern=("every", None, 6, 0, "sliding_attention"),
                    last_layer_full=True,
                    type_head_dim=(("full_attention", "global_head_dim", 512),))
       for name in ("gemma4_text", "gemma4_unified_text")},
    "gpt_oss": Family(layer_pattern=("every", None, 2, 0, "sliding_attention")),
    "olmo3": Family(layer_pattern=("every", None, 4, 0, "sliding_attention"),
                    flat_rope_types=_NOPE_FULL),
    "modernbert": Family(layer_pattern=("every", "global_attn_every_n_layers", 3, -1,
                                        "sliding_attention"), window_key="local_attention",
                         window_divisor=2, window_offset=1,
                         type_bases=(("sliding_attention", "local_rope_theta", 10_000.0),
                                     ("full_attention", "global_rope_theta", 160_000.0))),
    "ultrabert": Family(layer_pattern="listed", window_offset=1),
    "neomme": Family(layer_pattern="listed", window_offset=1),
    "moshi": Family(window_key=None,
                    note="config.sliding_window is stored on the attention module but the "
                         "attention function receives None (eager and masks: causal)"),
    # --- NoPE layers ---------------------------------------------------------------------
    "smollm3": Family(nope_flags=("no_rope_layers", "no_rope_layer_interval", 4)),
    "cohere2": Family(layout="interleaved", nope_types=_NOPE_FULL,
                      layer_pattern=("every", "sliding_window_pattern", 4, 0,
                                     "sliding_attention")),
    "cohere2_moe": Family(layout="interleaved", nope_types=_NOPE_FULL, layer_pattern="listed"),
    "exaone4": _SLIDING_NOPE_GLOBAL,
    "exaone_moe": _SLIDING_NOPE_GLOBAL,
    "afmoe": Family(nope_types=_NOPE_FULL,
                    layer_pattern=("every", "global_attn_every_n_layers", 4, 0,
                                   "sliding_attention")),
    "flint": Family(nope_types=_NOPE_FULL, layer_pattern="listed"),
    "kolibri1": Family(nope_types=_NOPE_FULL,
                       layer_pattern=("every", None, 5, 0, "sliding_attention")),
    "mllama_text_model": Family(nope_index_key="cross_attention_layers"),
    "llama4_text": Family(layout="interleaved",
                          nope_flags=("no_rope_layers", "no_rope_layer_interval", 4),
                          query_temperature=True),
    # --- linear-attention / SSM hybrids (no positions in those blocks) ------------------
    "qwen3_next": Family(nope_types=_LINEAR, partial_rotary_factor=0.25,
                         layer_pattern=("every", "full_attention_interval", 4, 0,
                                        "linear_attention")),
    "qwen3_5_text": Family(nope_types=_LINEAR, partial_rotary_factor=0.25,
                           layer_pattern=("every", "full_attention_interval", 4, 0,
                                          "linear_attention")),
    "qwen3_5_moe_text": Family(nope_types=_LINEAR, partial_rotary_factor=0.25,
                               layer_pattern=("every", "full_attention_interval", 4, 0,
                                              "linear_attention")),
    "bailing_hybrid": Family(layout="interleaved", channels="trailing",
                             head_dim_key="qk_rope_head_dim",
                             full_head_dim=("qk_nope_head_dim", "qk_rope_head_dim"),
                             nope_types=_LINEAR,
                             layer_pattern=("every", "layer_group_size", 6, 0,
                                            "linear_attention")),
    "olmo_hybrid": Family(nope_types=_LINEAR,
                          layer_pattern=("every", None, 4, 0, "linear_attention")),
    "minimax": Family(nope_types=_LINEAR, layer_pattern=("every", None, 2, 1,
                                                         "linear_attention")),
    "lara_mini": Family(nope_types=_LINEAR, layer_pattern="listed"),
    "bamba": Family(nope_types=_LINEAR, partial_rotary_factor=0.5,
                    attention_index_key="attn_layer_indices"),
    "granitemoehybrid": Family(nope_types=_LINEAR, layer_pattern="listed"),
    "recurrent_gemma": Family(nope_types=_LINEAR, partial_rotary_factor=0.5,
                              window_key="attention_window_size",
                              block_types_key=("block_types", (
                                  ("recurrent", "linear_attention"),
                                  ("attention", "sliding_attention")))),
    "lfm3": Family(nope_types=frozenset({"conv"}), layer_pattern="listed"),
    "zamba2": Family(nope_types=_LINEAR, attention_types=frozenset({"hybrid"}),
                     rope_switch=("use_mem_rope", False),
                     block_types_key=("layers_block_type", (
                         ("linear_attention", "linear_attention"), ("hybrid", "hybrid")))),
    "zaya": Family(attention_types=frozenset({"hybrid"}), layer_pattern="listed"),
    "unlimited_ocr_text": Family(attention_types=frozenset({"reference_sliding_attention"}),
                                 layer_pattern="listed"),
    # --- interleaved pairs -----------------------------------------------------------------
    "cohere": _INTERLEAVED,
    "ernie4_5": _INTERLEAVED,
    "ernie4_5_moe": _INTERLEAVED,
    "ernie4_5_vl_moe_text": _INTERLEAVED,
    "glm_ocr_text": _INTERLEAVED,
    "helium": _INTERLEAVED,
    "glm": Family(layout="interleaved", partial_rotary_factor=0.5),
    "glm4": Family(layout="interleaved", partial_rotary_factor=0.5),
    "glm4_moe": Family(layout="interleaved", partial_rotary_factor=0.5),
    "gptj": Family(layout="interleaved", rotary_dim_key="rotary_dim", aliases=_GPT2_KEYS),
    "codegen": Family(layout="interleaved", rotary_dim_key="rotary_dim", aliases=_GPT2_KEYS),
    # --- MLA: a decoupled rope slice at the end of each head ------------------------------
    "deepseek_v2": _MLA,
    "deepseek_v3": _MLA,
    "glm4_moe_lite": _MLA,
    "youtu": _MLA,
    "axk1": _MLA,
    # --- DeepSeek sparse attention (an indexer picks the keys; MLA rope slice) ------------
    "deepseek_v32": _DSA,
    "glm_moe_dsa": _DSA,
    "axk2": _DSA,
    "mistral_large4_text": Family(
        layout="interleaved", channels="trailing", head_dim_key="qk_rope_head_dim",
        full_head_dim=("qk_nope_head_dim", "qk_rope_head_dim"),
        attention_types=frozenset({"indexed_attention"}), layer_pattern="listed",
        nope_flags=("no_rope_layers", "no_rope_layer_interval", 4)),
    # --- partial rotation ----------------------------------------------------------------
    "gpt_neox": Family(partial_rotary_factor=0.25),
    "minimax_m3_vl_text": _LLAMA,
    # --- scaling rules of their own ----------------------------------------------------------
    **{name: Family(ntk_alpha_key="alpha") for name in (
        "hunyuan_v1_dense", "hunyuan_v1_moe", "hunyuan_vl_text")},
    "phimoe": Family(length_mscale=("short_mscale", "long_mscale"),
                     note="transformers 5.24's PhimoeRotaryEmbedding.forward rebuilds "
                          "inv_freq without the sequence length, so LongRoPE's short "
                          "factors apply at every length while the attention factor "
                          "switches to long_mscale past original_max_position_embeddings; "
                          "the LongRoPE rule switches both (posenc matches transformers)"),
    # --- a query scale by position on every layer (Ministral 3's llama_4_scaling_beta) -----
    "ministral3": Family(query_scale_key="llama_4_scaling_beta", ignored_keys=_MAX_POS_IN_DICT),
    "mistral4": Family(layout="interleaved", channels="trailing",
                       query_scale_key="llama_4_scaling_beta", ignored_keys=_MAX_POS_IN_DICT),
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
})


def family(model_type: str) -> Family:
    """The :class:`Family` record of ``model_type``.

    Raises:
        ValueError: ``model_type`` is not in :data:`FAMILIES` (the message names it), or
            the family is one ``posenc`` refuses (the message gives the reason).
    """
    if not model_type:
        raise ValueError("config has no 'model_type'; posenc reads a family by its model_type")
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
