"""RoPE frequencies against a context length: full turns per pair, p-RoPE, the base bound.

Shape notation: ``P`` = number of rotary pairs (``inv_freq: (P,)``, radians per position),
``n`` = number of distances. Lengths and distances are in positions.

* :func:`full_turns` — how many full turns pair ``i`` makes over ``L`` positions,
  ``L·θ_i / 2π``. A pair with fewer than one turn never shows the model a whole period
  during training (chapter "Long context"); Barbero et al. (2025) find that Gemma uses such
  slow pairs as nearly position-free channels and propose *p-RoPE*: rotate only the
  fastest fraction ``p`` of the pairs (:func:`posenc.scaling.proportional`, as Gemma 4's
  global layers do).
* :func:`similar_token_margin` — Men et al. (2024)'s ``B_m = Σ_i cos(m·θ_i)``: for a query
  ``q`` and a key ``k = q + ε`` (``ε`` zero-mean noise, independent of ``q``) the expected
  score advantage of that similar key over a random key, at distance ``m``, is
  ``2σ²·B_m`` (σ² the per-channel variance of ``q``, its channels independent with mean
  zero). ``B_m < 0`` means a similar token
  gets *less* attention than a random one at that distance.
* :func:`base_lower_bound` — the smallest base with ``B_m >= 0`` for every
  ``0 <= m <= L`` (Men et al.'s lower bound of the base for context length ``L``), found by
  a scan whose steps are certified not to skip a satisfying base.
"""

from __future__ import annotations

import math

import torch

from ._checks import as_positions, check_even, check_int, check_real
from .rope import _check_inv_freq

__all__ = ["base_lower_bound", "full_turns", "min_similar_token_margin",
           "similar_token_margin"]


def full_turns(inv_freq: torch.Tensor, length: int) -> torch.Tensor:
    """Turns each rotary pair makes over ``length`` positions: ``length · θ_i / (2π)``.

    Args:
        inv_freq: ``(P,)`` frequencies θ_i in radians per position (a zero frequency, as
            p-RoPE uses for its unrotated pairs, makes zero turns).
        length: ``L >= 1`` positions (e.g. the training context).

    Returns:
        ``(P,)`` float tensor (``inv_freq``'s dtype); values below 1 mark pairs that never
        complete a period within ``L``.

    Raises:
        ValueError: ``inv_freq`` not 1-D; ``length < 1``.
        TypeError: ``inv_freq`` not a float32/float64 tensor; a non-integer ``length``.

    Source: the wavelength ``λ_i = 2π/θ_i`` of RoFormer (Su et al., 2024), section 3.2.
    """
    inv_freq = _check_inv_freq(inv_freq)
    L = check_int("length", length, minimum=1)
    return inv_freq * L / (2 * math.pi)


def similar_token_margin(distances, inv_freq: torch.Tensor) -> torch.Tensor:
    """Men et al.'s ``B_m = Σ_i cos(m · θ_i)`` for every distance ``m``.

    Args:
        distances: integer distances ``(n,)`` (any sign; ``B`` is even in ``m``).
        inv_freq: ``(P,)`` frequencies in radians per position.

    Returns:
        ``(n,)`` tensor in ``inv_freq``'s dtype; ``B_0 = P``.

    Raises:
        ValueError: ``inv_freq`` not 1-D.
        TypeError: ``inv_freq`` not a float tensor; non-integer distances.

    Source: Men et al. (2024), "Base of RoPE Bounds Context Length", section 4 (the
    long-term decay of the ability to attend more to similar tokens).
    """
    inv_freq = _check_inv_freq(inv_freq)
    m = as_positions("distances", distances, minimum=None).reshape(-1).to(inv_freq.dtype)
    return torch.cos(m[:, None] * inv_freq).sum(-1)


def min_similar_token_margin(context_length: int, inv_freq: torch.Tensor, *,
                             stop_below: float | None = None) -> float:
    """``min_{0 <= m <= L} B_m``, computed in chunks of 4096 distances.

    Args:
        context_length: ``L >= 0``.
        inv_freq: ``(P,)`` frequencies.
        stop_below: if given, return as soon as a chunk's minimum is below it (the exact
            minimum is then not searched further).

    Returns:
        The minimum as a Python float.

    Raises:
        ValueError: ``inv_freq`` not 1-D; ``context_length < 0``.
        TypeError: ``inv_freq`` not a float tensor; a non-integer ``context_length``.
    """
    inv_freq = _check_inv_freq(inv_freq)
    L = check_int("context_length", context_length, minimum=0)
    best = math.inf
    for start in range(0, L + 1, 4096):
        m = torch.arange(start, min(L + 1, start + 4096), dtype=inv_freq.dtype)
        best = min(best, torch.cos(m[:, None] * inv_freq).sum(-1).min().item())
        if stop_below is not None and best < stop_below:
            break
    return best


