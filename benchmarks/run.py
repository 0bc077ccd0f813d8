"""Benchmarks for ``posenc`` and the book: one command, one table.

    python benchmarks/run.py            # micro-benchmarks and book timings (10-15 minutes)
    python benchmarks/run.py --study    # ... and the full extrapolation study (16 more minutes)
    python benchmarks/run.py --quick    # micro-benchmarks only (about 1–2 minutes)
    python benchmarks/run.py --readme   # ... and copy the table into README.md's Benchmarks section
    python benchmarks/run.py --render --readme   # re-render results.md / README from results.json

Results go to ``benchmarks/results.json`` (raw numbers) and ``benchmarks/results.md`` (the
table, also printed). ``--quick`` keeps the book section of the previous run, marked with its
date.

What is measured (CPU, float32, ``torch.set_num_threads(--threads)``, default 1):

* **RoPE** on ``(1, 32, 4096, 128)`` and ``(8, 32, 512, 128)``. The unit of work is the one
  ``transformers``' ``apply_rotary_pos_emb(q, k, cos, sin)`` does: rotate a query *and* a key
  tensor. Contenders: that function; ``posenc.rope.apply_rope`` with cos/sin precomputed once
  per length (as a model does), in both layouts; ``apply_rope`` from positions (tables built
  inside every call); the formula ``posenc`` used before it was fused (``x·cos +
  rotate_half(x)·sin`` then a concatenation, i.e. ``transformers``' arithmetic); and
  ``x.clone()`` — the memory-traffic floor, since RoPE must read and write every element once.
  Each repeat runs every contender once, back to back, in a rotating order; a ratio is the
  median over repeats of the per-repeat ratio (paired, so load changes between repeats
  cancel), a time is the median over repeats.
* **Peak extra memory**: the largest number of bytes held by tensors that the call allocated
  (its outputs included), read from torch's own allocator through
  ``torch.profiler.profile(profile_memory=True)``: every CPU allocation and free is recorded
  with a timestamp, and the running sum's maximum is the peak. ``tracemalloc`` cannot see
  torch's allocations and RSS deltas depend on what the allocator keeps cached.
* **Position biases** for 32 heads, 4096 × 4096: ``posenc.alibi.alibi_bias`` against a
  direct float32 construction (``slopes · (j − i)`` then ``masked_fill_``), and
  ``posenc.relative.RelativePositionBias`` against ``transformers``' ``T5Attention.compute_bias``
  with the same weights; the values are checked equal.
* **Book**: wall time of the README's test command ``python -m pytest`` exactly as README
  gives it, right after README command 1's build (whose site the tests reuse when its stamp
  is current), with each worker's busy time and the slowest units of work (the "workers"
  section the run prints; pyproject's ``addopts`` run it on every core with pytest-xdist),
  with a JUnit
  report to count the tests and to sum nbval's per-cell times per notebook (every notebook
  in ``book/`` must appear); of a cold ``jupyter-book build . -n -W --keep-going`` into an
  empty folder and of a rebuild of that folder with nothing changed; of the README's PDF
  command ``python scripts/build_pdf.py`` (into a temporary file; its page count read with
  poppler's ``pdfinfo``); and of the study: the reduced run the tests use
  (``python -m posenc.experiments --quick``), and with ``--study`` the full run that
  produced ``posenc/data/extrapolation.json`` (written to a temporary file, never over the
  committed one).

Targets (issues 7, 22 and 33): RoPE ≥ 1.5× ``transformers``' speed and ≤ 2× a clone; one nbval
pass over all notebooks ≤ 60 s, each notebook ≤ 10 s, the whole test command ≤ 240 s on 2
cores, rebuild ≤ 10 s. A missed target is marked **no** in its row and listed under the
table.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import torch

from posenc.alibi import alibi_bias, alibi_slopes
from posenc.relative import RelativePositionBias
from posenc.rope import apply_rope, rope_cos_sin, rope_inv_freq, rotate_half

ROOT = Path(__file__).resolve().parent.parent
RESULTS_JSON = ROOT / "benchmarks" / "results.json"
RESULTS_MD = ROOT / "benchmarks" / "results.md"
README = ROOT / "README.md"
README_START = "<!-- benchmarks:start -->"
README_END = "<!-- benchmarks:end -->"
MIB = 2**20

#: The README test command's target on 2 cores (issue 22), in seconds.
PYTEST_TARGET_S = 240
ROPE_SHAPES = [(1, 32, 4096, 128), (8, 32, 512, 128)]
BIAS_HEADS, BIAS_LEN = 32, 4096


# --------------------------------------------------------------------------- measuring


@contextlib.contextmanager
def _quiet_stderr():
    """Silence the profiler's C++ start/stop lines (written straight to file descriptor 2)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def peak_bytes(fn) -> int:
    """Peak bytes of torch CPU allocations made while ``fn()`` runs (its result included)."""
    from torch.profiler import ProfilerActivity, profile

    with _quiet_stderr(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        result = fn()
        del result
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    events.sort(key=lambda e: e.start_ns())
    live = peak = 0
    for e in events:
        live += e.nbytes()
        peak = max(peak, live)
    return peak


def race(contenders: dict, repeats: int, *, warmup: bool = True) -> dict[str, list[float]]:
    """Seconds per call of every contender, ``repeats`` rounds, each round all contenders once.

    The order rotates every round so no contender always runs first (after a cold cache)."""
    names = list(contenders)
    for fn in contenders.values() if warmup else ():  # first-touch allocations, lazy imports
        fn()
    times = {n: [] for n in names}
    for r in range(repeats):
        order = names[r % len(names):] + names[: r % len(names)]
        for n in order:
            start = time.perf_counter()
            contenders[n]()
            times[n].append(time.perf_counter() - start)
    return times


def paired_ratio(times, a: str, b: str) -> float:
    """Median over rounds of ``time[a] / time[b]`` measured in the same round."""
    return statistics.median(x / y for x, y in zip(times[a], times[b], strict=True))


# --------------------------------------------------------------------------- RoPE


def unfused_rope(x, cos, sin):
    """``posenc`` before commit 4031be4: ``transformers``' arithmetic plus a concatenation."""
    r = cos.shape[-1]
    xr = x[..., :r]
    return torch.cat((xr * cos + rotate_half(xr) * sin, x[..., r:]), dim=-1)


def fma_rope(x, cos, sin):
    """Half layout with fused multiply–adds (``addcmul_``): not used by ``posenc``.

    Shown to measure what bit-identity with ``transformers`` costs: the fused form rounds
    once per output instead of twice, so its last bit differs from ``x·cos +
    rotate_half(x)·sin`` (and from every ``posenc`` result printed in the book)."""
    h = x.shape[-1] // 2
    out = x * cos
    out[..., :h].addcmul_(x[..., h:], sin[..., :h], value=-1)
    out[..., h:].addcmul_(x[..., :h], sin[..., h:])
    return out


def _rope_contenders(q, k, pos, cos_h, sin_h, cos_i, sin_i) -> dict:
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    hf_cos, hf_sin = cos_h[None], sin_h[None]  # transformers' (batch, s, d) tables
    return {
        "x.clone() (floor)": lambda: (q.clone(), k.clone()),
        "transformers apply_rotary_pos_emb": lambda: apply_rotary_pos_emb(q, k, hf_cos, hf_sin),
        "posenc before fusing (half)": lambda: (
            unfused_rope(q, cos_h, sin_h), unfused_rope(k, cos_h, sin_h)),
        "apply_rope half, tables": lambda: (
            apply_rope(q, cos=cos_h, sin=sin_h), apply_rope(k, cos=cos_h, sin=sin_h)),
        "apply_rope interleaved, tables": lambda: (
            apply_rope(q, cos=cos_i, sin=sin_i, layout="interleaved"),
            apply_rope(k, cos=cos_i, sin=sin_i, layout="interleaved")),
        "apply_rope half, positions": lambda: (apply_rope(q, pos), apply_rope(k, pos)),
        "apply_rope interleaved, positions": lambda: (
            apply_rope(q, pos, layout="interleaved"), apply_rope(k, pos, layout="interleaved")),
        "half with fused multiply-add (not used)": lambda: (
            fma_rope(q, cos_h, sin_h), fma_rope(k, cos_h, sin_h)),
    }


def bench_rope(repeats: int) -> list[dict]:
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    rows = []
    for shape in ROPE_SHAPES:
        g = torch.Generator().manual_seed(0)
        q = torch.randn(shape, generator=g)
        k = torch.randn(shape, generator=g)
        s, d = shape[-2], shape[-1]
        pos = torch.arange(s)
        inv = rope_inv_freq(d)
        cos_h, sin_h = rope_cos_sin(pos, inv, layout="half")  # (s, d), once per length
        cos_i, sin_i = rope_cos_sin(pos, inv, layout="interleaved")
        hf_cos, hf_sin = cos_h[None], sin_h[None]
        contenders = _rope_contenders(q, k, pos, cos_h, sin_h, cos_i, sin_i)
        # Same numbers: the fused half layout is bit-identical to transformers' arithmetic.
        hf_q, hf_k = apply_rotary_pos_emb(q, k, hf_cos, hf_sin)
        same = torch.equal(apply_rope(q, cos=cos_h, sin=sin_h), hf_q) and torch.equal(
            apply_rope(k, pos), hf_k)
        times = race(contenders, repeats)
        floor, hf = "x.clone() (floor)", "transformers apply_rotary_pos_emb"
        for name in contenders:
            rows.append({
                "shape": list(shape),
                "name": name,
                "median_ms": 1e3 * statistics.median(times[name]),
                "min_ms": 1e3 * min(times[name]),
                "speed_vs_hf": paired_ratio(times, hf, name),
                "time_vs_clone": paired_ratio(times, name, floor),
                "peak_mib": peak_bytes(contenders[name]) / MIB,
                "input_mib": q.numel() * q.element_size() / MIB,
                "bit_identical_to_hf": same if name.startswith("apply_rope half") else None,
            })
    return rows


# --------------------------------------------------------------------------- biases


def reference_alibi(num_heads: int, n: int) -> torch.Tensor:
    """Direct float32 construction: ``slopes · (j − i)``, ``−inf`` above the diagonal."""
    rel = torch.arange(n)[None, :] - torch.arange(n)[:, None]
    bias = alibi_slopes(num_heads)[:, None, None] * rel.to(torch.float32)
    return bias.masked_fill_(rel > 0, float("-inf"))


def _held_peak(fn):
    """``(fn(), peak bytes while computing it)``."""
    held = []
    peak = peak_bytes(lambda: held.append(fn()))
    return held[0], peak


def bench_biases(repeats: int) -> list[dict]:
    from transformers.models.t5.configuration_t5 import T5Config
    from transformers.models.t5.modeling_t5 import T5Attention

    h, n = BIAS_HEADS, BIAS_LEN
    ours = RelativePositionBias(h, 32, 128, bidirectional=True)
    config = T5Config(num_heads=h, d_model=64, d_kv=2, relative_attention_num_buckets=32,
                      relative_attention_max_distance=128, is_decoder=False)
    t5 = T5Attention(config, has_relative_attention_bias=True)
    with torch.no_grad():
        t5.relative_attention_bias.weight.copy_(ours.weight)

    pairs = [
        ("ALiBi, causal", "posenc alibi_bias", lambda: alibi_bias(h, n),
         "float32 slopes·(j−i), masked_fill_", lambda: reference_alibi(h, n)),
        ("T5 bias, bidirectional", "posenc RelativePositionBias", lambda: ours(n, n),
         "transformers T5Attention.compute_bias", lambda: t5.compute_bias(n, n)[0]),
    ]
    rows = []
    with torch.no_grad():
        for label, name_a, fa, name_b, fb in pairs:
            a, peak_a = _held_peak(fa)
            b, peak_b = _held_peak(fb)
            peaks = {name_a: peak_a, name_b: peak_b}
            diff, same_inf = 0.0, True
            for a_h, b_h in zip(a, b, strict=True):  # per head: no 4 GiB float64 copies
                same_inf &= torch.equal(torch.isinf(a_h), torch.isinf(b_h))
                finite = torch.isfinite(a_h)
                diff = max(diff, (a_h[finite].double() - b_h[finite].double()).abs().max().item())
            del a, b
            times = race({name_a: fa, name_b: fb}, repeats, warmup=False)
            for name in (name_a, name_b):
                rows.append({
                    "bias": label,
                    "name": name,
                    "median_s": statistics.median(times[name]),
                    "speed_vs_ref": paired_ratio(times, name_b, name),
                    "peak_mib": peaks[name] / MIB,
                    "output_mib": h * n * n * 4 / MIB,
                    "max_abs_diff": diff if same_inf else float("nan"),
                })
    return rows


# --------------------------------------------------------------------------- book


def _run(cmd: list[str], **kw) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, **kw)
    return time.perf_counter() - start, proc


