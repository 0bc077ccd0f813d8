"""Tests for posenc.scaling: each method against its paper formula and against transformers.

Reference functions below are written from the papers / reference code, element by element
in plain Python floats; the parity tests call transformers' ``ROPE_INIT_FUNCTIONS`` with real
``LlamaConfig`` objects over a grid of head dims, bases, factors, lengths, partial rotary
fractions, YaRN's truncate flag, beta pairs and mscale/attention-factor settings.
"""

from __future__ import annotations

import itertools
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

from posenc import scaling as S
from posenc.rope import rope_inv_freq

# ----------------------------------------------------------------- reference formulas


def ref_theta(r, base):
    return [base ** (-2 * i / r) for i in range(r // 2)]


def ref_ntk_base(base, s, r):
    """bloc97 (2023): base' = base · s^(r/(r−2))."""
    return base * s ** (r / (r - 2))


def ref_yarn_paper(r, base, s, L, alpha, beta):
    """Peng et al. (2023) §3.2: r_i = L/λ_i, γ ramp in r, h(θ) = (1−γ)θ/s + γθ."""
    out = []
    for theta in ref_theta(r, base):
        turns = L / (2 * math.pi / theta)
        gamma = 0.0 if turns < alpha else 1.0 if turns > beta else (turns - alpha) / (beta - alpha)
        out.append((1 - gamma) * theta / s + gamma * theta)
    return out


def ref_llama3(r, base, s, L, low, high):
    """Meta's Llama 3.1 ``apply_scaling`` loop (reference code), with its parameters exposed."""
    low_wavelen, high_wavelen = L / low, L / high
    out = []
    for freq in ref_theta(r, base):
        wavelen = 2 * math.pi / freq
        if wavelen < high_wavelen:
            out.append(freq)
        elif wavelen > low_wavelen:
            out.append(freq / s)
        else:
            smooth = (L / wavelen - low) / (high - low)
            out.append((1 - smooth) * freq / s + smooth * freq)
    return out


def close(a, b, rtol=1e-5):
    return torch.allclose(torch.as_tensor(a, dtype=torch.float64),
                          torch.as_tensor(b, dtype=torch.float64), rtol=rtol, atol=0.0)


# ----------------------------------------------------------------- transformers harness


def hf(rope_type, head_dim, base, prf, max_pos, seq_len=None, **params):
    """Call transformers' init function for ``rope_type`` with a LlamaConfig."""
    rope = {"rope_type": rope_type, "rope_theta": base, **params}
    if prf != 1.0:
        rope["partial_rotary_factor"] = prf
    cfg = LlamaConfig(hidden_size=4 * head_dim, num_attention_heads=4, head_dim=head_dim,
                      max_position_embeddings=max_pos, rope_parameters=rope)
    inv, att = ROPE_INIT_FUNCTIONS[rope_type](cfg, "cpu", seq_len=seq_len)
    return inv, att


HEAD_DIMS = (64, 96, 128)
BASES = (10000.0, 500000.0)
FACTORS = (1.0, 2.0, 2.5, 4.0, 8.0, 32.0)
LENGTHS = (2048, 4096, 8192)
PRFS = (1.0, 0.5, 0.25)
BASE_GRID = list(itertools.product(HEAD_DIMS, BASES, FACTORS, LENGTHS, PRFS))
OUTER = list(itertools.product(HEAD_DIMS, PRFS))  # one test item per (head_dim, prf)


def inner(d, prf, *more):
    """The grid points of one test item: every base, factor and length (and ``more``)."""
    return itertools.product([d], BASES, FACTORS, LENGTHS, [prf], *more)


def check_all(points, one):
    """Run ``one(*point)`` on every point; report every failing point at once."""
    failed, n = [], 0
    for point in points:
        n += 1
        if not one(*point):
            failed.append(point)
    assert n and not failed, f"{len(failed)} of {n} grid points differ, e.g. {failed[:3]}"
    return n


def linear_ok(d, base, s, L, prf):
    inv, att = S.linear(d, s, L, base=base, rotary_dim=int(d * prf))
    ref, ref_att = hf("linear", d, base, prf, int(s * L), factor=s)
    return inv.shape == ref.shape and close(inv, ref) and att == ref_att == 1.0


def ntk_ok(d, base, s, L, prf):
    """transformers has no static NTK type; its dynamic rule with factor 1 at ℓ = s·L is it."""
    r = int(d * prf)
    inv, att = S.ntk_aware(d, s, L, base=base, rotary_dim=r)
    ref, ref_att = hf("dynamic", d, base, prf, L, seq_len=int(s * L), factor=1.0)
    return (close(inv, ref) and att == ref_att == 1.0
            and close(inv, rope_inv_freq(d, ref_ntk_base(base, s, r), r), rtol=1e-6))


SEQ_FRACTIONS = (0.25, 1.0, 1.5, 2.0, 3.7)


def dynamic_ok(d, base, s, L, prf, frac):
    seq_len = int(frac * L)
    inv, att = S.dynamic_ntk(d, s, L, seq_len=seq_len, base=base, rotary_dim=int(d * prf))
    ref, ref_att = hf("dynamic", d, base, prf, L, seq_len=seq_len, factor=s)
    return close(inv, ref) and att == ref_att == 1.0


YARN_EXTRA = (
    {},                                           # 0.1 ln s + 1
    {"mscale": 1.0, "mscale_all_dim": 1.0},       # DeepSeek-V3: ratio 1
    {"mscale": 0.707, "mscale_all_dim": 1.0},
    {"mscale": 1.0, "mscale_all_dim": 0.8},
    {"attention_factor": 1.25},                   # explicit value wins
    {"attention_factor": 0.9, "mscale": 1.0, "mscale_all_dim": 0.5},
)
BETAS = ((32.0, 1.0), (16.0, 2.0), (64.0, 0.5))


# every attention-factor setting, each with one of the beta pairs (all pairs are used)
YARN_SETTINGS = [(BETAS[j % len(BETAS)], j) for j in range(len(YARN_EXTRA))]


def yarn_points(d, prf):
    return inner(d, prf, (True, False), YARN_SETTINGS)


def yarn_ok(d, base, s, L, prf, truncate, setting):
    (beta_fast, beta_slow), j = setting
    extra = YARN_EXTRA[j]
    inv, att = S.yarn(d, s, L, base=base, rotary_dim=int(d * prf), truncate=truncate,
                      beta_fast=beta_fast, beta_slow=beta_slow, **extra)
    ref, ref_att = hf("yarn", d, base, prf, int(s * L), factor=s,
                      original_max_position_embeddings=L, truncate=truncate,
                      beta_fast=beta_fast, beta_slow=beta_slow, **extra)
    return inv.shape == ref.shape and close(inv, ref) and att == pytest.approx(ref_att, rel=1e-12)


LLAMA3_BANDS = ((1.0, 4.0), (2.0, 8.0), (0.5, 3.0))


def llama3_ok(d, base, s, L, prf, bands):
    low, high = bands
    r = int(d * prf)
    inv, att = S.llama3(d, s, L, base=base, rotary_dim=r, low_freq_factor=low,
                        high_freq_factor=high)
    ref, ref_att = hf("llama3", d, base, prf, int(s * L), factor=s, low_freq_factor=low,
                      high_freq_factor=high, original_max_position_embeddings=L)
    return (close(inv, ref) and att == ref_att == 1.0
            and close(inv, ref_llama3(r, base, s, L, low, high), rtol=1e-6))


LONGROPE_SEQ = (None, 1.0, 1.0001, 3.0)  # seq_len as a fraction of L (None: at init)
LONGROPE_ATT = (None, 1.3)               # default sqrt(1 + ln s / ln L), or explicit


def longrope_factors(r, seed):
    """Per-pair factor lists shaped like Phi-3's: short near 1, long growing to ~s."""
    g = torch.Generator().manual_seed(seed)
    short = (1.0 + 0.1 * torch.rand(r // 2, generator=g, dtype=torch.float64)).tolist()
    long = torch.linspace(1.0, 40.0, r // 2, dtype=torch.float64)
    long = (long * (1.0 + 0.05 * torch.rand(r // 2, generator=g, dtype=torch.float64)))
    return short, long.tolist()


def longrope_ok(d, base, s, L, prf, frac, att):
    r = int(d * prf)
    short, long = longrope_factors(r, seed=d + L + int(s))
    seq_len = None if frac is None else int(frac * L) + 1
    extra = {} if att is None else {"attention_factor": att}
    inv, got_att = S.longrope(d, s, L, short_factor=short, long_factor=long, seq_len=seq_len,
                              base=base, rotary_dim=r, **extra)
    ref, ref_att = hf("longrope", d, base, prf, int(s * L), seq_len=seq_len, factor=s,
                      short_factor=short, long_factor=long,
                      original_max_position_embeddings=L, **extra)
    theta = ref_theta(r, base)
    pick = long if seq_len is not None and seq_len > L else short
    mine = [t / f for t, f in zip(theta, pick, strict=True)]
    return (inv.shape == ref.shape and close(inv, ref) and close(inv, mine, rtol=1e-6)
            and got_att == pytest.approx(ref_att, rel=1e-12))


def proportional_ok(d, base, s, L, prf):
    """transformers keeps the full head: int(prf·d // 2) rotated pairs, zeros after."""
    r = 2 * int(prf * d // 2)
    inv, att = S.proportional(d, s, L, base=base, rotary_dim=r)
    ref, ref_att = hf("proportional", d, base, prf, int(s * L), factor=s)
    full = ref_theta(d, base)
    mine = [t / s if i < r // 2 else 0.0 for i, t in enumerate(full)]
    return (inv.shape == ref.shape == (d // 2,) and close(inv, ref)
            and close(inv, mine, rtol=1e-6) and att == ref_att == 1.0)


# Each parity test walks its whole grid; (head_dim, prf) items keep failures local.
PARITY = {
    "linear": (lambda d, prf: inner(d, prf), linear_ok),
    "ntk_aware": (lambda d, prf: inner(d, prf), ntk_ok),
    "dynamic_ntk": (lambda d, prf: inner(d, prf, SEQ_FRACTIONS), dynamic_ok),
    "yarn": (yarn_points, yarn_ok),
    "llama3": (lambda d, prf: inner(d, prf, LLAMA3_BANDS), llama3_ok),
    "longrope": (lambda d, prf: inner(d, prf, LONGROPE_SEQ, LONGROPE_ATT), longrope_ok),
    "proportional": (lambda d, prf: inner(d, prf), proportional_ok),
}
GRID_SIZES = {"linear": 324, "ntk_aware": 324, "dynamic_ntk": 1620, "yarn": 3888,
              "llama3": 972, "longrope": 2592, "proportional": 324}


@pytest.mark.parametrize("method", sorted(PARITY))
@pytest.mark.parametrize("d,prf", OUTER, ids=[f"d{d}-prf{p}" for d, p in OUTER])
def test_parity_with_transformers(method, d, prf):
    points, ok = PARITY[method]
    check_all(points(d, prf), ok)


def test_parity_grid_size():
    """The chapter's closing note quotes these counts; keep them in sync."""
    sizes = {m: sum(len(list(points(d, prf))) for d, prf in OUTER)
             for m, (points, _) in PARITY.items()}
    assert sizes == GRID_SIZES


# ----------------------------------------------------------------- paper formulas, numbers


@pytest.mark.parametrize("d,base,s,L,prf", BASE_GRID[::7])
@pytest.mark.parametrize("alpha,beta", [(1.0, 32.0), (0.0, 8.0), (2.0, 64.0)])
def test_yarn_paper_matches_paper_formula(d, base, s, L, prf, alpha, beta):
    r = int(d * prf)
    inv, att = S.yarn_paper(d, s, L, base=base, alpha=alpha, beta=beta, rotary_dim=r)
    assert close(inv, ref_yarn_paper(r, base, s, L, alpha, beta), rtol=1e-6)
    assert att == pytest.approx(0.1 * math.log(s) + 1.0)


def test_linear_is_positions_divided_by_s():
    inv, _ = S.linear(128, 4.0, dtype=torch.float64)
    theta = rope_inv_freq(128, dtype=torch.float64)
    # position 16000 under PI turns exactly like position 4000 without it
    assert torch.allclose(16000 * inv, 4000 * theta, rtol=1e-15)


def test_ntk_issue_numbers():
    assert S.ntk_aware_base(1e4, 4, 128) == pytest.approx(40889.94, abs=0.01)
    inv, _ = S.ntk_aware(128, 4.0, dtype=torch.float64)
    scale = S.per_pair_scale(inv, 128)
    assert scale[0] == 1.0
    assert scale[-1].item() == pytest.approx(4.0, rel=1e-12)
    assert scale[26].item() == pytest.approx(4 ** (52 / 126), rel=1e-12)
    assert round(scale[26].item(), 1) == 1.8
    expected = torch.tensor([4.0 ** (2 * i / 126) for i in range(64)], dtype=torch.float64)
    assert torch.allclose(scale, expected, rtol=1e-12)


def test_dynamic_ntk_issue_numbers():
    assert S.dynamic_ntk_base(1e4, 2, 2048, 3000, 128) == pytest.approx(19499.28, abs=0.005)
    assert S.dynamic_ntk_base(1e4, 2, 2048, 4096, 128) == pytest.approx(30527.74, abs=0.005)


@pytest.mark.parametrize("seq_len", [1, 100, 2047, 2048, None])
def test_dynamic_ntk_short_is_original_exactly(seq_len):
    inv, _ = S.dynamic_ntk(128, 2.0, 2048, seq_len=seq_len)
    assert torch.equal(inv, rope_inv_freq(128))
    assert S.dynamic_ntk_base(1e4, 2, 2048, seq_len or 2048, 128) == 1e4


def test_dynamic_ntk_long_then_short_returns_original():
    """A pure function of the current length: nothing of a long call survives."""
    long_inv, _ = S.dynamic_ntk(128, 2.0, 2048, seq_len=8192)
    short_inv, _ = S.dynamic_ntk(128, 2.0, 2048, seq_len=1000)
    assert not torch.equal(long_inv, short_inv)
    assert torch.equal(short_inv, rope_inv_freq(128))


def test_dynamic_ntk_bracket_passes_factor():
    """The reference rule's bracket equals s at ℓ = (2 − 1/s)L and exceeds it later."""
    s, L, r = 2.0, 2048, 128
    at = S.dynamic_ntk_base(1e4, s, L, int((2 - 1 / s) * L), r)
    assert at == pytest.approx(S.ntk_aware_base(1e4, s, r), rel=1e-12)
    inv, _ = S.dynamic_ntk(r, s, L, seq_len=2 * L, dtype=torch.float64)
    assert S.per_pair_scale(inv, r)[-1].item() == pytest.approx(3.0, rel=1e-12)


def test_yarn_issue_numbers_i26():
    """d=128, s=4, L=4096, pair 26: sources 2.6×, paper 1.667×, reference code 1.209×."""
    r26 = 4096 / (2 * math.pi * 1e4 ** (52 / 128))
    assert round(r26, 1) == 15.5
    gamma = S.yarn_paper_ramp(128, 4096)[26].item()
    assert gamma == pytest.approx((r26 - 1) / 31, rel=1e-12)
    sources = 1 + (1 - gamma) * 3  # the sources' linear mix of the *scale*
    assert round(sources, 1) == 2.6
    inv_p, _ = S.yarn_paper(128, 4.0, 4096, dtype=torch.float64)
    paper = S.per_pair_scale(inv_p, 128)[26].item()
    assert paper == pytest.approx(1 / (gamma + (1 - gamma) / 4), rel=1e-12)
    assert round(paper, 3) == 1.667
    assert S.yarn_correction_range(128, 1e4, 4096) == (20.0, 46.0)
    inv_c, att = S.yarn(128, 4.0, 4096, dtype=torch.float64)
    code = S.per_pair_scale(inv_c, 128)[26].item()
    g_code = 1 - (26 - 20) / (46 - 20)
    assert code == pytest.approx(1 / (g_code + (1 - g_code) / 4), rel=1e-12)
    assert round(code, 3) == 1.209
    assert att == pytest.approx(1.138629436, rel=1e-9)


def test_yarn_temperature_directions():
    """√(1/t) = 0.1 ln 4 + 1 multiplies cos and sin, hence logits × its square (1.296);
    the sources' 1/√s_t would multiply logits by 0.937 (flatter, not sharper)."""
    m = S.yarn_attention_factor(4.0)
    assert m == pytest.approx(1.1386, abs=5e-5)
    assert m**2 == pytest.approx(1.2965, abs=5e-5)
    assert 1 / math.sqrt(m) == pytest.approx(0.9371, abs=5e-5)


def test_yarn_code_ramp_is_linear_in_log_turns():
    """The reference ramp, without truncation, is the paper's ramp with ln r in place of r."""
    d, L, base = 128, 4096, 1e4
    g = S.yarn_ramp(d, L, base=base, truncate=False)
    turns = L * rope_inv_freq(d, base, dtype=torch.float64) / (2 * math.pi)
    expected = torch.clamp((torch.log(turns) - math.log(1)) / (math.log(32) - math.log(1)), 0, 1)
    assert torch.allclose(g, expected, atol=1e-12)


def test_yarn_factor_one_is_identity():
    for truncate in (True, False):
        inv, att = S.yarn(128, 1.0, 4096, truncate=truncate, dtype=torch.float64)
        assert torch.allclose(inv, rope_inv_freq(128, dtype=torch.float64), rtol=1e-15)
        assert att == 1.0
    assert S.yarn_attention_factor(0.5) == 1.0


def test_yarn_attention_factor_precedence():
    assert S.yarn(64, 4.0, 2048, attention_factor=1.7)[1] == 1.7
    assert S.yarn(64, 4.0, 2048, attention_factor=1.7, mscale=1, mscale_all_dim=2)[1] == 1.7
    ratio = (0.1 * 0.707 * math.log(4) + 1) / (0.1 * math.log(4) + 1)
    assert S.yarn(64, 4.0, 2048, mscale=0.707, mscale_all_dim=1.0)[1] == pytest.approx(ratio)
    assert S.yarn(64, 4.0, 2048, mscale=1.0, mscale_all_dim=1.0)[1] == 1.0
    assert S.yarn(64, 4.0, 2048)[1] == pytest.approx(0.1 * math.log(4) + 1)


def test_yarn_truncate_both_ways():
    lo_t, hi_t = S.yarn_correction_range(128, 1e4, 4096, truncate=True)
    lo_f, hi_f = S.yarn_correction_range(128, 1e4, 4096, truncate=False)
    assert lo_t == math.floor(lo_f) and hi_t == math.ceil(hi_f)
    assert lo_f != lo_t and hi_f != hi_t
    a = S.yarn(128, 4.0, 4096, truncate=True)[0]
    b = S.yarn(128, 4.0, 4096, truncate=False)[0]
    assert not torch.allclose(a, b)


def test_llama3_bands_base_5e5_factor_8():
    inv, _ = S.llama3(128, 8.0, 8192, base=5e5, dtype=torch.float64)
    scale = S.per_pair_scale(inv, 128, 5e5)
    theta = rope_inv_freq(128, 5e5, dtype=torch.float64)
    wavelen = 2 * math.pi / theta
    high_band, low_band = wavelen < 2048, wavelen > 8192
    assert torch.all(scale[high_band] == 1.0)
    assert torch.allclose(scale[low_band], torch.full_like(scale[low_band], 8.0), rtol=1e-14)
    assert (int(high_band.sum()), int((~high_band & ~low_band).sum()), int(low_band.sum())) \
        == (29, 6, 29)


def test_llama3_is_paper_yarn_ramp_without_temperature():
    inv, att = S.llama3(128, 8.0, 8192, base=5e5, dtype=torch.float64)
    inv_p, _ = S.yarn_paper(128, 8.0, 8192, base=5e5, alpha=1.0, beta=4.0, dtype=torch.float64)
    assert torch.allclose(inv, inv_p, rtol=1e-14) and att == 1.0


# ----------------------------------------------------------------- properties


METHODS_FIXED = ("linear", "ntk_aware", "yarn", "yarn_paper", "llama3")


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(METHODS_FIXED),
    half=st.integers(2, 128),
    base=st.floats(100.0, 1e7),
    s=st.floats(1.0, 64.0),
    L=st.integers(16, 1 << 17),
)
def test_scale_between_one_and_s_and_monotone(name, half, base, s, L):
    """Every static method slows each pair by a factor in [1, s], more for lower frequencies."""
    d = 2 * half
    inv, att = S.ROPE_SCALING[name](d, s, L, base=base, dtype=torch.float64)
    scale = S.per_pair_scale(inv, d, base)
    assert torch.all(scale >= 1 - 1e-12) and torch.all(scale <= s * (1 + 1e-12))
    assert torch.all(scale[1:] >= scale[:-1] * (1 - 1e-12))
    assert att >= 1.0


def test_registry_uniform_call():
    assert set(S.ROPE_SCALING) == {"linear", "ntk_aware", "dynamic_ntk", "yarn", "yarn_paper",
                                   "llama3"}
    for fn in S.ROPE_SCALING.values():
        inv, att = fn(128, 4.0, 4096, base=1e4, rotary_dim=64)
        assert inv.shape == (32,) and inv.dtype == torch.float32 and isinstance(att, float)
    assert S.ROPE_SCALING["dynamic_ntk"] is S.dynamic_ntk
    assert S.dynamic_ntk(128, 4.0, 4096, seq_len=16384, dtype=torch.float64)[0].dtype \
        == torch.float64


# ----------------------------------------------------------------- bad input


@pytest.mark.parametrize("name", sorted(S.ROPE_SCALING))
@pytest.mark.parametrize("kwargs,exc,match", [
    ({"factor": 0.5}, ValueError, "factor must be >= 1"),
    ({"L": 0}, ValueError, "original_max_position_embeddings must be an integer >= 1"),
    ({"L": -5}, ValueError, "original_max_position_embeddings"),
    ({"d": 127}, ValueError, "head_dim must be an even integer"),
    ({"r": 33}, ValueError, "rotary_dim must be an even integer"),
    ({"r": 256}, ValueError, "rotary_dim must be <= head_dim"),
    ({"base": 0.0}, ValueError, "base must be > 0"),
    ({"dtype": torch.float16}, ValueError, "dtype must be torch.float32 or torch.float64"),
    ({"d": 128.0}, TypeError, "head_dim must be an integer"),
    ({"factor": float("nan")}, ValueError, "factor must be a finite number"),
])
def test_bad_input_every_method(name, kwargs, exc, match):
    args = {"d": 128, "factor": 4.0, "L": 4096, "r": None, "base": 1e4,
            "dtype": torch.float32, **kwargs}
    with pytest.raises(exc, match=match):
        S.ROPE_SCALING[name](args["d"], args["factor"], args["L"], base=args["base"],
                             rotary_dim=args["r"], dtype=args["dtype"])


@pytest.mark.parametrize("call,match", [
    (lambda: S.yarn(128, 4.0, 4096, beta_fast=1.0, beta_slow=32.0), "beta_fast must be >= beta"),
    (lambda: S.yarn(128, 4.0, 4096, beta_slow=0.0), "beta_slow must be > 0"),
    (lambda: S.yarn(128, 4.0, 4096, mscale=0.707), "pass both mscale and mscale_all_dim"),
    (lambda: S.yarn(128, 4.0, 4096, mscale=0.0, mscale_all_dim=1.0), "mscale must be > 0"),
    (lambda: S.yarn(128, 4.0, 4096, attention_factor=0.0), "attention_factor must be > 0"),
    (lambda: S.yarn(128, 4.0, 4096, base=1.0), "base must be != 1"),
    (lambda: S.yarn_paper(128, 4.0, 4096, alpha=32.0, beta=1.0), "beta must be > alpha"),
    (lambda: S.yarn_paper(128, 4.0, 4096, alpha=-1.0), "alpha must be >= 0"),
    (lambda: S.llama3(128, 8.0, 8192, low_freq_factor=4.0, high_freq_factor=1.0),
     "high_freq_factor must be >= low_freq_factor"),
    (lambda: S.llama3(128, 8.0, 8192, low_freq_factor=0.0), "low_freq_factor must be > 0"),
    (lambda: S.dynamic_ntk(128, 2.0, 2048, seq_len=0), "seq_len must be an integer >= 1"),
    (lambda: S.ntk_aware(2, 2.0), "rotary_dim must be an integer >= 4"),
    (lambda: S.ntk_aware_base(1e4, 0.99, 128), "factor must be >= 1"),
    (lambda: S.per_pair_scale(torch.ones(3), 128), "inv_freq must have shape"),
    (lambda: S.per_pair_scale(torch.zeros(64), 128), "inv_freq must be > 0"),
    (lambda: S.yarn_attention_factor(-1.0), "factor must be > 0"),
])
def test_bad_input_method_parameters(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_bad_input_types():
    with pytest.raises(TypeError, match="truncate must be a bool"):
        S.yarn(128, 4.0, 4096, truncate=1)
    with pytest.raises(TypeError, match="inv_freq must be a torch.Tensor"):
        S.per_pair_scale([1.0], 2)
    with pytest.raises(TypeError, match="seq_len must be an integer"):
        S.dynamic_ntk(128, 2.0, 2048, seq_len=3000.5)


def test_transformers_dynamic_module_keeps_the_longest_base():
    """The chapter's KV-cache note: transformers' rotary module caches the base of the longest
    sequence seen and resets only *below* L, so its base for a given length depends on
    history; :func:`posenc.scaling.dynamic_ntk` is a pure function of the current length."""
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    cfg = LlamaConfig(hidden_size=512, num_attention_heads=4, head_dim=128,
                      max_position_embeddings=2048,
                      rope_parameters={"rope_type": "dynamic", "rope_theta": 1e4, "factor": 2.0})
    module = LlamaRotaryEmbedding(cfg)
    x = torch.zeros(1, 1, 128)

    def module_inv_freq(n):
        module(x, torch.arange(n)[None])
        return module.inv_freq.clone()

    ours = {n: S.dynamic_ntk(128, 2.0, 2048, seq_len=n)[0] for n in (2048, 3000, 4096)}
    assert torch.allclose(module_inv_freq(4096), ours[4096], rtol=1e-5)
    assert torch.allclose(module_inv_freq(3000), ours[4096], rtol=1e-5)  # not ours[3000]
    assert torch.allclose(module_inv_freq(2048), ours[4096], rtol=1e-5)  # not the original
    assert torch.allclose(module_inv_freq(2047), ours[2048], rtol=1e-5)  # reset below L
    assert not torch.allclose(ours[3000], ours[4096], rtol=1e-3)


# ----------------------------------------------------------------- LongRoPE, proportional


def test_rope_types_cover_transformers():
    """ROPE_TYPES has every rope_type transformers 5.24 can initialise, plus "default"."""
    assert set(S.ROPE_TYPES) == set(ROPE_INIT_FUNCTIONS) | {"default"}
    assert S.ROPE_TYPES["dynamic"] is S.dynamic_ntk and S.ROPE_TYPES["longrope"] is S.longrope


@pytest.mark.parametrize("s,L,expected", [
    (1.0, 4096, 1.0), (0.5, 4096, 1.0),
    (32.0, 4096, math.sqrt(1 + math.log(32) / math.log(4096))),  # Phi-3-mini-128k: 1.1902
    (16.0, 8192, math.sqrt(1 + math.log(16) / math.log(8192))),
])
def test_longrope_attention_factor(s, L, expected):
    assert S.longrope_attention_factor(s, L) == pytest.approx(expected, rel=1e-15)


def test_longrope_short_long_switch_is_at_L():
    """transformers picks long_factor only when seq_len > L (and never at init)."""
    short, long = [1.0] * 4, [2.0, 3.0, 4.0, 5.0]
    theta = rope_inv_freq(8, 1e4, dtype=torch.float64)
    for seq_len, want in [(None, short), (1, short), (4096, short), (4097, long)]:
        inv, _ = S.longrope(8, 32.0, 4096, short_factor=short, long_factor=long,
                            seq_len=seq_len, dtype=torch.float64)
        torch.testing.assert_close(inv, theta / torch.tensor(want, dtype=torch.float64))


def test_default_is_rope_inv_freq():
    inv, att = S.default(128, base=5e5, rotary_dim=64)
    assert torch.equal(inv, rope_inv_freq(128, 5e5, 64)) and att == 1.0


def test_proportional_differs_from_partial():
    """Proportional keeps the full-head schedule; partial rotary compresses it into r."""
    prop, _ = S.proportional(256, base=1e6, rotary_dim=64, dtype=torch.float64)
    part = rope_inv_freq(256, 1e6, 64, dtype=torch.float64)
    assert prop.shape == (128,) and part.shape == (32,)
    torch.testing.assert_close(prop[:32], rope_inv_freq(256, 1e6, dtype=torch.float64)[:32])
    assert torch.all(prop[32:] == 0)
    assert torch.all(prop[1:32] > part[1:])  # every rotated pair but the first turns faster
    assert S.proportional(8, rotary_dim=0)[0].tolist() == [0.0] * 4


@pytest.mark.parametrize("call,exc,match", [
    (lambda: S.longrope(8, 4.0, 4096, short_factor=[1.0] * 3, long_factor=[1.0] * 4),
     ValueError, "short_factor must hold rotary_dim/2 = 4 numbers"),
    (lambda: S.longrope(8, 4.0, 4096, short_factor=[1.0] * 4, long_factor=[1.0] * 2),
     ValueError, "long_factor must hold rotary_dim/2 = 4"),
    (lambda: S.longrope(8, 4.0, 4096, short_factor=[1.0, 0.0, 1.0, 1.0], long_factor=[1] * 4),
     ValueError, "short_factor must hold finite numbers > 0"),
    (lambda: S.longrope(8, 4.0, 4096, short_factor="1111", long_factor=[1.0] * 4),
     TypeError, "short_factor must be a sequence of 4 numbers"),
    (lambda: S.longrope(8, 4.0, 4096, short_factor=None, long_factor=[1.0] * 4),
     TypeError, "short_factor must be a sequence"),
    (lambda: S.longrope(8, 4.0, 1, short_factor=[1] * 4, long_factor=[1] * 4),
     ValueError, "original_max_position_embeddings must be an integer >= 2"),
    (lambda: S.longrope(8, 0.5, 4096, short_factor=[1] * 4, long_factor=[1] * 4),
     ValueError, "factor must be >= 1"),
    (lambda: S.longrope(8, 4.0, 4096, short_factor=[1] * 4, long_factor=[1] * 4, seq_len=0),
     ValueError, "seq_len must be an integer >= 1"),
    (lambda: S.longrope(8, 4.0, 4096, short_factor=[1] * 4, long_factor=[1] * 4,
                        attention_factor=-1.0), ValueError, "attention_factor must be > 0"),
    (lambda: S.longrope_attention_factor(0.0, 4096), ValueError, "factor must be > 0"),
    (lambda: S.proportional(8, rotary_dim=10), ValueError, "rotary_dim must be <= head_dim"),
    (lambda: S.proportional(8, rotary_dim=3), ValueError, "rotary_dim must be an even"),
    (lambda: S.proportional(8, 0.5), ValueError, "factor must be >= 1"),
    (lambda: S.proportional(8, dtype=torch.float16), ValueError, "dtype must be"),
    (lambda: S.default(8, 2.0), ValueError, "factor must be 1 for unscaled RoPE"),
])
def test_bad_input_longrope_proportional_default(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


@pytest.mark.parametrize("d,base,s,L", [(128, 500000.0, 16.0, 8192), (64, 10000.0, 8.0, 2048)])
def test_llama3_equal_band_factors_match_transformers(d, base, s, L):
    """Llama 4 Scout ships low_freq_factor == high_freq_factor == 1: no middle band."""
    inv, att = S.llama3(d, s, L, base=base, low_freq_factor=1.0, high_freq_factor=1.0)
    ref, ref_att = hf("llama3", d, base, 1.0, int(s * L), factor=s, low_freq_factor=1.0,
                      high_freq_factor=1.0, original_max_position_embeddings=L)
    assert torch.isfinite(ref).all() and close(inv, ref) and att == ref_att == 1.0
    theta = S.default(d, base=base)[0]
    kept = (2 * math.pi / theta) < L
    assert torch.equal(inv[kept], theta[kept]) and close(inv[~kept], theta[~kept] / s)
