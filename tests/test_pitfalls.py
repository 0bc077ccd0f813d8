"""The bugs of chapter 12 (book/12_pitfalls.ipynb), each reproduced, and its fix checked.

Every test asserts two things: the bug still reproduces (the wrong reading differs from the
right one by a clear margin), and the `posenc` fix gives the right answer. Where the bug or
the behaviour lives in ``transformers``, the test runs ``transformers`` 5.24's own classes;
the chapter itself reproduces those cases with `posenc` primitives only (importing
``transformers`` would cost the notebook several seconds), and these tests check that the two
agree. If a test here fails, a reproduction has stopped reproducing and the chapter's prose
must be re-read against the new behaviour.
"""

from __future__ import annotations

import logging
import math

import pytest
import torch
from transformers import LlamaConfig, Olmo3Config, Phi3Config, PhimoeConfig, Qwen3Config
from transformers.models.llama.modeling_llama import LlamaModel, LlamaRotaryEmbedding
from transformers.models.olmo3.modeling_olmo3 import Olmo3RotaryEmbedding
from transformers.models.phi3.modeling_phi3 import Phi3RotaryEmbedding
from transformers.models.phimoe.modeling_phimoe import PhimoeRotaryEmbedding
from transformers.models.qwen3.modeling_qwen3 import Qwen3RotaryEmbedding

from posenc.attention import attention
from posenc.rope import apply_rope, rope_angles, rope_inv_freq
from posenc.scaling import dynamic_ntk, longrope, yarn, yarn_attention_factor

F64 = torch.float64
X = torch.zeros(1)  # transformers' rotary modules only read x's device and dtype


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def score(q, k, dist, **kw) -> float:
    """q·k after RoPE, query at position ``dist`` and key at 0."""
    return (apply_rope(q, [dist], **kw) * apply_rope(k, [0], **kw)).sum().item()


# ---------------------------------------------------------------- layout


def test_indexer_layout_mixup_agrees_at_distance_zero_and_picks_other_keys():
    """DeepSeek-V3.2's indexer (pf-shipped): half-trained, scored with interleaved pairs."""
    g = gen(10)
    q = torch.randn(1, 64, generator=g, dtype=F64)
    k = torch.randn(4096, 64, generator=g, dtype=F64)
    top = {}
    for lay in ("half", "interleaved"):
        qr = apply_rope(q, [4096], layout=lay)
        assert (qr @ apply_rope(k[:1], [4096], layout=lay).T).item() == pytest.approx(
            (q @ k[:1].T).item(), abs=1e-10)  # distance 0: the identity, both layouts
        top[lay] = set((qr @ apply_rope(k, torch.arange(4096), layout=lay).T)[0]
                       .topk(256).indices.tolist())
    assert len(top["half"] & top["interleaved"]) < 256 // 4


def test_glm4_partial_interleaved_is_posenc_interleaved_with_rotary_dim():
    """GLM-4 pairs (2i, 2i+1) inside the rotated slice: posenc's interleaved + rotary_dim."""
    from transformers.models.glm4.modeling_glm4 import apply_rotary_pos_emb

    d, r, s = 32, 16, 7
    g = gen(1)
    q, k = torch.randn(2, 1, 1, s, d, generator=g, dtype=F64)
    ang = rope_angles(torch.arange(s), rope_inv_freq(r, dtype=F64))[None]
    emb = torch.cat((ang, ang), -1)  # transformers' (b, s, r) cos/sin layout
    q_hf, _ = apply_rotary_pos_emb(q, k, emb.cos(), emb.sin())
    ours = apply_rope(q, torch.arange(s), rotary_dim=r, layout="interleaved")
    torch.testing.assert_close(q_hf, ours, rtol=0, atol=1e-12)
    half = apply_rope(q, torch.arange(s), rotary_dim=r, layout="half")
    assert (half - q_hf).abs().max() > 0.1  # the other partial convention differs


