"""The far-context probe: how far back does a model's prediction read real text?

Perplexity cannot tell "does not break past ``L``" from "uses what lies past ``L``": a model
that ignores far keys is flat too. The probe measures use of far context directly, in real
validation text, by swapping it out. For a window of ``n`` bytes (after BOS) that ends with
a target ``T`` of ``s = probe_target_bytes`` bytes, and a distance ``D``:

- *real* window: the ``n`` bytes of the validation stream that end with ``T``;
- *swapped* window: the same, except that every byte at least ``D`` positions before
  ``T``'s first byte is replaced by the byte at the same position of another example's real
  window (real text too, from another file).

The far-context gain is ``bits(T | swapped) − bits(T | real)`` per byte of ``T``: how much
the prediction of ``T`` relies on the text ``D`` or more bytes back. A model that reads
nothing that far back has gain 0 — exactly 0 for a model whose attention is limited to its
last ``L`` keys once ``D > depth · (L − 1)`` (a check of the probe itself). Distances inside
the training window (``n = L``) calibrate how far back a model reads at all; distances
beyond ``L`` (in windows of ``4L``) ask whether it reads past its training window.

Piloted first as a copy probe (a segment repeated ``D`` bytes later), then with one distance
``D = n / 2`` per window, on a model of a seed the study does not use: it could not copy
even at ``D < L``, and gained nothing from text 32 or more bytes back, so the probe became a
grid of distances before the study ran.

What each outcome means (written before the full study ran): a gain clearly above
:data:`~posenc.experiments.PROBE_MARGIN` at ``D ≥ L`` means the model uses text from beyond
its training window; a gain clearly at or below it means it does not, whatever its
perplexity; an interval across it is undecided.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .._checks import check_choice
from .config import VARIANTS, StudyConfig
from .corpus import _with_bos, load_corpus
from .evaluation import eval_spans
from .intervals import bootstrap_interval, crossed_interval
from .training import forward_kwargs
from .verdicts import verdict

__all__ = ["PROBE_MARGIN", "far_context_probe", "probe_distances", "probe_gain",
           "probe_starts", "probe_windows"]

#: Far-context gain (bits per byte of the target) that counts as use: a variant *uses* the
#: context at a distance when the example × seed interval of its gain lies above it, *does
#: not* when the interval lies at or below it; *undecided* otherwise. Fixed before the full
#: study ran (the same size as :data:`~posenc.experiments.MARGIN`).
PROBE_MARGIN = 0.05


def probe_starts(cfg: StudyConfig) -> torch.Tensor:
    """Offsets of the probe's targets ``T``: the starts of ``probe_examples`` of the
    sliding protocol's spans, spread evenly over them (so one per file)."""
    spans = eval_spans(cfg, "sliding")
    pick = np.linspace(0, len(spans) - 1, cfg.probe_examples).round().astype(int)
    return spans[torch.as_tensor(pick)]


def probe_distances(cfg: StudyConfig, seq_len: int) -> tuple[int, ...]:
    """The distances probed in windows of ``seq_len``: those of ``cfg.probe_distances``
    that leave at least one byte to swap (``D < seq_len − probe_target_bytes``)."""
    return tuple(d for d in cfg.probe_distances if d < seq_len - cfg.probe_target_bytes)


def probe_windows(data: torch.Tensor, starts: torch.Tensor, seq_len: int, target_bytes: int,
                  distance: int):
    """``(real, swapped)`` windows, each ``(examples, seq_len)`` int64 bytes.

    Example ``i``'s real window is ``data[o_i + s − n : o_i + s]``, ending with the target
    ``data[o_i : o_i + s]``; the swapped window takes its first ``n − s − D`` bytes (those
    at least ``D`` before the target) from example ``i + 1``'s real window (cyclically).

    Raises:
        ValueError: ``distance`` not in ``[1, seq_len − target_bytes)``, fewer than two
            examples, or an offset with too little text before it.
    """
    n, s, d = seq_len, target_bytes, distance
    if not 1 <= d < n - s:
        raise ValueError(f"distance must lie in [1, seq_len - target_bytes) = [1, {n - s}), "
                         f"got {d}")
    if len(starts) < 2:
        raise ValueError(f"the probe needs at least two examples, got {len(starts)}")
    if int(starts.min()) < n - s:
        raise ValueError(f"every probe offset needs {n - s} bytes before it")
    real = data[(starts + s - n)[:, None] + torch.arange(n)].long()
    swapped = real.clone()
    cut = n - s - d
    swapped[:, :cut] = real.roll(-1, 0)[:, :cut]
    return real, swapped


