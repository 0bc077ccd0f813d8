"""Running the whole study: every (depth, seed, scheme) job, merged into one results dict.

Every job is independent: fixed seeds, one torch thread, data drawn on the CPU from seeded
generators, results rounded to 4 decimals and written with sorted keys. Jobs run in
``workers`` processes (2: both cores of the reference machine) and are merged in a fixed
order, so the command reproduces the committed file byte for byte on the same CPU type and
torch build. Elsewhere, floating-point kernels differ and so do the last digits of a
trained model; the chapter states the tolerance measured across machines.
"""

from __future__ import annotations

import math
import platform
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import numpy as np
import torch

from .._checks import check_choice, check_int
from .config import FULL, PROTOCOLS, SCHEME_SETTINGS, VARIANTS, StudyConfig
from .corpus import load_corpus
from .evaluation import eval_spans, evaluate
from .probe import far_context_probe, probe_distances
from .training import _device, finetune, train

__all__ = ["job_outputs", "merge_jobs", "run_study", "versions"]


#: The lists of rows a job adds to (each a top-level list of the results file).
_ROWS = ("training", "results", "position_loss", "finetune_sweep", "probe")


def _round(x, nd=4):
    return None if x is None else round(float(x), nd)


def versions() -> dict:
    """Library versions that can change the numbers (the Python version fixes the corpus)."""
    return {
        "python": platform.python_version(),
        "torch": torch.__version__.split("+")[0],
        "numpy": np.__version__,
    }


def _bins(nll: torch.Tensor, bins: int) -> list:
    return [_round(x) for x in nll.view(bins, -1).mean(1).tolist()]


def _score(net, cfg, name, n, protocol, device, **extra):
    row = evaluate(net, cfg, name, n, protocol, device=device)
    spans = row["span_bpb"]
    return row, {"variant": name, **extra, "length": n, "protocol": protocol,
                 "status": row["status"], "bpb": _round(row["bpb"]),
                 "span_bpb": None if spans is None else [_round(x) for x in spans]}


def _job(args) -> dict:
    """Train one (depth, seed, scheme) model, evaluate its variants (fine-tunes with their
    sweep included) and run the probe."""
    cfg, depth, seed, position, device = args
    device = torch.device(device)
    torch.set_num_threads(1)
    out = {k: [] for k in _ROWS}
    ids = {"depth": depth, "seed": seed}
    curve = []
    model, final = train(cfg, position, depth, seed, device=device, curve=curve)
    out["training"].append({"position": position, **ids, "stage": "train",
                            "steps": cfg.steps, "final_train_loss": _round(final),
                            "loss_curve": [_round(x) for x in curve]})
    if model.fire is not None:  # FIRE's learned scalars: ψ's scale and the threshold
        out["training"][-1].update(fire_c=_round(model.fire.c.detach()),
                                   fire_threshold=_round(model.fire.threshold.detach()))
    tuned = {}
    for name in (v for v in cfg.variants if VARIANTS[v][0] == position):
        change = VARIANTS[name][1]
        net = model
        if change is not None and change.startswith("ft"):
            method = change.partition("+")[2] or None
            if method not in tuned:
                curve, snaps = [], {}
                steps = max((*cfg.finetune_sweep, cfg.finetune_steps))
                _, final = finetune(model, cfg, method, seed, steps=steps, snapshots=snaps,
                                    device=device, curve=curve)
                out["training"].append({"position": position, **ids,
                                        "stage": f"finetune {method or 'none'}",
                                        "steps": steps, "final_train_loss": _round(final),
                                        "loss_curve": [_round(x) for x in curve]})
                tuned[method] = snaps[cfg.finetune_steps]
                for k in cfg.finetune_sweep:
                    for protocol in PROTOCOLS:
                        for m in cfg.sweep_multiples:
                            out["finetune_sweep"].append(_score(
                                snaps[k], cfg, name, m * cfg.train_len, protocol, device,
                                **ids, steps=k)[1])
            net = tuned[method]
        protocols = PROTOCOLS[:1] if name in cfg.nonoverlapping_only else PROTOCOLS
        for protocol in protocols:
            for n in cfg.lengths:
                row, record = _score(net, cfg, name, n, protocol, device, **ids)
                out["results"].append(record)
                if protocol == "nonoverlapping" and n == max(cfg.lengths) \
                        and row["status"] == "ok":
                    out["position_loss"].append({
                        "variant": name, **ids, "length": n,
                        "bits": _bins(row["position_nll"] / math.log(2), cfg.position_bins)})
        if name in cfg.probe_variants:
            for n in (m * cfg.train_len for m in cfg.probe_multiples):
                got = far_context_probe(net, cfg, name, n, device=device)
                for d in probe_distances(cfg, n):
                    out["probe"].append({
                        "variant": name, **ids, "length": n, "distance": d,
                        "status": got["status"], "real": got["real"],
                        "swapped": None if got["swapped"] is None else got["swapped"][d]})
    return out


