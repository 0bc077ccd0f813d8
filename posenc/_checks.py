"""Argument checks shared by every ``posenc`` module.

Each helper raises a :class:`ValueError` (or :class:`TypeError` for a wrong kind of
object) whose message names the argument, the allowed range and the value received,
so a reader who passes bad input learns what to change. Nothing here is public API.
"""

from __future__ import annotations

import math
import numbers

import torch


def check_int(name: str, value, *, minimum: int | None = None) -> int:
    """Return ``value`` as an ``int`` if it is an integer ``>= minimum``; raise otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, torch.Tensor) and value.ndim == 0 and not value.is_floating_point() \
                and value.dtype != torch.bool:
            value = int(value)
        else:
            raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return value


def check_even(name: str, value, *, minimum: int = 2) -> int:
    """Return ``value`` if it is an even integer ``>= minimum`` (dimensions split into pairs)."""
    value = check_int(name, value, minimum=minimum)
    if value % 2:
        raise ValueError(
            f"{name} must be an even integer >= {minimum} (channels are used in pairs), got {value}"
        )
    return value


def check_real(
    name: str,
    value,
    *,
    gt: float | None = None,
    ge: float | None = None,
) -> float:
    """Return ``value`` as a finite ``float`` satisfying the bound(s); raise otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        if isinstance(value, torch.Tensor) and value.ndim == 0:
            value = float(value)
        else:
            raise TypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value}")
    if gt is not None and not value > gt:
        raise ValueError(f"{name} must be > {gt:g}, got {value:g}")
    if ge is not None and not value >= ge:
        raise ValueError(f"{name} must be >= {ge:g}, got {value:g}")
    return value


def check_float_dtype(name: str, dtype) -> torch.dtype:
    """Return ``dtype`` if it is a floating ``torch.dtype``; raise :class:`TypeError` otherwise."""
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(
            f"{name} must be a floating torch dtype (e.g. torch.float32), got {dtype!r}"
        )
    return dtype


def check_float_tensor(name: str, t, shape: str, *, min_ndim: int = 2) -> torch.Tensor:
    """Return ``t`` if it is a floating tensor with at least ``min_ndim`` dims; raise otherwise.

    ``shape`` is the expected shape as written in the error message, e.g. ``"(..., s, d)"``.
    """
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if not t.is_floating_point():
        raise TypeError(f"{name} must be a floating tensor, got dtype {t.dtype}")
    if t.ndim < min_ndim:
        raise ValueError(f"{name} must have shape {shape}, got {tuple(t.shape)}")
    return t


def check_lengths(q_len, k_len=None, *, queries_last: bool = True) -> tuple[int, int]:
    """Return ``(q_len, k_len)`` as ints ``>= 0`` (``k_len`` defaults to ``q_len``).

    With ``queries_last`` the queries are the last ``q_len`` of the ``k_len`` keys (the KV-cache
    layout), so ``k_len < q_len`` is an error.
    """
    q_len = check_int("q_len", q_len, minimum=0)
    k_len = q_len if k_len is None else check_int("k_len", k_len, minimum=0)
    if queries_last and k_len < q_len:
        raise ValueError(
            f"k_len must be >= q_len (the queries are the last q_len of the k_len keys), "
            f"got q_len={q_len}, k_len={k_len}"
        )
    return q_len, k_len


def check_choice(name: str, value, choices: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of ``choices``; raise otherwise."""
    if value not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {allowed}; got {value!r}")
    return value


def as_positions(name: str, positions, *, minimum: int | None = 0) -> torch.Tensor:
    """Return ``positions`` as an int64 tensor of whole numbers ``>= minimum``.

    Accepts a Python int, a sequence of ints, a numpy array or a tensor. Floating-point
    input is accepted only when every value is a whole number (``2.0`` is position 2,
    ``2.5`` is an error), because a position is an index, not a coordinate.
    """
    if isinstance(positions, bool):
        raise TypeError(f"{name} must hold integer positions, got a bool")
    if isinstance(positions, torch.Tensor):
        t = positions
    else:
        try:
            t = torch.as_tensor(positions, device="cpu")  # host data: built on the host
        except (TypeError, ValueError, RuntimeError) as err:
            raise TypeError(
                f"{name} must be integer positions (an int, a sequence of ints or an integer "
                f"tensor), got {type(positions).__name__}"
            ) from err
    if t.dtype == torch.bool:
        raise TypeError(f"{name} must hold integer positions, got a bool tensor")
    if t.is_complex():
        raise TypeError(f"{name} must hold integer positions, got complex values")
    if t.is_floating_point():
        if not torch.isfinite(t).all():
            raise ValueError(f"{name} must hold finite whole numbers, got NaN or inf")
        if not torch.equal(t, torch.round(t)):
            raise ValueError(f"{name} must hold whole numbers (positions are indices), got {t}")
    t = t.to(torch.int64)
    if minimum is not None and t.numel() and int(t.min()) < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got a minimum of {int(t.min())}")
    return t


def broadcast_shape(*shapes) -> tuple[int, ...]:
    """The broadcast of ``shapes`` under torch/numpy rules; ``ValueError`` if they clash.

    Plain Python on purpose: ``torch.broadcast_shapes`` imports sympy on first use (about
    0.6 s), which every notebook that rotates a vector would pay.
    """
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(-ndim, 0):
        sizes = {s[axis] for s in shapes if len(s) >= -axis} - {1}
        if len(sizes) > 1:
            raise ValueError(f"shapes {[tuple(s) for s in shapes]} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)
