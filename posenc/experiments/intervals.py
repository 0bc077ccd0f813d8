"""Intervals that cover the evaluation data as well as the training seeds.

A difference between two variants is computed for every seed and every scored span (the
two sides share the seed's data and initial weights, and the span's bytes), giving a
``(seeds, spans)`` matrix ``D``. Its mean is read as that of a two-way crossed
random-effects model, ``D[s, j] = μ + a_s + b_j + e_sj`` (seed, span and interaction
effects, each with its own variance), whose mean has variance
``σ²_a / S + σ²_b / J + σ²_e / (S J)``.

:func:`~posenc.experiments.crossed_interval` (the study's interval since issue 30)
estimates that variance from the two-way ANOVA mean squares as a seed term and a span term,
``MS_seed / (S J) + max(MS_span − MS_resid, 0) / (S J)`` (the two-way random model, e.g.
Searle, Casella & McCulloch 1992; the seed term carries the interaction too), and
takes as critical value the mean of the two terms' t quantiles, ``t(S − 1)`` and
``t(J − 1)``, weighted by their estimates: Cochran and Cox's approximation for a sum of
variance estimates with different degrees of freedom (Cochran & Cox 1950; Cochran 1964),
which errs on the wide side. When the seeds carry the variance it is the t-interval of the
seed means, which keeps its coverage with three or five seeds; when the spans do, the
t-interval of the span means. Satterthwaite's (1946) degrees of freedom for the same sum
were tried first and rejected: with three seeds they under-cover (about 0.92 at a seed share
of 0.9, simulated), the Cochran–Cox value does not.

:func:`~posenc.experiments.bootstrap_interval` is the study's first interval: a two-way
bootstrap that draws the seeds and, independently, the spans with replacement (Owen's
"pigeonhole" bootstrap, 2007). Owen's result that it errs on the wide side needs many
levels of each factor; with three seeds its seed part is the seeds' own range and it
under-covers when the seeds carry the variance (``tests/test_experiments.py`` simulates
both). It is kept for the record of that change and for comparison.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .results import span_matrix

__all__ = ["INTERVAL_METHODS", "bootstrap_interval", "crossed_interval", "crossed_moments",
           "crossed_variance",
           "paired_interval", "simulate_coverage", "span_standard_error", "t_quantile"]

#: The interval methods :func:`paired_interval` knows: ``"crossed"``
#: (:func:`crossed_interval`, the study's since issue 30) and ``"bootstrap"``
#: (:func:`bootstrap_interval`, the first one).
INTERVAL_METHODS = ("crossed", "bootstrap")

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
    d = _matrix(diffs, level)
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


_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(64)


_lgamma = np.vectorize(math.lgamma, otypes=[float])


def _t_log_norm(df):
    """Log of the t density's constant, ``Γ((ν+1)/2) / (√(νπ) Γ(ν/2))``; past ``ν = 200``
    the log-gamma difference from its asymptotic series (exact to about 1e-12), since the
    difference of two large log-gammas loses digits."""
    half = df / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        series = 0.5 * np.log(half) - 1 / (8 * half) + 1 / (192 * half ** 3)
    small = np.minimum(df, 200.0)
    exact = _lgamma((small + 1) / 2) - _lgamma(small / 2)
    return np.where(df > 200, series, exact) - 0.5 * np.log(df * np.pi)


def _t_cdf_from_zero(x, df, norm):
    """``P(0 < T < x)`` for Student's t with ``df`` degrees of freedom (arrays, ``x >= 0``;
    ``norm`` from :func:`_t_log_norm`): the density integrated by 64-point Gauss–Legendre
    quadrature on each of ``ceil(max x)`` equal pieces of ``[0, x]``."""
    pieces = max(1, math.ceil(float(np.max(x))))
    a = x[..., None] * np.arange(pieces) / pieces                 # (..., pieces)
    h = (x / pieces)[..., None, None] / 2
    u = a[..., None] + h * (_NODES + 1)                           # (..., pieces, nodes)
    dens = np.exp(norm[..., None, None] - (df[..., None, None] + 1) / 2
                  * np.log1p(u * u / df[..., None, None]))
    return (h * (dens * _WEIGHTS).sum(-1, keepdims=True)).sum((-1, -2))


def t_quantile(p: float, df):
    """The ``p`` quantile of Student's t with ``df > 0`` degrees of freedom (a number or an
    array; ``inf``: the normal's), by Newton's method on the density's quadrature; accurate
    to about ``1e-10`` (tested against tabulated values), so the package needs no SciPy.

    Raises:
        ValueError: ``p`` outside (0, 1) or a ``df`` that is not positive.
    """
    if np.ndim(df) == 0:
        return _t_quantile_scalar(float(p), float(df))
    return _t_quantile_array(p, df)


@functools.lru_cache(maxsize=256)
def _t_quantile_scalar(p: float, df: float) -> float:
    """One quantile, cached: the intervals ask for ``t(S − 1)`` and ``t(J − 1)`` only."""
    return float(_t_quantile_array(p, np.array(df)))


def _t_quantile_array(p: float, df):
    scalar = np.ndim(df) == 0
    df = np.minimum(np.asarray(df, dtype=np.float64), 1e12)  # the normal's, to 1e-12
    if not 0 < p < 1 or not np.all(df > 0):
        raise ValueError(f"need 0 < p < 1 and df > 0, got p={p}, df={df}")
    if p < 0.5:
        got = -_t_quantile_array(1 - p, df)
        return float(got) if scalar else got
    x, norm = np.ones_like(df), _t_log_norm(df)
    for _ in range(60):
        step = (_t_cdf_from_zero(x, df, norm) - (p - 0.5)) / np.exp(
            norm - (df + 1) / 2 * np.log1p(x * x / df))
        x = np.maximum(x - step, x / 4)
        if np.all(np.abs(step) < 1e-11 * np.maximum(1.0, x)):
            break
    return float(x) if scalar else x


def _matrix(diffs, level: float | None = None) -> np.ndarray:
    """``diffs`` as a float64 ``(seeds, spans)`` matrix, and ``level`` (when given) checked
    to lie in (0, 1)."""
    d = np.asarray(diffs, dtype=np.float64)
    if d.ndim != 2 or 0 in d.shape:
        raise ValueError(f"diffs must be a (seeds, spans) matrix, got shape {d.shape}")
    if level is not None and not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    return d


def crossed_variance(diffs, *, level: float = 0.95) -> dict:
    """The variance of a ``(seeds, spans)`` matrix's mean under the crossed random-effects
    model (module docstring) and the interval's critical value at ``level``.

    Returns ``{"var", "t", "seed_share"}``: ``var = v_seed + v_span`` with ``v_seed =
    MS_seed / (S J)`` and ``v_span = max(MS_span − MS_resid, 0) / (S J)``; ``t = (v_seed ·
    t(S − 1) + v_span · t(J − 1)) / var`` (Cochran–Cox, quantiles at ``(1 + level) / 2``);
    ``seed_share`` the estimated share of ``var`` that the seeds' own variance ``σ²_a / S``
    makes (method of moments, ``max(MS_seed − MS_resid, 0) / (S J var)``). One seed: the
    spans' t-interval (seeds not covered); one span: the seeds'; one of each, or nothing
    varies: ``var = 0``.

    Raises:
        ValueError: not a 2-D matrix with at least one row and column, or ``level``
            outside (0, 1).
    """
    d = _matrix(diffs, level)
    s, j = d.shape
    if s == 1 or j == 1:
        k = d.size
        var = float(d.var(ddof=1) / k) if k > 1 else 0.0
        t = t_quantile((1 + level) / 2, k - 1) if var > 0 else 0.0
        return {"var": var, "t": t, "seed_share": 1.0 if s > 1 and var > 0 else 0.0}
    var, t, share = (float(x) for x in crossed_moments(d, level=level))
    return {"var": var, "t": t, "seed_share": share}


def crossed_moments(d, *, level: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`crossed_variance`'s ``(var, t, seed_share)`` for a stack of matrices
    ``(..., S, J)`` with ``S, J >= 2``, as arrays over the leading axes (what the coverage
    simulation calls on thousands of matrices at once)."""
    d = np.asarray(d, dtype=np.float64)
    s, j = d.shape[-2:]
    rows, cols = d.mean(-1), d.mean(-2)
    grand = rows.mean(-1)
    ms_seed = j * rows.var(-1, ddof=1)
    ms_span = s * cols.var(-1, ddof=1)
    resid = d - rows[..., :, None] - cols[..., None, :] + grand[..., None, None]
    ms_resid = (resid ** 2).sum((-1, -2)) / ((s - 1) * (j - 1))
    v_seed = ms_seed / (s * j)
    v_span = np.maximum(ms_span - ms_resid, 0.0) / (s * j)
    var = v_seed + v_span
    p = (1 + level) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(var > 0, (v_seed * t_quantile(p, s - 1) + v_span * t_quantile(p, j - 1))
                     / var, 0.0)
        share = np.where(var > 0, np.maximum(ms_seed - ms_resid, 0.0) / (s * j) / var, 0.0)
    return var, t, np.minimum(share, 1.0)