def _jobs(cfg: StudyConfig, device: str) -> list:
    positions = list(dict.fromkeys(VARIANTS[v][0] for v in cfg.variants))
    # The longest jobs first (deeper models, RoPE with its fine-tunes), so two workers
    # finish together; the merge below does not depend on this order.
    cost = {"rope": 4, "alibi": 1.5}
    jobs = [(cfg, depth, seed, p, device) for depth in cfg.depths
            for seed in cfg.seeds_for(depth) for p in positions]
    return sorted(jobs, key=lambda j: -(j[1] * cost.get(j[3], 1)))


def _span_files(cfg: StudyConfig, corpus: dict, protocol: str) -> list[dict]:
    """The validation file each scored span of ``protocol`` lies in (with its offset)."""
    files = corpus["validation_files"]
    return [{"offset": start, "file": next(n for n, end in files if end > start)}
            for start in eval_spans(cfg, protocol).tolist()]


def _validate(cfg: StudyConfig) -> None:
    for v in (*cfg.variants, *cfg.probe_variants, *cfg.nonoverlapping_only):
        check_choice("variant", v, tuple(VARIANTS))
    if not set(cfg.probe_variants) <= set(cfg.variants):
        raise ValueError("probe_variants must be evaluated variants too")
    if not cfg.depths or not all(cfg.seeds_for(d) for d in cfg.depths):
        raise ValueError("depths and seeds must each hold at least one value")
    for n in cfg.lengths:
        if max(cfg.lengths) % n or cfg.sliding_span_bytes % cfg.stride(n, "sliding") \
                or n % cfg.sliding_fraction:
            raise ValueError(f"every length must divide the longest, and its sliding stride "
                             f"the sliding span of {cfg.sliding_span_bytes} bytes; got {n}")
    if not set(cfg.probe_multiples) <= set(cfg.multiples) or any(
            not probe_distances(cfg, m * cfg.train_len) for m in cfg.probe_multiples):
        raise ValueError("the probe needs probe_multiples among the multiples and at least "
                         "one of probe_distances below each window minus probe_target_bytes")


#: Settings that only say *which* jobs a study runs; every other setting can change a job.
_JOB_LIST_KEYS = ("depths", "seeds", "seeds_at_depth", "variants", "probe_variants",
                  "nonoverlapping_only")


def _job_settings(config: dict, position: str) -> dict:
    """What decides the output of one job of ``position``: every setting but the job list
    and the settings only other schemes read, and the variants of ``position`` in each
    variant list (in order)."""
    others = {k for p, keys in SCHEME_SETTINGS.items() if p != position for k in keys}
    mine = set(SCHEME_SETTINGS.get(position, ()))
    own = {k: v for k, v in config.items()
           if k not in _JOB_LIST_KEYS and (k not in others or k in mine)}
    for k in ("variants", "probe_variants", "nonoverlapping_only"):
        own[k] = [v for v in config[k] if VARIANTS[v][0] == position]
    return own


def _position_of(row: dict) -> str:
    return row["position"] if "position" in row else VARIANTS[row["variant"]][0]


def job_outputs(study: dict) -> dict:
    """Split a results dict back into its jobs' outputs.

    Returns ``{(depth, seed, position): output}``, each output as :func:`run_study`'s
    worker returns it (rows in the file's order), so that
    ``merge_jobs(cfg, list(job_outputs(study).values()), study["device"])`` is ``study``
    again (tested).
    """
    outs: dict = {}
    for key in _ROWS:
        for row in study[key]:
            job = (row["depth"], row["seed"], _position_of(row))
            outs.setdefault(job, {k: [] for k in _ROWS})[key].append(row)
    return outs


def _reusable(cfg: StudyConfig, reuse, device: str) -> dict:
    """The jobs of ``reuse`` (a results dict or a list of them, the first one holding a job
    wins) that ``cfg`` would compute again unchanged: same versions and device type, and the
    same settings for that job's scheme."""
    studies = [] if reuse is None else [reuse] if isinstance(reuse, dict) else list(reuse)
    mine, kept = cfg.to_dict(), {}
    for study in studies:
        if study.get("versions") != versions() or study.get("device") != torch.device(
                device).type:
            continue
        for job, out in job_outputs(study).items():
            if job not in kept and _job_settings(study["config"], job[2]) == \
                    _job_settings(mine, job[2]):
                kept[job] = out
    return kept


