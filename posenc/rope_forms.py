"""RoPE's rotation in other forms, and what follows from them.

Shape notation as in :mod:`posenc.rope`: ``...`` leading batch/head dims, ``s`` sequence,
``d`` = ``head_dim``, ``r`` = ``rotary_dim`` (even, ``r <= d``). :func:`posenc.rope.apply_rope`
is how a model rotates; the functions here show the same rotation in the forms the papers
write it, and are checked against it (``tests/test_rope.py``):

* :func:`rotation_matrix` — the explicit block-diagonal matrix ``R_m`` (RoFormer eq. 15).
* :func:`apply_rope_complex` — pairs as complex numbers turned by ``e^{i mθ_i}`` (RoFormer
  section 3.2.1; Meta's Llama code).
* :func:`layout_permutation` / :func:`convert_layout` — the channel permutation between the
  interleaved (paper, Meta) and half (GPT-NeoX, ``transformers``) pairings.
* :func:`rope_decay_bound` — RoFormer's long-term-decay bound (section 3.4.3, Figure 2).
"""

from __future__ import annotations

import torch

from ._checks import as_positions, check_choice, check_even, check_int
from .rope import LAYOUTS, _check_inv_freq, _check_x, _resolve_inv_freq, rope_angles

__all__ = [
    "apply_rope_complex",
    "convert_layout",
    "layout_permutation",
    "rope_decay_bound",
    "rotation_matrix",
]