@pytest.mark.parametrize("r_wrong", [16, 256])  # applied twice; never applied
def test_partial_factor_twice_or_never_agrees_only_at_distance_zero(r_wrong):
    g = gen(11)
    q, k = torch.randn(2, 1, 256, generator=g, dtype=F64)
    for dist, equal in [(0, True), (10, False), (1000, False)]:
        right = score(q, k, dist, base=1e7, rotary_dim=64)
        wrong = score(q, k, dist, base=1e7, rotary_dim=r_wrong)
        assert (abs(right - wrong) < 1e-9) is equal


# ---------------------------------------------------------------- precision


def to_tf32(t: torch.Tensor) -> torch.Tensor:
    """The chapter's TF32 emulation: float32 rounded to a 10-bit mantissa (nearest even)."""
    bits = t.to(torch.float32).view(torch.int32)
    bits = (bits + 0x0FFF + ((bits >> 13) & 1)) & ~0x1FFF
    return bits.view(torch.float32).double()


def test_tf32_emulation_keeps_10_mantissa_bits():
    ints = torch.arange(1, 2049, dtype=torch.float32)
    assert torch.equal(to_tf32(ints), ints.double())  # exact up to 2^11
    held = to_tf32(torch.tensor([2049.0, 2051, 4099, 10_001, 100_000, 99_997]))
    assert held.tolist() == [2048, 2052, 4100, 10_000, 99_968, 99_968]
    x = torch.randn(10_000, generator=gen(0)).abs() + 1e-3
    rel = ((to_tf32(x) - x.double()) / x.double()).abs().max()
    assert 2.0**-12 < rel <= 2.0**-11  # half an ulp of a 10-bit mantissa


def test_tf32_positions_above_2048_break_the_score_and_posenc_angles_are_exact():
    g = gen(1)
    q, k = torch.randn(2, 1, 128, generator=g, dtype=F64)
    inv = rope_inv_freq(128, 500000.0, dtype=F64)

    def sc(ang_q, ang_k):
        cq, ck = (torch.cat((a, a), -1) for a in (ang_q, ang_k))
        return (apply_rope(q, cos=cq.cos(), sin=cq.sin())
                * apply_rope(k, cos=ck.cos(), sin=ck.sin())).sum().item()

    def tf32(m):
        return to_tf32(torch.tensor([float(m)]))[:, None] * to_tf32(inv)

    for m, bad in [(1_000, False), (100_000, True)]:
        exact = sc(rope_angles([m], inv), rope_angles([m - 3], inv))
        err = abs(sc(tf32(m), tf32(m - 3)) - exact)
        assert (err > 0.5) is bad and err > 0  # below 2048 only the frequencies round
    # posenc's angles are an elementwise product: exact integers, whatever matmul precision
    old = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("high")
        ang = rope_angles(torch.arange(2040, 2060), torch.ones(1))
        assert ang.flatten().tolist() == list(range(2040, 2060))
    finally:
        torch.set_float32_matmul_precision(old)


# ---------------------------------------------------------------- positions and caches


def test_left_padding_transformers_positions_prefill_from_mask_decode_plus_one():
    """transformers 5.24: prefill cumsum(mask) - 1, then each row's last position + 1."""
    from transformers.generation.utils import GenerationMixin

    src = __import__("inspect").getsource(GenerationMixin)
    assert "attention_mask.long().cumsum(-1) - 1" in src
    assert "+ position_ids[..., -1:]" in src


def test_sink_rerotation_in_bf16_drifts_pre_rope_cache_does_not():
    g = gen(7)
    ks = torch.randn(10, 16, generator=g, dtype=F64)
    k16 = ks.to(torch.bfloat16)
    post = apply_rope(k16, torch.arange(10, 20))
    for _ in range(1000):
        post = apply_rope(post, [-1] * 10)
    truth = apply_rope(ks, torch.arange(10, 20) - 1000)
    pre = apply_rope(k16, torch.arange(10, 20) - 1000)
    post_err = (post.double() - truth).abs().max().item()
    pre_err = (pre.double() - truth).abs().max().item()
    assert pre_err < 0.05 < 1.0 < post_err
    # and in float64 the two designs agree exactly (R_a R_b = R_{a+b})
    post64 = apply_rope(apply_rope(ks, torch.arange(10, 20)), [-1000] * 10)
    torch.testing.assert_close(post64, truth, rtol=0, atol=1e-12)


