"""RoPE-Mixed (Heo et al., 2024): rotary pairs that turn by a learned mix of all axes.

Shape notation: ``s`` tokens, ``n`` position axes (2 for ``(h, w)``), ``d`` = ``head_dim``,
``r`` rotated channels (``r <= d``, even), ``P = r/2`` pairs; ``freqs: (P, n)`` holds one
frequency *vector* ``ω_i`` per pair, in radians per unit of each coordinate.

Axial RoPE (:mod:`posenc.multi_axis`) turns pair ``i`` by ``p[a(i)]·θ_i``: one coordinate per
pair. RoPE-Mixed turns it by the inner product with the whole position vector,

    angle_i(p) = ⟨ω_i, p⟩ = Σ_a ω_i[a]·p[a]      (radians),

with ``ω_i`` learned, so a pair can rotate along a diagonal of the image. Axial RoPE is the
case where every ``ω_i`` has a single non-zero entry. The angles are still linear in ``p``,
so the score of a query at ``p`` and a key at ``p'`` depends only on ``p' − p`` (the same
proof as for axial RoPE).

Positions here are ``(h, w)`` (row, column), as everywhere in ``posenc``; the reference code
(naver-ai/rope-vit, ``init_random_2d_freqs`` and ``compute_mixed_cis``) names them
``(t_y, t_x)`` and stores ``freqs`` as ``(2, heads, P)`` with the ``x`` (column) part first.
"""

from __future__ import annotations

import math

import torch

from ._checks import as_positions, check_choice, check_even, check_float_dtype, check_real
from .rope import LAYOUTS, apply_rope

__all__ = ["apply_mixed_rope", "mixed_angles", "mixed_inv_freq"]


def mixed_inv_freq(head_dim: int, *, theta: float = 10.0, angle: float = 0.0,
                   dtype=torch.float32) -> torch.Tensor:
    """RoPE-Mixed's initial frequency vectors for one head, ``(d/2, 2)`` over ``(h, w)``.

    Magnitudes ``μ_j = theta^(−4j/d)`` for ``j < d/4``; the first ``d/4`` pairs point in
    direction ``angle``, the other ``d/4`` in ``angle + π/2``::

        ω_j         = μ_j · (sin φ, cos φ)                 (h, w) components
        ω_{j + d/4} = μ_j · (sin(φ + π/2), cos(φ + π/2))

    The reference draws ``φ`` uniformly in ``[0, 2π)`` per head (and per layer); pass it as
    ``angle`` to stay deterministic.

    Args:
        head_dim: ``d``, a multiple of 4.
        theta: magnitude base, ``> 1`` (10 in the reference code for RoPE-Mixed).
        angle: ``φ`` in radians.
        dtype: float32 or float64.

    Returns:
        ``(d/2, 2)`` tensor: row ``i`` is ``ω_i = (ω_i[h], ω_i[w])``.

    Raises:
        ValueError: ``head_dim`` not a positive multiple of 4; ``theta <= 1``.
        TypeError: ``dtype`` not a floating dtype.

    Source: Heo et al. (2024), section 3.3 (RoPE-Mixed); matches ``init_random_2d_freqs`` of
    naver-ai/rope-vit for a given angle (``tests/test_rope_mixed.py``).
    """
    d = check_even("head_dim", head_dim, minimum=4)
    if d % 4:
        raise ValueError(f"head_dim must be a multiple of 4 for RoPE-Mixed, got {d}")
    theta = check_real("theta", theta, gt=1.0)
    phi = check_real("angle", angle)
    dtype = check_float_dtype("dtype", dtype)
    mag = 1.0 / theta ** (torch.arange(0, d, 4, dtype=torch.float64) / d)
    rows = [torch.stack([mag * math.sin(a), mag * math.cos(a)], dim=-1)
            for a in (phi, phi + math.pi / 2)]
    return torch.cat(rows).to(dtype)


def _check_freqs(freqs) -> torch.Tensor:
    if not isinstance(freqs, torch.Tensor) or freqs.dtype not in (torch.float32, torch.float64):
        raise TypeError("freqs must be a float32/float64 tensor of shape (P, n_axes)")
    if freqs.ndim != 2 or freqs.shape[0] < 1 or freqs.shape[1] < 1:
        raise ValueError(f"freqs must have shape (P, n_axes), got {tuple(freqs.shape)}")
    return freqs


def mixed_angles(positions, freqs: torch.Tensor) -> torch.Tensor:
    """Angles ``⟨ω_i, p⟩`` of every pair at every position (radians).

    Args:
        positions: integer positions ``(..., s, n)``.
        freqs: ``(P, n)`` frequency vectors (may require grad).

    Returns:
        ``(..., s, P)`` in ``freqs``' dtype.

    Raises:
        TypeError: non-integer positions; ``freqs`` not float32/float64.
        ValueError: ``freqs`` not 2-D; positions whose last dim is not ``n``.

    Source: Heo et al. (2024), eq. for RoPE-Mixed (``compute_mixed_cis`` in their code).
    """
    freqs = _check_freqs(freqs)
    pos = as_positions("positions", positions, minimum=None)
    if pos.ndim < 2 or pos.shape[-1] != freqs.shape[1]:
        raise ValueError(f"positions must have shape (..., s, {freqs.shape[1]}) to match "
                         f"freqs {tuple(freqs.shape)}, got {tuple(pos.shape)}")
    return pos.to(device=freqs.device, dtype=freqs.dtype) @ freqs.T


def apply_mixed_rope(x: torch.Tensor, positions, freqs: torch.Tensor, *,
                     layout: str = "half") -> torch.Tensor:
    """Rotate the first ``r = 2P`` channels of ``x`` by RoPE-Mixed; pass the rest through.

    Args:
        x: ``(..., s, d)`` floating tensor (queries or keys).
        positions: integer positions ``(..., s, n)`` broadcastable with ``x``.
        freqs: ``(P, n)`` frequency vectors, ``2P <= d``.
        layout: ``"half"`` (pairs ``(i, i + r/2)``) or ``"interleaved"`` (pairs
            ``(2i, 2i+1)``, as the reference's complex multiplication).

    Returns:
        Tensor shaped like ``x``; differentiable in ``x`` and ``freqs``.

    Raises:
        ValueError: unknown ``layout``; the errors of :func:`mixed_angles` and
            :func:`posenc.rope.apply_rope`.
        TypeError: ``x`` not a floating tensor.

    Source: Heo et al. (2024), section 3.3; with ``layout="interleaved"`` matches the
    reference's ``apply_rotary_emb`` fed by ``compute_mixed_cis`` (tested).
    """
    layout = check_choice("layout", layout, LAYOUTS)
    angles = mixed_angles(positions, freqs)
    if layout == "half":
        emb = torch.cat((angles, angles), dim=-1)
    else:
        emb = torch.repeat_interleave(angles, 2, dim=-1)
    return apply_rope(x, cos=emb.cos(), sin=emb.sin(), layout=layout)