@torch.no_grad()
def far_context_probe(model, cfg: StudyConfig, variant: str, seq_len: int, *,
                      device=None) -> dict:
    """The probe at one window length: ``{"status", "real", "swapped"}``.

    ``real`` lists, per example, the bits per byte of the target in its real window;
    ``swapped`` maps each distance of :func:`probe_distances` to the same for the swapped
    windows (:func:`probe_windows`). ``None`` with status ``"cannot run"`` where the
    variant cannot run at ``seq_len``.

    Raises:
        ValueError: an unknown variant (see also :func:`probe_windows`).
    """
    check_choice("variant", variant, tuple(VARIANTS))
    device = next(model.parameters()).device if device is None else device
    s = cfg.probe_target_bytes
    data, starts = load_corpus()["validation"], probe_starts(cfg)
    cannot = {"status": "cannot run", "real": None, "swapped": None}
    try:
        kwargs = forward_kwargs(model, VARIANTS[variant][1], seq_len, cfg)
    except IndexError:
        return cannot

    def bits(y):
        logits = model(_with_bos(y).to(device), **kwargs)
        logp = torch.log_softmax(logits[:, -s:].double(), dim=-1).cpu()
        got = -logp.gather(-1, y[:, -s:, None])[..., 0].mean(1) / math.log(2)
        return [round(float(x), 4) for x in got]

    out = {"status": "ok", "real": None, "swapped": {}}
    try:
        for d in probe_distances(cfg, seq_len):
            real, swapped = probe_windows(data, starts, seq_len, s, d)
            if out["real"] is None:
                out["real"] = bits(real)
            out["swapped"][d] = bits(swapped)
    except IndexError:
        return cannot
    return out


_INDEX: dict = {}


def _probe_index(rows: list) -> dict:
    """``rows`` grouped by (variant, depth, length, distance), built once per list (rebuilt
    when the list object or its length changes)."""
    hit = _INDEX.get(id(rows))
    if hit is None or hit[0] is not rows or hit[1] != len(rows):
        index: dict = {}
        for r in rows:
            index.setdefault((r["variant"], r["depth"], r["length"], r["distance"]),
                             []).append(r)
        _INDEX.clear()  # one study at a time: keep the cache from growing
        _INDEX[id(rows)] = hit = (rows, len(rows), index)
    return hit[2]


def probe_gain(study: dict, variant: str, depth: int, length: int, distance: int, *,
               method: str = "crossed", **kw) -> dict | None:
    """Far-context gain of ``variant`` at window ``length`` and ``distance`` from a study's
    ``probe`` rows.

    Returns ``{"real", "swapped"}`` (mean bits per byte of the targets over seeds and
    examples), ``"gain"`` (swapped − real), ``"interval"`` (the paired example × seed
    interval of the gain: :func:`~posenc.experiments.crossed_interval`, or with
    ``method="bootstrap"`` the study's first interval,
    :func:`~posenc.experiments.bootstrap_interval`; ``kw`` goes to it) and ``"verdict"``
    (``"holds"`` = uses the context, ``"fails"``, ``"undecided"`` against
    :data:`PROBE_MARGIN`); ``None`` where the variant cannot run.

    Raises:
        ValueError: no probe rows for that setting.
    """
    rows = _probe_index(study.get("probe", [])).get((variant, depth, length, distance), [])
    if not rows:
        raise ValueError(f"no probe rows for {variant!r} at depth {depth}, length {length}, "
                         f"distance {distance}")
    if any(r["real"] is None for r in rows):
        return None
    rows = sorted(rows, key=lambda r: r["seed"])
    real = np.array([r["real"] for r in rows], dtype=float)
    swapped = np.array([r["swapped"] for r in rows], dtype=float)
    how = crossed_interval if method == "crossed" else bootstrap_interval
    mean, lo, hi = how(swapped - real, **kw)
    return {"real": round(float(real.mean()), 4), "swapped": round(float(swapped.mean()), 4),
            "gain": mean, "interval": (lo, hi), "verdict": verdict(lo, hi, ">", PROBE_MARGIN)}