def _notebook_times(junit: Path) -> dict[str, float]:
    """Seconds per notebook: nbval's cell items (setup + call + teardown) summed per file."""
    per_nb: dict[str, float] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        where = (case.get("file") or "") + " " + (case.get("classname") or "")
        match = re.search(r"(\d\d_[\w-]+)\.ipynb", where)
        if match:
            name = match.group(1) + ".ipynb"
            per_nb[name] = per_nb.get(name, 0.0) + float(case.get("time") or 0.0)
    return dict(sorted(per_nb.items()))


def _file_times(junit: Path, top: int = 10) -> dict[str, float]:
    """The ``top`` test files (notebooks included) by summed per-test seconds (setup, call
    and teardown, on whichever worker ran them), largest first: where the test command's
    time goes."""
    per_file: dict[str, float] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = case.get("file") or (case.get("classname") or "").replace(".", "/") + ".py"
        if (match := re.search(r"[\w/]*\d\d_[\w-]+\.ipynb", name + " " + (
                case.get("classname") or ""))):
            name = match.group(0)
        per_file[name] = per_file.get(name, 0.0) + float(case.get("time") or 0.0)
    return dict(sorted(per_file.items(), key=lambda kv: -kv[1])[:top])


def _not_passed(junit: Path) -> list[str]:
    """The tests that failed or errored in a JUnit report, as ``file::name``."""
    names = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            names.append(f"{case.get('classname')}::{case.get('name')}")
    return names