@pytest.fixture
def nan_fill():
    torch.use_deterministic_algorithms(True)
    fill = torch.utils.deterministic.fill_uninitialized_memory
    torch.utils.deterministic.fill_uninitialized_memory = True
    yield
    torch.utils.deterministic.fill_uninitialized_memory = fill
    torch.use_deterministic_algorithms(False)


def tiny_llama(**kw) -> LlamaConfig:
    return LlamaConfig(hidden_size=64, num_attention_heads=2, num_key_value_heads=2,
                       num_hidden_layers=1, intermediate_size=64, vocab_size=32,
                       max_position_embeddings=16, **kw)


def test_meta_to_empty_leaves_transformers_inv_freq_uninitialised(nan_fill):
    cfg = tiny_llama()
    with torch.device("meta"):
        rotary = LlamaRotaryEmbedding(cfg)
    rotary.to_empty(device="cpu")
    assert torch.isnan(rotary.inv_freq).all()  # uninitialised memory, filled with NaN
    assert "inv_freq" not in rotary.state_dict()  # so no checkpoint can restore it
    with pytest.raises(ValueError, match="inv_freq must be finite"):
        apply_rope(torch.ones(1, 32), [1], inv_freq=rotary.inv_freq)


def test_transformers_init_weights_restores_inv_freq_after_to_empty(nan_fill):
    cfg = tiny_llama()
    with torch.device("meta"):
        model = LlamaModel(cfg)
    model.to_empty(device="cpu")
    assert torch.isnan(model.rotary_emb.inv_freq).all()
    model._init_weights(model.rotary_emb)
    torch.testing.assert_close(model.rotary_emb.inv_freq, rope_inv_freq(32), rtol=1e-6,
                               atol=0)


def dynamic_rotary() -> LlamaRotaryEmbedding:
    return LlamaRotaryEmbedding(tiny_llama(rope_scaling={"rope_type": "dynamic",
                                                         "factor": 2.0}))


def ntk(seq_len: int) -> torch.Tensor:
    return dynamic_ntk(32, 2.0, 16, seq_len=seq_len)[0]


def test_transformers_dynamic_ntk_keeps_a_grown_base_for_a_shorter_request():
    rotary = dynamic_rotary()
    rotary(X, torch.arange(48)[None])
    torch.testing.assert_close(rotary.inv_freq, ntk(48), rtol=1e-6, atol=0)
    rotary(X, torch.arange(32)[None])  # shorter, but still > L = 16: base of 48 kept
    torch.testing.assert_close(rotary.inv_freq, ntk(48), rtol=1e-6, atol=0)
    assert (ntk(32) - ntk(48)).abs().max() > 1e-3  # posenc: each length its own base
    rotary(X, torch.arange(8)[None])  # shorter than L: reset (fixed by #46624)
    torch.testing.assert_close(rotary.inv_freq, rope_inv_freq(32), rtol=1e-6, atol=0)


def test_dynamic_ntk_reset_is_lost_when_the_cached_length_is_never_written():
    """Before transformers#46624 the cached length went to ``None_max_seq_len_cached``; the
    one read stayed at L, so the reset condition never held. Re-creating that state on 5.24's
    module shows the grown base surviving a short request."""
    rotary = dynamic_rotary()
    rotary(X, torch.arange(48)[None])
    rotary.max_seq_len_cached = rotary.original_max_seq_len  # what the stray write left
    rotary(X, torch.arange(8)[None])
    torch.testing.assert_close(rotary.inv_freq, ntk(48), rtol=1e-6, atol=0)


