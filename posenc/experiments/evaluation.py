"""Scoring a trained model on the validation text: the scored spans and the two protocols.

Each protocol scores its own fixed spans at every length, so every length of one protocol
scores the same bytes (Press et al., 2022, Section 4 and Appendix B):

- ``"nonoverlapping"``: consecutive windows of ``n`` tokens, every byte scored — early bytes
  of each window see little context (the "early-token curse" of Press et al., 2021). Spans
  of ``max(lengths)`` bytes, since a window of ``16L`` scores ``16L`` consecutive bytes.
- ``"sliding"``: windows of ``n`` tokens moved by ``min(n / sliding_fraction, span)``, only
  their last stride bytes scored, so every scored byte sees at least ``n / 2`` bytes of
  context (Baevski & Auli's sliding evaluation, which Press et al. run with stride 1, where
  every token sees ``n − 1``). Shorter spans, so more files fit the same bytes.

Scores are kept per span, so that intervals can cover the evaluation data as well as the
training seeds (:mod:`posenc.experiments.intervals`).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .._checks import check_choice
from .config import PROTOCOLS, VARIANTS, StudyConfig
from .corpus import _with_bos, load_corpus
from .training import forward_kwargs

__all__ = ["eval_spans", "evaluate"]


def eval_spans(cfg: StudyConfig, protocol: str, files=None) -> torch.Tensor:
    """Start offsets (ascending) of the spans scored under ``protocol``.

    ``files`` lists ``(name, end offset)`` of the validation documents in stream order
    (default: the corpus's ``validation_files``). ``cfg.span_count(protocol)`` spans of
    ``cfg.span_bytes(protocol)`` bytes, one per file, each centred in its file, taken from
    files spread evenly over the eligible ones: files long enough to hold a span that starts
    at least ``max(lengths)`` bytes into the stream, so that every window has its full
    context. The context before a span may run across a file boundary.

    Raises:
        ValueError: an unknown protocol, or fewer eligible files than spans.
    """
    check_choice("protocol", protocol, PROTOCOLS)
    files = load_corpus()["validation_files"] if files is None else files
    size, count, lead = cfg.span_bytes(protocol), cfg.span_count(protocol), max(cfg.lengths)
    starts, begin = [], 0
    for _, end in files:
        start = begin + (end - begin - size) // 2
        if end - begin >= size and start >= lead:
            starts.append(start)
        begin = end
    if count > len(starts):
        raise ValueError(f"the validation files hold {len(starts)} spans of {size} bytes "
                         f"for protocol {protocol!r}, fewer than the {count} asked for")
    pick = np.linspace(0, len(starts) - 1, count).round().astype(int) if count > 1 else [0]
    return torch.tensor([starts[i] for i in pick], dtype=torch.int64)


def _windows(cfg: StudyConfig, seq_len: int, protocol: str, spans: torch.Tensor):
    """``(starts, first_scored)``: byte offsets of the evaluation windows (span-major) and
    the first scored position of each window."""
    stride, size = cfg.stride(seq_len, protocol), cfg.span_bytes(protocol)
    if size % stride:
        raise ValueError(f"the stride {stride} of length {seq_len} must divide the "
                         f"{protocol} span of {size} bytes")
    within = torch.arange(0, size, stride) + stride - seq_len   # relative to a span start
    return (spans[:, None] + within[None, :]).flatten(), seq_len - stride


@torch.no_grad()
def evaluate(model, cfg: StudyConfig, variant: str, seq_len: int,
             protocol: str = "nonoverlapping", *, device=None) -> dict:
    """Bits per byte of ``model`` on the validation spans with windows of ``seq_len`` tokens.

    Returns ``{"status": "ok" | "cannot run", "bpb": float | None, "span_bpb": list |
    None, "position_nll": (seq_len,) float64 tensor | None}``: ``bpb`` is the mean negative
    log2-likelihood of the scored bytes; ``span_bpb`` the same per span (spans in the order
    of :func:`eval_spans`; ``bpb`` is their mean, since all spans have one size);
    ``position_nll`` the mean per position of the window (nats; scored positions only,
    ``nan`` elsewhere). A learned table asked for a position it does not have cannot run.

    Raises:
        ValueError: an unknown variant or protocol, or a stride that does not divide the
            span.
    """
    check_choice("variant", variant, tuple(VARIANTS))
    check_choice("protocol", protocol, PROTOCOLS)
    device = next(model.parameters()).device if device is None else device
    _, change = VARIANTS[variant]
    data = load_corpus()["validation"]
    spans = eval_spans(cfg, protocol)
    starts, first = _windows(cfg, seq_len, protocol, spans)
    cannot = {"status": "cannot run", "bpb": None, "span_bpb": None, "position_nll": None}
    try:
        kwargs = forward_kwargs(model, change, seq_len, cfg)
    except IndexError:
        return cannot
    nll = torch.zeros(seq_len, dtype=torch.float64)
    per_window = torch.zeros(len(starts), dtype=torch.float64)
    per_batch = max(1, 8192 // seq_len)
    for i in range(0, len(starts), per_batch):
        s0 = starts[i:i + per_batch]
        y = data[s0[:, None] + torch.arange(seq_len)].long()
        try:
            logits = model(_with_bos(y).to(device), **kwargs)
        except IndexError:
            return cannot
        logp = torch.log_softmax(logits.double(), dim=-1)
        got = -logp.gather(-1, y.to(device)[..., None])[..., 0].cpu()
        nll += got.sum(0)
        per_window[i:i + len(s0)] = got[:, first:].sum(1)
    nll /= len(starts)
    nll[:first] = float("nan")
    span_bits = per_window.view(len(spans), -1).sum(1) / cfg.span_bytes(protocol) / math.log(2)
    return {"status": "ok", "bpb": float(span_bits.mean()), "span_bpb": span_bits.tolist(),
            "position_nll": nll}
