"""The setup every chapter runs first, and small printing helpers.

``setup()`` makes a notebook's outputs reproducible under ``nbval``: fixed seeds, one
intra-op thread (so float reductions happen in the same order everywhere), fixed print
options, and the book's figure style.
"""

from __future__ import annotations

import random

import numpy as np
import torch

from .plotting import use_style

__all__ = ["fmt", "fmt_diff", "fmt_matrix", "setup"]


def setup(seed: int = 0, *, threads: int = 1, precision: int = 4) -> None:
    """Seed every generator, pin threads, set print options and the figure style.

    Args:
        seed: seed for Python's ``random``, numpy and torch.
        threads: torch intra-op threads (1 keeps float sums in a fixed order).
        precision: digits printed for numpy arrays and torch tensors.
    """
    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 -- seeds the global RNG that notebook code may use
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    np.set_printoptions(precision=precision, suppress=True, floatmode="fixed", linewidth=100)
    torch.set_printoptions(precision=precision, sci_mode=False, linewidth=100)
    use_style()


def _num(x: float, decimals: int, width: int = 0) -> str:
    s = f"{float(x):.{decimals}f}"
    if s.startswith("-") and float(s) == 0.0:  # no "-0.000"
        s = s[1:]
    return s.rjust(width)


def fmt(values, decimals: int = 3, *, width: int = 0) -> str:
    """Format a 1-D sequence/tensor as ``[a, b, c]`` with fixed decimals and no ``-0.000``.

    >>> fmt([0.8414709, -0.0000001])
    '[0.841, 0.000]'
    """
    flat = torch.as_tensor(values, dtype=torch.float64).reshape(-1).tolist()
    return "[" + ", ".join(_num(v, decimals, width) for v in flat) + "]"


def fmt_matrix(values, decimals: int = 3) -> str:
    """Format a 2-D array/tensor one row per line, columns right-aligned."""
    arr = torch.as_tensor(values, dtype=torch.float64)
    if arr.ndim != 2:
        raise ValueError(f"values must be 2-D, got shape {tuple(arr.shape)}")
    cells = [[_num(v, decimals) for v in row] for row in arr.tolist()]
    width = max((len(c) for row in cells for c in row), default=0)
    lines = ["[" + ", ".join(c.rjust(width) for c in row) + "]" for row in cells]
    return "[" + ("\n ".join(lines)) + "]"


def fmt_diff(value, floor: float = 1e-12) -> str:
    """Format a non-negative error such as ``max |a − b|`` so that re-runs print the same text.

    Differences at the level of floating-point rounding (below ``floor``) depend on the CPU's
    vector instructions, the math library and summation order — a difference that is exactly
    zero on one machine can be ``1e-17`` on another — so everything below ``floor``, zero
    included, is printed as ``"< 1e-12"`` rather than as digits another machine would not
    reproduce. Larger values are printed with three significant digits (``"0.0421"``,
    ``"3.16e-05"``).

    Args:
        value: a non-negative number (float, numpy or 0-d tensor).
        floor: the rounding level for the computation at hand: about ``1e-12`` for float64
            results of moderate size, ``1e-5`` for float32.

    Raises:
        ValueError: ``value`` negative or NaN, or ``floor <= 0``.

    >>> fmt_diff(3.3e-16), fmt_diff(0.0), fmt_diff(0.04213)
    ('< 1e-12', '< 1e-12', '0.0421')
    """
    x = float(value)
    if not x >= 0.0:
        raise ValueError(f"value must be a non-negative number, got {x}")
    if not floor > 0.0:
        raise ValueError(f"floor must be > 0, got {floor}")
    if x < floor:
        return f"< {floor:.0e}"
    return f"{x:.3g}"
