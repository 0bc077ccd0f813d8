"""posenc.hf_config against transformers' own rotary modules, on published configs.

Each config below is the RoPE-relevant part of a published ``config.json`` (hyper-parameters
as released; no weights). The oracle is the model family's rotary-embedding module in
``transformers`` 5.24, built from the same dict with the family's config class — so the
test covers both ``transformers``' config standardisation and its ``ROPE_INIT_FUNCTIONS``.
The reader is called on the dict *and* on the config object.
"""

from __future__ import annotations

import copy
import importlib
import math
import warnings

import pytest
import torch
from transformers import CONFIG_MAPPING

from posenc import hf_config as H
from posenc import scaling as S
from posenc.attention import llama4_attn_scale

# --------------------------------------------------------------------------- configs

LLAMA31_8B = {  # meta-llama/Llama-3.1-8B
    "model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
    "num_key_value_heads": 8, "num_hidden_layers": 32, "intermediate_size": 14336,
    "max_position_embeddings": 131072, "rope_theta": 500000.0,
    "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
}
QWEN25_7B_YARN = {  # Qwen/Qwen2.5-7B-Instruct with the YaRN block its model card gives
    "model_type": "qwen2", "hidden_size": 3584, "num_attention_heads": 28,
    "num_key_value_heads": 4, "num_hidden_layers": 28, "intermediate_size": 18944,
    "max_position_embeddings": 32768, "rope_theta": 1000000.0, "sliding_window": 131072,
    "use_sliding_window": False, "max_window_layers": 28,
    "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"},
}
PHI3_LONG = [  # long_factor of the first Phi-3 128k release (Phi-3-vision-128k-instruct)
    1.0299999713897705, 1.0499999523162842, 1.0499999523162842, 1.0799999237060547,
    1.2299998998641968, 1.2299998998641968, 1.2999999523162842, 1.4499999284744263,
    1.5999999046325684, 1.6499998569488525, 1.8999998569488525, 2.859999895095825,
    3.68999981880188, 5.419999599456787, 5.489999771118164, 5.489999771118164,
    9.09000015258789, 11.579999923706055, 15.65999984741211, 15.769999504089355,
    15.789999961853027, 18.360000610351562, 21.989999771118164, 23.079999923706055,
    30.009998321533203, 32.35000228881836, 32.590003967285156, 35.56000518798828,
    39.95000457763672, 53.840003967285156, 56.20000457763672, 57.95000457763672,
    59.29000473022461, 59.77000427246094, 59.920005798339844, 61.190006256103516,
    61.96000671386719, 62.50000762939453, 63.3700065612793, 63.48000717163086,
    63.48000717163086, 63.66000747680664, 63.850006103515625, 64.08000946044922,
    64.760009765625, 64.80001068115234, 64.81001281738281, 64.81001281738281,
]
PHI3_SHORT = (
    [1.05] * 3 + [1.1] * 3 + [1.2500000000000002] * 2 + [1.4000000000000004,
    1.4500000000000004, 1.5500000000000005, 1.8500000000000008, 1.9000000000000008]
    + [2.000000000000001] * 19 + [2.1000000000000005] * 2 + [2.2] + [2.3499999999999996] * 4
    + [2.3999999999999995] * 2 + [2.6499999999999986, 2.6999999999999984, 2.8999999999999977,
    2.9499999999999975] + [3.049999999999997] * 3
)
PHI3_128K = {  # Phi-3 128k (hidden 3072, 32 heads, 4096 -> 131072)
    "model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32,
    "num_key_value_heads": 32, "num_hidden_layers": 32, "intermediate_size": 8192,
    "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
    "rope_theta": 10000.0, "sliding_window": 131072,
    "rope_scaling": {"long_factor": PHI3_LONG, "short_factor": PHI3_SHORT,
                     "type": "longrope"},
}
GEMMA3_4B_TEXT = {  # google/gemma-3-4b-it, text_config
    "model_type": "gemma3_text", "hidden_size": 2560, "num_attention_heads": 8,
    "num_key_value_heads": 4, "head_dim": 256, "num_hidden_layers": 34,
    "intermediate_size": 10240, "max_position_embeddings": 131072,
    "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
    "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
    "sliding_window": 1024, "sliding_window_pattern": 6, "query_pre_attn_scalar": 256,
}
GPT_OSS_20B = {  # openai/gpt-oss-20b
    "model_type": "gpt_oss", "hidden_size": 2880, "num_attention_heads": 64,
    "num_key_value_heads": 8, "head_dim": 64, "num_hidden_layers": 24,
    "intermediate_size": 2880, "num_local_experts": 32, "num_experts_per_tok": 4,
    "max_position_embeddings": 131072, "rope_theta": 150000.0, "sliding_window": 128,
    "layer_types": ["sliding_attention", "full_attention"] * 12,
    "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
                     "original_max_position_embeddings": 4096, "rope_type": "yarn",
                     "truncate": False},
}
DEEPSEEK_V3 = {  # deepseek-ai/DeepSeek-V3
    "model_type": "deepseek_v3", "hidden_size": 7168, "num_attention_heads": 128,
    "num_key_value_heads": 128, "num_hidden_layers": 61, "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128, "v_head_dim": 128, "kv_lora_rank": 512, "q_lora_rank": 1536,
    "max_position_embeddings": 163840, "rope_theta": 10000,
    "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0,
                     "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096,
                     "type": "yarn"},
}
GPT_NEOX_20B = {  # EleutherAI/gpt-neox-20b
    "model_type": "gpt_neox", "hidden_size": 6144, "num_attention_heads": 64,
    "num_hidden_layers": 44, "intermediate_size": 24576, "rotary_pct": 0.25,
    "rotary_emb_base": 10000, "max_position_embeddings": 2048,
}
LLAMA4_TEXT = {  # the Llama 4 layer pattern with transformers' Llama4TextConfig defaults
    "model_type": "llama4_text", "hidden_size": 5120, "num_attention_heads": 40,
    "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 8,
    "max_position_embeddings": 262144, "rope_theta": 500000.0,
    "rope_scaling": {"factor": 16.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
}

#: name -> (config dict, rotary module "package.Class", layer types to check)
MODELS = {
    "llama3.1-8b": (LLAMA31_8B, "llama.LlamaRotaryEmbedding", [None]),
    "qwen2.5-7b-yarn": (QWEN25_7B_YARN, "qwen2.Qwen2RotaryEmbedding", [None]),
    "phi3-128k-longrope": (PHI3_128K, "phi3.Phi3RotaryEmbedding", [None]),
    "gemma3-4b": (GEMMA3_4B_TEXT, "gemma3.Gemma3RotaryEmbedding",
                  ["sliding_attention", "full_attention"]),
    "gpt-oss-20b": (GPT_OSS_20B, "gpt_oss.GptOssRotaryEmbedding", [None]),
    "deepseek-v3": (DEEPSEEK_V3, "deepseek_v3.DeepseekV3RotaryEmbedding", [None]),
    "gpt-neox-20b": (GPT_NEOX_20B, "gpt_neox.GPTNeoXRotaryEmbedding", [None]),
    "llama4": (LLAMA4_TEXT, "llama4.Llama4TextRotaryEmbedding", [None]),
}


#: posenc rounds the float64 value once; transformers computes base**x in float32 (a few
#: roundings), so the two agree to within a few float32 units, relative.
ULPS4 = 2.0**-21


def hf_config(d):
    d = copy.deepcopy(d)
    return CONFIG_MAPPING[d.pop("model_type")](**d)


def hf_rotary(name):
    d, where, _ = MODELS[name]
    package, cls = where.split(".")
    module = importlib.import_module(f"transformers.models.{package}.modeling_{package}")
    return getattr(module, cls)(hf_config(d))


def hf_tables(rotary, layer_type):
    if layer_type is None:
        return rotary.inv_freq, rotary.attention_scaling
    return getattr(rotary, f"{layer_type}_inv_freq"), getattr(
        rotary, f"{layer_type}_attention_scaling")


def max_rel_diff(a, b) -> float:
    a, b = a.to(torch.float64), b.to(torch.float64)
    nz = b != 0
    assert torch.equal(a == 0, b == 0)
    return float(((a[nz] - b[nz]).abs() / b[nz].abs()).max()) if nz.any() else 0.0


def parity(name) -> list[tuple[str | None, float, float, float]]:
    """``(layer_type, max rel diff of inv_freq, attention_factor, transformers' one)``."""
    d, _, layer_types = MODELS[name]
    rotary = hf_rotary(name)
    rows = []
    for lt in layer_types:
        ref_inv, ref_att = hf_tables(rotary, lt)
        for source in (d, hf_config(d)):
            inv, att = H.rope_from_config(source, layer_type=lt)
            assert inv.shape == ref_inv.shape and inv.dtype == torch.float32
            rows.append((lt, max_rel_diff(inv, ref_inv), att, float(ref_att)))
    return rows


# --------------------------------------------------------------------------- parity


@pytest.mark.parametrize("name", sorted(MODELS))
def test_parity_with_transformers_rotary_modules(name):
    for lt, diff, att, ref_att in parity(name):
        assert diff <= ULPS4, (lt, diff)
        assert att == pytest.approx(ref_att, rel=1e-12)


def test_published_values():
    """The numbers the pitfalls chapter quotes, from the configs themselves."""
    p = H.rope_parameters(LLAMA31_8B)
    assert (p["rope_type"], p["head_dim"], p["rotary_dim"], p["factor"]) == ("llama3", 128,
                                                                              128, 8.0)
    assert H.rope_from_config(PHI3_128K)[1] == pytest.approx(
        math.sqrt(1 + math.log(32) / math.log(4096)))
    assert H.rope_from_config(GPT_OSS_20B)[1] == pytest.approx(0.1 * math.log(32) + 1)
    assert H.rope_from_config(DEEPSEEK_V3)[1] == 1.0  # mscale / mscale_all_dim
    assert H.rope_parameters(GPT_NEOX_20B)["rotary_dim"] == 24  # 96 x 0.25
    assert H.rope_parameters(DEEPSEEK_V3)["head_dim"] == 64  # qk_rope_head_dim
    g = {lt: H.rope_parameters(GEMMA3_4B_TEXT, layer_type=lt)["rope_theta"]
         for lt in ("sliding_attention", "full_attention")}
    assert g == {"sliding_attention": 10000.0, "full_attention": 1000000.0}


def test_gemma3_local_layers_are_unscaled_and_global_linear():
    local, _ = H.rope_from_config(GEMMA3_4B_TEXT, layer_type="sliding_attention")
    full, _ = H.rope_from_config(GEMMA3_4B_TEXT, layer_type="full_attention")
    assert torch.equal(local, S.default(256, base=1e4)[0])
    assert torch.equal(full, S.linear(256, 8.0, base=1e6)[0])


def test_multimodal_config_is_read_through_text_config():
    full = {"model_type": "gemma3", "text_config": GEMMA3_4B_TEXT}
    for source in (full, hf_config(full)):
        inv, _ = H.rope_from_config(source, layer_type="full_attention")
        assert torch.equal(inv, H.rope_from_config(GEMMA3_4B_TEXT,
                                                   layer_type="full_attention")[0])


@pytest.mark.parametrize("seq_len", [None, 1, 4096, 4097, 131072])
def test_phi3_longrope_switch_matches_the_module(seq_len):
    """Phi-3's module swaps to long_factor once max(position_ids) + 1 > 4096."""
    rotary = hf_rotary("phi3-128k-longrope")
    if seq_len is not None:
        x = torch.zeros(1, 1, 1, 96)
        rotary(x, torch.tensor([[seq_len - 1]]))
    inv, att = H.rope_from_config(PHI3_128K, seq_len=seq_len)
    assert max_rel_diff(inv, rotary.inv_freq) <= ULPS4
    assert att == pytest.approx(rotary.attention_scaling, rel=1e-12)


def test_phi3_legacy_su_is_longrope():
    """The first Phi-3 128k configs said "su"; transformers 5.24's Phi3Config renames it
    only after moving original_max_position_embeddings, so it rejects such a config;
    posenc reads it as the longrope it is."""
    su = copy.deepcopy(PHI3_128K)
    su["rope_scaling"]["type"] = "su"
    with pytest.raises(KeyError, match="original_max_position_embeddings"):
        hf_config(su)
    for seq_len in (None, 8000):
        a, fa = H.rope_from_config(su, seq_len=seq_len)
        b, fb = H.rope_from_config(PHI3_128K, seq_len=seq_len)
        assert torch.equal(a, b) and fa == fb


@pytest.mark.parametrize("seq_len", [None, 1000, 2048, 4096, 10000])
def test_dynamic_ntk_reads_max_position_embeddings(seq_len):
    d = dict(LLAMA31_8B, max_position_embeddings=2048,
             rope_scaling={"rope_type": "dynamic", "factor": 2.0})
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    want, _ = ROPE_INIT_FUNCTIONS["dynamic"](hf_config(d), "cpu", seq_len=seq_len)
    got, _ = H.rope_from_config(d, seq_len=seq_len)
    assert max_rel_diff(got, want) <= ULPS4


def test_proportional_config():
    """A Gemma 4 style global layer: proportional, partial_rotary_factor 0.25, theta 1e6."""
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    d = dict(LLAMA31_8B, head_dim=256, rope_scaling={
        "rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1e6})
    want, _ = ROPE_INIT_FUNCTIONS["proportional"](hf_config(d), "cpu")
    got, att = H.rope_from_config(d)
    assert got.shape == (128,) and max_rel_diff(got, want) <= ULPS4 and att == 1.0
    assert int((got > 0).sum()) == 32


def test_rotary_dim_key_gpt_j():
    """GPT-J keeps its rotated width as rotary_dim (64 of 256), base 10000."""
    from transformers.models.gptj.modeling_gptj import create_sinusoidal_positions

    d = {"model_type": "gptj", "n_embd": 4096, "n_head": 16, "rotary_dim": 64,
         "hidden_size": 4096, "num_attention_heads": 16, "n_positions": 2048}
    inv, _ = H.rope_from_config(d)
    table = create_sinusoidal_positions(5, 64)  # (positions, [sin | cos])
    angles = torch.arange(5, dtype=torch.float32)[:, None] * inv
    torch.testing.assert_close(table[:, :32], torch.sin(angles))


# --------------------------------------------------------------------------- layers


def test_layer_specs_gemma3_pattern_and_windows():
    specs = H.layer_specs(GEMMA3_4B_TEXT)
    assert [s.layer_type for s in specs] == hf_config(GEMMA3_4B_TEXT).layer_types
    assert [i for i, s in enumerate(specs) if s.sliding_window is None] == [5, 11, 17, 23, 29]
    assert all(s.sliding_window == 1024 for s in specs if s.layer_type == "sliding_attention")
    assert all(s.use_rope for s in specs)


def test_layer_specs_gpt_oss_and_mistral():
    specs = H.layer_specs(GPT_OSS_20B)
    assert [s.sliding_window for s in specs[:4]] == [128, None, 128, None]
    d = dict(GPT_OSS_20B)
    del d["layer_types"]
    assert [s.layer_type for s in H.layer_specs(d)] == hf_config(d).layer_types
    mistral = {"model_type": "mistral", "hidden_size": 4096, "num_attention_heads": 32,
               "num_hidden_layers": 32, "sliding_window": 4096, "rope_theta": 10000.0,
               "max_position_embeddings": 32768}
    assert {s.sliding_window for s in H.layer_specs(mistral)} == {4096}
    qwen = H.layer_specs(QWEN25_7B_YARN)  # use_sliding_window false
    assert {s.sliding_window for s in qwen} == {None}


def test_layer_specs_llama4_nope_every_fourth():
    specs = H.layer_specs(LLAMA4_TEXT)
    cfg = hf_config(LLAMA4_TEXT)
    assert [s.use_rope for s in specs] == [bool(f) for f in cfg.no_rope_layers]
    assert [i for i, s in enumerate(specs) if not s.use_rope] == [3, 7]
    assert all(s.inv_freq is None and s.attn_temperature == (8192, 0.1)
               for s in specs if not s.use_rope)
    off = H.layer_specs(dict(LLAMA4_TEXT, attn_temperature_tuning=False))
    assert all(s.attn_temperature is None for s in off)


def test_layer_specs_llama4_rope_layers_are_chunked():
    """Llama4TextConfig derives layer_types: chunked attention on RoPE layers."""
    for d in (LLAMA4_TEXT, dict(LLAMA4_TEXT, attention_chunk_size=None)):
        specs = H.layer_specs(d)
        assert [s.layer_type for s in specs] == hf_config(d).layer_types
        assert all(s.sliding_window is None for s in specs)
    specs = H.layer_specs(LLAMA4_TEXT)
    assert {s.layer_type for s in specs if s.use_rope} == {"chunked_attention"}
    assert {s.layer_type for s in specs if not s.use_rope} == {"full_attention"}
    assert {s.layer_type for s in H.layer_specs(hf_config(LLAMA4_TEXT))} == {
        "chunked_attention", "full_attention"}


def test_llama4_attn_scale_matches_transformers_attention():
    """Run a NoPE Llama4TextAttention layer and capture the queries it hands to attention."""
    from transformers.models.llama4 import modeling_llama4 as M

    cfg = hf_config(dict(LLAMA4_TEXT, hidden_size=32, num_attention_heads=2,
                         num_key_value_heads=2, head_dim=16, floor_scale=4, attn_scale=0.1))
    cfg._attn_implementation = "eager"
    layer = M.Llama4TextAttention(cfg, layer_idx=3)  # a NoPE layer
    assert not layer.use_rope
    captured = {}

    def spy(module, q, k, v, mask, **kwargs):
        captured["q"] = q
        return torch.zeros(q.shape[0], q.shape[2], q.shape[1], q.shape[3]), None

    h = torch.randn(1, 20, 32, generator=torch.Generator().manual_seed(0))
    orig = M.eager_attention_forward
    M.eager_attention_forward = spy
    try:
        with torch.no_grad():
            layer(h, position_embeddings=None, attention_mask=None)
            plain = layer.q_proj(h).view(1, 20, 2, 16).transpose(1, 2)
    finally:
        M.eager_attention_forward = orig
    scale = llama4_attn_scale(torch.arange(20), floor_scale=4, attn_scale=0.1)
    torch.testing.assert_close(captured["q"], plain * scale[:, None])


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("patch,exc,match", [
    ({"rope_scaling": {"rope_type": "ntk", "factor": 2.0}}, ValueError,
     r"rope_scaling\['rope_type'\] must be one of"),
    ({"rope_scaling": {"rope_type": "linear", "factr": 2.0}}, ValueError,
     r"unknown key\(s\) \['factr'\]"),
    ({"rope_scaling": {"rope_type": "linear"}}, ValueError,
     r"rope_scaling\['factor'\] is required for rope_type 'linear'"),
    ({"rope_scaling": {"rope_type": "linear", "factor": "8"}}, TypeError,
     r"rope_scaling\['factor'\] must be a number"),
    ({"rope_scaling": {"rope_type": "linear", "factor": 0.5}}, ValueError,
     r"rope_scaling \(rope_type 'linear'\): factor must be >= 1"),
    ({"rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0}},
     ValueError, r"rope_scaling\['high_freq_factor'\] is required"),
    ({"rope_scaling": {"rope_type": "longrope", "short_factor": [1.0] * 64,
                       "long_factor": [1.0] * 3}}, ValueError,
     "long_factor must hold rotary_dim/2 = 64"),
    ({"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "truncate": "no"}}, TypeError,
     r"rope_scaling\['truncate'\] must be true or false"),
    ({"rope_scaling": [8.0]}, TypeError, "rope_scaling must be a dict"),
    ({"rope_parameters": {"rope_type": "default", "partial_rotary_factor": 1.5}},
     ValueError, r"partial_rotary_factor'\] must be in \(0, 1\]"),
    # Llama's default rope ignores the factor (its own compute_default_rope_parameters);
    # its linear rope (ROPE_INIT_FUNCTIONS) reads it
    ({"rope_parameters": {"rope_type": "linear", "factor": 2.0,
                          "partial_rotary_factor": 0.29}},
     ValueError, "rotary width must be even"),
])
def test_bad_rope_dicts_name_the_key(patch, exc, match):
    d = dict(LLAMA31_8B)
    d.pop("rope_scaling")
    d.update(patch)
    with pytest.raises(exc, match=match):
        H.rope_from_config(d)


def test_bad_layer_type_and_config_kind():
    with pytest.raises(ValueError, match="pass layer_type as one of"):
        H.rope_from_config(GEMMA3_4B_TEXT)
    with pytest.raises(ValueError, match="pass layer_type as one of"):
        H.rope_from_config(GEMMA3_4B_TEXT, layer_type="local")
    with pytest.raises(ValueError, match="layer_type must be one of config.layer_types"):
        H.rope_from_config(GPT_OSS_20B, layer_type="chunked_attention")
    with pytest.raises(TypeError, match="config must be a transformers config object"):
        H.rope_from_config([1, 2])
    with pytest.raises(ValueError, match="no head_dim"):
        H.rope_from_config({"model_type": "llama", "rope_theta": 1e4})
    with pytest.raises(ValueError, match="num_hidden_layers"):
        H.layer_specs({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 2})
    with pytest.raises(ValueError, match="no 'model_type'"):
        H.layer_specs({"hidden_size": 64, "num_attention_heads": 2, "num_hidden_layers": 2})
    with pytest.raises(ValueError, match="model_type 'llama9' is not in"):
        H.layer_specs(dict(LLAMA31_8B, model_type="llama9"))
    with pytest.raises(ValueError, match="model_type 'nanochat' is refused: its rotate_half"):
        H.layer_specs(dict(LLAMA31_8B, model_type="nanochat"))
    with pytest.raises(ValueError, match="layer_types'\\] has 2 entries for 24"):
        H.layer_specs(dict(GPT_OSS_20B, layer_types=["full_attention"] * 2))


def test_reader_never_changes_the_callers_config():
    d = copy.deepcopy(PHI3_128K)
    H.rope_from_config(d, seq_len=5000)
    H.layer_specs(d)
    assert d == PHI3_128K


# --------------------------------------------------------------------------- hybrids
# The position-relevant part of a published config.json for each hybrid pattern (the
# hyper-parameters as released; no weights). Typed in: this machine cannot reach the model
# hub. Qwen3-Next's layer keys and SmolLM3's base and layer count were cross-checked against
# copies of those files; the other values are as the releases give them to our knowledge,
# and each test holds for the pattern whatever the exact widths. Each is compared layer by
# layer with what the family's own rotary module and attention layers do
# (booktools.hf_sweep), for the dict and for the config object transformers builds from it.

SMOLLM3_3B = {  # HuggingFaceTB/SmolLM3-3B: every 4th layer without RoPE
    "model_type": "smollm3", "hidden_size": 2048, "num_attention_heads": 16,
    "num_key_value_heads": 4, "num_hidden_layers": 36, "intermediate_size": 11008,
    "max_position_embeddings": 65536, "rope_theta": 5000000.0,
    "no_rope_layers": [int((i + 1) % 4 != 0) for i in range(36)],
    "no_rope_layer_interval": 4,
}
COMMAND_R7B = {  # CohereForAI/c4ai-command-r7b-12-2024: 3 sliding RoPE : 1 global NoPE
    "model_type": "cohere2", "hidden_size": 4096, "num_attention_heads": 32,
    "num_key_value_heads": 8, "num_hidden_layers": 32, "intermediate_size": 14336,
    "max_position_embeddings": 8192, "rope_theta": 50000.0, "sliding_window": 4096,
    "sliding_window_pattern": 4,
}
QWEN3_NEXT_80B = {  # Qwen/Qwen3-Next-80B-A3B: 3 linear : 1 full, a quarter of 256 rotated
    "model_type": "qwen3_next", "hidden_size": 2048, "num_attention_heads": 16,
    "num_key_value_heads": 2, "head_dim": 256, "num_hidden_layers": 48,
    "full_attention_interval": 4, "partial_rotary_factor": 0.25, "rope_theta": 10000000,
    "max_position_embeddings": 262144, "num_experts": 512, "num_experts_per_tok": 10,
    "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512,
    "linear_num_key_heads": 16, "linear_num_value_heads": 32,
    "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4,
}
OLMO3_32B_THINK = {  # allenai/Olmo-3-32B-Think: YaRN on the full-attention layers only
    "model_type": "olmo3", "hidden_size": 5120, "num_attention_heads": 40,
    "num_key_value_heads": 8, "num_hidden_layers": 64, "intermediate_size": 27648,
    "max_position_embeddings": 65536, "rope_theta": 500000, "sliding_window": 4096,
    "rope_scaling": {"rope_type": "yarn", "factor": 8.0, "beta_fast": 32, "beta_slow": 1,
                     "original_max_position_embeddings": 8192,
                     "attention_factor": 1.2079441541679836},
}
MODERNBERT_BASE = {  # answerdotai/ModernBERT-base: two bases, a local window of 128
    "model_type": "modernbert", "hidden_size": 768, "num_attention_heads": 12,
    "num_hidden_layers": 22, "intermediate_size": 1152, "max_position_embeddings": 8192,
    "global_rope_theta": 160000.0, "local_rope_theta": 10000.0, "local_attention": 128,
    "global_attn_every_n_layers": 3,
}
GEMMA2_9B = {  # google/gemma-2-9b: no layer_types in its config.json; layers alternate
    "model_type": "gemma2", "hidden_size": 3584, "num_attention_heads": 16,
    "num_key_value_heads": 8, "head_dim": 256, "num_hidden_layers": 42,
    "intermediate_size": 14336, "max_position_embeddings": 8192, "rope_theta": 10000.0,
    "sliding_window": 4096, "query_pre_attn_scalar": 256,
}
LLAMA4_SCOUT = {  # meta-llama/Llama-4-Scout-17B-16E: llama3 block with equal band factors
    "model_type": "llama4_text", "hidden_size": 5120, "num_attention_heads": 40,
    "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 48,
    "intermediate_size": 8192, "intermediate_size_mlp": 16384, "num_local_experts": 16,
    "max_position_embeddings": 10485760, "rope_theta": 500000.0,
    "attention_chunk_size": 8192, "use_qk_norm": True,
    "rope_scaling": {"factor": 16.0, "high_freq_factor": 1.0, "low_freq_factor": 1.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
}
GEMMA4_TEXT = {  # the Gemma 4 geometry of transformers' Gemma4TextConfig (its defaults)
    "model_type": "gemma4_text", "hidden_size": 2304, "num_attention_heads": 8,
    "num_key_value_heads": 4, "head_dim": 256, "global_head_dim": 512,
    "num_hidden_layers": 12, "sliding_window": 512,
    "rope_parameters": {
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25,
                           "rope_theta": 1000000.0}},
}

HYBRIDS = {
    "smollm3-3b": SMOLLM3_3B, "command-r7b": COMMAND_R7B, "qwen3-next-80b": QWEN3_NEXT_80B,
    "olmo3-32b-think": OLMO3_32B_THINK, "modernbert-base": MODERNBERT_BASE,
    "gemma2-9b": GEMMA2_9B, "llama4-scout": LLAMA4_SCOUT, "gemma4": GEMMA4_TEXT,
}


@pytest.mark.parametrize("name", sorted(HYBRIDS))
def test_published_hybrids_match_the_families_own_layers(name):
    from booktools import hf_sweep

    for how, _, problems in hf_sweep.check_published(HYBRIDS[name]):
        assert problems == [], (name, how)


def test_published_hybrids_layer_facts():
    """The facts chapter 12 and the atlas quote, from the published configs."""
    smol = H.layer_specs(SMOLLM3_3B)
    assert [i for i, s in enumerate(smol) if not s.use_rope] == list(range(3, 36, 4))
    r7b = H.layer_specs(COMMAND_R7B)
    assert {(s.layer_type, s.use_rope, s.sliding_window, s.layout) for s in r7b} == {
        ("sliding_attention", True, 4096, "interleaved"),
        ("full_attention", False, None, "interleaved")}
    nxt = H.layer_specs(QWEN3_NEXT_80B)
    assert sum(s.use_rope for s in nxt) == 12
    assert {(s.head_dim, s.rotary_dim) for s in nxt if s.use_rope} == {(256, 64)}
    olmo = H.layer_specs(OLMO3_32B_THINK)
    full = [s for s in olmo if s.layer_type == "full_attention"]
    sliding = [s for s in olmo if s.layer_type == "sliding_attention"]
    assert {s.rope_type for s in full} == {"yarn"} and {s.rope_type for s in sliding} == {
        "default"}
    assert full[0].attention_factor == pytest.approx(1.2079441541679836)
    assert sliding[0].attention_factor == 1.0
    assert torch.equal(sliding[0].inv_freq, S.default(128, base=500000)[0])
    bert = H.layer_specs(MODERNBERT_BASE)
    assert [s.rope_theta for s in bert[:3]] == [160000.0, 10000.0, 10000.0]
    assert [s.sliding_window for s in bert[:3]] == [None, 65, 65]
    g2 = H.layer_specs(GEMMA2_9B)
    assert [s.sliding_window for s in g2[:4]] == [4096, None, 4096, None]
    g4 = H.layer_specs(GEMMA4_TEXT)
    glob = [s for s in g4 if s.layer_type == "full_attention"]
    assert {(s.head_dim, s.rotary_dim, s.rope_channels, s.rope_theta) for s in glob} == {
        (512, 128, "spread", 1000000.0)}
    assert int((glob[0].inv_freq > 0).sum()) == 64 and glob[0].inv_freq.shape == (256,)
    scout = H.layer_specs(LLAMA4_SCOUT)
    assert [i for i, s in enumerate(scout) if not s.use_rope] == list(range(3, 48, 4))


@pytest.mark.parametrize("name", ["smollm3-3b", "qwen3-next-80b", "olmo3-32b-think",
                                  "gemma4", "llama4-scout", "command-r7b"])
def test_apply_layer_rope_rotates_like_the_family(name):
    """posenc's own rotation, called with each layer's spec, gives the q·k scores the
    family's attention computes (hf_sweep.compare replays its rotary calls)."""
    from booktools import hf_sweep

    d = HYBRIDS[name]
    specs = H.layer_specs(d)
    truths = hf_sweep.observe(hf_config(d))
    rotated = [i for i, s in enumerate(specs) if s.use_rope]
    assert rotated and hf_sweep.compare(specs, truths) == []
    x = torch.randn(1, 2, 5, specs[rotated[0]].head_dim)
    out = H.apply_layer_rope(x, torch.arange(5), specs[rotated[0]])
    assert out.shape == x.shape and not torch.equal(out, x)
    nope = [s for s in specs if not s.use_rope]
    if nope:
        assert torch.equal(H.apply_layer_rope(x, torch.arange(5), nope[0]), x)


# --------------------------------------------------------------------------- family keys

HUNYUAN_ALPHA = {  # Hunyuan's "dynamic" RoPE with a fixed NTK alpha
    "model_type": "hunyuan_v1_dense", "hidden_size": 4096, "num_attention_heads": 32,
    "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 4,
    "max_position_embeddings": 262144, "rope_theta": 10000.0,
    "rope_scaling": {"type": "dynamic", "alpha": 1000.0, "factor": 1.0},
}


def test_hunyuan_alpha_is_a_static_ntk_base():
    from transformers.models.hunyuan_v1_dense.modeling_hunyuan_v1_dense import (
        HunYuanDenseV1RotaryEmbedding,
    )

    rotary = HunYuanDenseV1RotaryEmbedding(hf_config(HUNYUAN_ALPHA))
    for seq_len in (None, 300000):  # static: the length does not matter
        inv, att = H.rope_from_config(HUNYUAN_ALPHA, seq_len=seq_len)
        assert max_rel_diff(inv, rotary.inv_freq) <= ULPS4 and att == 1.0
    base = 10000.0 * 1000.0 ** (128 / 126)
    assert torch.allclose(inv, S.default(128, base=base)[0], rtol=1e-6)


@pytest.mark.parametrize("seq_len", [None, 100, 4096, 4097, 20000])
def test_phimoe_length_mscale_matches_the_module(seq_len):
    """Phi-MoE's module keeps the short factors at every length (it rebuilds inv_freq
    without the length) and switches short_mscale -> long_mscale past 4096."""
    from transformers.models.phimoe.modeling_phimoe import PhimoeRotaryEmbedding

    d = {"model_type": "phimoe", "hidden_size": 4096, "num_attention_heads": 32,
         "num_key_value_heads": 8, "num_hidden_layers": 2,
         "max_position_embeddings": 131072, "rope_theta": 10000.0,
         "rope_scaling": {"type": "longrope", "short_factor": [1.0 + i / 64 for i in range(64)],
                          "long_factor": [1.0 + i for i in range(64)],
                          "short_mscale": 1.1, "long_mscale": 1.25,
                          "original_max_position_embeddings": 4096}}
    rotary = PhimoeRotaryEmbedding(hf_config(d))
    n = 1 if seq_len is None else seq_len
    cos, _ = rotary(torch.zeros(1, 1, 1, 128), torch.tensor([[0, n - 1]]))
    inv, att = H.rope_from_config(d, seq_len=seq_len)
    assert att == pytest.approx(cos[0, 0, 0].item(), rel=1e-6)  # cos(0) * mscale
    assert att == (1.25 if seq_len is not None and seq_len > 4096 else 1.1)
    assert max_rel_diff(inv, rotary.rope_init_fn(rotary.config)[0]) <= ULPS4
    short, _ = S.longrope(128, 32.0, 4096, short_factor=d["rope_scaling"]["short_factor"],
                          long_factor=d["rope_scaling"]["long_factor"], seq_len=None)
    assert torch.equal(inv, short)  # the short factors, at every length


def test_glm4_without_the_key_rotates_half_the_head():
    """GLM-4's config class defaults partial_rotary_factor to 0.5; a config.json without
    the key must read the same, interleaved pairs inside the rotated half."""
    from booktools import hf_sweep

    d = {"model_type": "glm4", "hidden_size": 4096, "num_attention_heads": 32,
         "num_key_value_heads": 2, "head_dim": 128, "num_hidden_layers": 4,
         "max_position_embeddings": 32768, "rope_theta": 10000.0}
    specs = H.layer_specs(d)
    assert {(s.head_dim, s.rotary_dim, s.layout) for s in specs} == {(128, 64, "interleaved")}
    assert hf_sweep.compare(specs, hf_sweep.observe(hf_config(d))) == []


# --------------------------------------------------------------------------- checkpoint keys
# Published configs that carry keys a family's *default* config never sets (issue 29): legacy
# keys the config class translates in its constructor, switches the modeling code reads, and
# values the class fills in. Typed in as above (this machine cannot reach the hub): the keys
# that matter for positions are as released to our knowledge; each test holds for that shape
# whatever the exact widths. Each is compared with the family's own transformers modules
# (its rotary module's tables, or its attention layers run on the meta device by hf_sweep),
# for the dict and for the config object transformers builds from it.

MINIMAX_M2 = {  # MiniMaxAI/MiniMax-M2: partial RoPE as a legacy top-level rotary_dim (64/128)
    "model_type": "minimax_m2", "hidden_size": 3072, "num_attention_heads": 48,
    "num_key_value_heads": 8, "head_dim": 128, "rotary_dim": 64, "num_hidden_layers": 62,
    "intermediate_size": 1536, "num_local_experts": 256, "num_experts_per_tok": 8,
    "max_position_embeddings": 196608, "rope_theta": 5000000,
}
GEMMA3N_E4B_TEXT = {  # google/gemma-3n-E4B-it, text_config: the sliding layers' base 1e4
    "model_type": "gemma3n_text", "hidden_size": 2048, "num_attention_heads": 8,
    "num_key_value_heads": 2, "head_dim": 256, "num_hidden_layers": 35,
    "max_position_embeddings": 32768, "rope_theta": 1000000.0,
    "rope_local_base_freq": 10000.0, "sliding_window": 512, "num_kv_shared_layers": 15,
    "layer_types": (["sliding_attention"] * 4 + ["full_attention"]) * 7,
}
LFM2_1_2B = {  # LiquidAI/LFM2-1.2B: attention layers as full_attn_idxs, the others conv
    "model_type": "lfm2", "hidden_size": 2048, "num_attention_heads": 32,
    "num_key_value_heads": 8, "num_hidden_layers": 16, "max_position_embeddings": 128000,
    "rope_theta": 1000000.0, "full_attn_idxs": [2, 5, 8, 10, 12, 14], "conv_L_cache": 3,
}
GRANITE4_H_TINY = {  # ibm-granite/granite-4.0-h-tiny: old layer-type names, NoPE attention
    "model_type": "granitemoehybrid", "hidden_size": 1536, "num_attention_heads": 12,
    "num_key_value_heads": 4, "num_hidden_layers": 40, "max_position_embeddings": 131072,
    "rope_theta": 10000, "position_embedding_type": "nope", "mamba_n_heads": 48,
    "mamba_d_head": 64, "mamba_expand": 2, "mamba_d_state": 128, "mamba_n_groups": 1,
    "num_local_experts": 64, "num_experts_per_tok": 6,
    "layer_types": ["attention" if i % 10 == 5 else "mamba" for i in range(40)],
}
EXAONE4_1_2B = {  # LGAI-EXAONE/EXAONE-4.0-1.2B: no sliding window, so every layer rotates
    "model_type": "exaone4", "hidden_size": 2048, "num_attention_heads": 32,
    "num_key_value_heads": 8, "head_dim": 64, "num_hidden_layers": 30,
    "intermediate_size": 4096, "max_position_embeddings": 65536, "rope_theta": 1000000.0,
    "rope_scaling": {"rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0,
                     "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
    "sliding_window": None, "layer_types": ["full_attention"] * 30,
}
GLM45_AIR = {  # zai-org/GLM-4.5-Air: half of each head rotates, pairs in halves (rotate_half)
    "model_type": "glm4_moe", "hidden_size": 4096, "num_attention_heads": 96,
    "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 46,
    "intermediate_size": 10944, "moe_intermediate_size": 1408, "n_routed_experts": 128,
    "num_experts_per_tok": 8, "first_k_dense_replace": 1, "partial_rotary_factor": 0.5,
    "max_position_embeddings": 131072, "rope_theta": 1000000,
}
KIMI_K2 = {  # moonshotai/Kimi-K2-Instruct (a DeepSeek-V3 model): YaRN with beta_fast == beta_slow
    "model_type": "deepseek_v3", "hidden_size": 7168, "num_attention_heads": 64,
    "num_key_value_heads": 64, "num_hidden_layers": 61, "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128, "v_head_dim": 128, "kv_lora_rank": 512, "q_lora_rank": 1536,
    "max_position_embeddings": 131072, "rope_theta": 50000.0,
    "rope_scaling": {"beta_fast": 1.0, "beta_slow": 1.0, "factor": 32.0, "mscale": 1.0,
                     "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096,
                     "type": "yarn"},
}
FALCON_H1_05B = {  # tiiuae/Falcon-H1-0.5B-Instruct: every layer a "hybrid" (SSM + attention)
    "model_type": "falcon_h1", "hidden_size": 1024, "num_attention_heads": 8,
    "num_key_value_heads": 2, "head_dim": 64, "num_hidden_layers": 36,
    "max_position_embeddings": 16384, "rope_theta": 100000000000.0, "mamba_d_ssm": 1536,
    "mamba_n_heads": 24, "mamba_d_head": 64, "mamba_d_state": 128, "mamba_n_groups": 1,
}
#: Variants of published configs with one position key moved (no file of that shape known
#: to us): DeepSeek-V3 with rope_interleave false (the rope slice pairs halves) and
#: Command R7B with a null sliding_window (Cohere 2 then rotates no layer at all).
DEEPSEEK_V3_HALVES = dict(DEEPSEEK_V3, rope_interleave=False, num_hidden_layers=4)
COMMAND_R7B_NO_WINDOW = dict(COMMAND_R7B, sliding_window=None, num_hidden_layers=8)
#: Qwen2.5-7B with its window switched on (use_sliding_window true): Qwen2Config windows
#: only the layers from max_window_layers on; Qwen1.5-MoE-A2.7B likewise (Qwen2MoeConfig:
#: every other layer below max_window_layers).
QWEN25_7B_WINDOWED = dict(QWEN25_7B_YARN, use_sliding_window=True, sliding_window=4096,
                          max_window_layers=2, num_hidden_layers=4)
QWEN15_MOE_WINDOWED = {  # Qwen/Qwen1.5-MoE-A2.7B with use_sliding_window switched on
    "model_type": "qwen2_moe", "hidden_size": 2048, "num_attention_heads": 16,
    "num_key_value_heads": 16, "num_hidden_layers": 4, "max_position_embeddings": 8192,
    "rope_theta": 1000000.0, "num_experts": 60, "num_experts_per_tok": 4,
    "use_sliding_window": True, "sliding_window": 4096, "max_window_layers": 3,
}

#: name -> config checked layer by layer against the family's attention on meta
CHECKPOINT_KEYS = {
    # GLM-4.5-Air's 46 layers are alike: the first two (one dense, one MoE) say it all
    "lfm2-1.2b": LFM2_1_2B, "exaone4-1.2b": EXAONE4_1_2B,
    "glm4.5-air": dict(GLM45_AIR, num_hidden_layers=2),
    "deepseek-v3-rope-halves": DEEPSEEK_V3_HALVES,
    "command-r7b-no-window": COMMAND_R7B_NO_WINDOW,
    "qwen2.5-7b-windowed": QWEN25_7B_WINDOWED, "qwen1.5-moe-windowed": QWEN15_MOE_WINDOWED,
}


@pytest.mark.parametrize("name", sorted(CHECKPOINT_KEYS))
def test_checkpoint_keys_match_the_families_own_layers(name):
    from booktools import hf_sweep

    for how, _, problems in hf_sweep.check_published(CHECKPOINT_KEYS[name]):
        assert problems == [], (name, how)


def test_checkpoint_keys_facts():
    """What each key changes, against the family's config object (each was misread)."""
    lfm = H.layer_specs(LFM2_1_2B)
    assert [s.layer_type for s in lfm] == hf_config(LFM2_1_2B).layer_types
    assert [i for i, s in enumerate(lfm) if s.use_rope] == [2, 5, 8, 10, 12, 14]
    exaone = H.layer_specs(EXAONE4_1_2B)
    assert all(s.use_rope and s.sliding_window is None for s in exaone)
    assert {s.layout for s in H.layer_specs(GLM45_AIR)} == {"half"}
    assert {s.layout for s in H.layer_specs(DEEPSEEK_V3_HALVES)} == {"half"}
    assert {s.layout for s in H.layer_specs(DEEPSEEK_V3)} == {"interleaved"}
    assert not any(s.use_rope for s in H.layer_specs(COMMAND_R7B_NO_WINDOW))
    assert [s.sliding_window for s in H.layer_specs(QWEN25_7B_WINDOWED)] == [
        None, None, 4096, 4096]
    assert [s.sliding_window for s in H.layer_specs(QWEN15_MOE_WINDOWED)] == [
        4096, None, 4096, None]


def test_minimax_m2_rotary_dim_is_a_partial_factor():
    """MiniMaxM2Config turns rotary_dim 64 into partial_rotary_factor 64/128: 32 frequencies
    over the first 64 channels (not 64 over 128)."""
    from transformers.models.minimax_m2.modeling_minimax_m2 import MiniMaxM2RotaryEmbedding

    rotary = MiniMaxM2RotaryEmbedding(hf_config(MINIMAX_M2))
    for source in (MINIMAX_M2, hf_config(MINIMAX_M2)):
        inv, att = H.rope_from_config(source)
        assert inv.shape == rotary.inv_freq.shape == (32,)
        assert max_rel_diff(inv, rotary.inv_freq) <= ULPS4 and att == 1.0
        spec = H.layer_specs(source)[0]
        assert (spec.head_dim, spec.rotary_dim, spec.rope_theta) == (128, 64, 5e6)


def test_gemma3n_sliding_layers_use_rope_local_base_freq():
    from transformers.models.gemma3n.modeling_gemma3n import Gemma3nRotaryEmbedding

    rotary = Gemma3nRotaryEmbedding(hf_config(GEMMA3N_E4B_TEXT))
    for lt, theta in (("sliding_attention", 1e4), ("full_attention", 1e6)):
        ref_inv, ref_att = hf_tables(rotary, lt)
        for source in (GEMMA3N_E4B_TEXT, hf_config(GEMMA3N_E4B_TEXT)):
            inv, att = H.rope_from_config(source, layer_type=lt)
            assert max_rel_diff(inv, ref_inv) <= ULPS4 and att == float(ref_att)
            assert {s.rope_theta for s in H.layer_specs(source) if s.layer_type == lt} == {
                theta}


def test_granite_h_nope_and_old_layer_type_names():
    """Granite-4.0-H: "mamba"/"attention" are renamed linear_attention/full_attention, and
    position_embedding_type "nope" builds no rotary module (its attention gets None)."""
    from transformers.models.granitemoehybrid import modeling_granitemoehybrid as M

    obj = hf_config(GRANITE4_H_TINY)
    with torch.device("meta"):
        small = dict(GRANITE4_H_TINY, num_hidden_layers=6,
                     layer_types=GRANITE4_H_TINY["layer_types"][:6])
        assert M.GraniteMoeHybridModel(hf_config(small)).rotary_emb is None
    for source in (GRANITE4_H_TINY, obj):
        specs = H.layer_specs(source)
        assert [s.layer_type for s in specs] == obj.layer_types
        assert {s.layer_type for s in specs} == {"linear_attention", "full_attention"}
        assert not any(s.use_rope for s in specs)
    rope = dict(GRANITE4_H_TINY, position_embedding_type="rope")
    assert [s.use_rope for s in H.layer_specs(rope)] == [
        t == "full_attention" for t in obj.layer_types]


def test_yarn_with_equal_betas_matches_transformers():
    """Kimi K2's beta_fast == beta_slow == 1: transformers builds a one-pair ramp."""
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3RotaryEmbedding

    rotary = DeepseekV3RotaryEmbedding(hf_config(KIMI_K2))
    for source in (KIMI_K2, hf_config(KIMI_K2)):
        inv, att = H.rope_from_config(source)
        assert max_rel_diff(inv, rotary.inv_freq) <= ULPS4
        assert att == pytest.approx(rotary.attention_scaling, rel=1e-12)


def test_falcon_h1_layers_are_hybrid():
    from transformers.models.falcon_h1.modeling_falcon_h1 import FalconH1RotaryEmbedding

    obj = hf_config(FALCON_H1_05B)
    rotary = FalconH1RotaryEmbedding(obj)
    for source in (FALCON_H1_05B, obj):
        specs = H.layer_specs(source)
        assert [s.layer_type for s in specs] == obj.layer_types == ["hybrid"] * 36
        assert max_rel_diff(specs[0].inv_freq, rotary.inv_freq) <= ULPS4


def _without(d: dict, key: str) -> dict:
    """``d`` without ``key``, at the top level and in the RoPE dict(s); without a base at
    all for ``rope_theta`` (the per-type base keys too)."""
    d = copy.deepcopy(d)
    keys = (key,) if key != "rope_theta" else (
        "rope_theta", "rotary_emb_base", "rope_local_base_freq", "global_rope_theta",
        "local_rope_theta")
    for k in keys:
        d.pop(k, None)
    rope = d.get("rope_parameters") or {}
    for p in [rope, *rope.values()]:
        if isinstance(p, dict):
            p.pop(key, None)
    return d


#: Position keys a config.json may leave out, whose value the config class then fills in.
CLASS_DEFAULT_KEYS = ("rope_theta", "head_dim", "sliding_window", "qk_rope_head_dim",
                      "qk_nope_head_dim")


def _facts(specs):
    return [(s.head_dim, s.rotary_dim, s.sliding_window, s.use_rope, s.rope_theta)
            for s in specs]


def _default_mismatches(keys=CLASS_DEFAULT_KEYS) -> dict:
    """``{(model_type, key): (posenc on the dict without key, on the class's config)}``.

    Each family's default config without ``key`` (a head width: with ``hidden_size``
    doubled too, so a width the class fills in cannot pass for ``hidden_size //
    num_attention_heads`` by coincidence), read as a dict and as the object its class
    builds from that dict."""
    wrong = {}
    for mt, rec in sorted(H.FAMILIES.items()):
        if rec.refuse or mt not in CONFIG_MAPPING:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                base = CONFIG_MAPPING[mt]().to_dict()
        except Exception:  # noqa: BLE001 - a class that needs more than its defaults
            continue
        base.pop("model_type")
        for key in keys:
            if key not in base and key != "rope_theta":
                continue
            d = _without(base, key)
            if key.endswith("head_dim") and isinstance(d.get("hidden_size"), int):
                d["hidden_size"] *= 2
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    want = _facts(H.layer_specs(CONFIG_MAPPING[mt](**copy.deepcopy(d))))
            except Exception:  # noqa: BLE001 - the class needs the key (or the old width)
                continue
            try:
                got = _facts(H.layer_specs({**d, "model_type": mt}))
            except ValueError as err:
                got = [str(err)[:60]]
            if got != want:
                wrong[mt, key] = (got[0], want[0])
    return wrong


def test_keys_left_out_take_the_config_class_default():
    """A config.json without rope_theta, head_dim, sliding_window or an MLA width is read
    with its family's class default (Family.default_theta, Family.defaults, the per-type
    bases), as transformers builds it — checked for every family record."""
    wrong = _default_mismatches()
    assert not wrong, wrong


def test_hf_config_modules_import_without_a_cycle():
    """The shared helpers (config dict, layer patterns) sit below both readers: params
    never imports layers, and neither helper imports params or layers (issue 29)."""
    import ast
    from pathlib import Path

    import posenc.hf_config as package
    from posenc.hf_config import params

    root = Path(package.__file__).parent

    def imports(name):
        """The modules of posenc.hf_config that ``name`` imports: a module's ``from .x``,
        or every file of a subpackage (``families``) and its ``from ..x``."""
        package = root / name
        files = sorted(package.glob("*.py")) if package.is_dir() else [root / f"{name}.py"]
        level = 2 if package.is_dir() else 1
        assert files, name
        found = set()
        for file in files:
            tree = ast.parse(file.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.level == level:
                    found |= {node.module} if node.module else {a.name for a in node.names}
        return found

    assert "layers" not in imports("params")
    for helper in ("_config", "_patterns", "families"):
        assert not imports(helper) & {"params", "layers"}, helper
    # one reader and one builder per rope type
    assert set(params._READERS) == set(params._BUILDERS) == set(S.ROPE_TYPES)


def test_legacy_rope_type_names_only_where_the_class_renames_them():
    """Phi3Config and Phi4MultimodalConfig rename "su" and "yarn" to "longrope" (the other
    classes do not: "su" is an unknown type there); Qwen2VLTextConfig renames "mrope"."""
    phi4 = dict(PHI3_128K, model_type="phi4_multimodal")
    phi4["rope_scaling"] = dict(PHI3_128K["rope_scaling"], type="yarn")
    assert H.rope_parameters(phi4)["rope_type"] == "longrope"
    assert hf_config(phi4).rope_parameters["rope_type"] == "longrope"
    with pytest.raises(ValueError, match=r"rope_type'\] must be one of"):
        H.rope_parameters(dict(LLAMA31_8B, rope_scaling={"type": "su", "factor": 2.0}))
    qwen_vl = {"model_type": "qwen2_vl_text", "hidden_size": 3584, "num_attention_heads": 28,
               "num_hidden_layers": 2, "rope_theta": 1e6,
               "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}}
    assert H.rope_parameters(qwen_vl)["rope_type"] == "default"
    assert hf_config(qwen_vl).rope_parameters["rope_type"] == "default"


# --------------------------------------------------------------------------- model decides
# Families whose *model* (not the attention) decides per layer: Granite-SWA builds one
# rotary module per layer_rope_theta and hands NoPE layers (theta 0) nothing; Muse hands
# nothing to its layer_rope_theta == 0 layers. The family sweep runs each attention with
# the rotary module's tables and so cannot see that decision; these tests run the base
# model itself on the meta device, record what it hands every decoder layer, and rebuild
# the rotary module that made it on the CPU (booktools.hf_sweep.CHECKED_ELSEWHERE; the
# family sweep, tests/test_hf_sweep.py, reports them as checked elsewhere).


def model_level_positions(cfg) -> list:
    """Per decoder layer of ``cfg``'s base model: ``(inv_freq, attention_scaling,
    window)`` of the rotary module whose output the model passes the layer, or
    ``(None, None, window)`` when it passes none."""
    from booktools import hf_sweep

    cfg = copy.deepcopy(cfg)
    cfg._attn_implementation = "eager"
    cls = hf_sweep._base_model_class(cfg, hf_sweep._modeling(cfg.model_type))
    with torch.device("meta"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = cls(hf_sweep._slim(cfg))
    made, seen = {}, {}
    for mod in model.modules():
        if type(mod).__name__.endswith("RotaryEmbedding"):
            mod.register_forward_hook(lambda m, args, out: made.__setitem__(id(out), m))
    layers = max((m for m in model.modules() if isinstance(m, torch.nn.ModuleList)), key=len)
    for i, layer in enumerate(layers):
        def record(hidden_states, *args, __i=i, **kwargs):
            seen[__i] = kwargs.get("position_embeddings")
            return hidden_states
        layer.forward = record
    with torch.no_grad():
        model(input_ids=torch.zeros(1, 4, dtype=torch.long, device="meta"))
    out = []
    for i, layer in enumerate(layers):
        att = next(c for _, c in layer.named_children() if hf_sweep._accepts_positions(c))
        window = getattr(att, "sliding_window", None)
        if seen[i] is None:
            out.append((None, None, window))
            continue
        rotary = made[id(seen[i])]
        rebuilt = type(rotary)(rotary.config)  # the same module, on the CPU
        out.append((rebuilt.inv_freq, float(rebuilt.attention_scaling), window))
    return out


_THETAS = [1e4, 0, 5e5, 1e4, 0, 1e4, 5e5, 1e4]
#: name -> (model_type, config keys): variants (no published file of these families is
#: known to us) that move layer_rope_theta, and Muse's default without the list.
MODEL_DECIDES = {
    "granite-swa-layer-theta": ("granite_swa", {"layer_rope_theta": _THETAS}),
    "granitemoe-swa-layer-theta": ("granitemoe_swa", {"layer_rope_theta": _THETAS}),
    "muse-glimmer-default": ("muse_glimmer_text", {}),
    "muse-spark-default": ("muse_spark_text", {}),
}


@pytest.mark.parametrize("name", sorted(MODEL_DECIDES))
def test_layer_rope_theta_families_match_the_model(name):
    mt, keys = MODEL_DECIDES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cfg = CONFIG_MAPPING[mt](num_hidden_layers=8, **keys)
    truth = model_level_positions(cfg)
    assert any(inv is None for inv, _, _ in truth) and any(inv is not None for inv, _, _ in truth)
    plain = cfg.to_dict()
    if not keys:
        plain.pop("layer_rope_theta")  # the class's own default pattern
    for source in (cfg, plain):
        specs = H.layer_specs(source)
        assert [s.use_rope for s in specs] == [inv is not None for inv, _, _ in truth]
        for spec, (inv, att, window) in zip(specs, truth, strict=True):
            assert spec.sliding_window == window
            if inv is not None:
                assert max_rel_diff(spec.inv_freq, inv) <= ULPS4
                assert spec.attention_factor == att


QWEN2_VL_7B = {  # Qwen/Qwen2-VL-7B-Instruct: a flat file (text keys at the top level)
    "model_type": "qwen2_vl", "hidden_size": 3584, "num_attention_heads": 28,
    "num_key_value_heads": 4, "num_hidden_layers": 28, "intermediate_size": 18944,
    "max_position_embeddings": 32768, "rope_theta": 1000000.0, "sliding_window": 32768,
    "use_sliding_window": False, "max_window_layers": 28,
    "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
}


def test_flat_multimodal_file_is_read_as_its_text_config():
    """Qwen2VLConfig moves a flat file's text keys into text_config (and its text config
    reads the old "mrope" type as default): posenc reads the same text model."""
    from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLRotaryEmbedding

    obj = hf_config(QWEN2_VL_7B)
    rotary = Qwen2VLRotaryEmbedding(obj.get_text_config())
    for source in (QWEN2_VL_7B, obj):
        specs = H.layer_specs(source)
        assert len(specs) == 28 and {s.sliding_window for s in specs} == {None}
        assert {(s.rope_type, s.rope_theta, s.rotary_dim) for s in specs} == {
            ("default", 1e6, 128)}
        assert max_rel_diff(specs[0].inv_freq, rotary.inv_freq) <= ULPS4