def _junit_counts(junit: Path) -> dict[str, int]:
    """Tests by outcome in a JUnit report (what pytest's summary line counts)."""
    root = ET.parse(junit).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in suites:
        for key in counts:
            counts[key] += int(suite.get(key) or 0)
    counts["passed"] = counts["tests"] - counts["failures"] - counts["errors"] - counts["skipped"]
    return counts


def _worker_times(stdout: str) -> dict:
    """Each worker's busy seconds and the slowest units of work, from the "workers" section
    the test run prints (conftest.py)."""
    busy = {w: float(s) for w, s in re.findall(r"^busy (\w+): ([\d.]+) s", stdout, re.M)}
    units = re.search(r"^slowest units: (.*)$", stdout, re.M)
    slowest = dict(re.findall(r"(\S+) ([\d.]+) s(?:,|$)", units.group(1))) if units else {}
    return {"worker_busy_s": busy, "slowest_units_s": {k: float(v) for k, v in slowest.items()}}


def _pdf_pages(pdf: Path) -> int | None:
    if shutil.which("pdfinfo") is None or not pdf.is_file():
        return None
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True)
    match = re.search(r"^Pages:\s+(\d+)", info.stdout, re.M)
    return int(match.group(1)) if match else None


def bench_book(full_study: bool = False) -> dict:
    jb = shutil.which("jupyter-book") or str(Path(sys.executable).with_name("jupyter-book"))
    out: dict = {"notebooks_in_book": sorted(p.name for p in (ROOT / "book").glob("*.ipynb"))}
    with tempfile.TemporaryDirectory(prefix="posenc_bench_") as tmp:
        tmp = Path(tmp)
        build = [jb, "build", str(ROOT), "--path-output", str(tmp / "site"), "-n", "-W",
                 "--keep-going"]
        secs, proc = _run(build)
        out["cold_build_s"], out["cold_build_ok"] = secs, proc.returncode == 0
        secs, proc = _run(build)
        out["rebuild_s"], out["rebuild_ok"] = secs, proc.returncode == 0
        # README command 1's build into _build, then command 2: the tests reuse that site
        # when its stamp is current (a fresh clone's full build), else build it once more.
        secs, proc = _run([jb, "build", str(ROOT), "-n", "-W", "--keep-going"])
        out["readme_build_s"], out["readme_build_ok"] = secs, proc.returncode == 0
        junit = tmp / "junit.xml"
        # The README's command; the JUnit report and the temporary folder change no test.
        secs, proc = _run([sys.executable, "-m", "pytest", f"--junitxml={junit}",
                           f"--basetemp={tmp / 'pytest'}"])
        out["pytest_s"] = secs
        tail = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
        out["pytest_summary"] = re.sub(r"\s+in [\d.:]+s.*$", "", tail.strip("= "))
        out["pytest_ok"] = proc.returncode == 0
        out["pytest_exit"] = proc.returncode
        workers = re.search(r"(?:created: (\d+)/\d+ workers|(\d+) workers \[)", proc.stdout)
        out["pytest_workers"] = int(workers.group(1) or workers.group(2)) if workers else 1
        out.update(_worker_times(proc.stdout))
        reuse = re.search(r"^book build: (.*)$", proc.stdout, re.M)
        out["pytest_site_build"] = reuse.group(1) if reuse else "?"
        out["notebooks_s"] = _notebook_times(junit) if junit.exists() else {}
        out["files_s"] = _file_times(junit) if junit.exists() else {}
        out["tests"] = _junit_counts(junit) if junit.exists() else {}
        out["not_passed"] = _not_passed(junit) if junit.exists() else []
        pdf = tmp / "book.pdf"
        secs, proc = _run([sys.executable, "scripts/build_pdf.py", "--output", str(pdf)])
        out["pdf_s"], out["pdf_ok"] = secs, proc.returncode == 0
        out["pdf_pages"] = _pdf_pages(pdf)
        secs, proc = _run([sys.executable, "-m", "posenc.experiments", "--quick", "--out",
                           str(tmp / "quick.json")])
        out["study_quick_s"], out["study_quick_ok"] = secs, proc.returncode == 0
        if full_study:
            secs, proc = _run([sys.executable, "-m", "posenc.experiments", "--out",
                               str(tmp / "study.json")])
            out["study_s"], out["study_ok"] = secs, proc.returncode == 0
    out["nbval_total_s"] = sum(out["notebooks_s"].values())
    return out


