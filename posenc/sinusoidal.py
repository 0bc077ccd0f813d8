"""Sinusoidal absolute position encoding (Vaswani et al., 2017, section 3.5).

Shape notation: ``P`` positions, ``d`` = ``dim`` channels (even), ``d/2`` frequency pairs.

For pair ``i = 0 … d/2 − 1`` the angular frequency is ``ω_i = base^(−2i/d)`` (radians per
position) and

* ``PE[pos, 2i]   = sin(pos · ω_i)``
* ``PE[pos, 2i+1] = cos(pos · ω_i)``

That is the paper's *interleaved* layout. The *concat* layout writes
``[sin(pos·ω_0) … sin(pos·ω_{d/2−1}), cos(pos·ω_0) … cos(pos·ω_{d/2−1})]``: a fixed
permutation of the columns, see :func:`concat_permutation`. That column order is the one of
the tensor2tensor and fairseq code, but those code bases also use another frequency grid,
``ω_i = base^(−i/(d/2 − 1))`` (for ``d = 8``: 1, 0.0464, 0.00215, 0.0001 instead of 1, 0.1,
0.01, 0.001), so their numbers differ from the paper's; ``layout="concat"`` only reorders
the paper's columns.

Tables are computed in float64 and cast to the requested ``dtype`` at the end, so the
float32 default is correctly rounded for every position below ~2**24.
"""

from __future__ import annotations

import torch

from ._checks import (
    as_positions,
    check_choice,
    check_even,
    check_float_dtype,
    check_int,
    check_real,
)

LAYOUTS = ("interleaved", "concat")

__all__ = [
    "LAYOUTS",
    "concat_permutation",
    "shift_matrix",
    "sinusoidal_encoding",
    "sinusoidal_encoding_at",
    "sinusoidal_inv_freq",
]