def _margin_derivatives(L: int, u: float, w: torch.Tensor):
    """At ``b = e^u``, for ``m = 0..L``: ``B_m``, ``dB_m/du`` and two bounds for ``u' >= u``.

    ``θ_i = e^(−u·w_i)`` with ``w_i = 2i/d``, so ``dθ_i/du = −w_i θ_i`` and
    ``dB_m/du = Σ_i sin(mθ_i)·mθ_i w_i``. Since every ``θ_i`` falls as ``u`` grows,
    ``slope = m·Σ θ_i w_i`` bounds ``|dB_m/du|`` and
    ``curv = m²·Σ θ_i² w_i² + m·Σ θ_i w_i²`` bounds ``|d²B_m/du²|`` at every ``u' >= u``.
    """
    theta = torch.exp(-u * w)
    B, dB = [], []
    for m0 in range(0, L + 1, 4096):
        m = torch.arange(m0, min(L + 1, m0 + 4096), dtype=torch.float64)
        phase = m[:, None] * theta
        B.append(torch.cos(phase).sum(-1))
        dB.append(m * (torch.sin(phase) @ (theta * w)))
    m = torch.arange(L + 1, dtype=torch.float64)
    slope = m * (theta * w).sum()
    curv = m**2 * (theta**2 * w**2).sum() + m * (theta * w**2).sum()
    return torch.cat(B), torch.cat(dB), slope, curv


def base_lower_bound(context_length: int, head_dim: int, *, start: float = 100.0,
                     rtol: float = 1e-9, max_base: float = 1e12) -> float:
    """Smallest base ``b >= start`` with ``B_m >= 0`` for every ``0 <= m <= L``.

    ``θ_i = b^(−2i/d)`` (:func:`posenc.rope.rope_inv_freq`). The criterion is not monotone
    in ``b``: the first satisfying bases can form a narrow *island* with failing bases
    above it (for ``L = 4096``, ``d = 128``: it holds from ``26 952`` to about
    ``26 973``, fails again up to about ``28 629``, and ``5.31·10⁴`` fails too). So
    neither bisection nor a grid finds the smallest base (a 1 % grid from ``10⁴`` steps
    over that island and lands near ``2.87·10⁴``).

    The scan here moves upward in ``u = ln b`` by steps that cannot skip a satisfying
    base. At a failing ``u`` each failing ``B_m`` is bounded for ``u' >= u`` by its
    Taylor expansion with a bound on the second derivative, and by a bound on the first
    (the private ``_margin_derivatives``); the first ``u'`` at which either bound lets ``B_m``
    reach 0 is a point below which that ``B_m`` stays negative, and the scan jumps to the
    farthest such point over the failing ``m``. Landing on a satisfying base after such a
    step means it is the lower edge of the satisfying set. Where every failing ``B_m`` is
    within a step of ``rtol`` from zero, the scan tests ``u + rtol`` and, if that base
    satisfies, bisects to ``rtol / 8``; otherwise it moves on by ``rtol``. The result is
    therefore the edge of the first satisfying interval to a relative ``rtol``, missing
    only intervals narrower than ``rtol``.

    Args:
        context_length: ``L >= 1`` positions.
        head_dim: ``d``, even (all of it rotated).
        start: first base tried, ``> 1``; it must fail the criterion (else the bound may
            lie below it).
        rtol: relative resolution, ``0 < rtol < 0.01``.
        max_base: give up above this base.

    Returns:
        The bound as a float; ``min_m B_m >= 0`` holds there (in float64).

    Raises:
        ValueError: bad arguments; ``start`` already satisfies the criterion; no base up to
            ``max_base`` does.

    Source: Men et al. (2024), "Base of RoPE Bounds Context Length" (arXiv:2405.14591;
    NeurIPS 2024 lists Xu, Men et al.), section 4; Figure 1 plots the bound against ``L``.
    """
    L = check_int("context_length", context_length, minimum=1)
    d = check_even("head_dim", head_dim)
    start = check_real("start", start, gt=1.0)
    rtol = check_real("rtol", rtol, gt=0.0)
    if rtol >= 0.01:
        raise ValueError(f"rtol must be below 0.01, got {rtol:g}")
    max_base = check_real("max_base", max_base, gt=start)
    w = torch.arange(0, d, 2, dtype=torch.float64) / d  # w_i = 2i/d

    def holds(u: float) -> bool:
        return min_similar_token_margin(L, torch.exp(-u * w), stop_below=0.0) >= 0

    u, u_max = math.log(start), math.log(max_base)
    if holds(u):
        raise ValueError(f"start={start:g} already satisfies the criterion for "
                         f"context_length={L}; pass a smaller start")
    while u <= u_max:
        B, dB, slope, curv = _margin_derivatives(L, u, w)
        fail = B < 0
        if not fail.any():  # reached by a certified step: the edge itself
            return math.exp(u)
        B, dB, slope, curv = B[fail], dB[fail], slope[fail], curv[fail]
        quad = (torch.sqrt(dB**2 - 2 * curv * B) - dB) / curv  # root of B + dB·t + curv·t²/2
        step = torch.maximum(quad, -B / slope).max().item()
        if step < rtol:
            if holds(u + rtol):
                lo, hi = u, u + rtol
                while hi - lo > rtol / 8:
                    mid = (lo + hi) / 2
                    lo, hi = (lo, mid) if holds(mid) else (mid, hi)
                return math.exp(hi)
            step = rtol
        u += step
    raise ValueError(f"no base up to max_base={max_base:g} satisfies the criterion for "
                     f"context_length={L}")