# --------------------------------------------------------------------------- report


def environment(threads: int) -> dict:
    cpu = platform.processor() or ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    import transformers

    return {
        "date": dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "torch_threads": threads,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
    }


def _load(when: str) -> str:
    one, five, _ = os.getloadavg()
    return f"{when}: {one:.1f} (1 min), {five:.1f} (5 min)"


def _ok(flag: bool) -> str:
    return "yes" if flag else "**no**"


def render(res: dict) -> str:
    env = res["env"]
    lines = [
        "# Benchmark results",
        "",
        f"Run {env['date']} on {env['cores']} cores ({env['cpu']}), torch {env['torch']} with "
        f"`torch.set_num_threads({env['torch_threads']})`, transformers "
        f"{env['transformers']}, Python {env['python']}. Load average {res['load']}. "
        "Other jobs shared the machine unless the load average is near 0: treat absolute "
        "times as noisy and read the paired ratios.",
        "",
        "## RoPE (float32; one call rotates q and k)",
        "",
        "Speed vs HF = transformers' time / this time (target ≥ 1.5); time vs clone = this "
        "time / `x.clone()` time (target ≤ 2). Both are medians of per-repeat ratios over "
        f"{res['repeats']} repeats. Peak = most bytes held by tensors the call allocated, "
        "outputs included (q and k are 64 MiB each).",
        "",
        "| shape | contender | median ms | speed vs HF | time vs clone | peak MiB |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in res["rope"]:
        shape = "×".join(map(str, r["shape"]))
        lines.append(
            f"| {shape} | {r['name']} | {r['median_ms']:.1f} | {r['speed_vs_hf']:.2f}× | "
            f"{r['time_vs_clone']:.2f}× | {r['peak_mib']:.0f} |"
        )
    same = [r["bit_identical_to_hf"] for r in res["rope"] if r["bit_identical_to_hf"] is not None]
    half = [r["time_vs_clone"] for r in res["rope"] if r["name"].startswith("apply_rope half")]
    fma = [r["time_vs_clone"] for r in res["rope"] if "fused multiply-add" in r["name"]]
    lines += [
        "", f"`apply_rope` half layout bit-identical to transformers: {_ok(all(same))}. "
        f"Half layout vs clone: {min(half):.2f}–{max(half):.2f}×. It writes the output once "
        "(x·cos) and adds each sine term through one reused half-size buffer, because that "
        "keeps transformers' rounding (each product and sum rounded once) bit for bit — and "
        "every number the book prints with it. Folding the sine term in with a fused "
        f"multiply–add (`addcmul_`, last rows) needs no buffer and runs at "
        f"{min(fma):.2f}–{max(fma):.2f}× a clone, but rounds once less, so "
        "about a fifth of the outputs (measured) change in their last bits. The interleaved "
        "layout is one complex multiplication. "
        "On this VM every fresh output page is a page fault (high system time), which is "
        "much of the clone's cost too.",
              "", f"## Position biases ({BIAS_HEADS} heads, {BIAS_LEN} × {BIAS_LEN}, float32)",
              "", "| bias | construction | median s | speed vs reference | peak MiB | "
              "output MiB | max abs difference |", "|---|---|---:|---:|---:|---:|---:|"]
    bias_notes = (
        "ALiBi: posenc rounds each float64 product once; the float32 reference rounds the "
        "slope first, so the two differ by one float32 unit at the largest distances "
        "(the max abs difference column). Both posenc biases compute the q + k − 1 distinct "
        "values once and lay them out as a Toeplitz matrix: one contiguous copy."
    )
    for r in res["bias"]:
        lines.append(
            f"| {r['bias']} | {r['name']} | {r['median_s']:.2f} | {r['speed_vs_ref']:.2f}× | "
            f"{r['peak_mib']:.0f} | {r['output_mib']:.0f} | {r['max_abs_diff']:.1e} |"
        )
    book = res.get("book")
    lines += ["", bias_notes, "", "## Book", ""]
    if not book:
        lines.append("Not measured yet: run `python benchmarks/run.py` without `--quick`.")
    else:
        nbs = book["notebooks_s"]
        slowest = max(nbs.values(), default=0.0)
        in_book = book.get("notebooks_in_book", sorted(nbs))
        unmeasured = [n for n in in_book if n not in nbs]
        tests = book.get("tests") or {}
        workers = book.get("pytest_workers", 1)
        pytest_met = book["pytest_s"] <= PYTEST_TARGET_S and book["pytest_ok"]
        rows = [
            ("`python -m pytest` (README test command, "
             f"{workers} worker{'s' if workers != 1 else ''}; {book['pytest_summary']})",
             f"{book['pytest_s']:.0f}", f"≤ {PYTEST_TARGET_S}", _ok(pytest_met)),
            (f"one nbval pass over all {len(nbs)} of {len(in_book)} notebooks (sum of "
             "per-notebook times)", f"{book['nbval_total_s']:.1f}", "≤ 60",
             _ok(book["nbval_total_s"] <= 60 and not unmeasured)),
            ("slowest notebook under nbval", f"{slowest:.1f}", "≤ 10", _ok(slowest <= 10)),
            ("cold `jupyter-book build . -n -W --keep-going`", f"{book['cold_build_s']:.0f}",
             "—", f"{_ok(book['cold_build_ok'])} (built)"),
            ("rebuild, nothing changed", f"{book['rebuild_s']:.1f}", "≤ 10",
             _ok(book["rebuild_s"] <= 10 and book["rebuild_ok"])),
        ]
        if "pdf_s" in book:
            pages = book.get("pdf_pages")
            rows.append((f"`python scripts/build_pdf.py` (the PDF, {pages or '?'} pages)",
                         f"{book['pdf_s']:.0f}", "—", f"{_ok(book['pdf_ok'])} (built)"))
        if "study_quick_s" in book:
            rows.append(("`python -m posenc.experiments --quick` (the study the tests run)",
                         f"{book['study_quick_s']:.0f}", "< 60",
                         _ok(book["study_quick_ok"] and book["study_quick_s"] < 60)))
        if "study_s" in book:
            rows.append(("`python -m posenc.experiments` (the full study, to a temporary "
                         "file)", f"{book['study_s']:.0f}", "—",
                         f"{_ok(book['study_ok'])} (ran)"))
        else:
            rows.append(("`python -m posenc.experiments` (the full study)", "not run", "—",
                         "add `--study` (about 38 minutes of 2 cores)"))
        missed = [f"{what}: {secs} s, target {target}"
                  for what, secs, target, met in rows if met.startswith("**no**")]
        lines += [f"Measured {book['date']}, load average {book['load']}.", ""]
        if tests:
            lines += [f"Tests: {tests['tests']} collected in the JUnit report — "
                      f"{tests['passed']} passed, {tests['skipped']} skipped, "
                      f"{tests['failures']} failed, {tests['errors']} errors "
                      f"(pytest exit status {book.get('pytest_exit', '?')}).", ""]
        if book.get("not_passed"):
            lines += ["Not passed: " + ", ".join(f"`{n}`" for n in book["not_passed"]) + ".",
                      ""]
        lines += ["| what | seconds | target | met |", "|---|---:|---:|---|"]
        lines += [f"| {what} | {secs} | {target} | {met} |" for what, secs, target, met in rows]
        lines += [""]
        if unmeasured:
            lines += [f"Notebooks with no nbval time in the report: {', '.join(unmeasured)}.",
                      ""]
        lines += [("Missed targets: " + "; ".join(missed) + ".") if missed
                  else "Every target met.", ""]
        lines += [
            "| notebook | nbval seconds |",
            "|---|---:|",
        ]
        lines += [f"| {name} | {secs:.1f} |" for name, secs in nbs.items()]
        if book.get("worker_busy_s"):
            busy = "; ".join(f"{w} {secs:.0f} s ({100 * secs / book['pytest_s']:.0f} %)"
                             for w, secs in book["worker_busy_s"].items())
            units = "; ".join(f"`{u}` {secs:.0f} s"
                              for u, secs in book.get("slowest_units_s", {}).items())
            lines += ["", f"Each worker's busy time in the test command ({book['pytest_s']:.0f}"
                      f" s of wall time): {busy}. The slowest units of work (a unit stays on "
                      f"one worker): {units}. The site: "
                      f"{book.get('pytest_site_build', '?')}."]
        if book.get("files_s"):
            lines += ["", f"Where the test command's time goes: the {len(book['files_s'])} "
                      f"slowest test files by summed per-test seconds (over {workers} "
                      "workers, so the wall clock is about this sum divided by the workers "
                      "where both are busy).", "", "| test file | seconds |", "|---|---:|"]
            lines += [f"| {name} | {secs:.0f} |" for name, secs in book["files_s"].items()]
    return "\n".join(lines) + "\n"


def update_readme(table: str) -> None:
    text = README.read_text()
    if README_START not in text or README_END not in text:
        raise SystemExit(f"README.md has no {README_START} … {README_END} block to update")
    body = table.split("\n", 2)[2].replace("\n## ", "\n#### ")  # drop the title, demote
    head, rest = text.split(README_START, 1)
    _, tail = rest.split(README_END, 1)
    README.write_text(f"{head}{README_START}\n{body}{README_END}{tail}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="micro-benchmarks only")
    parser.add_argument("--study", action="store_true",
                        help="also time the full extrapolation study (about 38 minutes of 2 cores)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--repeats", type=int, default=7, help="RoPE repeats (default 7)")
    parser.add_argument("--readme", action="store_true", help="copy the table into README.md")
    parser.add_argument("--render", action="store_true",
                        help="measure nothing: re-render results.md (and README) from results.json")
    args = parser.parse_args(argv)
    if args.render:
        table = render(json.loads(RESULTS_JSON.read_text()))
        RESULTS_MD.write_text(table)
        if args.readme:
            update_readme(table)
        print(table)
        return 0
    if args.threads < 1 or args.repeats < 1:
        parser.error("--threads and --repeats must be >= 1")
    torch.set_num_threads(args.threads)

    started = time.perf_counter()
    load_before = _load("before")
    res = {"env": environment(args.threads), "repeats": args.repeats}
    print("RoPE ...", flush=True)
    res["rope"] = bench_rope(args.repeats)
    print("position biases ...", flush=True)
    res["bias"] = bench_biases(3)
    res["load"] = f"{load_before}; {_load('after micro-benchmarks')}"
    if args.quick:
        if RESULTS_JSON.exists():
            res["book"] = json.loads(RESULTS_JSON.read_text()).get("book")
    else:
        print("book (cold build, rebuild, test suite, PDF, study) ...", flush=True)
        book_load = _load("before")
        res["book"] = bench_book(full_study=args.study)
        res["book"]["date"] = dt.datetime.now().strftime("%Y-%m-%d %H:%M")
        res["book"]["load"] = f"{book_load}; {_load('after')}"
    res["total_s"] = time.perf_counter() - started

    RESULTS_JSON.write_text(json.dumps(res, indent=1) + "\n")
    table = render(res)
    RESULTS_MD.write_text(table)
    if args.readme:
        update_readme(table)
    print(table)
    print(f"(benchmark took {res['total_s']:.0f} s; wrote {RESULTS_MD.relative_to(ROOT)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
