"""Class facts: what each family's ``transformers`` 5.24 config class and rotary module do
that its :class:`~posenc.hf_config.families.Family` record takes as data — the defaults a
``config.json`` may leave out, the RoPE dict a class sets when a file has none, which
families' default rope ignores ``partial_rotary_factor``, which top-level RoPE keys a class
moves into the RoPE dict. Merged into the records when
:data:`~posenc.hf_config.families.FAMILIES` is built; ``tests/test_hf_config.py`` and
``tests/test_hf_published.py`` check them against the classes and modules.
"""

from __future__ import annotations

#: The config classes' defaults for position keys a config.json may leave out, where they
#: are not what posenc would otherwise derive (``hidden_size // num_attention_heads``, no
#: window): ``model_type -> ((key, value), …)``, merged into each record's
#: :attr:`Family.defaults`. Read from each class's dataclass field (transformers 5.24);
#: ``tests/test_hf_config.py`` checks every record against its class, key by key.
_CLASS_DEFAULTS: dict[str, tuple[tuple[str, object], ...]] = {
    **{mt: (("qk_nope_head_dim", 128), ("qk_rope_head_dim", 64)) for mt in (
        "axk1", "bailing_hybrid", "deepseek_v2", "deepseek_v3", "deepseek_v32", "youtu")},
    **{mt: (("qk_nope_head_dim", 192), ("qk_rope_head_dim", 64)) for mt in (
        "glm4_moe_lite", "glm_moe_dsa")},
    "axk2": (("qk_nope_head_dim", 64), ("qk_rope_head_dim", 32)),
    "mistral_large4_text": (("qk_nope_head_dim", 64), ("qk_rope_head_dim", 64)),
    "minicpm3": (("qk_rope_head_dim", 32),),
    **{mt: (("head_dim", 128),) for mt in (
        "cosmos3_edge_text", "ernie4_5", "glm", "glm4", "helium", "hy_v3", "laguna",
        "mellum", "minimax_m2", "minimax_m3_vl_text", "ministral3",
        "molmo2_text", "paddleocr_vl_text", "qwen3_vl_text", "seed_oss",
        "solar_open", "step3p5", "zaya")},
    **{mt: (("head_dim", 256),) for mt in (
        "gemma", "qwen3_5_moe_text", "qwen3_5_text", "qwen3_next")},
    "timesfm2_5": (("head_dim", 80),),
    "llama4_text": (("head_dim", 128), ("attention_chunk_size", 8192)),
    # the Qwen2 family: the window and the first windowed layer (_qwen2_window_layers)
    "qwen2": (("sliding_window", 4096), ("max_window_layers", 28)),
    "qwen3": (("head_dim", 128), ("sliding_window", 4096), ("max_window_layers", 28)),
    "qwen2_5_omni_text": (("sliding_window", 32768), ("max_window_layers", 28)),
    "qwen2_vl_text": (("sliding_window", 4096), ("max_window_layers", 80)),
    "qwen2_5_vl_text": (("sliding_window", 4096), ("max_window_layers", 80)),
    "qwen2_moe": (("sliding_window", 4096), ("max_window_layers", 28)),
    **{mt: (("sliding_window", 4096),) for mt in (
        "cohere2", "exaone4", "exaone_moe", "ministral", "mistral", "olmo3",
        "voxtral_realtime_text")},
    **{mt: (("sliding_window", 128),) for mt in (
        "granite_swa", "granitemoe_swa", "ultrabert", "unlimited_ocr_text")},
    "qwen3_moe": (("sliding_window", 4096),),
    "afmoe": (("head_dim", 128), ("sliding_window", 1024)),
    "cohere2_moe": (("head_dim", 128), ("sliding_window", 4096)),
    "cwm": (("head_dim", 128), ("sliding_window", 8192)),
    "flint": (("head_dim", 128), ("sliding_window", 513)),
    "gemma2": (("head_dim", 256), ("sliding_window", 4096)),
    "gemma3_text": (("head_dim", 256), ("sliding_window", 4096)),
    "gemma3n_text": (("head_dim", 256), ("sliding_window", 512)),
    "gemma4_text": (("head_dim", 256), ("sliding_window", 512)),
    "gemma4_unified_text": (("head_dim", 256), ("sliding_window", 1024)),
    "gpt_oss": (("head_dim", 64), ("sliding_window", 128)),
    "recurrent_gemma": (("attention_window_size", 2048),
                        ("block_types", ("recurrent", "recurrent", "attention"))),
    **{mt: (("rotary_dim", 64),) for mt in ("codegen", "gptj")},
    "kolibri1": (("head_dim", 128), ("sliding_window", 513)),
    "lara_mini": (("head_dim", 128), ("sliding_window", 512)),
    "lfm3": (("head_dim", 128), ("sliding_window", 256)),
    "mimo_v2_flash": (("head_dim", 192), ("sliding_window", 129)),
    "muse_glimmer_text": (("head_dim", 128), ("sliding_window", 2048)),
    "muse_spark_text": (("head_dim", 64), ("sliding_window", 2048)),
    "neomme": (("head_dim", 64), ("sliding_window", 256)),
    "vaultgemma": (("head_dim", 256), ("sliding_window", 4096)),
}

