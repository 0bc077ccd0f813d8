"""Choosing the learning rate before the study, from validation bits per byte at ``L`` only."""

from __future__ import annotations

import dataclasses
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import torch

from .config import EXPLORATORY_SCHEMES, FULL, NEW_SCHEMES, VARIANTS, StudyConfig
from .evaluation import evaluate
from .study import _round, versions
from .training import _device, train

__all__ = ["LR_CANDIDATES", "tune_lr"]

#: Learning rates compared by :func:`tune_lr` before the study (validation at ``L`` only).
LR_CANDIDATES = (3e-3, 6e-3, 1e-2)


def _tune_job(args):
    cfg, position, device = args
    torch.set_num_threads(1)
    model, _ = train(cfg, position, cfg.depths[0], cfg.seeds[0], device=torch.device(device))
    name = next(v for v in VARIANTS if VARIANTS[v] == (position, None))
    return evaluate(model, cfg, name, cfg.train_len)["bpb"]


def tune_lr(cfg: StudyConfig = FULL, lrs=LR_CANDIDATES, *, seed: int = 100,
            depth: int | None = None, workers: int = 2, device=None) -> dict:
    """Choose the learning rate before the study: validation bits per byte at ``L`` only.

    Every scheme of the sources (not :data:`NEW_SCHEMES` or :data:`EXPLORATORY_SCHEMES`,
    which were added later and reuse the choice) is trained at ``depth`` (default: the
    first of ``cfg.depths``) with a seed that the study does not use, once per learning
    rate, and scored on the non-overlapping validation windows of length ``L``;
    nothing past ``L`` is evaluated. Returns ``{"lrs", "schemes", "bpb": {lr: {scheme:
    bpb}}, "mean": {lr: mean bpb}, "chosen": the lr with the lowest mean}``.
    """
    device = str(_device() if device is None else torch.device(device))
    depth = cfg.depths[0] if depth is None else depth
    # The sources' schemes only: the learning rate was chosen on them before the designs of
    # 2024-26 were added, and those reuse it (the same budget for every scheme).
    later = (*NEW_SCHEMES, *EXPLORATORY_SCHEMES)
    schemes = [p for p in dict.fromkeys(VARIANTS[v][0] for v in cfg.variants)
               if p not in later]
    jobs = [(dataclasses.replace(cfg, lr=lr, depths=(depth,), seeds=(seed,)), p, device)
            for lr in lrs for p in schemes]
    if workers > 1:
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
            bpb = list(pool.map(_tune_job, jobs))
    else:
        threads = torch.get_num_threads()  # each job sets one thread: the caller's back after
        try:
            bpb = [_tune_job(job) for job in jobs]
        finally:
            torch.set_num_threads(threads)
    table = {str(lr): {p: _round(bpb[i * len(schemes) + j]) for j, p in enumerate(schemes)}
             for i, lr in enumerate(lrs)}
    mean = {k: _round(sum(v.values()) / len(v)) for k, v in table.items()}
    return {"lrs": list(lrs), "seed": seed, "depth": depth, "schemes": schemes,
            "bpb": table, "mean": mean, "chosen": float(min(mean, key=mean.get)),
            "versions": versions()}