def crossed_interval(diffs, *, level: float = 0.95) -> tuple[float, float, float]:
    """``(mean, lo, hi)`` of a ``(seeds, spans)`` matrix: its mean and the random-effects
    interval ``mean ± t · √var`` at ``level`` (:func:`crossed_variance`; rounded to 4
    decimals).

    Analytic, so there is no random stream and no Monte Carlo error. Its coverage at the
    study's designs (5 or 3 seeds, 64 or 16 spans, every seed share from 0 to 1) is
    simulated in ``tests/test_experiments.py`` (:func:`simulate_coverage`).

    Raises:
        ValueError: not a 2-D matrix with at least one row and column, or ``level``
            outside (0, 1).
    """
    d = _matrix(diffs)
    got = crossed_variance(d, level=level)
    half = got["t"] * math.sqrt(got["var"])
    mean = float(d.mean())
    return tuple(round(x, 4) for x in (mean, mean - half, mean + half))


def span_standard_error(diffs) -> float:
    """Standard error of the seed-mean difference from the spans alone: the standard
    deviation over spans of the per-span seed means, over ``√spans``."""
    d = np.asarray(diffs, dtype=np.float64).mean(0)
    return float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else 0.0


def paired_interval(study: dict, a: str, b: str, length: int, depth: int,
                    protocol: str = "sliding", *, length_b: int | None = None,
                    method: str = "crossed", seeds=None, **kw) -> dict | None:
    """The paired difference ``bpb(a) − bpb(b)`` with its span × seed interval.

    ``length_b`` (default ``length``) reads ``b`` at another length (same protocol, so the
    same bytes). ``method`` is one of :data:`~posenc.experiments.INTERVAL_METHODS`: ``"crossed"``
    (:func:`crossed_interval`, the default) or ``"bootstrap"`` (:func:`bootstrap_interval`,
    the study's first interval); ``kw`` goes to that function. ``seeds`` (default: all)
    keeps only those seeds, e.g. the first three to reproduce an earlier reading.

    Returns ``{"mean", "interval": (lo, hi), "seeds": (min, max) of the per-seed
    differences, "n_seeds", "span_se"`` (:func:`span_standard_error`), ``"t",
    "seed_share"}`` (:func:`crossed_variance`, whatever the method), or ``None`` where
    either side cannot run.

    Raises:
        ValueError: no rows for ``a`` or ``b`` at that setting, an unknown method, or
            seeds the study does not hold.
    """
    if method not in INTERVAL_METHODS:
        raise ValueError(f"method must be one of {INTERVAL_METHODS}, got {method!r}")
    length_b = length if length_b is None else length_b
    xa = span_matrix(study, a, length, depth, protocol, seeds=seeds)
    xb = span_matrix(study, b, length_b, depth, protocol, seeds=seeds)
    if xa is None or xb is None:
        return None
    d = xa - xb
    mean, lo, hi = (crossed_interval if method == "crossed" else bootstrap_interval)(d, **kw)
    per_seed = d.mean(1)
    var = crossed_variance(d)
    return {"mean": mean, "interval": (lo, hi),
            "seeds": (round(float(per_seed.min()), 4), round(float(per_seed.max()), 4)),
            "n_seeds": int(d.shape[0]), "span_se": round(span_standard_error(d), 4),
            "t": round(var["t"], 3), "seed_share": round(var["seed_share"], 3)}