def sinusoidal_inv_freq(dim: int, base: float = 10000.0, *, dtype=torch.float64) -> torch.Tensor:
    """Angular frequencies ``ω_i = base^(−2i/dim)`` of the ``dim/2`` sin/cos pairs.

    Args:
        dim: model dimension ``d``; an even integer ``>= 2``.
        base: the wavelength base (10000 in the paper); a finite number ``> 0``.
        dtype: floating dtype of the result (default float64).

    Returns:
        ``(dim/2,)`` tensor, radians per position; ``ω_0 = 1`` and the frequencies fall
        geometrically, so wavelengths ``2π/ω_i`` run from ``2π`` to ``2π·base^((d−2)/d)``.

    Raises:
        ValueError: ``dim`` odd or ``< 2``; ``base <= 0`` or not finite.
        TypeError: ``dim`` not an integer; ``dtype`` not a floating dtype.

    Source: Vaswani et al. (2017), "Attention Is All You Need", section 3.5.
    """
    dim = check_even("dim", dim)
    base = check_real("base", base, gt=0.0)
    dtype = check_float_dtype("dtype", dtype)
    i = torch.arange(dim // 2, dtype=torch.float64)
    return (base ** (-2.0 * i / dim)).to(dtype)


def sinusoidal_encoding_at(
    positions,
    dim: int,
    base: float = 10000.0,
    layout: str = "interleaved",
    *,
    dtype=torch.float32,
) -> torch.Tensor:
    """Sinusoidal encodings of arbitrary integer positions.

    Args:
        positions: integer positions, any shape ``S`` (an int, a list, an integer tensor,
            or a float tensor holding whole numbers); each ``>= 0``.
        dim: even model dimension ``d >= 2``.
        base: wavelength base, ``> 0`` (default 10000).
        layout: ``"interleaved"`` (paper: sin in even columns, cos in odd) or ``"concat"``
            (all sines, then all cosines).
        dtype: floating dtype of the result; the angles are always computed in float64.

    Returns:
        Tensor of shape ``S + (dim,)``.

    Raises:
        ValueError: a position is negative or not a whole number; ``dim`` odd; ``base <= 0``;
            unknown ``layout``.
        TypeError: positions that are not integers; ``dtype`` not a floating dtype.

    Precision: the float64 angle ``pos·ω_i`` is off by at most ``pos·ω_i·2^-52`` rad
    (≈ 2e-10 at ``pos = 10^6``), so float32 tables are within one float32 rounding
    (``2^-24``) of the exact values far beyond any real context length (tested at
    ``10^5`` and ``10^6`` against 50-digit arithmetic).

    Source: Vaswani et al. (2017), section 3.5.
    """
    pos = as_positions("positions", positions).to(torch.float64)
    dtype = check_float_dtype("dtype", dtype)
    layout = check_choice("layout", layout, LAYOUTS)
    inv_freq = sinusoidal_inv_freq(dim, base)
    angles = pos[..., None] * inv_freq  # S + (d/2,), radians
    sin, cos = torch.sin(angles), torch.cos(angles)
    if layout == "interleaved":
        table = torch.stack((sin, cos), dim=-1).flatten(-2)
    else:
        table = torch.cat((sin, cos), dim=-1)
    return table.to(dtype)


def sinusoidal_encoding(
    num_positions: int,
    dim: int,
    base: float = 10000.0,
    layout: str = "interleaved",
    *,
    dtype=torch.float32,
) -> torch.Tensor:
    """The sinusoidal table ``PE`` for positions ``0 … num_positions − 1``.

    Args:
        num_positions: number of rows ``P``; an integer ``>= 0``.
        dim: even model dimension ``d >= 2``.
        base: wavelength base, ``> 0`` (default 10000).
        layout: ``"interleaved"`` (paper) or ``"concat"`` (tensor2tensor / fairseq).
        dtype: floating dtype of the result (default float32; computed in float64).

    Returns:
        ``(P, d)`` tensor; row ``pos`` is the encoding added to the token at ``pos``.

    Raises:
        ValueError: ``num_positions < 0``; ``dim`` odd or ``< 2``; ``base <= 0``;
            unknown ``layout``.
        TypeError: ``num_positions`` or ``dim`` not an integer; ``dtype`` not floating.

    Example (float32: cos(0.01) = 0.99995000… is stored as 0.99994999…, printed to four
    decimals):

        >>> sinusoidal_encoding(3, 4)[1]
        tensor([0.8415, 0.5403, 0.0100, 0.9999])

    Source: Vaswani et al. (2017), section 3.5; the concat layout matches
    tensor2tensor's ``get_timing_signal_1d`` and fairseq's ``SinusoidalPositionalEmbedding``
    up to their frequency convention (they divide by ``d/2 − 1`` instead of ``d/2``).
    """
    num_positions = check_int("num_positions", num_positions, minimum=0)
    return sinusoidal_encoding_at(
        torch.arange(num_positions), dim, base, layout, dtype=dtype
    )


def concat_permutation(dim: int) -> torch.Tensor:
    """Column permutation taking the interleaved layout to the concat layout.

    ``sinusoidal_encoding(P, d, layout="concat") == sinusoidal_encoding(P, d)[:, perm]``
    with ``perm = [0, 2, 4, …, d−2, 1, 3, …, d−1]``; its inverse is ``torch.argsort(perm)``.

    Args:
        dim: even model dimension ``d >= 2``.

    Returns:
        ``(d,)`` int64 tensor.

    Raises:
        ValueError: ``dim`` odd or ``< 2``.
    """
    dim = check_even("dim", dim)
    return torch.cat((torch.arange(0, dim, 2), torch.arange(1, dim, 2)))


def shift_matrix(
    k: int,
    dim: int,
    base: float = 10000.0,
    layout: str = "interleaved",
    *,
    dtype=torch.float64,
) -> torch.Tensor:
    """The linear map ``M_k`` with ``PE[p + k] = M_k @ PE[p]`` for every position ``p``.

    For pair ``i`` the angle-addition formulas give, on ``(sin(pω_i), cos(pω_i))``::

        [ cos(kω_i)   sin(kω_i) ]
        [ −sin(kω_i)  cos(kω_i) ]

    so ``M_k`` is block diagonal with one 2×2 rotation per pair; it depends on ``k`` only,
    never on ``p``. In the concat layout the same blocks act on columns ``(i, i + d/2)``.

    Args:
        k: the offset, an integer (negative offsets shift backwards).
        dim: even model dimension ``d >= 2``.
        base: wavelength base, ``> 0``.
        layout: ``"interleaved"`` or ``"concat"``; must match the table it is applied to.
        dtype: floating dtype (default float64).

    Returns:
        ``(d, d)`` orthogonal matrix; ``M_k^{-1} = M_k^T = M_{−k}``.

    Raises:
        ValueError: ``dim`` odd; ``base <= 0``; unknown ``layout``.
        TypeError: ``k`` not an integer; ``dtype`` not a floating dtype.

    Source: Vaswani et al. (2017), section 3.5 ("PE_{pos+k} can be represented as a linear
    function of PE_{pos}").
    """
    k = check_int("k", k)
    dtype = check_float_dtype("dtype", dtype)
    layout = check_choice("layout", layout, LAYOUTS)
    dim = check_even("dim", dim)
    angles = k * sinusoidal_inv_freq(dim, base)
    c, s = torch.cos(angles), torch.sin(angles)
    m = torch.zeros(dim, dim, dtype=torch.float64)
    half = dim // 2
    idx = torch.arange(half)
    if layout == "interleaved":
        si, ci = 2 * idx, 2 * idx + 1
    else:
        si, ci = idx, idx + half
    m[si, si] = c
    m[si, ci] = s
    m[ci, si] = -s
    m[ci, ci] = c
    return m.to(dtype)
