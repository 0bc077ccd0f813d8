"""Regression tests for the key sweep's misread classes (issue 29), on published configs.

Each config is the position-relevant part of a published ``config.json``, typed in (this
machine cannot reach the model hub). "Verified" in a comment: the values agree with the
``transformers`` 5.24 config class whose docstring names that checkpoint (its defaults are
that checkpoint's); "unverified": as the release gives them to our knowledge, not checked
here — the test holds for the shape whatever the exact widths. Where no
published file of a misread's shape is known to us, the test moves one key of a published
config (named "variant") — the shape a checkpoint could carry. Each is compared layer by
layer with the family's own ``transformers`` 5.24 modules (its rotary tables and its
attention layers run on the meta device by ``hf_sweep``), for the dict and for the config
object ``transformers`` builds from it, plus the fact the misread got wrong.
"""

from __future__ import annotations

import inspect

import pytest

from booktools import hf_sweep
from posenc import hf_config as H

# --------------------------------------------------------------------------- configs

LLAMA31_8B_PARTIAL = {  # meta-llama/Llama-3.1-8B (as tests/test_hf_config.py), variant:
    # a top-level partial factor
    "model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
    "num_key_value_heads": 8, "num_hidden_layers": 2, "max_position_embeddings": 131072,
    "rope_theta": 500000.0, "partial_rotary_factor": 0.5,
}
DEEPSEEK_V3_PARTIAL = {  # deepseek-ai/DeepSeek-V3 widths (unverified), variant: a factor
    "model_type": "deepseek_v3", "hidden_size": 7168, "num_attention_heads": 128,
    "num_key_value_heads": 128, "num_hidden_layers": 2, "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128, "v_head_dim": 128, "kv_lora_rank": 512, "q_lora_rank": 1536,
    "max_position_embeddings": 163840, "rope_theta": 10000.0, "partial_rotary_factor": 0.5,
    "first_k_dense_replace": 3,
}
DEEPSEEK_V3_PROPORTIONAL = dict(  # variant: Gemma 4's proportional rope on the MLA slice
    DEEPSEEK_V3_PARTIAL, partial_rotary_factor=None,
    rope_parameters={"rope_type": "proportional", "factor": 2.0, "rope_theta": 10000.0})
GPTJ_6B = {  # EleutherAI/gpt-j-6B (GPT-2 key names; verified), layers cut to 2
    "model_type": "gptj", "n_embd": 4096, "n_head": 16, "n_layer": 2, "n_positions": 2048,
    "rotary_dim": 64,
}
GPTJ_6B_THETA = dict(GPTJ_6B, rope_theta=1_000_000.0)  # variant: nothing reads the base
CODEGEN_350M_NO_ROTARY_DIM = {  # Salesforce/codegen-350M-mono (unverified), variant: no
    # rotary_dim key
    "model_type": "codegen", "n_embd": 1024, "n_head": 16, "n_layer": 2,
    "n_positions": 2048,
}
STABLELM_3B_NO_FACTOR = {  # stabilityai/stablelm-3b-4e1t (verified), variant: the
    # factor left out, which StableLmConfig fills with 0.25 ("assign default for BC")
    "model_type": "stablelm", "hidden_size": 2560, "num_attention_heads": 32,
    "num_key_value_heads": 32, "num_hidden_layers": 2, "max_position_embeddings": 4096,
    "rope_theta": 10000,
}
GPT_OSS_20B_NO_ROPE = {  # openai/gpt-oss-20b (attention widths verified, expert counts
    # unverified: the class says 128 experts), variant: without its rope_scaling block (the
    # class then sets the same YaRN, factor 32, itself); layers cut to 2
    "model_type": "gpt_oss", "hidden_size": 2880, "num_attention_heads": 64,
    "num_key_value_heads": 8, "head_dim": 64, "num_hidden_layers": 2,
    "max_position_embeddings": 131072, "rope_theta": 150000, "sliding_window": 128,
    "layer_types": ["sliding_attention", "full_attention"], "num_local_experts": 32,
    "num_experts_per_tok": 4,
}
GEMMA3_4B_TEXT_OLD_TYPE = {  # google/gemma-3-4b-it text_config (unverified; its rope_scaling says
    # "rope_type": "linear", factor 8), variant: the old spelling "type"
    "model_type": "gemma3_text", "hidden_size": 2560, "num_attention_heads": 8,
    "num_key_value_heads": 4, "head_dim": 256, "num_hidden_layers": 6,
    "max_position_embeddings": 131072, "rope_theta": 1000000.0,
    "rope_local_base_freq": 10000.0, "sliding_window": 1024, "sliding_window_pattern": 6,
    "rope_scaling": {"factor": 8.0, "type": "linear"},
}
MODERNBERT_BASE = {  # answerdotai/ModernBERT-base (verified), layers cut to 3
    "model_type": "modernbert", "hidden_size": 768, "num_attention_heads": 12,
    "num_hidden_layers": 3, "intermediate_size": 1152, "max_position_embeddings": 8192,
    "global_attn_every_n_layers": 3, "local_attention": 128,
    "global_rope_theta": 160000.0, "local_rope_theta": 10000.0,
}
MODERNBERT_BASE_SLIDING = {  # variant: the window as sliding_window (a class property)
    k: v for k, v in MODERNBERT_BASE.items() if k != "local_attention"} | {
    "sliding_window": 32}
