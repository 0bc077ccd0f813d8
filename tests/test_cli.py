"""``python -m posenc inspect``, its report and the readable Python API behind it.

The command line reads published ``config.json`` files (the ones ``tests/test_hf_config.py``
already checks against each family's own ``transformers`` modules), written to disk the
way a user has them. Each report is compared layer by layer with the layer pattern the
model card and the config describe (typed here, independently of ``posenc``):
:func:`pattern_mismatches`, whose self-test feeds it a report broken on purpose.
"""

from __future__ import annotations

import dataclasses
import json
import pydoc
import subprocess
import sys

import pytest
import torch
from test_hf_config import (
    GEMMA3_4B_TEXT,
    LLAMA4_SCOUT,
    LLAMA31_8B,
    PHI3_128K,
    QWEN3_NEXT_80B,
    SMOLLM3_3B,
)

from posenc import cli
from posenc import hf_config as H
from posenc.hf_config import ConfigReport, config_report, layer_specs


def _llama31(i):
    return ("full_attention", True, None, 5e5, 128, "llama3")


def _gemma3(i):
    if i % 6 == 5:
        return ("full_attention", True, None, 1e6, 256, "linear")
    return ("sliding_attention", True, 1024, 1e4, 256, "default")


def _smollm3(i):
    if i % 4 == 3:
        return ("full_attention", False, None, None, 0, None)
    return ("full_attention", True, None, 5e6, 128, "default")


def _qwen3_next(i):
    if i % 4 == 3:
        return ("full_attention", True, None, 1e7, 64, "default")
    return ("linear_attention", False, None, None, 0, None)


#: name -> (config.json as published, the multimodal wrapper if any, layer count, per-layer
#: truth: (layer_type, uses RoPE, window, base, rotated channels, rope_type)).
PUBLISHED = {
    "llama-3.1-8b": (LLAMA31_8B, 32, _llama31),
    "gemma-3-4b-it": ({"model_type": "gemma3", "text_config": GEMMA3_4B_TEXT}, 34, _gemma3),
    "smollm3-3b": (SMOLLM3_3B, 36, _smollm3),
    "qwen3-next-80b": (QWEN3_NEXT_80B, 48, _qwen3_next),
}


def pattern_mismatches(report: ConfigReport, n: int, truth) -> list[str]:
    """Layers where ``report`` differs from ``truth(i)`` (empty when it matches)."""
    seen: dict[int, tuple] = {}
    for g in report.groups:
        for i in g.layers:
            if i in seen:
                return [f"layer {i} is in two groups"]
            seen[i] = (g.layer_type, g.use_rope, g.sliding_window, g.rope_theta,
                       g.rotary_dim, g.rope_type)
    if sorted(seen) != list(range(n)) or report.num_layers != n:
        return [f"layers {sorted(seen)[:3]}… ({len(seen)}), expected 0..{n - 1}"]
    return [f"layer {i}: {seen[i]} != {truth(i)}" for i in range(n) if seen[i] != truth(i)]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("configs")
    out = {}
    for name, (config, _, _) in PUBLISHED.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(config, indent=2))
        out[name] = root / name
    return out


def _run(capsys, *argv, stdin=None, monkeypatch=None) -> tuple[int, str, str]:
    if stdin is not None:
        import io

        data = stdin if isinstance(stdin, bytes) else stdin.encode()
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_inspect_prints_each_published_layer_pattern(name, files, capsys):
    _, n, truth = PUBLISHED[name]
    path = files[name] / "config.json"
    status, out, err = _run(capsys, "inspect", str(path))
    assert status == 0 and err == ""
    assert pattern_mismatches(config_report(path), n, truth) == []
    report = config_report(path)
    assert out == report.text() + "\n"
    for g in report.groups:  # every run is printed with its layers
        assert f"{H.report.layer_ranges(g.layers)}: {g.layer_type}" in out


def test_inspect_texts(files, capsys, monkeypatch):
    _, out, _ = _run(capsys, "inspect", str(files["gemma-3-4b-it"]))
    assert out.splitlines()[:2] == [
        "gemma3_text (via gemma3): 5 sliding : 1 full (34 layers); the layers repeat every 6",
        "  layers 0–4, 6–10, 12–16, 18–22, 24–28, 30–33: sliding_attention, window 1024, RoPE",
    ]
    assert "  layers 5, 11, 17, 23, 29: full_attention, global, RoPE base 1e6" in out
    assert "linear (factor 8)" in out
    _, out, _ = _run(capsys, "inspect", "-", stdin=json.dumps(LLAMA4_SCOUT),
                     monkeypatch=monkeypatch)
    assert "chunked_attention, chunks of 8192, RoPE base 5e5" in _unwrapped(out)
    _, out, _ = _run(capsys, "inspect", str(files["qwen3-next-80b"]))
    assert "layers 3, 7, 11, …, 47 (12 layers): full_attention, global, RoPE base 1e7, " \
           "64 of 256" in out
    _, out, _ = _run(capsys, "inspect", str(files["smollm3-3b"]))
    assert "layers 3, 7, 11, …, 35 (9 layers): full_attention, global, NoPE (no position " \
        "encoding), head 128" in _unwrapped(out)
    _, out, _ = _run(capsys, "inspect", str(files["qwen3-next-80b"]))
    assert "layers 0–2, 4–6, 8–10, …, 44–46 (36 layers): linear_attention, no RoPE (not " \
        "softmax attention: its recurrence or convolution carries order)" in _unwrapped(out)


