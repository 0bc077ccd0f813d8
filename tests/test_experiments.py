"""posenc.model and posenc.experiments: the tasks, the tiny decoder, and a reduced study.

The reduced study (``QUICK``-sized, well under a minute) runs the whole pipeline — train at
one length, evaluate at several, write and re-read the results — and checks the claims of
the comparison chapter that are robust at that small scale. The committed full results are
checked for consistency with the package's ``FULL`` configuration and with the chapter's
claims.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time

import pytest
import torch

from posenc.experiments import (
    FULL,
    QUICK,
    RESULTS_PATH,
    VARIANTS,
    StudyConfig,
    _eval_forward_kwargs,
    build_model,
    evaluate,
    load_results,
    make_batch,
    run_study,
    save_results,
    summarize,
    train,
)
from posenc.model import POSITIONS, TinyDecoder
from posenc.relative import relative_position_bucket
from posenc.rope import rope_inv_freq
from posenc.scaling import ROPE_SCALING, yarn, yarn_attention_factor

RESULTS = RESULTS_PATH


# --------------------------------------------------------------------------- tasks


def test_lag_targets_are_the_token_lag_places_back():
    gen = torch.Generator().manual_seed(0)
    tokens, targets, mask = make_batch("lag", 3, 20, gen, vocab_size=7, lag=4)
    assert tokens.shape == targets.shape == mask.shape == (3, 20)
    assert int(tokens.min()) >= 0 and int(tokens.max()) < 7
    assert not mask[:, :4].any() and mask[:, 4:].all()
    torch.testing.assert_close(targets[:, 4:], tokens[:, :-4])


def test_same_generator_same_batch():
    a = make_batch("lag", 2, 9, torch.Generator().manual_seed(5), vocab_size=5)
    b = make_batch("lag", 2, 9, torch.Generator().manual_seed(5), vocab_size=5)
    for x, y in zip(a, b, strict=True):
        assert torch.equal(x, y)


@pytest.mark.parametrize(
    "task, seq_len, kwargs, exc, match",
    [
        ("copy", 8, {"vocab_size": 4}, ValueError, "task must be one of 'lag'"),
        ("lag", 4, {"vocab_size": 4, "lag": 4}, ValueError, r"seq_len must be > lag \(4\)"),
        ("lag", 8, {"vocab_size": 4, "lag": 0}, ValueError, "lag must be an integer >= 1"),
        ("lag", 8, {"vocab_size": 1}, ValueError, "vocab_size must be an integer >= 2"),
        ("lag", 8.0, {"vocab_size": 4}, TypeError, "seq_len must be an integer"),
    ],
)
def test_bad_task_arguments(task, seq_len, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        make_batch(task, 2, seq_len, torch.Generator().manual_seed(0), **kwargs)


# --------------------------------------------------------------------------- model


def _model(position, **kw):
    torch.manual_seed(0)
    return TinyDecoder(11, 11, position, d_model=16, num_heads=2, d_ff=32,
                       max_position_embeddings=12, num_buckets=8, max_distance=12, **kw)


@pytest.mark.parametrize("position", POSITIONS)
def test_model_is_causal(position):
    """Changing a later token never changes an earlier position's output."""
    model = _model(position).eval()
    x = torch.randint(0, 11, (2, 10), generator=torch.Generator().manual_seed(3))
    y = x.clone()
    y[:, 6:] = (y[:, 6:] + 1) % 11
    with torch.no_grad():
        torch.testing.assert_close(model(x)[:, :6], model(y)[:, :6])
        assert not torch.allclose(model(x)[:, 6:], model(y)[:, 6:])


@pytest.mark.parametrize("position", POSITIONS)
def test_shared_weights_identical_across_schemes(position):
    """Same seed → same token embedding, blocks and head whatever the scheme."""
    ref = _model("none").state_dict()
    other = _model(position).state_dict()
    for name, value in ref.items():
        torch.testing.assert_close(other[name], value, rtol=0, atol=0)


