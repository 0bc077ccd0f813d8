"""Rotary position embedding (RoPE; Su et al., 2021/2024, RoFormer).

Shape notation: ``b`` batch, ``h`` heads, ``s`` sequence, ``d`` = ``head_dim``,
``r`` = ``rotary_dim`` (``r <= d``, even): the first ``r`` channels are rotated in ``r/2``
pairs, the remaining ``d − r`` pass through unchanged. ``...`` is any leading batch/head
dims.

The token at integer position ``m`` has pair ``i`` rotated by the angle ``m·θ_i`` (radians),
``θ_i = base^(−2i/r)``. Two layouts decide *which* channels form pair ``i``:

* ``"interleaved"`` — channels ``(2i, 2i+1)``: the RoFormer paper (eq. 13–15) and Meta's
  original Llama code (``torch.view_as_complex`` on ``reshape(..., -1, 2)``).
* ``"half"`` — channels ``(i, i + r/2)``: GPT-NeoX and Hugging Face ``transformers``
  (``rotate_half``), used by every HF Llama/Qwen/Mistral checkpoint.

The two are the same rotation seen through a fixed channel permutation
(:func:`posenc.rope_forms.layout_permutation`). Every function that takes a ``layout``
defaults to ``"half"``, so ``apply_rope(x, [m]) == x @ rotation_matrix(m, inv_freq).T`` and
``apply_rope_complex(x, [m]) == apply_rope(x, [m])`` hold with the defaults; pass
``layout="interleaved"`` for the paper's pairing.

This module is the rotation itself: frequencies, angles, cos/sin tables, the two pairings
and :func:`apply_rope`. The same rotation in other forms — the explicit matrix, complex
multiplication, the layout permutation — and RoFormer's decay bound are in
:mod:`posenc.rope_forms`; RoPE inside attention (what happens to the values, decoding with
a KV cache) is in :mod:`posenc.rope_attention`. Their names stay importable from here
(``from posenc.rope import rotation_matrix`` works), as they were before the split.

Precision. Angles and cos/sin are always computed in float32 or float64 — never in the
dtype of the tensor being rotated. :func:`apply_rope` with ``positions`` then also
*rotates* in that precision: a bf16/fp16 ``x`` is multiplied with float32 tables and the
result is rounded to ``x``'s dtype once, as Meta's reference Llama code does
(``xq.float()`` times complex64 ``freqs_cis``, then ``type_as(xq)``). ``transformers``
differs: its rotary module builds the tables in float32 but casts cos/sin to the model dtype
(``LlamaRotaryEmbedding.forward``), and ``apply_rotary_pos_emb`` multiplies and adds in bf16.
To get that behaviour here, build the tables with ``rope_cos_sin(..., dtype=torch.bfloat16)``
and pass them as ``cos``/``sin``: with ``transformers``' own tables the output is then equal
bit for bit (``tests/test_rope.py``). On a random bf16 ``(1, 1, 8192, 64)`` tensor the two
recipes differ in about 39 % of the entries, and the bf16 rotation is the further of the two
from the float32 rotation (the RoPE chapter prints the numbers).
"""

from __future__ import annotations

import torch

from ._checks import (
    as_positions,
    broadcast_shape,
    check_choice,
    check_even,
    check_float_tensor,
    check_real,
)

LAYOUTS = ("half", "interleaved")

__all__ = [
    "LAYOUTS",
    "apply_rope",
    "rope_angles",
    "rope_cos_sin",
    "rope_inv_freq",
    "rotate_every_two",
    "rotate_half",
]