def _unwrapped(text: str) -> str:
    return " ".join(line.strip() for line in text.splitlines())


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_json_round_trips(name, files, capsys):
    status, out, _ = _run(capsys, "inspect", "--json", str(files[name]))
    assert status == 0
    data = json.loads(out)
    report = config_report(files[name])
    assert data == report.to_dict()
    assert ConfigReport.from_dict(data) == report
    assert out == report.to_json() + "\n"
    assert all(isinstance(g["scaling"], dict) for g in data["groups"])


def test_layers_prints_every_layer_on_one_line(files, capsys):
    _, out, _ = _run(capsys, "inspect", "--layers", str(files["smollm3-3b"]))
    head, *lines = out.splitlines()
    assert head == "smollm3: all full (36 layers); NoPE on 9 of 36; the layers repeat every 4"
    assert [int(line.split()[1].rstrip(":")) for line in lines] == list(range(36))
    assert all(("NoPE" in line) == (i % 4 == 3) for i, line in enumerate(lines))


def test_seq_len_moves_the_length_dependent_frequencies(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(PHI3_128K))
    _, short, _ = _run(capsys, "inspect", str(path))
    _, long, _ = _run(capsys, "inspect", "--seq-len", "200000", str(path))
    assert "; frequencies at load time" in short.splitlines()[0]
    assert "; frequencies at 200000 tokens" in long.splitlines()[0]
    lowest = {g.lowest_frequency for g in config_report(path).groups}
    longer = {g.lowest_frequency for g in config_report(path, seq_len=200_000).groups}
    assert lowest != longer  # short_factor at load time, long_factor past 4096 tokens


def test_standard_input(files, capsys, monkeypatch):
    text = (files["llama-3.1-8b"] / "config.json").read_text()
    status, out, _ = _run(capsys, "inspect", "-", stdin=text, monkeypatch=monkeypatch)
    assert status == 0 and out.startswith("llama: all full (32 layers)")
    status, _, err = _run(capsys, "inspect", "-", stdin=b"\xff\xfe{}",
                          monkeypatch=monkeypatch)
    assert status == cli.EXIT_BAD_INPUT and "standard input: not UTF-8 text" in err
    with pytest.raises(H.ConfigFileError, match="no such file"):
        layer_specs("-")  # in Python, "-" is a file name: only the command line reads stdin


@pytest.mark.parametrize("content, message", [
    (None, "no such file or directory"),
    ("dir", "directory has no config.json"),
    ("{not json", "not JSON (Expecting property name enclosed in double quotes at line 1"),
    ("[1, 2]", "holds an array, not a JSON object of config keys"),
    ("null", "holds null, not a JSON object of config keys"),
    ("  \n", "is empty, not a JSON object of config keys"),
    (b"\xff\xfe", "not UTF-8 text"),
])
def test_bad_input_is_one_line_naming_it(content, message, tmp_path, capsys):
    path = tmp_path / "config.json"
    if content == "dir":
        path = tmp_path
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    status, out, err = _run(capsys, "inspect", str(path))
    assert status == cli.EXIT_BAD_INPUT and out == ""
    assert err.count("\n") == 1 and message in err and str(path) in err


def test_unreadable_folder_empty_path_and_byte_order_mark(tmp_path, capsys, monkeypatch):
    status, _, err = _run(capsys, "inspect", "")
    assert status == cli.EXIT_BAD_INPUT and "the path is empty" in err
    bom = tmp_path / "bom"
    bom.mkdir()
    (bom / "config.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(LLAMA31_8B).encode())
    assert _run(capsys, "inspect", str(bom))[0] == 0  # as Notepad saves UTF-8
    from pathlib import Path

    def denied(self):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "is_dir", denied)  # a folder root can read; a user may not
    status, out, err = _run(capsys, "inspect", str(bom))
    assert status == cli.EXIT_BAD_INPUT and out == ""
    assert err == f"posenc inspect: {bom}: cannot be read (Permission denied)\n"


