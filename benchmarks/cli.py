"""How long ``python -m posenc inspect`` takes, next to the floor it cannot beat.

    python benchmarks/cli.py [--repeats 5]

Runs the command line, as a user does (a fresh interpreter each time), on four published
configs written to a temporary folder — Llama 3.1 8B, Gemma 3 4B (through its multimodal
``text_config``), SmolLM3 3B and Qwen3-Next 80B, the configs ``tests/test_cli.py`` checks —
and, interleaved with it, ``python -c "import torch"``: the import that every run of the
command pays and ``posenc`` cannot shorten. Prints, per config, the median wall time over
the repeats, the median of the per-repeat ratios to the torch import (paired, so load
changes between repeats cancel), and the load average before and after. The target is
under 2 s per config; quote the times only from a quiet machine (1-minute load below 1).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from test_hf_config import (  # noqa: E402 (the published configs the tests carry)
    GEMMA3_4B_TEXT,
    LLAMA31_8B,
    QWEN3_NEXT_80B,
    SMOLLM3_3B,
)

CONFIGS = {
    "Llama 3.1 8B": LLAMA31_8B,
    "Gemma 3 4B": {"model_type": "gemma3", "text_config": GEMMA3_4B_TEXT},
    "SmolLM3 3B": SMOLLM3_3B,
    "Qwen3-Next 80B": QWEN3_NEXT_80B,
}
TARGET_S = 2.0


def _wall(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    took = time.perf_counter() - start
    if out.returncode != 0:
        raise RuntimeError(f"{cmd} failed: {out.stderr[-2000:]}")
    return took


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    floor = [sys.executable, "-c", "import torch"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name, config in CONFIGS.items():
            path = tmp / f"{name.replace(' ', '_')}.json"
            path.write_text(json.dumps(config))
            cmd = [sys.executable, "-m", "posenc", "inspect", str(path)]
            _wall(cmd, tmp)  # warm the file cache
            times, ratios, floors = [], [], []
            for _ in range(args.repeats):
                f = _wall(floor, tmp)
                t = _wall(cmd, tmp)
                times.append(t)
                floors.append(f)
                ratios.append(t / f)
            rows.append((name, statistics.median(times), statistics.median(floors),
                         statistics.median(ratios)))
    load_after = os.getloadavg()
    print(f"load average before: {load_before[0]:.2f} (1 min), {load_before[1]:.2f} (5 min);"
          f" after: {load_after[0]:.2f}, {load_after[1]:.2f}; {args.repeats} repeats")
    print("| config | `posenc inspect` s | `import torch` s | ratio | under 2 s |")
    print("|---|---:|---:|---:|---|")
    for name, t, f, r in rows:
        print(f"| {name} | {t:.2f} | {f:.2f} | {r:.2f}x | {'yes' if t < TARGET_S else 'no'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
