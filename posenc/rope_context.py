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
  ``2σ²·B_m`` (σ² the per-channel variance of ``q``). ``B_m < 0`` means a similar token
  gets *less* attention than a random one at that distance.
* :func:`base_lower_bound` — the smallest base (on a fine log grid) with ``B_m >= 0`` for
  every ``0 <= m <= L``: Men et al.'s lower bound of the base for context length ``L``.
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


def base_lower_bound(context_length: int, head_dim: int, *, start: float = 100.0,
                     ratio: float = 1.01, max_base: float = 1e12) -> float:
    """Smallest base ``b`` on the grid ``start · ratio^k`` with ``B_m >= 0`` for all ``m <= L``.

    ``θ_i = b^(−2i/d)`` (:func:`posenc.rope.rope_inv_freq`). The grid is scanned upward
    from ``start`` and the first base that satisfies the criterion is returned, so every
    smaller grid base fails it. The criterion is not monotone in ``b``: some bases above
    the returned one fail again (for ``L = 4096``, ``d = 128`` the bound is about
    ``2.9·10⁴`` and ``5.31·10⁴`` fails), and narrow islands of satisfying bases can lie
    between grid points, so the result depends on the grid at that level (another
    ``start`` can land on an island: ``L = 32768`` gives ``9.8·10⁵`` from ``start=100``
    and ``6.3·10⁵`` from ``start=16384``). That is why this scans instead of bisecting.

    Args:
        context_length: ``L >= 1`` positions.
        head_dim: ``d``, even (all of it rotated).
        start: first base tried, ``> 1``; it must fail the criterion (else the bound may
            lie below the grid).
        ratio: grid step, ``> 1`` (default 1 %: the result is within 1 % of the smallest
            satisfying base, up to islands narrower than a step).
        max_base: give up above this base.

    Returns:
        The bound as a float.

    Raises:
        ValueError: bad arguments; ``start`` already satisfies the criterion; no base up to
            ``max_base`` does.

    Source: Men et al. (2024), "Base of RoPE Bounds Context Length" (NeurIPS 2024),
    section 4; their Figure 1 plots the bound against the context length.
    """
    L = check_int("context_length", context_length, minimum=1)
    d = check_even("head_dim", head_dim)
    start = check_real("start", start, gt=1.0)
    ratio = check_real("ratio", ratio, gt=1.0)
    max_base = check_real("max_base", max_base, gt=start)
    n = int(math.floor(math.log(max_base / start) / math.log(ratio))) + 1
    grid = start * ratio ** torch.arange(n, dtype=torch.float64)
    exponent = torch.arange(0, d, 2, dtype=torch.float64) / d
    for first in range(0, n, 64):  # 64 bases at a time, in increasing order
        bases = grid[first:first + 64]
        theta = bases[:, None] ** -exponent  # (nb, P): θ_i = b^(−2i/d) per base
        ok = torch.ones(len(bases), dtype=torch.bool)
        for m0 in range(0, L + 1, 1024):
            m = torch.arange(m0, min(L + 1, m0 + 1024), dtype=torch.float64)
            live = ok.nonzero().flatten()
            margin = torch.cos(m[None, :, None] * theta[live, None, :]).sum(-1)
            ok[live] = (margin >= 0).all(-1)
            if not ok.any():
                break
        if first == 0 and ok[0]:
            raise ValueError(f"start={start:g} already satisfies the criterion for "
                             f"context_length={L}; pass a smaller start")
        if ok.any():
            return bases[ok.nonzero()[0, 0]].item()
    raise ValueError(f"no base up to max_base={max_base:g} satisfies the criterion for "
                     f"context_length={L}")