def rope_inv_freq(
    head_dim: int,
    base: float = 10000.0,
    rotary_dim: int | None = None,
    *,
    dtype=torch.float32,
    device=None,
) -> torch.Tensor:
    """RoPE frequencies ``θ_i = base^(−2i/r)``, ``i = 0 … r/2 − 1`` (radians per position).

    Args:
        head_dim: per-head width ``d``; an even integer ``>= 2``.
        base: ``rope_theta`` (10000 in RoFormer and Llama 2, 500000 in Llama 3); ``> 0``.
        rotary_dim: rotated channels ``r`` (default ``head_dim``); even, ``2 <= r <= d``.
            Partial rotation (``r < d``, e.g. GPT-NeoX's ``rotary_pct``) computes the
            frequencies over ``r``, not ``d``: head_dim 8, rotary_dim 4 → ``[1.0, 0.01]``.
        dtype: float32 (default) or float64; half precision is refused because angles
            built from it are wrong (see the RoPE chapter).
        device: where to build it (default: torch's default device).

    Returns:
        ``(r/2,)`` tensor ``inv_freq``; computed in float64 and rounded once to ``dtype``.

    Raises:
        ValueError: odd or too small ``head_dim``/``rotary_dim``, ``rotary_dim > head_dim``,
            ``base <= 0``, or a dtype other than float32/float64.

    Example:
        >>> rope_inv_freq(8)  # base**(-0/8), base**(-2/8), … with base 10000
        tensor([1.0000, 0.1000, 0.0100, 0.0010])

    Source: Su et al., RoFormer, eq. (15); matches ``transformers``'
    ``_compute_default_rope_parameters`` (``inv_freq = 1/base**(arange(0, r, 2)/r)``).
    """
    head_dim = check_even("head_dim", head_dim)
    rotary_dim = head_dim if rotary_dim is None else check_even("rotary_dim", rotary_dim)
    if rotary_dim > head_dim:
        raise ValueError(
            f"rotary_dim must be <= head_dim ({head_dim}), got {rotary_dim}"
        )
    base = check_real("base", base, gt=0.0)
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype}")
    exponent = torch.arange(0, rotary_dim, 2, dtype=torch.int64, device=device)
    exponent = exponent.to(torch.float64) / rotary_dim
    return (1.0 / (base**exponent)).to(dtype)


def _check_inv_freq(inv_freq) -> torch.Tensor:
    if not isinstance(inv_freq, torch.Tensor):
        raise TypeError(f"inv_freq must be a torch.Tensor, got {type(inv_freq).__name__}")
    if inv_freq.dtype not in (torch.float32, torch.float64):
        raise TypeError(
            f"inv_freq must be float32 or float64 (angles are never computed in half "
            f"precision), got {inv_freq.dtype}"
        )
    if inv_freq.ndim != 1 or inv_freq.numel() < 1:
        raise ValueError(
            f"inv_freq must have shape (r/2,) with r/2 >= 1, got {tuple(inv_freq.shape)}"
        )
    if not torch.isfinite(inv_freq).all():
        raise ValueError("inv_freq must be finite")
    return inv_freq


def rope_angles(positions, inv_freq: torch.Tensor) -> torch.Tensor:
    """Rotation angles ``m · θ_i`` for every position ``m`` and pair ``i`` (radians).

    Args:
        positions: integer positions, shape ``(..., s)`` (an int, a list, an integer tensor,
            or a float tensor of whole numbers). Negative positions rotate backwards.
        inv_freq: ``(r/2,)`` float32 or float64 frequencies ``θ_i``
            (from :func:`rope_inv_freq` or a scaling method).

    Returns:
        ``(..., s, r/2)`` angles in ``inv_freq``'s dtype, whatever the positions' dtype: the
        positions are converted exactly (int64 → float) and multiplied once, as in
        ``transformers``' rotary embeddings.

    Raises:
        TypeError: ``inv_freq`` not a float32/float64 tensor; positions not integers.
        ValueError: ``inv_freq`` not 1-D or not finite; positions not whole numbers.

    Precision: with float32 ``inv_freq`` (the default, and ``transformers``' choice) the
    angle of pair ``i`` at position ``m`` is within ``m·θ_i·2^-23`` rad of the exact
    ``m·θ_i`` — ``θ_i`` is rounded to float32 once and the product once more: at most
    0.012 rad at ``m = 10^5`` and 0.12 rad at ``m = 10^6`` (measured for head_dim 128:
    0.0069 and 0.061 rad). Positions above ``2^24`` are not even exact in float32. For long
    positions pass float64 ``inv_freq`` (``rope_inv_freq(d, dtype=torch.float64)``): the
    error is then ``m·θ_i·2^-52`` (< 1e-9 rad at ``10^6``). Tested in
    ``tests/test_precision.py``.

    Source: Su et al., RoFormer, eq. (13)/(15) (``m θ_i``).
    """
    inv_freq = _check_inv_freq(inv_freq)
    pos = as_positions("positions", positions, minimum=None)
    return pos.to(device=inv_freq.device, dtype=inv_freq.dtype)[..., None] * inv_freq


