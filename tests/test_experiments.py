"""posenc.experiments and the study's model: corpus, windows, evaluation, and a reduced study.

The reduced study (``QUICK``, well under a minute) runs the whole pipeline — train on the
standard-library corpus at one length, evaluate at several, write and re-read the results —
and checks the claims of the comparison chapter that are robust at that small scale. The
committed full results are checked for completeness and consistency with ``FULL``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import platform
import time

import pytest
import torch

from posenc import experiments as E
from posenc.attention import attention
from posenc.experiments import (
    BOS,
    FULL,
    PROTOCOLS,
    QUICK,
    RESULTS_PATH,
    VARIANTS,
    corpus_files,
    evaluate,
    finetune,
    load_corpus,
    load_results,
    paired_difference,
    run_study,
    sample_batch,
    save_results,
    summarize,
    train,
)
from posenc.model import CausalSelfAttention, TinyDecoder
from posenc.scaling import dynamic_ntk, linear, ntk_aware, yarn

# --------------------------------------------------------------------------- corpus


def test_corpus_rules_on_a_made_up_tree(tmp_path):
    files = ["a.py", "pkg/b.py", "pkg/tests/c.py", "test/d.py", "idlelib/idle_test/e.py",
             "test_f.py", "site-packages/g.py", "_sysconfigdata__linux.py", "notes.txt"]
    for f in files:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text(f"# {f}\n")
    got = corpus_files(tmp_path)
    assert [name for name, _ in got] == ["a.py", "pkg/b.py"]
    for name, split in got:
        first = hashlib.sha256(name.encode()).digest()[0]
        assert split == ("validation" if first < 26 else "train")


def test_corpus_refuses_an_empty_tree(tmp_path):
    with pytest.raises(ValueError, match="no .py file"):
        corpus_files(tmp_path)


def test_stdlib_corpus_is_split_by_document():
    files = corpus_files()
    val = [n for n, s in files if s == "validation"]
    assert 0.05 < len(val) / len(files) < 0.2
    assert not any("/test/" in f"/{n}" or n.startswith("test_") for n, _ in files)
    corpus = load_corpus()
    for split in ("train", "validation"):
        assert corpus[split].dtype == torch.uint8
        assert corpus[split].numel() == corpus["stats"][split]["bytes"]
    assert corpus["stats"]["validation"]["files"] == len(val)
    assert corpus["stats"]["train"]["bytes"] > 5_000_000


def test_sample_batch_puts_bos_first_and_shifts_the_targets():
    data = torch.arange(200, dtype=torch.uint8)
    x, y = sample_batch(data, 3, 10, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (3, 10) and x.dtype == y.dtype == torch.int64
    assert (x[:, 0] == BOS).all()
    assert torch.equal(x[:, 1:], y[:, :-1])
    assert torch.equal(y[:, 1:] - y[:, :-1], torch.ones(3, 9, dtype=torch.int64))
    x2, y2 = sample_batch(data, 3, 10, torch.Generator().manual_seed(0))
    assert torch.equal(x, x2) and torch.equal(y, y2)


@pytest.mark.parametrize("cfg", [FULL, QUICK], ids=["full", "quick"])
def test_both_protocols_score_the_same_bytes_at_every_length(cfg):
    n_bytes = 100_000
    span = max(cfg.lengths)
    spans = E.eval_spans(cfg, n_bytes)
    assert len(spans) * span == cfg.eval_bytes
    assert int(spans[0]) >= span and int(spans[-1]) + span <= n_bytes
    assert bool((spans.diff() > span).all())          # separate, spread over the stream
    want = sorted(int(o) + i for o in spans for i in range(span))
    for n in cfg.lengths:
        for protocol in PROTOCOLS:
            starts, first = E._windows(cfg, n, protocol, n_bytes)
            assert int(starts.min()) >= 0 and int(starts.max()) + n <= n_bytes
            scored = sorted(int(s) + p for s in starts for p in range(first, n))
            assert scored == want, (n, protocol)
            if protocol == "sliding":
                assert first == n - n // cfg.sliding_fraction


def test_eval_spans_refuse_a_short_stream():
    with pytest.raises(ValueError, match="too short"):
        E.eval_spans(FULL, 10_000)


# --------------------------------------------------------------------------- the model


@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("window", [None, 3])
def test_fused_attention_matches_posenc_attention(with_bias, window):
    torch.manual_seed(0)
    attn = CausalSelfAttention(16, 4)
    x = torch.randn(2, 9, 16)
    bias = torch.randn(4, 9, 9) if with_bias else None
    i = torch.arange(9)
    mask = None if window is None else (i[:, None] - i[None, :]) < window
    got = attn(x, bias=bias, mask=mask)
    q, k, v = attn.qkv(x).view(2, 9, 3, 4, 4).permute(2, 0, 3, 1, 4)
    want, _ = attention(q, k, v, bias=bias, mask=mask, causal=True)
    want = attn.out(want.transpose(1, 2).reshape(2, 9, 16))
    torch.testing.assert_close(got, want, atol=2e-6, rtol=1e-5)


@pytest.mark.parametrize("position", ["none", "sinusoidal", "rope", "alibi", "t5"])
def test_attention_window_restricts_the_keys(position):
    torch.manual_seed(0)
    model = TinyDecoder(BOS + 1, 256, position, d_model=16, num_heads=2, num_layers=2)
    x = torch.randint(0, 256, (2, 12))
    torch.testing.assert_close(model(x, attention_window=12), model(x))
    # With a window of w, the output at position t depends only on tokens t-(2w-2)..t
    # after two layers: changing token 0 leaves positions >= 2w-1 untouched.
    w = 3
    y = x.clone()
    y[:, 0] = (y[:, 0] + 1) % 256
    a, b = model(x, attention_window=w), model(y, attention_window=w)
    torch.testing.assert_close(a[:, 2 * w - 1:], b[:, 2 * w - 1:])
    assert not torch.allclose(a[:, :1], b[:, :1])


# --------------------------------------------------------------------------- evaluation


def _tiny_cfg(**kw):
    base = dict(depths=(1,), seeds=(0,), train_len=16, multiples=(1, 2, 4), d_model=16,
                num_heads=2, d_ff=32, steps=4, batch_size=4, warmup=2, eval_bytes=128,
                finetune_len=32, finetune_steps=2, finetune_warmup=1, t5_max_distance=8,
                loss_every=2, position_bins=4)
    base.update(kw)
    return dataclasses.replace(FULL, **base)


def test_a_uniform_model_scores_eight_bits_per_byte():
    cfg = _tiny_cfg()
    model = E.build_model(cfg, "rope", 1, 0)
    with torch.no_grad():
        model.head.weight.zero_()
        model.head.bias.zero_()
    for protocol in PROTOCOLS:
        for n in cfg.lengths:
            row = evaluate(model, cfg, "rope", n, protocol)
            assert row["status"] == "ok"
            assert row["bpb"] == pytest.approx(8.0, abs=1e-12)
            nll = row["position_nll"]
            assert nll.shape == (n,)
            scored = nll[~torch.isnan(nll)]
            assert scored.numel() == (n if protocol == "nonoverlapping" else n // 2)
            torch.testing.assert_close(scored, torch.full_like(scored, math.log(256)))


def test_learned_cannot_run_past_its_table_but_interpolated_can():
    cfg = _tiny_cfg()
    model = E.build_model(cfg, "learned", 1, 0)
    assert evaluate(model, cfg, "learned", 16)["status"] == "ok"
    assert evaluate(model, cfg, "learned", 32) == {"status": "cannot run", "bpb": None,
                                                   "position_nll": None}
    assert evaluate(model, cfg, "learned+interp", 64, "sliding")["status"] == "ok"


def test_evaluation_changes_are_the_scaling_functions():
    cfg = _tiny_cfg()
    model = E.build_model(cfg, "rope", 1, 0)
    d_h, L = model.head_dim, cfg.train_len
    kw = E._forward_kwargs
    assert kw(model, "linear", L, cfg) == {}            # s = 1: the trained model
    for change, fn in (("linear", linear), ("ntk_aware", ntk_aware), ("yarn", yarn)):
        inv_freq, factor = kw(model, change, 4 * L, cfg)["rope_scaling"]
        want, want_factor = fn(d_h, 4.0, L)
        torch.testing.assert_close(inv_freq, want, rtol=0, atol=0)
        assert factor == want_factor
    assert kw(model, "dynamic_ntk", L, cfg) == {}
    inv_freq, _ = kw(model, "dynamic_ntk", 4 * L, cfg)["rope_scaling"]
    torch.testing.assert_close(inv_freq, dynamic_ntk(d_h, cfg.dynamic_factor, L,
                                                     seq_len=4 * L)[0], rtol=0, atol=0)
    # Fine-tuned models keep at least the factor they were tuned with (finetune_len / L = 2).
    for n, s in ((L, 2.0), (2 * L, 2.0), (4 * L, 4.0)):
        inv_freq, _ = kw(model, "ft+linear", n, cfg)["rope_scaling"]
        torch.testing.assert_close(inv_freq, linear(d_h, s, L)[0], rtol=0, atol=0)
    assert kw(model, "ft", 4 * L, cfg) == {}
    assert kw(model, "window", 4 * L, cfg) == {"attention_window": L}
    yf, one = kw(model, "yarn-freq", 4 * L, cfg)["rope_scaling"]
    assert one == 1.0 and torch.equal(yf, yarn(d_h, 4.0, L)[0])
    trained, t = kw(model, "yarn-temp", 4 * L, cfg)["rope_scaling"]
    assert torch.equal(trained, model.inv_freq) and t == yarn(d_h, 4.0, L)[1] > 1.0


def test_finetune_copies_and_every_method_sees_the_same_windows(monkeypatch):
    cfg = _tiny_cfg()
    model, _ = train(cfg, "rope", 1, 0)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    seen = []
    real = E.sample_batch

    def spy(data, b, s, gen):
        x, y = real(data, b, s, gen)
        seen.append((b, s, y.sum().item()))
        return x, y

    monkeypatch.setattr(E, "sample_batch", spy)
    for method in (None, "linear", "yarn"):
        tuned, loss = finetune(model, cfg, method, 0)
        assert math.isfinite(loss) and tuned is not model
    for k, v in model.state_dict().items():
        assert torch.equal(v, before[k]), k
    # Same bytes per step as training (4 windows of 16 = 2 windows of 32), same windows.
    assert seen[:2] == seen[2:4] == seen[4:6]
    assert seen[0][:2] == (2, 32)


def test_training_is_the_same_data_and_weights_for_every_scheme():
    cfg = _tiny_cfg()
    a = E.build_model(cfg, "rope", 1, 0).state_dict()
    b = E.build_model(cfg, "alibi", 1, 0).state_dict()
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), k


# --------------------------------------------------------------------------- summaries


def _fake_study():
    rows = []
    for seed, (x, y) in enumerate(((2.0, 2.5), (2.2, 2.4), (2.1, 2.9))):
        for variant, v in (("a", x), ("b", y)):
            rows.append({"variant": variant, "depth": 2, "seed": seed, "length": 8,
                         "protocol": "nonoverlapping", "status": "ok", "bpb": v})
        rows.append({"variant": "c", "depth": 2, "seed": seed, "length": 8,
                     "protocol": "nonoverlapping", "status": "cannot run", "bpb": None})
    return {"results": rows}


def test_summarize_and_paired_difference():
    study = _fake_study()
    s = summarize(study, 2)
    assert s["a"] == [pytest.approx((2.1, 2.0, 2.2))]
    assert s["c"] == [None]
    mean, lo, hi = paired_difference(study, "a", "b", 8, 2)
    assert (mean, lo, hi) == pytest.approx(((-0.5 - 0.2 - 0.8) / 3, -0.8, -0.2))
    assert paired_difference(study, "a", "c", 8, 2) is None


# --------------------------------------------------------------------------- reproducibility


def test_workers_do_not_change_a_byte(tmp_path):
    cfg = _tiny_cfg(variants=("rope", "rope+pi+ft", "alibi", "learned"), seeds=(0, 1))
    one, two = run_study(cfg, workers=1), run_study(cfg, workers=2)
    save_results(one, tmp_path / "1.json")
    save_results(two, tmp_path / "2.json")
    assert (tmp_path / "1.json").read_bytes() == (tmp_path / "2.json").read_bytes()
    assert {r["stage"] for r in one["training"]} == {"train", "finetune linear"}


def test_quick_never_writes_the_committed_results(capsys):
    before = RESULTS_PATH.read_bytes()
    for argv in (["--quick"], ["--quick", "--out", str(RESULTS_PATH)]):
        with pytest.raises(SystemExit):
            E.main(argv)
    assert RESULTS_PATH.read_bytes() == before
    assert "--out" in capsys.readouterr().err


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    start = time.perf_counter()
    study = run_study(QUICK, workers=2)
    elapsed = time.perf_counter() - start
    path = tmp_path_factory.mktemp("study") / "quick.json"
    save_results(study, path)
    return load_results(path), elapsed


def test_quick_study_is_complete_and_fast(quick):
    study, elapsed = quick
    assert elapsed < 60
    want = len(QUICK.variants) * len(PROTOCOLS) * len(QUICK.lengths) * len(QUICK.seeds)
    assert len(study["results"]) == want
    assert study["config"] == QUICK.to_dict()


def test_quick_study_robust_claims(quick):
    """The claims of chapter 10 that hold even for one seed of a 400-step model.

    ``QUICK`` lengths are L, 4L and 8L (64, 256, 512 bytes); every claim is checked with both
    evaluation protocols, with margins several times smaller than the measured effects.
    """
    study, _ = quick
    assert QUICK.lengths == (64, 256, 512)
    for protocol in PROTOCOLS:
        bpb = {v: [None if x is None else x[0] for x in xs]
               for v, xs in summarize(study, 2, protocol).items()}
        # learned positions cannot run past their table
        assert bpb["learned"][0] is not None and bpb["learned"][1:] == [None, None]
        # ALiBi stays within 0.1 bits per byte of its value at L out to 8L
        assert abs(bpb["alibi"][2] - bpb["alibi"][0]) < 0.1, protocol
        # sinusoidal and plain RoPE degrade past L
        assert bpb["sinusoidal"][1] > bpb["sinusoidal"][0] + 0.3, protocol
        assert bpb["rope"][1] > bpb["rope"][0] + 0.3, protocol
        # PI without fine-tuning is worse than NTK-aware and YaRN at 4L
        assert bpb["rope+pi"][1] > bpb["rope+ntk"][1] + 0.2, protocol
        assert bpb["rope+pi"][1] > bpb["rope+yarn"][1] + 0.2, protocol


# --------------------------------------------------------------------------- committed results


@pytest.fixture(scope="module")
def committed():
    return load_results()


def test_committed_results_are_the_full_configuration(committed):
    assert committed["config"] == FULL.to_dict()
    assert set(committed["versions"]) == {"python", "torch", "numpy"}
    if committed["versions"]["python"] == platform.python_version():
        stats = load_corpus()["stats"]
        assert {k: committed["corpus"][k] for k in stats} == stats


def test_committed_results_cover_every_run(committed):
    keys = {(r["variant"], r["depth"], r["seed"], r["length"], r["protocol"])
            for r in committed["results"]}
    for v in FULL.variants:
        protocols = PROTOCOLS[:1] if v in FULL.nonoverlapping_only else PROTOCOLS
        for depth in FULL.depths:
            for seed in FULL.seeds:
                for n in FULL.lengths:
                    for p in protocols:
                        assert (v, depth, seed, n, p) in keys
    assert len(keys) == len(committed["results"])
    for r in committed["results"]:
        if r["variant"] == "learned":
            assert (r["status"] == "ok") == (r["length"] == FULL.train_len)
        else:
            assert r["status"] == "ok" and 0 < r["bpb"] < 9
    stages = {(r["position"], r["stage"]) for r in committed["training"]}
    assert ("rope", "finetune linear") in stages and ("rope", "finetune yarn") in stages
    assert ("rope", "finetune none") in stages
    for r in committed["position_loss"]:
        assert len(r["bits"]) == FULL.position_bins and r["length"] == max(FULL.lengths)


def test_committed_results_file_is_canonical_json(committed):
    text = RESULTS_PATH.read_text(encoding="utf-8")
    assert text == json.dumps(committed, indent=1, sort_keys=True) + "\n"


def test_variants_name_known_schemes():
    from posenc.model import POSITIONS

    for name, (position, _) in VARIANTS.items():
        assert position in POSITIONS, name
    assert set(FULL.variants) == set(VARIANTS)