#: Families whose rotary module's own ``compute_default_rope_parameters`` builds the
#: ``"default"`` frequencies over the whole head (``dim = head_dim``) and never reads the
#: ``partial_rotary_factor`` the config class moves into the RoPE dict (transformers 5.24;
#: ``tests/test_hf_config.py`` checks this set against each module's source, and the key
#: sweep moves the factor in every family): :attr:`Family.default_rope_partial` false.
#: Mistral 4 is not here: its class derives the factor from the MLA widths and its
#: attention rotates the trailing slice (checked by the sweep as it stands).
_DEFAULT_ROPE_IGNORES_PARTIAL = frozenset({
    'afmoe', 'apertus', 'apertus1p5_text', 'arcee', 'aria_text', 'axk1', 'axk2',
    'bailing_hybrid', 'bitnet', 'cohere', 'cohere2', 'cohere2_moe', 'cosmos3_edge_text',
    'cwm', 'deepseek_v2', 'deepseek_v3', 'deepseek_v32', 'diffllama', 'doge',
    'emu3_text_model', 'ernie4_5', 'ernie4_5_moe', 'ernie4_5_vl_moe_text', 'esmc',
    'eurobert', 'exaone4', 'exaone_moe', 'falcon', 'falcon_h1', 'flex_olmo', 'flint',
    'gemma', 'gemma2', 'gemma3_text', 'gemma3n_text', 'gemma4_text',
    'gemma4_unified_text', 'glm_moe_dsa', 'gpt_oss', 'granite', 'granite_docling_text',
    'granite_swa', 'granitemoe', 'granitemoe_swa', 'granitemoehybrid',
    'granitemoeshared', 'gte', 'helium', 'hunyuan_v1_dense', 'hunyuan_v1_moe', 'hy_v3',
    'hyperclovax', 'idefics', 'jais2', 'jina_embeddings_v3', 'kolibri1', 'lara_mini',
    'lfm2', 'lfm3', 'llama', 'llama4_text', 'minicpm3', 'minimax', 'ministral',
    'ministral3', 'mistral', 'mistral_large4_text', 'mixtral', 'mllama_text_model',
    'modernbert', 'modernbert-decoder', 'molmo2_text', 'moshi', 'muse_glimmer_text',
    'muse_spark_text', 'nomic_bert', 'olmo', 'olmo2', 'olmo3', 'olmo_hybrid', 'olmoe',
    'paddleocr_vl_text', 'phimoe', 'qwen2', 'qwen2_5_omni_text', 'qwen2_5_vl_text',
    'qwen2_moe', 'qwen2_vl_text', 'qwen3', 'qwen3_moe', 'qwen3_vl_moe_text',
    'qwen3_vl_text', 'seed_oss', 'smollm3', 'starcoder2', 'timesfm2_5', 'ultrabert',
    'unlimited_ocr_text', 'vaultgemma', 'voxtral_realtime_text', 'youtu', 'zamba2'
})

_YARN_MISTRAL = {"type": "yarn", "factor": 16.0, "original_max_position_embeddings": 16384,
                 "beta_fast": 32.0, "beta_slow": 1.0, "mscale_all_dim": 1.0, "mscale": 1.0,
                 "llama_4_scaling_beta": 0.1}
_LLAMA3_APERTUS = {"rope_type": "llama3", "rope_theta": 12_000_000.0, "factor": 8.0,
                   "original_max_position_embeddings": 8192, "low_freq_factor": 1.0,
                   "high_freq_factor": 4.0}
_GEMMA4_ROPE = {"sliding_attention": {"rope_type": "default", "rope_theta": 10_000.0},
                "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25,
                                   "rope_theta": 1_000_000.0}}
#: The RoPE dict a config class sets in ``__post_init__`` when a file has none (``if
#: self.rope_parameters is None: self.rope_parameters = {...}``, transformers 5.24), where
#: it is not what the family's other defaults give: :attr:`Family.default_rope_parameters`.
#: Ministral 3 and Mistral 4 also keep ``max_position_embeddings`` in it, which nothing
#: reads (their ``ignored_keys``), and Mistral 4 its ``partial_rotary_factor``, which
#: ``_mistral4_mla_head`` derives the same way.
_CLASS_ROPE_DICTS: dict[str, dict] = {
    "apertus": _LLAMA3_APERTUS,
    "apertus1p5_text": _LLAMA3_APERTUS,
    "ministral3": {**_YARN_MISTRAL, "rope_theta": 1_000_000.0},
    "mistral4": {**_YARN_MISTRAL, "rope_theta": 10_000.0, "factor": 128.0,
                 "original_max_position_embeddings": 8192},
    "gpt_oss": {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                "truncate": False, "original_max_position_embeddings": 4096},
    "gemma4_text": _GEMMA4_ROPE,
    "gemma4_unified_text": _GEMMA4_ROPE,
}

#: Config classes that do not move both top-level RoPE keys into the RoPE dict: a no-op
#: ``convert_rope_params_to_dict`` ("No need to handle BC for new models"), or Step 3.5's
#: own reading (:attr:`Family.top_level_rope`).
_TOP_LEVEL_ROPE: dict[str, tuple[str, ...]] = {
    **{mt: () for mt in (
        "gemma4_text", "gemma4_unified_text", "laguna", "mellum", "mimo_v2_flash")},
    # Step3p7TextConfig.__post_init__ pops rope_theta and partial_rotary_factors (a list)
    "step3p5": ("rope_theta",),
}