def simulate_coverage(seeds: int, spans: int, seed_share: float, *, span_part: float = 0.85,
                      level: float = 0.95, sims: int = 4000, margin: float = 0.05,
                      method: str = "crossed", rng: int = 0) -> float:
    """How often the interval of a simulated ``(seeds, spans)`` difference covers its true
    value: the coverage that the verdict rule relies on.

    Each of ``sims`` matrices is ``margin + a_s + b_j + e_sj`` with normal effects whose
    variances give the mean the variance 1, a share ``seed_share`` of it from the seeds
    (``σ²_a / S``) and of the rest ``span_part`` from the spans' main effect (``σ²_b / J``;
    0.85 is about the median the committed checks show) and the remainder from the
    interaction (``σ²_e / (S J)``). The true difference sits on the margin, so the share
    covered is the share of checks that the rule would rightly call *undecided*; a claim
    wrongly decided either way is a miss. ``method``: ``"crossed"`` or ``"bootstrap"``
    (slower: 4,000 resamples per matrix).

    Raises:
        ValueError: fewer than two seeds or spans, a share outside [0, 1], or an unknown
            method.
    """
    if seeds < 2 or spans < 2 or not 0 <= seed_share <= 1 or not 0 <= span_part <= 1:
        raise ValueError("need at least two seeds and spans and shares in [0, 1]")
    if method not in INTERVAL_METHODS:
        raise ValueError(f"method must be one of {INTERVAL_METHODS}, got {method!r}")
    gen = np.random.default_rng(rng)
    rest = 1 - seed_share
    sd_seed = math.sqrt(seed_share * seeds)
    sd_span = math.sqrt(rest * span_part * spans)
    sd_cell = math.sqrt(rest * (1 - span_part) * seeds * spans)
    d = (margin + sd_seed * gen.standard_normal((sims, seeds, 1))
         + sd_span * gen.standard_normal((sims, 1, spans))
         + sd_cell * gen.standard_normal((sims, seeds, spans)))
    if method == "bootstrap":
        got = np.array([bootstrap_interval(x, level=level)[1:] for x in d])
        return float(np.mean((got[:, 0] <= margin) & (margin <= got[:, 1])))
    var, t, _ = crossed_moments(d, level=level)
    return float(np.mean(np.abs(d.mean((-1, -2)) - margin) <= t * np.sqrt(var)))