def test_position_parameter_counts():
    assert _model("learned").num_position_parameters() == 12 * 16
    assert _model("t5").num_position_parameters() == 8 * 2
    for position in ("none", "sinusoidal", "rope", "alibi"):
        assert _model(position).num_position_parameters() == 0


@pytest.mark.parametrize("position", POSITIONS)
def test_positional_schemes_change_the_output(position):
    """With one layer, permuting the earlier tokens changes the last output for every scheme
    except NoPE (its last query sees a bag of keys). With two layers NoPE changes too: the
    causal mask gives earlier positions different prefixes (Haviv et al., 2022)."""
    x = torch.tensor([[1, 2, 3, 4, 5, 6]])
    y = torch.tensor([[3, 1, 2, 5, 4, 6]])
    for layers in (1, 2):
        model = _model(position, num_layers=layers).eval()
        if position == "t5":
            torch.nn.init.normal_(model.relative.weight, std=1.0)
        with torch.no_grad():
            same = torch.allclose(model(x)[0, -1], model(y)[0, -1], atol=1e-6)
        assert same == (position == "none" and layers == 1), (position, layers)


def test_learned_cannot_run_past_its_table_and_interpolation_can():
    model = _model("learned").eval()
    with pytest.raises(IndexError, match="max_position_embeddings=12"):
        model(torch.zeros(1, 13, dtype=torch.long))
    out = model(torch.zeros(1, 24, dtype=torch.long),
                learned_table=model.learned.interpolate(24))
    assert out.shape == (1, 24, 11)