def test_transformers_dynamic_ntk_reads_the_longest_row_of_the_batch():
    rotary = dynamic_rotary()
    batch = torch.stack([torch.arange(40), torch.arange(40).clamp(max=7)])  # 40 and 8
    rotary(X, batch)
    torch.testing.assert_close(rotary.inv_freq, ntk(40), rtol=1e-6, atol=0)
    assert torch.equal(ntk(8), rope_inv_freq(32))  # the short row alone: plain RoPE


PHI = {"short_factor": [1.0] * 16, "long_factor": [4.0] * 16}


def test_transformers_longrope_reads_the_longest_row_of_the_batch():
    cfg = Phi3Config(hidden_size=64, num_attention_heads=2, max_position_embeddings=64,
                     original_max_position_embeddings=16,
                     rope_scaling={"rope_type": "longrope", **PHI})
    rotary = Phi3RotaryEmbedding(cfg)
    rotary(X, torch.arange(8)[None])
    short, _ = longrope(32, 4.0, 16, seq_len=8, base=cfg.rope_parameters["rope_theta"],
                        **PHI)
    torch.testing.assert_close(rotary.inv_freq, short, rtol=1e-6, atol=0)
    rotary(X, torch.stack([torch.arange(20), torch.arange(20).clamp(max=7)]))
    long, _ = longrope(32, 4.0, 16, seq_len=20, base=cfg.rope_parameters["rope_theta"],
                       **PHI)
    torch.testing.assert_close(rotary.inv_freq, long, rtol=1e-6, atol=0)  # the 8-row too


def test_transformers_phimoe_forward_ignores_the_long_factors_it_switched_to():
    """PhimoeRotaryEmbedding.forward (5.24) switches to long_mscale past L but recomputes
    inv_freq without the sequence length, i.e. with the short factors."""
    rope = {"rope_type": "longrope", **PHI, "short_mscale": 1.0, "long_mscale": 1.5,
            "original_max_position_embeddings": 16}
    cfg = PhimoeConfig(hidden_size=64, num_attention_heads=2, num_key_value_heads=2,
                       max_position_embeddings=64, original_max_position_embeddings=16,
                       rope_scaling=rope)
    rotary = PhimoeRotaryEmbedding(cfg)
    cos, sin = rotary(X, torch.arange(32)[None])  # 32 > L = 16: long
    base = cfg.rope_parameters["rope_theta"]
    long, _ = longrope(32, 4.0, 16, seq_len=32, base=base, **PHI)
    short, _ = longrope(32, 4.0, 16, seq_len=8, base=base, **PHI)
    torch.testing.assert_close(rotary.inv_freq, long, rtol=1e-6, atol=0)  # buffer: long
    assert cos[0, 0, 0].item() == pytest.approx(1.5)  # long_mscale applied
    angle = torch.atan2(sin[0, 1, :16], cos[0, 1, :16])  # position 1: the frequencies
    torch.testing.assert_close(angle, short, rtol=1e-5, atol=1e-6)  # ... but short ones
    assert (angle - long).abs().max() > 0.1


def test_batched_short_row_changes_with_the_batch_and_not_with_its_own_length():
    """The chapter's numbers for pf-batchwide: the short row's output moves."""
    g = gen(3)
    q, k, v = torch.randn(3, 48, 32, generator=g, dtype=F64)

    def last(n, inv):
        return attention(apply_rope(q[n - 1:n], [n - 1], inv_freq=inv),
                         apply_rope(k[:n], torch.arange(n), inv_freq=inv), v[:n])[0]

    own = last(8, rope_inv_freq(32, dtype=F64))
    batched = last(8, dynamic_ntk(32, 2.0, 16, seq_len=40, dtype=F64)[0])
    assert (batched - own).abs().max() > 0.01


# ---------------------------------------------------------------- configs and scaling