def rope_cos_sin(
    positions,
    inv_freq: torch.Tensor,
    *,
    layout: str = "half",
    attention_factor: float = 1.0,
    dtype=torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The cos and sin tables that :func:`apply_rope` multiplies with, laid out per channel.

    Args:
        positions: integer positions ``(..., s)``.
        inv_freq: ``(r/2,)`` float32/float64 frequencies.
        layout: ``"half"`` (``cat(angles, angles)``, as ``transformers``) or
            ``"interleaved"`` (each angle repeated twice: ``θ_0, θ_0, θ_1, θ_1, …``).
        attention_factor: multiplies cos and sin (``transformers`` does this for YaRN and
            LongRoPE, scaling every q·k by its square); finite and ``> 0``.
        dtype: dtype of the returned tables. The angles and cos/sin are computed in
            ``inv_freq``'s dtype; only the results are cast.

    Returns:
        ``(cos, sin)``, each ``(..., s, r)``.

    Raises:
        ValueError: unknown ``layout``; ``attention_factor <= 0``; bad positions/inv_freq
            (see :func:`rope_angles`).
        TypeError: ``dtype`` not a floating torch dtype.

    Source: matches ``transformers``' ``LlamaRotaryEmbedding.forward`` for ``"half"``.
    """
    layout = check_choice("layout", layout, LAYOUTS)
    attention_factor = check_real("attention_factor", attention_factor, gt=0.0)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating torch dtype, got {dtype!r}")
    angles = rope_angles(positions, inv_freq)
    if layout == "half":
        emb = torch.cat((angles, angles), dim=-1)
    else:
        emb = torch.repeat_interleave(angles, 2, dim=-1)
    cos = emb.cos() * attention_factor
    sin = emb.sin() * attention_factor
    return cos.to(dtype), sin.to(dtype)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """``[x₁, x₂] → [−x₂, x₁]`` on the last dim (halves): the "half" layout's 90° turn.

    Raises:
        TypeError: ``x`` not a floating tensor. ValueError: ``x`` 0-d or of odd width.

    Source: matches ``transformers``' ``rotate_half``.
    """
    _check_pairs(x)
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def rotate_every_two(x: torch.Tensor) -> torch.Tensor:
    """``(x₀, x₁, x₂, x₃, …) → (−x₁, x₀, −x₃, x₂, …)``: the "interleaved" layout's 90° turn.

    Raises:
        TypeError: ``x`` not a floating tensor. ValueError: ``x`` 0-d or of odd width.
    """
    _check_pairs(x)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def _check_pairs(x) -> None:
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        got = x.dtype if isinstance(x, torch.Tensor) else type(x).__name__
        raise TypeError(f"x must be a floating torch.Tensor, got {got}")
    if x.ndim < 1 or x.shape[-1] % 2:
        raise ValueError(
            f"x must have an even last dim (channels are turned in pairs), got shape "
            f"{tuple(x.shape)}"
        )


def _check_x(x) -> torch.Tensor:
    return check_float_tensor("x", x, "(..., s, head_dim)")


def _table_dtype(x: torch.Tensor) -> torch.dtype:
    return torch.float64 if x.dtype == torch.float64 else torch.float32


def apply_rope(
    x: torch.Tensor,
    positions=None,
    *,
    inv_freq: torch.Tensor | None = None,
    base: float = 10000.0,
    rotary_dim: int | None = None,
    cos: torch.Tensor | None = None,
    sin: torch.Tensor | None = None,
    layout: str = "half",
) -> torch.Tensor:
    """Rotate the first ``r`` channels of ``x`` by RoPE; pass the other ``d − r`` through.

    Give *either* ``positions`` (with ``inv_freq``, or ``base``/``rotary_dim`` to build it)
    *or* precomputed ``cos`` and ``sin`` from :func:`rope_cos_sin` (e.g. a scaling method's
    tables with an ``attention_factor``).

    For pair ``i`` with channels ``(a, b)`` (``(2i, 2i+1)`` interleaved, ``(i, i + r/2)``
    half) at position ``m``::

        a' = a cos(mθ_i) − b sin(mθ_i)
        b' = a sin(mθ_i) + b cos(mθ_i)

    Args:
        x: ``(..., s, d)`` floating tensor (queries or keys; never values).
        positions: integer positions ``(..., s)`` broadcastable with ``x.shape[:-1]``; for
            ``x: (b, h, s, d)`` pass ``(s,)`` or ``(b, 1, s)``. Required unless cos/sin given.
        inv_freq: ``(r/2,)`` float32/float64 frequencies; default
            ``rope_inv_freq(d, base, rotary_dim)`` (float64 when ``x`` is float64).
        base: ``rope_theta`` used when ``inv_freq`` is not given.
        rotary_dim: rotated channels ``r`` (default: all ``d``, or ``2·len(inv_freq)``, or
            ``cos.shape[-1]``); must agree with ``inv_freq``/``cos`` when both are given.
        cos, sin: ``(..., s, r)`` tables broadcastable against ``x[..., :r]``.
        layout: ``"half"`` (default, ``transformers``) or ``"interleaved"`` (paper).

    Returns:
        Tensor shaped and typed like ``x``. The multiply–add runs in the wider of ``x``'s and
        the tables' dtype (float32 for bf16/fp16 input with ``positions``), then is cast back.

    Raises:
        ValueError: neither or both of positions and cos/sin; only one of cos/sin; odd or
            too large ``rotary_dim``; ``inv_freq`` and ``base``/``rotary_dim`` disagreeing;
            positions whose last dim is not ``s``; tables that do not broadcast; unknown
            ``layout``.
        TypeError: ``x`` not a floating tensor; non-integer positions.

    Precision and special values: a float32 pair ``(a, b)`` comes out within
    ``|(a, b)|·(δ + 2^-22)`` of its exact rotation, where ``δ`` is the angle error of
    :func:`rope_angles` (so the relative error is ~0.007 at position ``10^5`` and ~0.06 at
    ``10^6`` with float32 ``inv_freq``, ~3e-7 with float64 ``inv_freq``). bf16/fp16 ``x`` is
    rotated in float32 and rounded once at the end, so it is within half a bf16/fp16 unit
    of the float32 result; in fp16 a pair whose length exceeds 65504 (the fp16 maximum) can
    turn into ``inf`` because a rotated coordinate can reach the pair's length. ``x`` is not
    searched for NaN/inf (that would cost a pass): they stay inside their own pair.

    Source: Su et al., RoFormer, eq. (13)–(15) and eq. (34) (the efficient form); with
    ``layout="half"`` matches ``transformers``' ``apply_rotary_pos_emb``.
    """
    x = _check_x(x)
    layout = check_choice("layout", layout, LAYOUTS)
    d = x.shape[-1]
    s = x.shape[-2]
    have_tables = cos is not None or sin is not None
    if have_tables:
        if cos is None or sin is None:
            raise ValueError("pass both cos and sin (from rope_cos_sin), not just one")
        for name, t in (("cos", cos), ("sin", sin)):
            if not isinstance(t, torch.Tensor) or t.is_complex() or t.dtype == torch.bool:
                got = t.dtype if isinstance(t, torch.Tensor) else type(t).__name__
                raise TypeError(
                    f"{name} must be a real torch.Tensor (from rope_cos_sin), got {got}"
                )
        if positions is not None or inv_freq is not None:
            raise ValueError("pass either positions (and inv_freq) or cos/sin, not both")
        if cos.shape != sin.shape:
            raise ValueError(
                f"cos and sin must have the same shape, got {tuple(cos.shape)} and "
                f"{tuple(sin.shape)}"
            )
        if cos.ndim < 1:
            raise ValueError("cos and sin must have shape (..., s, r)")
        r = check_even("cos.shape[-1] (rotary_dim)", cos.shape[-1])
        if rotary_dim is not None and check_even("rotary_dim", rotary_dim) != r:
            raise ValueError(f"rotary_dim={rotary_dim} disagrees with cos.shape[-1]={r}")
    else:
        if positions is None:
            raise ValueError(
                "pass positions (e.g. torch.arange(s), or offset + torch.arange(s) when "
                "decoding) or precomputed cos and sin"
            )
        inv_freq = _resolve_inv_freq(x, inv_freq, base, rotary_dim)
        r = 2 * len(inv_freq)
        pos = as_positions("positions", positions, minimum=None)
        if pos.ndim == 0 or pos.shape[-1] != s:
            raise ValueError(
                f"positions must have shape (..., s) with s = x.shape[-2] = {s}, got "
                f"{tuple(pos.shape)}"
            )
        cos, sin = rope_cos_sin(pos, inv_freq, layout=layout, dtype=inv_freq.dtype)
    if r > d:
        raise ValueError(f"rotary_dim must be <= head_dim ({d}), got {r}")
    x_rot = x[..., :r]
    try:
        shape = broadcast_shape(x_rot.shape, cos.shape)
    except ValueError as err:
        raise ValueError(
            f"cos/sin of shape {tuple(cos.shape)} do not broadcast against x[..., :{r}] of "
            f"shape {tuple(x_rot.shape)}"
        ) from err
    if shape != x_rot.shape:
        raise ValueError(
            f"cos/sin of shape {tuple(cos.shape)} change the shape of x[..., :{r}] "
            f"{tuple(x_rot.shape)} to {tuple(shape)}"
        )
    work = torch.promote_types(x.dtype, cos.dtype)
    cos, sin = (t.to(device=x.device, dtype=work) for t in (cos, sin))
    out = _rotate(x_rot.to(work), cos, sin, layout, paired=not have_tables)
    out = out.to(x.dtype)
    return out if r == d else torch.cat((out, x[..., r:]), dim=-1)


def _complex_view_ok(x: torch.Tensor) -> bool:
    """Whether ``view_as_complex`` can see the channel pairs ``(2i, 2i+1)`` of ``x``."""
    return (
        x.dtype in (torch.float32, torch.float64)
        and x.stride(-1) == 1
        and x.storage_offset() % 2 == 0
        and all(st % 2 == 0 for st in x.stride()[:-1])
    )


def _rotate(x, cos, sin, layout: str, *, paired: bool) -> torch.Tensor:
    """``x·cos + turn(x)·sin`` (``turn`` = :func:`rotate_half`/:func:`rotate_every_two`).

    All of ``x``, ``cos``, ``sin`` share one dtype and ``cos``/``sin`` broadcast to ``x``.
    The real path is bit for bit that formula — the same products and sums, each rounded
    once, no fused multiply–add — without materialising ``turn(x)`` or both products: a
    fresh output ``x·cos``, then each half of the pairs gets its sine term in place through
    one reused half-size buffer. Interleaved float32/float64 pairs whose two cos (and two
    sin) entries agree — always so for :func:`rope_cos_sin` tables (``paired=True``),
    checked otherwise — take one complex multiplication ``z · (cos + i sin)`` instead: the
    same products and sums, except that torch's scalar tail (rows whose pair count is not a
    multiple of the SIMD width) may fuse a multiply–add, i.e. differ by one rounding.
    """
    grad = torch.is_grad_enabled()
    tables_grad = grad and (cos.requires_grad or sin.requires_grad)
    if layout == "interleaved":
        # (not with table gradients: the complex form reads one cos/sin entry per pair, so
        # each pair's table gradient would land on its first entry only)
        if _complex_view_ok(x) and not tables_grad and (paired or (
            torch.equal(cos[..., 0::2], cos[..., 1::2])
            and torch.equal(sin[..., 0::2], sin[..., 1::2])
        )):
            rot = torch.complex(cos[..., 0::2], sin[..., 0::2])
            z = torch.view_as_complex(x.unflatten(-1, (x.shape[-1] // 2, 2)))
            return torch.view_as_real(z * rot).flatten(-2)
        a, b = slice(0, None, 2), slice(1, None, 2)
    else:
        h = x.shape[-1] // 2
        a, b = slice(0, h), slice(h, None)
    out = x * cos
    term = x[..., b] * sin[..., a]
    out[..., a].sub_(term)
    if tables_grad or (grad and x.requires_grad):
        term = x[..., a] * sin[..., b]  # autograd cannot record out=
    else:
        term = torch.mul(x[..., a], sin[..., b], out=term)  # reuse the buffer: no fresh pages
    out[..., b].add_(term)
    return out


def _resolve_inv_freq(x, inv_freq, base, rotary_dim) -> torch.Tensor:
    """``inv_freq`` if given (checked against ``rotary_dim``), else built for ``x``."""
    if inv_freq is None:
        return rope_inv_freq(x.shape[-1], base, rotary_dim, dtype=_table_dtype(x),
                             device=x.device)
    inv_freq = _check_inv_freq(inv_freq).to(x.device)
    if base != 10000.0:
        raise ValueError("pass either inv_freq or base, not both")
    if rotary_dim is not None and check_even("rotary_dim", rotary_dim) != 2 * len(inv_freq):
        raise ValueError(
            f"rotary_dim={rotary_dim} disagrees with inv_freq (length {len(inv_freq)} → "
            f"rotary_dim {2 * len(inv_freq)})"
        )
    if 2 * len(inv_freq) > x.shape[-1]:
        raise ValueError(
            f"rotary_dim must be <= head_dim ({x.shape[-1]}), got {2 * len(inv_freq)}"
        )
    return inv_freq


#: Names that moved to :mod:`posenc.rope_forms` and :mod:`posenc.rope_attention` when this
#: module was split; ``posenc.rope.<name>`` still finds them (PEP 562), so code written
#: against the old module keeps working. Each is documented once, in its new module.
_MOVED = {
    "rotation_matrix": "rope_forms",
    "apply_rope_complex": "rope_forms",
    "layout_permutation": "rope_forms",
    "convert_layout": "rope_forms",
    "rope_decay_bound": "rope_forms",
    "rope_attention": "rope_attention",
    "rope_decode": "rope_attention",
    "VALUE_MODES": "rope_attention",
}


def __getattr__(name: str):
    if name in _MOVED:
        import importlib

        return getattr(importlib.import_module(f"posenc.{_MOVED[name]}"), name)
    raise AttributeError(f"module 'posenc.rope' has no attribute {name!r}")
