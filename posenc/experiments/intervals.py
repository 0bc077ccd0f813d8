"""Intervals that cover the evaluation data as well as the training seeds.

A difference between two variants is computed for every seed and every scored span (the
two sides share the seed's data and initial weights, and the span's bytes), giving a
``(seeds, spans)`` matrix. The interval is a two-way bootstrap of its mean: each resample
draws the seeds with replacement *and*, independently, the spans with replacement (Owen's
"pigeonhole" bootstrap for crossed random effects, 2007), so the interval widens both for
seed-to-seed and for span-to-span variation.
"""

from __future__ import annotations

import functools

import numpy as np

from .results import span_matrix

__all__ = ["bootstrap_interval", "paired_interval", "span_standard_error"]

#: Resamples of :func:`bootstrap_interval` (its random stream is fixed, so every interval is
#: reproducible).
RESAMPLES = 4000


def bootstrap_interval(diffs, *, level: float = 0.95, resamples: int = RESAMPLES,
                       seed: int = 0) -> tuple[float, float, float]:
    """``(mean, lo, hi)`` of a ``(seeds, spans)`` matrix: its mean and the percentile
    interval at ``level`` of the seed × span bootstrap (rounded to 4 decimals).

    Each of ``resamples`` draws picks ``seeds`` rows and, independently, ``spans`` columns
    with replacement and takes the mean of the crossed selection, computed exactly as
    ``w_seed · D · w_span`` with the draws' count weights. ``seed`` fixes the generator.

    Raises:
        ValueError: not a 2-D matrix with at least one row and column, or ``level``
            outside (0, 1).
    """
    d = np.asarray(diffs, dtype=np.float64)
    if d.ndim != 2 or 0 in d.shape:
        raise ValueError(f"diffs must be a (seeds, spans) matrix, got shape {d.shape}")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    s, j = d.shape
    ws, wj = _weights(int(seed), int(resamples), s, j)
    stats = ((ws @ d) * wj).sum(1)
    lo, hi = np.quantile(stats, [(1 - level) / 2, (1 + level) / 2])
    return tuple(round(float(x), 4) for x in (d.mean(), lo, hi))


@functools.lru_cache(maxsize=16)
def _weights(seed: int, resamples: int, s: int, j: int) -> tuple[np.ndarray, np.ndarray]:
    """The draws' weights ``(resamples, s)`` and ``(resamples, j)`` (counts / size): a pure
    function of its arguments, so they are drawn once per shape and reused (read-only)."""
    rng = np.random.default_rng(seed)
    ws, wj = (_counts(rng.integers(0, k, (resamples, k)), k) / k for k in (s, j))
    ws.flags.writeable = wj.flags.writeable = False
    return ws, wj


def _counts(draws: np.ndarray, k: int) -> np.ndarray:
    """How often each of ``k`` indices occurs in each row of ``draws``: ``(rows, k)``."""
    rows = draws.shape[0]
    flat = (draws + k * np.arange(rows)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * k).reshape(rows, k)


def span_standard_error(diffs) -> float:
    """Standard error of the seed-mean difference from the spans alone: the standard
    deviation over spans of the per-span seed means, over ``√spans``."""
    d = np.asarray(diffs, dtype=np.float64).mean(0)
    return float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else 0.0


def paired_interval(study: dict, a: str, b: str, length: int, depth: int,
                    protocol: str = "sliding", *, length_b: int | None = None,
                    **kw) -> dict | None:
    """The paired difference ``bpb(a) − bpb(b)`` with its span × seed interval.

    ``length_b`` (default ``length``) reads ``b`` at another length (same protocol, so the
    same bytes). Returns ``{"mean", "interval": (lo, hi), "seeds": (min, max) of the
    per-seed differences, "span_se"}`` (:func:`span_standard_error`), or ``None`` where
    either side cannot run; ``kw`` goes to :func:`bootstrap_interval`.

    Raises:
        ValueError: no rows for ``a`` or ``b`` at that setting.
    """
    length_b = length if length_b is None else length_b
    xa = span_matrix(study, a, length, depth, protocol)
    xb = span_matrix(study, b, length_b, depth, protocol)
    if xa is None or xb is None:
        return None
    d = xa - xb
    mean, lo, hi = bootstrap_interval(d, **kw)
    per_seed = d.mean(1)
    return {"mean": mean, "interval": (lo, hi),
            "seeds": (round(float(per_seed.min()), 4), round(float(per_seed.max()), 4)),
            "span_se": round(span_standard_error(d), 4)}
