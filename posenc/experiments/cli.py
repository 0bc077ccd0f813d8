"""The command line: ``python -m posenc.experiments [--quick --out PATH | --tune-lr | ...]``."""

from __future__ import annotations

import argparse
import dataclasses
import resource
import sys
import time
from pathlib import Path

from .._checks import check_int
from .config import FULL, LARGE, LARGE_RESULTS_PATH, LR_SWEEP_PATH, QUICK, RESULTS_PATH
from .results import load_results, save_results
from .study import merge_jobs, run_study
from .tuning import tune_lr

__all__ = ["main"]


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (the worker processes)."""
    own, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                                 resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m posenc.experiments",
                                     description=sys.modules[__package__].__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=None,
                        help="where to write the results (default: the committed file for the "
                             "full study; required with --quick)")
    parser.add_argument("--quick", action="store_true",
                        help="the reduced test configuration (never writes the committed file)")
    parser.add_argument("--config", choices=("full", "large"), default="full",
                        help="large: the GPU configuration; tunes the learning rate at L, then "
                             "runs the study (default output posenc/data/extrapolation_large.json)")
    parser.add_argument("--workers", type=int, default=None,
                        help="worker processes on the CPU (default 2)")
    parser.add_argument("--tune-lr", action="store_true",
                        help="only compare LR_CANDIDATES at L (writes posenc/data/lr_sweep.json)")
    parser.add_argument("--reuse", action="append", default=[], metavar="PATH",
                        help="an earlier results file (repeatable): jobs whose settings, "
                             "versions and device type match are taken from it, not re-run; "
                             "the output's partial file (OUT.partial) is reused too")
    args = parser.parse_args(argv)
    workers = 2 if args.workers is None else check_int("--workers", args.workers, minimum=1)
    if args.tune_lr:
        save_results(tune_lr(FULL, workers=workers), args.out or LR_SWEEP_PATH)
        return 0
    if args.config == "large":
        sweep = tune_lr(LARGE, workers=workers)
        cfg = dataclasses.replace(LARGE, lr=sweep["chosen"])
        study = run_study(cfg, workers=workers,
                          log=lambda s: print(s, file=sys.stderr, flush=True))
        study["lr_sweep"] = sweep
        save_results(study, args.out or LARGE_RESULTS_PATH)
        return 0
    cfg = QUICK if args.quick else FULL
    out = Path(args.out) if args.out else (None if args.quick else RESULTS_PATH)
    if out is None:
        parser.error("--quick needs --out PATH (it never overwrites the committed results)")
    if args.quick and out.resolve() == RESULTS_PATH.resolve():
        parser.error(f"--quick never writes the committed results ({RESULTS_PATH.name})")
    start, cpu = time.perf_counter(), _cpu_seconds()
    partial = out.with_name(out.name + ".partial")
    earlier = [Path(p) for p in args.reuse] + ([partial] if partial.exists() else [])
    study = run_study(cfg, workers=workers, reuse=[load_results(p) for p in earlier],
                      log=lambda s: print(s, file=sys.stderr, flush=True),
                      on_job=lambda outs, device: save_results(
                          merge_jobs(cfg, outs, device), partial))
    save_results(study, out)
    partial.unlink(missing_ok=True)
    print(f"wrote {out} in {time.perf_counter() - start:.0f} s wall clock, "
          f"{_cpu_seconds() - cpu:.0f} s CPU", file=sys.stderr)
    return 0
