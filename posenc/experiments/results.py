"""The results file: writing, reading and summarising a study.

The file is JSON with sorted keys and one row per line inside each list, so it is
canonical (a test rewrites it and compares) and its diffs read row by row.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .._checks import check_choice
from .config import PROTOCOLS, RESULTS_PATH

__all__ = ["dumps_results", "load_results", "paired_difference", "save_results",
           "span_matrix", "summarize"]


def dumps_results(study: dict) -> str:
    """``study`` as canonical JSON text: sorted keys; every top-level list one element a
    line, every other top-level value on one line; a trailing newline."""
    items = sorted(study.items())
    lines = ["{"]
    for i, (key, value) in enumerate(items):
        end = "," if i < len(items) - 1 else ""
        if isinstance(value, list):
            lines.append(f" {json.dumps(key)}: [")
            lines += [f"  {json.dumps(row, sort_keys=True)}" + ("," if j < len(value) - 1
                                                                 else "")
                      for j, row in enumerate(value)]
            lines.append(" ]" + end)
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value, sort_keys=True)}{end}")
    return "\n".join(lines + ["}"]) + "\n"


def save_results(study: dict, path) -> None:
    """Write ``study`` to ``path`` as :func:`dumps_results` gives it."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(dumps_results(study), encoding="utf-8")


def load_results(path=RESULTS_PATH) -> dict:
    """Read a results file written by :func:`save_results` (default: :data:`RESULTS_PATH`)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _rows(study):
    if not isinstance(study, dict) or "results" not in study:
        raise ValueError("study must be a dict with a 'results' list (see run_study)")
    return study["results"]


def summarize(study: dict, depth: int, protocol: str = "nonoverlapping") -> dict:
    """``{variant: [(mean, min, max) or None per length]}`` over seeds, lengths ascending.

    ``None`` marks a length where the variant cannot run (or was not evaluated with this
    protocol).

    Raises:
        ValueError: a ``study`` without ``"results"``, or a ``depth`` or ``protocol`` it
            does not hold.
    """
    rows = _rows(study)
    check_choice("protocol", protocol, PROTOCOLS)
    depths = sorted({r["depth"] for r in rows})
    if depth not in depths:
        raise ValueError(f"depth must be one of {depths}, got {depth!r}")
    rows = [r for r in rows if r["depth"] == depth and r["protocol"] == protocol]
    lengths = sorted({r["length"] for r in _rows(study)})
    out = {}
    for variant in dict.fromkeys(r["variant"] for r in rows):
        vals = []
        for n in lengths:
            xs = [r["bpb"] for r in rows if r["variant"] == variant and r["length"] == n]
            xs = [x for x in xs if x is not None]
            vals.append((sum(xs) / len(xs), min(xs), max(xs)) if xs else None)
        out[variant] = vals
    return out


def _get(study, variant, length, depth, protocol, key):
    got = {r["seed"]: r[key] for r in _rows(study) if r["variant"] == variant
           and r["length"] == length and r["depth"] == depth and r["protocol"] == protocol}
    if not got:
        raise ValueError(f"no results for variant {variant!r} at length {length}, depth "
                         f"{depth}, protocol {protocol!r}")
    return got


def span_matrix(study: dict, variant: str, length: int, depth: int, protocol: str, *,
                seeds=None):
    """Per-span bits per byte as a float64 numpy array ``(seeds, spans)``, seeds ascending;
    ``None`` where the variant cannot run. ``seeds`` (default: every seed of that setting)
    keeps only those.

    Raises:
        ValueError: no rows for that setting, or a seed of ``seeds`` it does not hold.
    """
    got = _get(study, variant, length, depth, protocol, "span_bpb")
    if seeds is not None:
        missing = set(seeds) - set(got)
        if missing:
            raise ValueError(f"no results for seeds {sorted(missing)} of {variant!r} at "
                             f"length {length}, depth {depth}, protocol {protocol!r}")
        got = {s: got[s] for s in seeds}
    if any(v is None for v in got.values()):
        return None
    return np.array([got[s] for s in sorted(got)], dtype=np.float64)


def _per_seed(study, a, length_a, b, length_b, depth, protocol):
    """Per-seed ``bpb(a) − bpb(b)`` (seeds ascending), or ``None`` if one cannot run."""
    xa = _get(study, a, length_a, depth, protocol, "bpb")
    xb = _get(study, b, length_b, depth, protocol, "bpb")
    if any(x is None for x in (*xa.values(), *xb.values())):
        return None
    return [xa[s] - xb[s] for s in sorted(xa)]


def paired_difference(study: dict, a: str, b: str, length: int, depth: int,
                      protocol: str = "nonoverlapping", *, length_b: int | None = None):
    """Per-seed ``bpb(a) − bpb(b)`` (same seed, depth and protocol): ``(mean, min, max)``,
    rounded to 4 decimals.

    ``length_b`` (default ``length``) lets ``b`` be read at another length, e.g. ALiBi at
    ``8L`` against ALiBi at ``L``. ``None`` when either side cannot run for some seed. The
    interval that also covers the scored spans is
    :func:`~posenc.experiments.paired_interval`.

    Raises:
        ValueError: a ``study`` without ``"results"``, or no rows for ``a`` or ``b`` at
            that setting.
    """
    length_b = length if length_b is None else length_b
    diffs = _per_seed(study, a, length, b, length_b, depth, protocol)
    if diffs is None:
        return None
    return tuple(round(float(x), 4) for x in (sum(diffs) / len(diffs), min(diffs),
                                               max(diffs)))