def test_rope_scaling_identity_and_effect():
    from posenc.scaling import linear

    model = _model("rope").eval()
    x = torch.randint(0, 11, (1, 20), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        plain = model(x)
        torch.testing.assert_close(model(x, rope_scaling=(model.inv_freq, 1.0)), plain)
        torch.testing.assert_close(model(x, rope_scaling=linear(model.head_dim, 1.0)), plain)
        assert not torch.allclose(model(x, rope_scaling=linear(model.head_dim, 4.0)), plain)


def test_t5_defaults_put_a_quarter_of_the_training_window_past_max_distance():
    """Default T5 bias: 16 causal buckets, max_distance 16 = 64/4 (T5: 128 = 512/4). The
    rounded-down log formula starts the last bucket at 15, so 49 of the 64 distances seen
    at the training length share it (5 with 32 buckets and max_distance 64)."""
    model = TinyDecoder(11, 11, "t5")
    assert (model.relative.num_buckets, model.relative.max_distance) == (16, 16)
    assert model.num_position_parameters() == 16 * 4
    last = relative_position_bucket(-torch.arange(64), False, 16, 16) == 15
    assert int(last.sum()) == 49 and int(torch.arange(64)[last].min()) == 15
    old = relative_position_bucket(-torch.arange(64), False, 32, 64) == 31
    assert int(old.sum()) == 5 and int(torch.arange(64)[old].min()) == 59


def test_study_builds_t5_from_its_config():
    cfg = dataclasses.replace(FULL, t5_num_buckets=8, t5_max_distance=12)
    model = build_model(cfg, "lag", "t5", 0)
    assert (model.relative.num_buckets, model.relative.max_distance) == (8, 12)
    assert not model.relative.bidirectional
    full = build_model(FULL, "lag", "t5", 0)
    assert (full.relative.num_buckets, full.relative.max_distance) == (16, FULL.train_len // 4)


def test_bad_model_arguments():
    with pytest.raises(ValueError, match="position must be one of"):
        _model("xpos")
    with pytest.raises(ValueError, match="d_model must be divisible by num_heads"):
        TinyDecoder(5, 5, "none", d_model=10, num_heads=4)
    with pytest.raises(ValueError, match="head_dim must be an even integer"):
        TinyDecoder(5, 5, "rope", d_model=12, num_heads=4)
    model = _model("none")
    with pytest.raises(ValueError, match="rope_scaling needs position='rope'"):
        model(torch.zeros(1, 3, dtype=torch.long), rope_scaling=(torch.ones(4), 1.0))
    with pytest.raises(ValueError, match="learned_table needs position='learned'"):
        model(torch.zeros(1, 3, dtype=torch.long), learned_table=_model("learned").learned)
    with pytest.raises(ValueError, match=r"tokens must have shape \(batch, seq\)"):
        model(torch.zeros(3, dtype=torch.long))


# --------------------------------------------------------------------------- study

TINY = StudyConfig(plan=(("lag", ("learned", "learned+interp", "rope", "rope+yarn")),),
                   steps=5, warmup=2, multiples=(1, 2), d_model=16, d_ff=32,
                   eval_sequences=4, eval_batch=2, train_len=16,
                   budget_check=(("rope", 7),), loss_every=2)


def test_evaluate_reports_cannot_run_and_never_raises():
    model, _ = train(TINY, "lag", "learned", 0)
    row = evaluate(model, TINY, "lag", "learned", 32)
    assert row == {"status": "cannot run", "accuracy": None, "loss": None,
                   "accuracy_beyond": None, "accuracy_within": None}
    row = evaluate(model, TINY, "lag", "learned+interp", 32)
    assert row["status"] == "ok" and 0.0 <= row["accuracy"] <= 1.0
    assert row["accuracy_beyond"] is not None
    at_len = evaluate(model, TINY, "lag", "learned", 16)
    assert at_len["accuracy_beyond"] is None
    assert at_len["accuracy_within"] == at_len["accuracy"]


def test_accuracy_splits_into_the_training_window_and_beyond():
    """accuracy = weighted mean of accuracy_within (positions lag … L−1) and
    accuracy_beyond (positions L … n−1); a causal model without evaluation-time changes
    scores the training window of a long sequence exactly as it would on its own."""
    cfg = dataclasses.replace(TINY, steps=30, eval_sequences=8)
    model, _ = train(cfg, "lag", "rope", 0)
    n, L, lag = 48, cfg.train_len, cfg.lag
    row = evaluate(model, cfg, "lag", "rope", n)
    mixed = ((L - lag) * row["accuracy_within"] + (n - L) * row["accuracy_beyond"]) / (n - lag)
    assert row["accuracy"] == pytest.approx(mixed, abs=1e-12)
    tokens, targets, mask = make_batch("lag", cfg.eval_sequences, n,
                                       torch.Generator().manual_seed(7919 * n), vocab_size=32)
    with torch.no_grad():
        short = model(tokens[:, :L]).argmax(-1)
    hit = (short == targets[:, :L]) & mask[:, :L]
    assert row["accuracy_within"] == pytest.approx(float(hit.sum() / mask[:, :L].sum()),
                                                   abs=1e-12)


def test_rope_variants_pass_the_scaling_they_name():
    """rope+yarn-freq = YaRN's frequencies with attention factor 1; rope+yarn-temp = the
    trained frequencies with YaRN's factor 0.1·ln s + 1; the others are ROPE_SCALING
    methods. Every variant is plain RoPE at (or below) the training length."""
    model = _model("rope")
    hd, L, n = model.head_dim, 16, 64
    got = {v: _eval_forward_kwargs(model, VARIANTS[v][1], n, L)["rope_scaling"]
           for v in VARIANTS if VARIANTS[v][1] and VARIANTS[v][0] == "rope"}
    assert set(got) == {"rope+pi", "rope+ntk", "rope+yarn", "rope+yarn-freq", "rope+yarn-temp"}
    full_freq, full_factor = yarn(hd, 4.0, L)
    assert full_factor == yarn_attention_factor(4.0) == pytest.approx(0.1 * math.log(4) + 1)
    torch.testing.assert_close(got["rope+yarn"][0], full_freq, rtol=0, atol=0)
    torch.testing.assert_close(got["rope+yarn-freq"][0], full_freq, rtol=0, atol=0)
    assert got["rope+yarn-freq"][1] == 1.0 and got["rope+yarn"][1] == full_factor
    torch.testing.assert_close(got["rope+yarn-temp"][0], rope_inv_freq(hd), rtol=0, atol=0)
    assert got["rope+yarn-temp"][1] == full_factor
    for v, method in (("rope+pi", "linear"), ("rope+ntk", "ntk_aware")):
        inv_freq, factor = ROPE_SCALING[method](hd, 4.0, L)
        torch.testing.assert_close(got[v][0], inv_freq, rtol=0, atol=0)
        assert got[v][1] == factor
    for v in got:
        assert _eval_forward_kwargs(model, VARIANTS[v][1], L, L) == {}


def test_study_is_deterministic_and_round_trips(tmp_path):
    a, b = run_study(TINY), run_study(TINY)
    assert a == b
    path = tmp_path / "r.json"
    save_results(a, path)
    first = path.read_bytes()
    save_results(load_results(path), path)
    assert path.read_bytes() == first
    assert {r["variant"] for r in a["results"]} == {"learned", "learned+interp", "rope",
                                                    "rope+yarn"}
    # learned and rope trained once each (variants reuse them), then the budget check
    assert [(t["position"], t["steps"]) for t in a["training"]] == [
        ("learned", 5), ("rope", 5), ("rope", 7)]
    assert [len(t["loss_curve"]) for t in a["training"]] == [3, 3, 4]  # windows of 2 steps
    assert [(r["position"], r["steps"], r["length"]) for r in a["budget_check"]] == [
        ("rope", 7, 16), ("rope", 7, 32)]


def test_loss_curve_is_the_mean_of_each_window():
    cfg = dataclasses.replace(TINY, steps=6, loss_every=4)
    curve = []
    model, final = train(cfg, "lag", "rope", 0, curve=curve)
    assert len(curve) == 2  # steps 1-4, then the last 2
    again = []
    train(dataclasses.replace(cfg, loss_every=1), "lag", "rope", 0, curve=again)
    assert curve == pytest.approx([sum(again[:4]) / 4, sum(again[4:]) / 2], abs=1e-12)
    assert final == pytest.approx(sum(again) / 6, abs=1e-12)  # fewer than 20 steps: all


def test_budget_check_retrains_with_more_steps():
    """The budget-check run is the same model and data with a longer schedule: its first
    loss window equals the main run's (same initial weights, same first batches, same
    warm-up)."""
    study = run_study(dataclasses.replace(TINY, plan=(("lag", ("rope",)),),
                                          budget_check=(("rope", 9),)))
    main, longer = study["training"]
    assert (main["steps"], longer["steps"]) == (5, 9)
    assert main["loss_curve"][0] == longer["loss_curve"][0]
    assert len(study["budget_check"]) == len(TINY.multiples)


def test_run_study_rejects_unknown_variants():
    with pytest.raises(ValueError, match="variant must be one of"):
        run_study(dataclasses.replace(TINY, plan=(("lag", ("rope+magic",)),)))
    with pytest.raises(ValueError, match="budget_check position must be one of"):
        run_study(dataclasses.replace(TINY, budget_check=(("xpos", 10),)))
    with pytest.raises(ValueError, match="budget_check steps must be an integer >= 1"):
        run_study(dataclasses.replace(TINY, budget_check=(("rope", 0),)))


@pytest.fixture(scope="module")
def quick():
    start = time.perf_counter()
    study = run_study(QUICK)
    return study, time.perf_counter() - start


def test_quick_study_within_budget(quick):
    _, seconds = quick
    assert seconds < 60, f"the reduced study took {seconds:.0f} s"


def test_quick_study_claims(quick):
    """The chapter's small-scale-robust claims, on the reduced run."""
    study, _ = quick
    acc = summarize(study, "lag")
    lengths = sorted({r["length"] for r in study["results"]})
    long = lengths.index(4 * QUICK.train_len)
    # learned positions cannot run past the table; the stretched table runs
    assert acc["learned"][0] is not None and acc["learned"][long] is None
    assert acc["learned+interp"][long] is not None
    # sinusoidal and RoPE learn the task at the training length
    for v in ("sinusoidal", "rope"):
        assert acc[v][0] > 0.9, (v, acc[v])
    # sinusoidal (absolute) collapses past the training length; RoPE keeps more, and YaRN
    # applied at evaluation time keeps at least as much as plain RoPE
    beyond = summarize(study, "lag", "accuracy_beyond")
    assert acc["sinusoidal"][long] < 0.5
    assert beyond["sinusoidal"][long] < 0.1
    assert beyond["rope"][long] > beyond["sinusoidal"][long] + 0.05
    assert beyond["rope+yarn"][long] >= beyond["rope"][long]
    # of YaRN's two changes the frequencies do the work: frequencies alone match full YaRN
    # and beat plain RoPE by far; the logit scale alone stays at plain RoPE
    assert abs(beyond["rope+yarn-freq"][long] - beyond["rope+yarn"][long]) < 0.05
    assert beyond["rope+yarn-freq"][long] > beyond["rope"][long] + 0.3
    assert abs(beyond["rope+yarn-temp"][long] - beyond["rope"][long]) < 0.05


# --------------------------------------------------------------------------- committed results


@pytest.fixture(scope="module")
def committed():
    return load_results(RESULTS)


def test_committed_results_match_full_config(committed):
    assert committed["config"] == FULL.to_dict()
    assert set(committed["versions"]) == {"python", "torch", "numpy"}
    raw = RESULTS.read_text(encoding="utf-8")
    assert raw == json.dumps(committed, indent=1, sort_keys=True) + "\n"
    expected = sum(len(v) for _, v in FULL.plan) * len(FULL.seeds) * len(FULL.multiples)
    assert len(committed["results"]) == expected
    for row in committed["results"]:
        assert row["variant"] in VARIANTS
        assert (row["status"] == "cannot run") == (row["accuracy"] is None)


def test_committed_learned_rows(committed):
    for row in committed["results"]:
        if row["variant"] == "learned":
            assert (row["status"] == "ok") == (row["length"] <= FULL.train_len)


def test_committed_training_and_budget_check(committed):
    """One training row per scheme plus one per budget-check run, each with a loss curve of
    ``steps / loss_every`` windows; the budget check evaluated at every length."""
    schemes = list(dict.fromkeys(VARIANTS[v][0] for _, vs in FULL.plan for v in vs))
    runs = [(p, FULL.steps) for p in schemes] + [tuple(b) for b in FULL.budget_check]
    assert [(t["position"], t["steps"]) for t in committed["training"]] == runs
    for t in committed["training"]:
        assert len(t["loss_curve"]) == math.ceil(t["steps"] / FULL.loss_every)
    assert [(r["position"], r["steps"], r["length"]) for r in committed["budget_check"]] == [
        (p, n, m * FULL.train_len) for p, n in FULL.budget_check for m in FULL.multiples]


def test_committed_within_and_beyond_recombine(committed):
    """accuracy is the position-weighted mean of accuracy_within and accuracy_beyond."""
    L, lag = FULL.train_len, FULL.lag
    for row in committed["results"] + committed["budget_check"]:
        if row["status"] != "ok" or row["length"] == L:
            continue
        n = row["length"]
        mixed = ((L - lag) * row["accuracy_within"] + (n - L) * row["accuracy_beyond"]) / (n - lag)
        assert row["accuracy"] == pytest.approx(mixed, abs=2e-4)  # each rounded to 4 dp