@pytest.mark.parametrize("config, reason", [
    ({"model_type": "llama9"}, "model_type 'llama9' is not in"),
    ({}, "config has no 'model_type'"),
    (dict(LLAMA31_8B, rope_scaling={"rope_type": "llama3", "factor": 8.0}),
     "rope_scaling['low_freq_factor'] is required"),
    # values a file can carry that used to end in a traceback or Python's own words
    (dict(LLAMA31_8B, num_attention_heads=0),
     "config['num_attention_heads'] must be an integer >= 1, got 0"),
    (dict(LLAMA31_8B, model_type=5), "config['model_type'] must be a string"),
    (dict(LLAMA31_8B, layer_types=-1), "config['layer_types'] must be a list of layer-type"),
    (dict(LLAMA4_SCOUT, attn_scale=float("inf")), "config['attn_scale'] must be finite"),
    (dict(LLAMA4_SCOUT, floor_scale=0), "config['floor_scale'] must be an integer >= 1"),
    (dict(PHI3_128K, original_max_position_embeddings=0),
     "['original_max_position_embeddings'] must be an integer >= 1, got 0"),
    (dict(PHI3_128K, rope_scaling=dict(PHI3_128K["rope_scaling"], short_factor=0)),
     "rope_scaling['short_factor'] must be a list of numbers, got 0"),
    (dict(LLAMA31_8B, sliding_window="4096", model_type="mistral"),
     "config['sliding_window'] must be an integer, got '4096'"),
    (dict(LLAMA31_8B, sliding_window=-5, model_type="mistral"),
     "config['sliding_window'] must be an integer >= 0, got -5"),
])
def test_a_refused_config_exits_1_with_the_reason(config, reason, tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config).replace("Infinity", "1e400"))
    status, out, err = _run(capsys, "inspect", str(path))
    assert status == cli.EXIT_REFUSED and out == ""
    assert err.count("\n") == 1 and reason in err and "Traceback" not in err


def test_python_dash_m_posenc(files, tmp_path):
    """The module entry point, in a subprocess, from outside the repository."""
    out = subprocess.run([sys.executable, "-m", "posenc", "inspect", str(files["smollm3-3b"])],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("smollm3: all full (36 layers); NoPE on 9 of 36; the layers "
                                 "repeat every 4")
    bad = subprocess.run([sys.executable, "-m", "posenc", "inspect", str(tmp_path / "x")],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_layer_specs_reads_a_path_like_the_dict(files):
    for name, (config, _, _) in PUBLISHED.items():
        from_path = layer_specs(files[name] / "config.json")
        from_dir = layer_specs(str(files[name]))
        from_dict = layer_specs(config)
        for a, b, c in zip(from_path, from_dir, from_dict, strict=True):
            assert repr(a) == repr(b) == repr(c)
            assert torch.equal(a.inv_freq, c.inv_freq) if a.use_rope else c.inv_freq is None


def test_layer_spec_repr_is_one_short_line_and_help_documents_every_field():
    specs = layer_specs(LLAMA31_8B) + layer_specs(SMOLLM3_3B)
    for s in specs:
        text = repr(s)
        assert "\n" not in text and "tensor(" not in text and len(text) < 400
    assert repr(layer_specs(SMOLLM3_3B)[3]) == \
        "LayerSpec('full_attention', head_dim=128, use_rope=False)"
    assert "inv_freq=<64 from 1 to " in repr(specs[0])
    doc = pydoc.render_doc(H.LayerSpec, renderer=pydoc.plaintext)
    assert "Alias for field number" not in doc
    for name in H.LayerSpec._fields:
        assert H.LAYER_SPEC_FIELDS[name].split()[0] in doc, name


def test_layer_spec_scaling_carries_the_method_parameters():
    llama = layer_specs(LLAMA31_8B)[0]
    assert dict(llama.scaling) == {"factor": 8.0, "original_max_position_embeddings": 8192,
                                   "low_freq_factor": 1.0, "high_freq_factor": 4.0}
    assert layer_specs(SMOLLM3_3B)[0].scaling == ()


# ------------------------------------------------------------------ self-test ----------


def test_self_test_pattern_check_catches_a_wrong_report(files):
    report = config_report(files["smollm3-3b"])
    assert pattern_mismatches(report, 36, _smollm3) == []
    nope = next(g for g in report.groups if not g.use_rope)
    broken = dataclasses.replace(
        report, groups=tuple(dataclasses.replace(g, use_rope=True) if g is nope else g
                             for g in report.groups))
    assert len(pattern_mismatches(broken, 36, _smollm3)) == 9
    assert pattern_mismatches(report, 36, _llama31)  # another model's truth fails too
