"""The verdict rule and the claims it judges, fixed in code before the results are read.

A claim compares two variants as a difference ``d`` of bits per byte (see
:data:`~posenc.experiments.CLAIMS`). Its verdict comes from the span × seed interval of ``d``
(:func:`~posenc.experiments.paired_interval`) and the margin:

- a ``"<="`` claim (``d <= margin``) *holds* when the whole interval lies at or below the
  margin and *fails* when it lies wholly above;
- a ``">"`` claim (``d > margin``) *holds* when the interval lies wholly above the margin
  and *fails* when it lies wholly at or below;
- otherwise the claim is *undecided*: the data cannot place ``d`` on one side.

This rule replaced the first study's "every seed agrees" (which had no room for the
evaluation data) and was committed before the study was re-run and read.

*Analysis change after the results were read (issue 30).* The rule is unchanged; the
interval it reads is not. Until then it was the two-way percentile bootstrap
(:func:`~posenc.experiments.bootstrap_interval`), which with three seeds under-covers when
the seeds carry the variance; since then it is the random-effects seed × span
interval with a Cochran–Cox critical value (:func:`~posenc.experiments.crossed_interval`),
and the
2-layer models have five seeds. ``check_claims(study, method="bootstrap", seeds=(0, 1,
2))`` gives the earlier reading.
"""

from __future__ import annotations

from .config import PRIMARY_PROTOCOL, PROTOCOLS
from .intervals import paired_interval
from .results import _rows

__all__ = ["CLAIMS", "MARGIN", "NEW_CLAIMS", "check_claims", "claims_table", "verdict"]

#: Bits per byte within which two results count as "the same level" in :data:`CLAIMS`
#: (about 2 % of the models' ≈ 2.3 bits per byte at ``L``); fixed before the study ran.
MARGIN = 0.05

#: The sources' extrapolation claims as measurable comparisons, fixed before the study
#: first ran (unchanged since): ``(claim, a, multiple_a, b, multiple_b, relation)`` with
#: ``d = bpb(a, multiple_a · L) − bpb(b, multiple_b · L)`` (same seed, same spans);
#: ``"<="`` claims that ``d <= MARGIN`` (a is no worse than b by more than the margin), ``">"`` that
#: ``d > MARGIN`` (a is worse by more than the margin).
CLAIMS = (
    ("sinusoidal degrades past L", "sinusoidal", 2, "sinusoidal", 1, ">"),
    ("ALiBi stays flat to 8L", "alibi", 8, "alibi", 1, "<="),
    ("ALiBi stays flat to 16L", "alibi", 16, "alibi", 1, "<="),
    ("T5 bias holds up to 4L", "t5", 4, "t5", 1, "<="),
    ("plain RoPE holds up to 4L", "rope", 4, "rope", 1, "<="),
    ("RoPE + NTK-aware reaches ALiBi at 4L", "rope+ntk", 4, "alibi", 4, "<="),
    ("RoPE + NTK-aware reaches ALiBi at 16L", "rope+ntk", 16, "alibi", 16, "<="),
    ("RoPE + YaRN reaches ALiBi at 4L", "rope+yarn", 4, "alibi", 4, "<="),
    ("RoPE + YaRN reaches ALiBi at 16L", "rope+yarn", 16, "alibi", 16, "<="),
    ("NTK-aware needs no fine-tuning (4L at RoPE's level at L)", "rope+ntk", 4, "rope", 1,
     "<="),
    ("PI without fine-tuning is worse than NTK-aware (4L)", "rope+pi", 4, "rope+ntk", 4, ">"),
    ("PI needs fine-tuning (the fine-tune gains more than the margin at 4L)", "rope+pi", 4,
     "rope+pi+ft", 4, ">"),
    ("YaRN needs few steps (4L at RoPE's level at L after the fine-tune)", "rope+yarn+ft", 4,
     "rope", 1, "<="),
    ("YaRN fine-tunes at least as well as PI (4L)", "rope+yarn+ft", 4, "rope+pi+ft", 4, "<="),
)

#: What the papers and model reports of 2024–26 say of p-RoPE, the RoPE/NoPE hybrids and
#: FIRE, as comparisons of the same form, fixed (with the schemes' settings) before any of
#: them was evaluated past ``L``. ``">"`` claims that ``b`` beats ``a`` by more than the
#: margin read ``d = a − b > MARGIN`` with the worse-expected scheme as ``a``.
NEW_CLAIMS = (
    ("p-RoPE costs nothing at L (Barbero et al.)", "p-rope", 1, "rope", 1, "<="),
    ("p-RoPE holds up to 4L", "p-rope", 4, "p-rope", 1, "<="),
    ("p-RoPE beats RoPE at 4L", "rope", 4, "p-rope", 4, ">"),
    ("RoPE/NoPE hybrid costs nothing at L", "rope-nope", 1, "rope", 1, "<="),
    ("RoPE/NoPE hybrid holds up to 4L", "rope-nope", 4, "rope-nope", 1, "<="),
    ("RoPE/NoPE hybrid beats RoPE at 4L", "rope", 4, "rope-nope", 4, ">"),
    ("SWA-RoPE/NoPE hybrid costs nothing at L", "rope-swa-nope", 1, "rope", 1, "<="),
    ("SWA-RoPE/NoPE hybrid stays flat to 16L", "rope-swa-nope", 16, "rope-swa-nope", 1,
     "<="),
    ("FIRE costs nothing at L (against T5)", "fire", 1, "t5", 1, "<="),
    ("FIRE stays flat to 16L", "fire", 16, "fire", 1, "<="),
    ("FIRE beats T5 at 16L (Li et al.)", "t5", 16, "fire", 16, ">"),
    ("FIRE beats ALiBi at 16L (Li et al.)", "alibi", 16, "fire", 16, ">"),
)