def run_study(cfg: StudyConfig = FULL, *, device=None, workers: int = 2, log=None,
              reuse=None, on_job=None) -> dict:
    """Train every scheme at every depth and seed; evaluate every variant; probe; sweep.

    Args:
        cfg: the study configuration (:data:`FULL` or :data:`QUICK`, or your own).
        device: torch device (default: CUDA when present, else CPU).
        workers: worker processes (default 2, both cores of the reference machine; each
            job runs on one thread, so the results do not depend on this). With 1 the jobs
            run in this process, and its torch thread count is restored after them.
        log: optional ``print``-like callable for progress lines.
        reuse: an earlier results dict, or a list of them: a (depth, seed, scheme) job
            whose settings, library versions and device type are the same there is taken
            from it instead of being run again (jobs are independent and deterministic, so
            the merged file is the same as a full run's on the same CPU type and torch
            build). How a new depth or scheme is added without re-running the others.
            Only settings are compared, not code: after a change to what a job computes,
            run without ``reuse``.
        on_job: optional callable ``on_job(outs, device)`` given the job outputs so far
            (reused ones included) after every finished job, e.g. to save partial results
            with :func:`merge_jobs`.

    Returns:
        A JSON-ready dict: ``config``, ``versions``, ``device``, ``corpus`` (files, bytes
        and SHA-256 per split; the file and offset of every scored span per protocol),
        ``training`` (per run and fine-tune: steps, final training loss, loss curve; a
        FIRE run also its learned ``fire_c`` and ``fire_threshold``),
        ``results`` (one row per variant × depth × seed × length × protocol: ``bpb`` and
        per-span ``span_bpb``, or ``status == "cannot run"``), ``position_loss`` (per
        variant × depth × seed: mean bits per byte in ``position_bins`` bins of the longest
        window), ``finetune_sweep`` (per fine-tuned variant × depth × seed × checkpoint
        ``steps`` × length × protocol, as ``results``) and ``probe`` (per probe variant ×
        depth × seed × window length × distance ``D``: the bits per byte of every
        example's target with the real and the swapped far context,
        :func:`~posenc.experiments.far_context_probe`).

    Raises:
        ValueError: an unknown variant, a depth or seed list that is empty, lengths that
            the evaluation strides do not divide, or a probe that does not fit.
    """
    _validate(cfg)
    device = str(_device() if device is None else torch.device(device))
    start = time.perf_counter()
    workers = check_int("workers", workers, minimum=1)
    kept = _reusable(cfg, reuse, device)
    jobs = [j for j in _jobs(cfg, device) if (j[1], j[2], j[3]) not in kept]
    outs = [kept[(j[1], j[2], j[3])] for j in _jobs(cfg, device)
            if (j[1], j[2], j[3]) in kept]
    if log and kept:
        log(f"{len(kept)} jobs reused, {len(jobs)} to run")

    def done(job):
        if on_job is not None:
            on_job(outs, device)
        if log:
            log(f"depth {job[1]} seed {job[2]} {job[3]:10s} done "
                f"({time.perf_counter() - start:.0f} s)")

    if workers > 1 and jobs:
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
            for job, out in zip(jobs, pool.map(_job, jobs), strict=True):
                outs.append(out)
                done(job)
    else:
        threads = torch.get_num_threads()  # each job sets one thread: the caller's back after
        try:
            for job in jobs:
                outs.append(_job(job))
                done(job)
        finally:
            torch.set_num_threads(threads)
    return merge_jobs(cfg, outs, device)


def merge_jobs(cfg: StudyConfig, outs: list, device) -> dict:
    """The results dict of :func:`run_study` from the outputs of its jobs (any order): rows
    sorted by depth, variant, seed, steps, protocol, length and distance; config, versions,
    device and corpus added."""
    order = {v: i for i, v in enumerate(VARIANTS)}

    def key(r):
        return (r["depth"], order.get(r.get("variant"), -1), r.get("position", ""),
                r.get("stage", ""), r["seed"], r.get("steps", 0), r.get("protocol", ""),
                r.get("length", 0), r.get("distance", 0))

    corpus = load_corpus()
    merged = {k: sorted((r for o in outs for r in o[k]), key=key) for k in _ROWS}
    spans = {p: _span_files(cfg, corpus, p) for p in PROTOCOLS}
    return {"config": cfg.to_dict(), "versions": versions(), "device": torch.device(device).type,
            "corpus": {"name": "Python standard library source (.py, tests excluded)",
                       "licence": "PSF-2.0", **corpus["stats"], "eval_spans": spans},
            **merged}