RECURRENTGEMMA_2B = {  # google/recurrentgemma-2b (kv heads and MLP width unverified: the
    # class says 10 and 7680), layers cut to 3; variant: the window
    # spelt sliding_window (RecurrentGemmaConfig.attribute_map) and block_types left out
    "model_type": "recurrent_gemma", "hidden_size": 2560, "num_attention_heads": 10,
    "num_key_value_heads": 1, "head_dim": 256, "num_hidden_layers": 3,
    "intermediate_size": 15360, "partial_rotary_factor": 0.5, "rope_theta": 10000.0,
    "sliding_window": 1024, "lru_width": 2560,
}
QWEN3_30B_A3B_WINDOWED = {  # Qwen/Qwen3-30B-A3B (head_dim 128, 40960 positions and the
    # base unverified: the class says None, 32768, 1e4), variant: use_sliding_window true, the
    # window left to the class default (4096)
    "model_type": "qwen3_moe", "hidden_size": 2048, "num_attention_heads": 32,
    "num_key_value_heads": 4, "head_dim": 128, "num_hidden_layers": 2,
    "max_position_embeddings": 40960, "rope_theta": 1000000.0, "num_experts": 128,
    "num_experts_per_tok": 8, "moe_intermediate_size": 768, "use_sliding_window": True,
}
LLAMA32_11B_TEXT = {  # meta-llama/Llama-3.2-11B-Vision text_config (verified but the
    # llama3 block, unverified), variant: without
    # cross_attention_layers (the class fills [3, 8, 13, ...]); layers cut to 5
    "model_type": "mllama_text_model", "hidden_size": 4096, "num_attention_heads": 32,
    "num_key_value_heads": 8, "num_hidden_layers": 5, "max_position_embeddings": 131072,
    "rope_theta": 500000.0,
    "rope_scaling": {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
}

ZAMBA2_27B_MEM_ROPE = {  # Zyphra/Zamba2-2.7B widths (verified), variant: use_mem_rope true,
    # its first hybrid block moved to layer 1 (4 layers); Zamba2Config sets the attention
    # head to 2 * hidden_size / heads = 160, whatever a file says
    "model_type": "zamba2", "hidden_size": 2560, "num_attention_heads": 32,
    "num_hidden_layers": 4, "max_position_embeddings": 4096, "use_mem_rope": True,
    "layers_block_type": ["mamba", "hybrid", "mamba", "mamba"],
}

#: name -> (config, a fact the misread got wrong, checked on posenc's specs)
PUBLISHED = {
    "llama-partial-ignored": (LLAMA31_8B_PARTIAL, lambda s: s[0].rotary_dim == 128),
    "deepseek-v3-partial-ignored": (DEEPSEEK_V3_PARTIAL, lambda s: s[0].rotary_dim == 64),
    "deepseek-v3-proportional-on-slice": (
        DEEPSEEK_V3_PROPORTIONAL, lambda s: s[0].rope_channels == "trailing"),
    "gptj-6b": (GPTJ_6B, lambda s: (s[0].rotary_dim, s[0].rope_theta) == (64, 10000.0)),
    "gptj-6b-theta-ignored": (GPTJ_6B_THETA, lambda s: s[0].rope_theta == 10000.0),
    "codegen-class-rotary-dim": (CODEGEN_350M_NO_ROTARY_DIM, lambda s: s[0].rotary_dim == 64),
    "stablelm-class-factor": (STABLELM_3B_NO_FACTOR, lambda s: s[0].rotary_dim == 20),
    "gpt-oss-class-yarn": (GPT_OSS_20B_NO_ROPE, lambda s: s[0].rope_type == "yarn"),
    "gemma3-old-type-shadowed": (
        GEMMA3_4B_TEXT_OLD_TYPE, lambda s: {x.rope_type for x in s} == {"default"}),
    "modernbert-base": (MODERNBERT_BASE, lambda s: s[1].sliding_window == 65),
    "modernbert-sliding-window": (MODERNBERT_BASE_SLIDING, lambda s: s[1].sliding_window == 33),
    "recurrentgemma-2b": (RECURRENTGEMMA_2B, lambda s: [x.sliding_window for x in s] == [
        None, None, 1024]),
    "qwen3-moe-windowed": (QWEN3_30B_A3B_WINDOWED, lambda s: s[0].sliding_window == 4096),
    "zamba2-mem-rope": (ZAMBA2_27B_MEM_ROPE, lambda s: (s[1].use_rope, s[1].rotary_dim) == (
        True, 160)),
    "mllama-class-cross-layers": (LLAMA32_11B_TEXT, lambda s: not s[3].use_rope),
    "mllama-null-cross-layers": (dict(LLAMA32_11B_TEXT, cross_attention_layers=None),
                                 lambda s: not s[3].use_rope),
}


hf_config = hf_sweep.config_object


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_published_shapes_match_the_families_own_layers(name):
    d, fact = PUBLISHED[name]
    for how, specs, problems in hf_sweep.check_published(d):
        assert problems == [], (name, how)
        assert fact(specs), (name, how)


def test_ignored_keys_are_reported():
    """A key the family's code never reads is reported, not silently dropped."""
    llama = H.layer_specs(LLAMA31_8B_PARTIAL)[0]
    assert "partial_rotary_factor" in dict(llama.ignored)
    gptj = H.layer_specs(GPTJ_6B_THETA)[0]
    assert "rope_theta" in dict(gptj.ignored)
    gemma = H.layer_specs(GEMMA3_4B_TEXT_OLD_TYPE)[5]
    assert {"type", "factor"} <= set(dict(gemma.ignored))


#: Shapes posenc refuses by name, with the key the message must name.
REFUSED = {
    # EleutherAI/gpt-neox-20b widths, variant: a head_dim beside hidden_size / heads
    "gpt-neox-head-dim": ({"model_type": "gpt_neox", "hidden_size": 6144,
                           "num_attention_heads": 64, "num_hidden_layers": 2,
                           "rotary_pct": 0.25, "head_dim": 48}, "head_dim"),
    # Qwen/Qwen1.5-MoE-A2.7B, variant: sliding layers listed, use_sliding_window false
    "qwen1.5-moe-listed-sliding": ({"model_type": "qwen2_moe", "hidden_size": 2048,
                                    "num_attention_heads": 16, "num_hidden_layers": 2,
                                    "use_sliding_window": False, "sliding_window": 4096,
                                    "layer_types": ["sliding_attention", "full_attention"]},
                                   "use_sliding_window"),
    # a ModernBERT-decoder config (class defaults; no published file of this shape known
    # to us) with local_attention null: the class then sets sliding_window = -1
    "modernbert-decoder-null-window": ({"model_type": "modernbert-decoder",
                                        "hidden_size": 768, "num_attention_heads": 12,
                                        "num_hidden_layers": 3, "local_attention": None},
                                       "local_attention"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_unrepresentable_shapes_are_refused_by_name(name):
    d, key = REFUSED[name]
    with pytest.raises(ValueError, match=key):
        H.layer_specs(d)


def test_default_rope_partial_records_match_the_source():
    """Family.default_rope_partial is false exactly where the family's rotary module's own
    compute_default_rope_parameters never reads partial_rotary_factor (Mistral 4 aside:
    its class derives the factor, and the key sweep checks it as it stands)."""
    wrong = []
    for mt, rec in H.FAMILIES.items():
        if rec.refuse:
            continue
        module = hf_sweep._modeling(mt)
        fns = [getattr(c, "compute_default_rope_parameters", None)
               for c in hf_sweep.rotary_classes(module)] if module else []
        fns = [f for f in fns if f is not None]
        if not fns or mt == "mistral4":
            continue
        reads = any("partial_rotary_factor" in inspect.getsource(f) for f in fns)
        if reads != rec.default_rope_partial:
            wrong.append(mt)
    assert wrong == []
