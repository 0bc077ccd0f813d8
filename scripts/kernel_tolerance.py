"""How far the committed study moves under other CPU kernels, measured.

    python scripts/kernel_tolerance.py            # writes posenc/data/kernel_tolerance.json

The study reproduces its file byte for byte on the same CPU type and torch build. Another
machine runs other floating-point kernels, and a trained model's last digits drift with
them. This script re-runs chosen jobs of the committed study (the 2-layer RoPE, T5 and
ALiBi jobs of every seed, by default) in worker processes started under another kernel
setting — torch's portable kernels instead of its AVX2 ones (``ATEN_CPU_CAPABILITY=default``)
and MKL's conditional-reproducibility code path (``MKL_CBWR=COMPATIBLE``) — and records,
against the committed rows: the largest change of any score, per scheme, and which of the
claims' verdicts (:func:`posenc.experiments.check_claims`) change when the re-run jobs
replace the committed ones. Chapter 10 prints the result.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: The other kernel setting (environment of the worker processes).
SETTING = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"}


def _run(job):
    import torch

    from posenc.experiments import study

    return torch.backends.cpu.get_cpu_capability(), study._job(job)


def main(argv=None) -> int:
    from posenc.experiments import (
        KERNEL_TOLERANCE_PATH,
        StudyConfig,
        check_claims,
        load_results,
        save_results,
    )
    from posenc.experiments.study import job_outputs, merge_jobs

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    parser.add_argument("--schemes", nargs="+", default=["rope", "t5", "alibi"])
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--out", default=str(KERNEL_TOLERANCE_PATH))
    args = parser.parse_args(argv)
    committed = load_results()
    cfg = StudyConfig(**{k: tuple(v) if isinstance(v, list) else v
                         for k, v in committed["config"].items()})
    jobs = [(cfg, args.depth, seed, scheme, "cpu") for scheme in args.schemes
            for seed in cfg.seeds]
    saved = {k: os.environ.get(k) for k in SETTING}
    os.environ.update(SETTING)  # inherited by the spawned workers before torch loads
    start = time.perf_counter()
    try:
        with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
            got = list(pool.map(_run, jobs))
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    seconds = time.perf_counter() - start
    outs = job_outputs(committed)
    for job, (_, out) in zip(jobs, got, strict=True):
        outs[(job[1], job[2], job[3])] = out
    rerun = merge_jobs(cfg, list(outs.values()), "cpu")

    def scores(study, keys=("results", "finetune_sweep")):
        table = {}
        for key in keys:
            for r in study[key]:
                if r["depth"] == args.depth and r.get("bpb") is not None:
                    ident = (key, r["variant"], r["seed"], r.get("steps", 0), r["protocol"],
                             r["length"])
                    table[ident] = r["bpb"]
        return table

    before, after = scores(committed), scores(rerun)
    per_scheme: dict = {}
    from posenc.experiments import VARIANTS

    for ident, value in after.items():
        scheme = VARIANTS[ident[1]][0]
        delta = abs(value - before[ident])
        best = per_scheme.get(scheme, (0.0, None))
        if delta > best[0]:
            per_scheme[scheme] = (delta, list(ident))
    def key(r):
        return r["claim"], r["depth"], r["protocol"]

    old = {key(r): r for r in check_claims(committed) if r["depth"] == args.depth}
    changed = [{"claim": r["claim"], "depth": r["depth"], "protocol": r["protocol"],
                "committed": old[key(r)]["verdict"], "rerun": r["verdict"],
                "interval_committed": old[key(r)]["interval"], "interval_rerun": r["interval"]}
               for r in check_claims(rerun) if key(r) in old
               and r["verdict"] != old[key(r)]["verdict"]]
    result = {
        "setting": SETTING,
        "cpu_capability": sorted({cap for cap, _ in got}),
        "jobs": [{"depth": j[1], "seed": j[2], "scheme": j[3]} for j in jobs],
        "max_abs_change": {s: {"bpb": round(d, 4), "row": row}
                           for s, (d, row) in sorted(per_scheme.items())},
        "verdicts_changed": changed,
        "claims_checked": len(old),
        "seconds": round(seconds),
        "config": committed["config"],
        "versions": committed["versions"],
    }
    save_results(result, args.out)
    print(json.dumps({k: result[k] for k in ("cpu_capability", "max_abs_change",
                                             "verdicts_changed", "seconds")}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