def verdict(lo: float, hi: float, relation: str, margin: float = MARGIN) -> str:
    """``"holds"``, ``"fails"`` or ``"undecided"`` for an interval ``[lo, hi]`` of ``d``
    and a claim ``d <= margin`` (``relation="<="``) or ``d > margin`` (``">"``).

    Raises:
        ValueError: an unknown relation, or ``lo > hi``.
    """
    if relation not in ("<=", ">"):
        raise ValueError(f"relation must be '<=' or '>', got {relation!r}")
    if lo > hi:
        raise ValueError(f"the interval must have lo <= hi, got [{lo}, {hi}]")
    above, below = lo > margin, hi <= margin
    if relation == ">":
        return "holds" if above else "fails" if below else "undecided"
    return "holds" if below else "fails" if above else "undecided"


def check_claims(study: dict, claims=CLAIMS, *, margin: float = MARGIN, **kw) -> list[dict]:
    """Every claim of ``claims`` (default :data:`CLAIMS`) at every depth and protocol.

    ``claims`` has the form of :data:`CLAIMS`. Returns one dict per claim × depth ×
    protocol (the primary protocol, :data:`~posenc.experiments.PRIMARY_PROTOCOL`, first):
    ``claim``, ``comparison`` (e.g. ``"alibi@8L − alibi@1L <= +0.05"``), ``depth``,
    ``protocol``, ``primary`` (bool), ``diff`` (``(mean, min, max)``: the mean difference
    and the smallest and largest per-seed difference), ``interval`` (the span × seed
    interval, ``kw`` going to :func:`~posenc.experiments.paired_interval`: ``method``,
    ``seeds``), ``n_seeds``, ``span_se``, ``t`` (its critical value), ``seed_share``,
    ``edge`` (the distance from the margin to the interval's nearer end) and ``verdict``
    (:func:`verdict`). Claims on a variant or length the study did not evaluate with a
    protocol are skipped.
    """
    rows = _rows(study)
    have = {(r["variant"], r["protocol"]) for r in rows}
    lengths = {r["length"] for r in rows}
    L = study["config"]["train_len"]
    order = (PRIMARY_PROTOCOL,) + tuple(p for p in PROTOCOLS if p != PRIMARY_PROTOCOL)
    out = []
    for depth in sorted({r["depth"] for r in rows}):
        for protocol in order:
            for claim, a, ma, b, mb, rel in claims:
                if (a, protocol) not in have or (b, protocol) not in have \
                        or ma * L not in lengths or mb * L not in lengths:
                    continue
                got = paired_interval(study, a, b, ma * L, depth, protocol,
                                      length_b=mb * L, **kw)
                if got is None:
                    continue
                lo, hi = got["interval"]
                out.append({"claim": claim, "comparison": f"{a}@{ma}L − {b}@{mb}L {rel} "
                                                          f"{margin:+.2f}",
                            "depth": depth, "protocol": protocol,
                            "primary": protocol == PRIMARY_PROTOCOL,
                            "diff": (got["mean"], *got["seeds"]), "interval": (lo, hi),
                            "n_seeds": got["n_seeds"], "span_se": got["span_se"],
                            "t": got["t"], "seed_share": got["seed_share"],
                            "edge": round(min(abs(lo - margin), abs(hi - margin)), 4),
                            "verdict": verdict(lo, hi, rel, margin)})
    return out


def claims_table(rows: list[dict]) -> str:
    """:func:`check_claims` rows as text: per claim, its comparison, then one line per depth
    with, per protocol (primary first), the verdict, the mean difference and its span ×
    seed interval in brackets."""
    lines = []
    for claim in dict.fromkeys(r["claim"] for r in rows):
        mine = [r for r in rows if r["claim"] == claim]
        lines += [claim, f"   {mine[0]['comparison']}"]
        for depth in dict.fromkeys(r["depth"] for r in mine):
            line = f"   {depth} layers"
            for r in sorted((r for r in mine if r["depth"] == depth),
                            key=lambda r: not r["primary"]):
                lo, hi = r["interval"]
                line += (f"   {r['protocol'][:7]:7s} {r['verdict']:9s} {r['diff'][0]:+.3f} "
                         f"[{lo:+.3f}, {hi:+.3f}]")
            lines.append(line)
    return "\n".join(lines)
