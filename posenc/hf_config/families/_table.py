"""Every family record: one :class:`Family` per ``model_type``, grouped by what it does.

``_RECORDS`` holds the records as written (comments name the ``transformers`` code a
record follows), built from a few shared templates (``_MLA``, ``_GEMMA3``, ``_DSA`` …) and
the named rules of ``hf_config._rules``. :data:`~posenc.hf_config.families.FAMILIES` is
this table with the config classes' facts (``hf_config._class_facts``) filled in.
"""

from __future__ import annotations

from dataclasses import replace

from .._rules import (
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
from ._record import AllLayers, BlockTypes, Every, Family, NopeFlags, TypeBase

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