def rotation_matrix(
    position: int,
    inv_freq: torch.Tensor,
    *,
    layout: str = "half",
    head_dim: int | None = None,
) -> torch.Tensor:
    """The explicit matrix ``R_m``: ``apply_rope(x, [m], layout=layout) == x @ R_mᵀ``.

    ``R_m x`` is the rotated vector. Both functions default to ``"half"``, so
    ``apply_rope(x, [m]) == x @ rotation_matrix(m, inv_freq).T`` with the defaults.
    In the interleaved layout ``R_m`` is block diagonal, one 2×2 rotation per pair::

        [[cos mθ_i, −sin mθ_i],
         [sin mθ_i,  cos mθ_i]]      on channels (2i, 2i+1)

    — RoFormer's ``R^d_{Θ,m}``. In the half layout the same blocks sit on channels
    ``(i, i + r/2)`` (the matrix is the interleaved one with rows and columns permuted).
    Channels ``r … d−1`` (when ``head_dim > r``) get the identity.

    Args:
        position: integer position ``m`` (negative ``m`` gives ``R_mᵀ = R_{−m}``).
        inv_freq: ``(r/2,)`` float32/float64 frequencies.
        layout: ``"half"`` (default, as :func:`~posenc.rope.apply_rope` and ``transformers``) or
            ``"interleaved"`` (the paper's block-diagonal matrix).
        head_dim: total width ``d >= r`` (default ``r``).

    Returns:
        ``(d, d)`` orthogonal matrix in ``inv_freq``'s dtype.

    Raises:
        TypeError: ``position`` not an integer; bad ``inv_freq``.
        ValueError: unknown ``layout``; ``head_dim`` odd or ``< r``.

    Source: Su et al., RoFormer, eq. (15).
    """
    position = check_int("position", position)
    layout = check_choice("layout", layout, LAYOUTS)
    angles = rope_angles([position], inv_freq)[0]
    r = 2 * len(angles)
    d = r if head_dim is None else check_even("head_dim", head_dim)
    if d < r:
        raise ValueError(f"head_dim must be >= rotary_dim ({r}), got {d}")
    c, s = torch.cos(angles), torch.sin(angles)
    m = torch.eye(d, dtype=angles.dtype, device=angles.device)
    idx = torch.arange(r // 2, device=angles.device)
    a, b = (2 * idx, 2 * idx + 1) if layout == "interleaved" else (idx, idx + r // 2)
    m[a, a] = c
    m[a, b] = -s
    m[b, a] = s
    m[b, b] = c
    return m


def apply_rope_complex(
    x: torch.Tensor,
    positions,
    *,
    inv_freq: torch.Tensor | None = None,
    base: float = 10000.0,
    rotary_dim: int | None = None,
    layout: str = "half",
) -> torch.Tensor:
    """RoPE as complex multiplication: pair ``i`` is ``z_i = a + ib``, and ``z_i ↦ z_i e^{i mθ_i}``.

    Same arguments and result as :func:`~posenc.rope.apply_rope` (positions required);
    written the way Meta's original Llama code writes it (``torch.view_as_complex`` and
    ``torch.polar``).

    Args:
        x: ``(..., s, d)`` floating tensor.
        positions: integer positions ``(..., s)`` broadcastable with ``x.shape[:-1]``.
        inv_freq, base, rotary_dim: as in :func:`~posenc.rope.apply_rope`.
        layout: ``"half"`` (default, as :func:`~posenc.rope.apply_rope`:
            ``z_i = x_i + i x_{i+r/2}``) or ``"interleaved"`` (Meta's code and the paper:
            ``z_i = x_{2i} + i x_{2i+1}``).

    Returns:
        Tensor shaped and typed like ``x``.

    Raises:
        ValueError: positions whose last dim is not ``s``; ``rotary_dim`` odd, larger than
            ``d`` or disagreeing with ``inv_freq``; ``inv_freq`` given with ``base``;
            unknown ``layout``.
        TypeError: ``x`` not a floating tensor; non-integer positions.

    Source: Su et al., RoFormer, section 3.2.1 (the 2-D case in complex form); Meta's
    ``llama/model.py`` ``apply_rotary_emb``.
    """
    x = _check_x(x)
    layout = check_choice("layout", layout, LAYOUTS)
    inv_freq = _resolve_inv_freq(x, inv_freq, base, rotary_dim)
    r = 2 * len(inv_freq)
    pos = as_positions("positions", positions, minimum=None)
    if pos.ndim == 0 or pos.shape[-1] != x.shape[-2]:
        raise ValueError(
            f"positions must have shape (..., s) with s = x.shape[-2] = {x.shape[-2]}, got "
            f"{tuple(pos.shape)}"
        )
    angles = rope_angles(pos, inv_freq)  # (..., s, r/2)
    rot = torch.polar(torch.ones_like(angles), angles)
    work = torch.promote_types(x.dtype, angles.dtype)
    xr = x[..., :r].to(work)
    if layout == "interleaved":
        z = torch.view_as_complex(xr.reshape(*xr.shape[:-1], r // 2, 2).contiguous())
        out = torch.view_as_real(z * rot).flatten(-2)
    else:
        z = torch.complex(xr[..., : r // 2], xr[..., r // 2 :])
        zr = z * rot
        out = torch.cat((zr.real, zr.imag), dim=-1)
    return torch.cat((out.to(x.dtype), x[..., r:]), dim=-1)


def layout_permutation(
    head_dim: int,
    rotary_dim: int | None = None,
    *,
    src: str = "interleaved",
    dst: str = "half",
) -> torch.Tensor:
    """Channel permutation ``perm`` with ``x_dst = x_src[..., perm]`` between RoPE layouts.

    ``interleaved → half`` is ``[0, 2, 4, …, r−2, 1, 3, …, r−1]`` (then ``r … d−1``
    unchanged): it moves the pair ``(2i, 2i+1)`` to ``(i, i + r/2)``. The reverse direction is
    its inverse, ``argsort(perm)``. Then, for every ``x`` and position,
    ``apply_rope(x[..., perm], layout=dst) == apply_rope(x, layout=src)[..., perm]``, and
    since a permutation preserves dot products, every ``q·k`` is unchanged. Applied to the
    rows of each head of ``W_q``/``W_k``, this is how a checkpoint is moved between Meta's
    (interleaved) and Hugging Face's (half) Llama code.

    Args:
        head_dim: ``d``, even ``>= 2``.
        rotary_dim: ``r`` (default ``d``), even, ``<= d``.
        src, dst: layouts, each ``"half"`` or ``"interleaved"`` (equal → identity).

    Returns:
        ``(d,)`` int64 tensor.

    Raises:
        ValueError: odd dims, ``rotary_dim > head_dim``, unknown layout.
    """
    d = check_even("head_dim", head_dim)
    r = d if rotary_dim is None else check_even("rotary_dim", rotary_dim)
    if r > d:
        raise ValueError(f"rotary_dim must be <= head_dim ({d}), got {r}")
    src = check_choice("src", src, LAYOUTS)
    dst = check_choice("dst", dst, LAYOUTS)
    if src == dst:
        return torch.arange(d)
    to_half = torch.cat((torch.arange(0, r, 2), torch.arange(1, r, 2)))
    head = to_half if dst == "half" else torch.argsort(to_half)
    return torch.cat((head, torch.arange(r, d)))


def convert_layout(
    x: torch.Tensor, *, src: str, dst: str, rotary_dim: int | None = None
) -> torch.Tensor:
    """``x[..., layout_permutation(d, rotary_dim, src=src, dst=dst)]`` (see there).

    Raises:
        TypeError: ``x`` not a floating tensor.
        ValueError: ``x`` of odd width, ``rotary_dim > d``, unknown layout.
    """
    x = _check_x(x)
    with torch.device(x.device):  # the index lives where x does
        perm = layout_permutation(x.shape[-1], rotary_dim, src=src, dst=dst)
    return x[..., perm]


def rope_decay_bound(distances, inv_freq: torch.Tensor) -> torch.Tensor:
    """RoFormer's long-term-decay quantity ``(1/(r/2)) Σ_{j=1}^{r/2} |S_j|`` per distance.

    With ``S_j = Σ_{i=0}^{j−1} e^{i·Δ·θ_i}`` (``Δ = m − n``), Abel summation gives
    ``|⟨R_m q, R_n k⟩| <= (max_i |h_{i+1} − h_i|) · Σ_j |S_j|`` where ``h_i`` are the
    complex pair products of ``q`` and ``k``; RoFormer plots this average of ``|S_j|``
    (its Figure 2) to show that the *bound* shrinks, on average, as ``|Δ|`` grows. It is a
    bound, not the score: a real ``q·k`` need not decay monotonically.

    Args:
        distances: integer relative distances ``Δ``, any shape ``D``.
        inv_freq: ``(r/2,)`` float32/float64 frequencies.

    Returns:
        Tensor of shape ``D``, float64.

    Raises:
        TypeError: non-integer distances; ``inv_freq`` not a float32/float64 tensor.
        ValueError: fractional distances; ``inv_freq`` not 1-D or not finite.

    Source: Su et al., RoFormer, section 3.4.3 and Figure 2.
    """
    inv = _check_inv_freq(inv_freq).to(torch.float64)
    angles = rope_angles(distances, inv)  # D + (r/2,)
    partial = torch.cumsum(torch.polar(torch.ones_like(angles), angles), dim=-1)  # S_1 … S_{r/2}
    return partial.abs().mean(dim=-1)