def test_transformers_ignores_attn_factor_and_vllm_reading_differs(caplog):
    """DeepSeek-R1-0528-Qwen3-8B's ``attn_factor``: transformers warns and uses 0.1 ln s + 1."""
    attn_factor = 0.8782488562869419
    with caplog.at_level(logging.WARNING):
        cfg = Qwen3Config(hidden_size=64, num_attention_heads=2, num_key_value_heads=2,
                          head_dim=32, max_position_embeddings=131072,
                          rope_scaling={"rope_type": "yarn", "factor": 4.0,
                                        "original_max_position_embeddings": 32768,
                                        "attn_factor": attn_factor})
        rotary = Qwen3RotaryEmbedding(cfg)
    # the text chapter 12 quotes
    assert ("Unrecognized keys in `rope_parameters` for 'rope_type'='yarn': {'attn_factor'}"
            in caplog.text)
    assert rotary.attention_scaling == pytest.approx(yarn_attention_factor(4.0))
    assert attn_factor == pytest.approx(1 / (0.1 * math.log(4) + 1))
    vllm = yarn_attention_factor(4.0) * attn_factor  # mscale = yarn_get_mscale(s) * attn
    assert vllm == pytest.approx(1.0)
    assert rotary.attention_scaling**2 / vllm**2 == pytest.approx(1.2965, abs=1e-4)


def test_llama31_rope_scaling_dropped_is_close_on_short_distances_only():
    from posenc.scaling import llama3

    scaled, _ = llama3(128, 8.0, 8192, low_freq_factor=1.0, high_freq_factor=4.0,
                       base=500000.0, dtype=F64)
    plain = rope_inv_freq(128, 500000.0, dtype=F64)
    g = gen(5)
    q, k = torch.randn(2, 1, 128, generator=g, dtype=F64)
    near = [score(q, k, 100, inv_freq=f) for f in (scaled, plain)]
    far = [score(q, k, 1000, inv_freq=f) for f in (scaled, plain)]
    assert abs(near[0] - near[1]) < 0.01 * abs(near[0])
    assert abs(far[0] - far[1]) > abs(far[0])


# ---------------------------------------------------------------- per-layer designs


def test_transformers_olmo3_scales_full_layers_only_as_posenc_per_layer():
    cfg = Olmo3Config(hidden_size=256, num_attention_heads=2, num_key_value_heads=2,
                      num_hidden_layers=4, max_position_embeddings=65536,
                      rope_scaling={"rope_type": "yarn", "factor": 8.0,
                                    "original_max_position_embeddings": 8192})
    assert cfg.layer_types == ["sliding_attention"] * 3 + ["full_attention"]
    rotary = Olmo3RotaryEmbedding(cfg)
    base = cfg.rope_parameters["full_attention"]["rope_theta"]
    full, att = yarn(128, 8.0, 8192, base=base)
    torch.testing.assert_close(rotary.full_attention_inv_freq, full, rtol=1e-6, atol=0)
    assert rotary.full_attention_attention_scaling == pytest.approx(att)
    torch.testing.assert_close(rotary.sliding_attention_inv_freq, rope_inv_freq(128, base),
                               rtol=1e-6, atol=0)
    assert rotary.sliding_attention_attention_scaling == 1.0
    # the bug: scaling the sliding layers changes their scores inside the window
    g = gen(12)
    q, k = torch.randn(2, 1, 128, generator=g, dtype=F64)
    full64, att64 = yarn(128, 8.0, 8192, base=base, dtype=F64)
    plain64 = rope_inv_freq(128, base, dtype=F64)
    for dist in (10, 1000, 4095):
        wrong = score(q, k, dist, inv_freq=full64) * att64**2
        assert abs(wrong - score(q, k, dist, inv_freq=plain64)) > 1.0


def test_transformers_524_rotary_modules_build_angles_elementwise_not_by_matmul():
    """The TF32 report (transformers#48428) concerns a matmul that 5.24 no longer uses."""
    import inspect
    import pathlib

    import transformers

    src = inspect.getsource(LlamaRotaryEmbedding.forward)
    assert "position_ids[..., None].float() * self.inv_freq" in src
    models = pathlib.Path(transformers.__file__).parent / "models"
    matmul = [p.name for p in models.rglob("modeling_*.py")
              if "inv_freq_expanded.float() @ position_ids_expanded" in p.read_text()]
    assert matmul == []
