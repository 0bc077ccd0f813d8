"""RoPE over more than one position axis: axial 2-D/3-D RoPE and M-RoPE (Qwen2-VL, Qwen3-VL).

Shape notation: ``s`` sequence (tokens or patches), ``n`` = ``n_axes`` (2 for ``(h, w)``
images, 3 for ``(t, h, w)`` video), ``d`` = ``head_dim``, ``r`` = rotary channels
(``r <= d``, even), ``...`` any leading batch/head dims. A token's position is a vector of
``n`` integers, so positions have shape ``(..., s, n)``.

The multi-axis RoPEs of the models below are one-axis RoPE (:mod:`posenc.rope`) with one
change: rotary pair ``i`` reads its angle from the position along axis ``axis_of_pair[i]``
instead of from a single position::

    angle[..., j, i] = positions[..., j, axis_of_pair[i]] * inv_freq[i]      (radians)

so the ``r/2`` pairs are *shared out* between the axes. The schemes differ only in the two
``(r/2,)`` tables ``inv_freq`` and ``axis_of_pair``:

* axial RoPE (:func:`axial_inv_freq`) — each axis gets a contiguous block of pairs with its
  own frequency ladder (FLUX, HunyuanVideo, Wan, the Qwen2-VL vision tower), or one ladder
  dealt out in turn (``ladder="shared"``: Pixtral's vision encoder);
* M-RoPE (:func:`mrope_axis_index`) — the ordinary ladder :func:`posenc.rope.rope_inv_freq`
  over the whole head, cut into ``mrope_section`` blocks for ``(t, h, w)`` (Qwen2-VL,
  Qwen2.5-VL) or dealt out round-robin (Qwen3-VL's interleaved M-RoPE).

The cos/sin tables are then laid out and applied exactly as in :func:`posenc.rope.apply_rope`
(``layout="half"`` as ``transformers``, or ``"interleaved"``). Not of this form: RoPE-Mixed
(Heo et al., 2024), which turns pair ``i`` by ``⟨ω_i, p⟩`` with a learned frequency vector
``ω_i`` over all axes (axial RoPE is the case of ``ω_i`` on a single axis). Angles are
computed in ``inv_freq``'s dtype (float32 or float64), never in the dtype of the tensor
rotated.
The ``(s, 3)`` position ids of a text + image + video sequence, as Qwen2-VL's
``get_rope_index`` numbers them (and how that numbering changed between versions), are in
:mod:`posenc.mrope_positions`; ``posenc.multi_axis.mrope_position_ids`` still finds them.
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
from .rope import LAYOUTS, _check_inv_freq, apply_rope, rope_inv_freq

LADDERS = ("per_axis", "shared")

__all__ = [
    "LADDERS",
    "apply_multi_axis_rope",
    "axial_inv_freq",
    "grid_positions",
    "mrope_axis_index",
    "multi_axis_angles",
    "multi_axis_cos_sin",
]


def _int_list(name: str, values, *, minimum: int) -> list[int]:
    if isinstance(values, torch.Tensor):
        values = values.tolist()
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise TypeError(f"{name} must be a sequence of integers, got {type(values).__name__}")
    if len(values) < 1:
        raise ValueError(f"{name} must hold at least one entry, got an empty sequence")
    return [check_int(f"{name}[{a}]", v, minimum=minimum) for a, v in enumerate(values)]


def grid_positions(grid, *, offset: int = 0, merge_size: int = 1) -> torch.Tensor:
    """Integer positions of every cell of a patch grid, in raster or merge-window order.

    Args:
        grid: the grid's size per axis, e.g. ``(H, W)`` for an image or ``(T, H, W)`` for a
            video; integers ``>= 1``.
        offset: added to every coordinate (an integer; default 0).
        merge_size: ``1`` (default) — raster order; ``m > 1`` — the order in which the
            Qwen-VL vision towers emit patches: block-major over ``m × m`` windows of the
            last two axes (the windows in raster order, the ``m²`` patches of a window in
            raster order inside it; earlier axes outermost). The last two sizes must be
            multiples of ``m``.

    Returns:
        ``(prod(grid), n)`` int64 tensor; row ``j`` is the coordinate vector of the ``j``-th
        patch. With ``merge_size=1`` the grid is flattened with the last axis fastest
        (``w``, then ``h``, then ``t``).

    Raises:
        TypeError: a size, ``offset`` or ``merge_size`` that is not an integer.
        ValueError: an empty ``grid`` or a size ``< 1``; ``merge_size < 1``; ``merge_size >
            1`` with fewer than two axes or with a last-two size not divisible by it.

    Source: the ``meshgrid(..., indexing="ij")`` of ``transformers``'
    ``Qwen2VLModel.get_vision_position_ids`` (with merge size 1 and time interval 1); with
    ``merge_size=m`` the ``(h, w)`` columns match ``transformers.vision_utils.
    get_vision_position_ids(grid_thw, m)``, the patch positions of the Qwen2-VL and
    Qwen2.5-VL vision towers (Qwen2.5-VL then also reorders them by ``window_index``).
    """
    sizes = _int_list("grid", grid, minimum=1)
    offset = check_int("offset", offset)
    m = check_int("merge_size", merge_size, minimum=1)
    axes = torch.meshgrid(*(torch.arange(n) for n in sizes), indexing="ij")
    pos = torch.stack([a.reshape(-1) for a in axes], dim=-1)
    if m == 1:
        return pos + offset
    if len(sizes) < 2:
        raise ValueError(f"merge_size = {m} > 1 needs at least two axes, got grid {sizes}")
    for name, n in (("grid[-2]", sizes[-2]), ("grid[-1]", sizes[-1])):
        if n % m:
            raise ValueError(f"{name} = {n} is not a multiple of merge_size = {m}")
    *outer, h, w = sizes
    blocks = pos.reshape(*outer, h // m, m, w // m, m, len(sizes))
    k = len(outer)
    blocks = blocks.transpose(k + 1, k + 2)  # (..., h/m, w/m, m, m, n): window-major
    return blocks.reshape(-1, len(sizes)) + offset


def axial_inv_freq(
    axes_dim,
    base: float = 10000.0,
    *,
    ladder: str = "per_axis",
    dtype=torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Frequencies and axis map of axial RoPE: ``axes_dim[a]`` rotary channels for axis ``a``.

    Args:
        axes_dim: rotary channels per axis (FLUX's ``axes_dim``), each even and ``>= 2``;
            ``r = sum(axes_dim)``. The Qwen2-VL vision tower and Pixtral use ``[d/2, d/2]``
            for ``(h, w)`` (the Qwen-VL towers number patches in merge-window order:
            ``grid_positions(grid, merge_size=2)``); FLUX uses ``[16, 56, 56]`` for its
            three id axes.
        base: ``rope_theta``, ``> 0``.
        ladder: ``"per_axis"`` — axis ``a`` gets its own ladder ``base^(−2i/axes_dim[a])``,
            ``i < axes_dim[a]/2`` (FLUX's ``EmbedND``, the Qwen2-VL vision tower);
            ``"shared"`` — one ladder ``base^(−2i/r)`` over all ``r`` channels, frequency
            ``i`` going to axis ``i mod n`` (Pixtral; needs equal ``axes_dim``).
        dtype: float32 (default) or float64.

    Returns:
        ``(inv_freq, axis_of_pair)``, both ``(r/2,)``: frequencies in radians per position
        (computed in float64, rounded once to ``dtype``), and the int64 axis each pair
        reads its position from. Pairs come in axis blocks: all of axis 0, then axis 1, ...

    Raises:
        TypeError: ``axes_dim`` not a sequence of integers.
        ValueError: an odd or too small entry; unequal entries with ``ladder="shared"``;
            unknown ``ladder``; ``base <= 0``; a dtype other than float32/float64.

    Source: Heo et al. (2024), "RoPE-Axial" (the axial 2-D RoPE of ViTs); with
    ``ladder="per_axis"`` and ``[d/2, d/2]`` matches ``transformers``'
    ``Qwen2VLVisionRotaryEmbedding``; with ``ladder="shared"`` and ``[d/2, d/2]`` matches
    ``PixtralVisionRotaryEmbedding`` (``inv_freq[0::2]`` for ``h``, ``[1::2]`` for ``w``);
    with ``"per_axis"``, positions ``(w + 1, h + 1)`` and ``layout="interleaved"`` matches
    ``Llama4VisionRotaryEmbedding``.
    """
    dims = _int_list("axes_dim", axes_dim, minimum=2)
    for a, n in enumerate(dims):
        check_even(f"axes_dim[{a}]", n)
    ladder = check_choice("ladder", ladder, LADDERS)
    base = check_real("base", base, gt=0.0)
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype}")
    n_axes = len(dims)
    if ladder == "per_axis":
        inv_freq = torch.cat([rope_inv_freq(n, base, dtype=torch.float64) for n in dims])
    else:
        if len(set(dims)) != 1:
            raise ValueError(
                f"ladder='shared' deals one ladder out to the axes in turn, so axes_dim "
                f"must be equal, got {dims}"
            )
        full = rope_inv_freq(sum(dims), base, dtype=torch.float64)
        inv_freq = torch.cat([full[a::n_axes] for a in range(n_axes)])
    axis_of_pair = torch.repeat_interleave(
        torch.arange(n_axes), torch.tensor([n // 2 for n in dims])
    )
    return inv_freq.to(dtype), axis_of_pair


def mrope_axis_index(mrope_section, *, interleaved: bool = False) -> torch.Tensor:
    """Which axis each rotary pair of M-RoPE reads: contiguous (Qwen2-VL) or interleaved (Qwen3-VL).

    Args:
        mrope_section: pairs (frequencies) per axis, e.g. ``[16, 24, 24]`` for ``(t, h, w)``
            (Qwen2-VL/Qwen2.5-VL, head_dim 128) or ``[24, 20, 20]`` (Qwen3-VL); integers
            ``>= 1`` summing to ``r/2``, the length of ``inv_freq``.
        interleaved: ``False`` — contiguous blocks: the first ``mrope_section[0]`` pairs (the
            highest frequencies) read axis 0, the next block axis 1, ...; ``True`` — pair
            ``i`` reads axis ``a = i mod n`` if ``a >= 1`` and ``i < n·mrope_section[a]``,
            else axis 0, so every axis gets high and low frequencies.

    Returns:
        ``(r/2,)`` int64 tensor ``axis_of_pair`` with ``mrope_section[a]`` entries equal to
        ``a``; use it with ``inv_freq = rope_inv_freq(head_dim, base)``.

    Raises:
        TypeError: ``mrope_section`` not a sequence of integers.
        ValueError: an entry ``< 1``; fewer than two axes with ``interleaved=True``; sections
            the interleaved rule cannot realise: an axis ``a >= 1`` whose last pair
            ``a + n·(mrope_section[a] − 1)`` is not below ``r/2`` (equivalently
            ``n·mrope_section[a] > r/2 + n − 1 − a``).

    Source: Wang et al. (2024), Qwen2-VL, section 2.1 (M-RoPE); matches ``transformers``'
    ``Qwen2VLRotaryEmbedding.recomposition_frequencies`` (contiguous) and
    ``Qwen3VLTextRotaryEmbedding.recomposition_frequencies`` (interleaved).
    """
    sections = _int_list("mrope_section", mrope_section, minimum=1)
    n_axes = len(sections)
    half = sum(sections)
    if not interleaved:
        return torch.repeat_interleave(torch.arange(n_axes), torch.tensor(sections))
    if n_axes < 2:
        raise ValueError("interleaved M-RoPE needs mrope_section with at least 2 axes")
    pair = torch.arange(half)
    axis_of_pair = torch.zeros(half, dtype=torch.int64)
    for a in range(1, n_axes):
        axis_of_pair[(pair % n_axes == a) & (pair < n_axes * sections[a])] = a
    counts = torch.bincount(axis_of_pair, minlength=n_axes).tolist()
    if counts != sections:
        raise ValueError(
            f"the interleaved layout cannot realise mrope_section={sections} over {half} "
            f"pairs\n(it gives {counts}): each axis a >= 1 needs "
            f"a + n_axes*(mrope_section[a] - 1) < {half}"
        )
    return axis_of_pair


def _check_axis_of_pair(axis_of_pair, n_pairs: int) -> torch.Tensor:
    if not isinstance(axis_of_pair, torch.Tensor) or axis_of_pair.is_floating_point() \
            or axis_of_pair.is_complex() or axis_of_pair.dtype == torch.bool:
        got = axis_of_pair.dtype if isinstance(axis_of_pair, torch.Tensor) else \
            type(axis_of_pair).__name__
        raise TypeError(f"axis_of_pair must be an integer torch.Tensor, got {got}")
    if axis_of_pair.shape != (n_pairs,):
        raise ValueError(
            f"axis_of_pair must have shape (r/2,) = ({n_pairs},) like inv_freq, got "
            f"{tuple(axis_of_pair.shape)}"
        )
    if int(axis_of_pair.min()) < 0:
        raise ValueError(f"axis_of_pair must be >= 0, got {int(axis_of_pair.min())}")
    return axis_of_pair.to(torch.int64)


def multi_axis_angles(positions, inv_freq: torch.Tensor, axis_of_pair) -> torch.Tensor:
    """Rotation angles ``positions[..., axis_of_pair[i]] · inv_freq[i]`` (radians).

    Args:
        positions: integer positions ``(..., s, n)`` (ints, a nested list or an integer
            tensor; float tensors of whole numbers are accepted), one coordinate per axis.
        inv_freq: ``(r/2,)`` float32/float64 frequencies.
        axis_of_pair: ``(r/2,)`` integer axis per pair, from :func:`axial_inv_freq` or
            :func:`mrope_axis_index`; uses axes ``0 … n−1``.

    Returns:
        ``(..., s, r/2)`` angles in ``inv_freq``'s dtype and on its device.

    Raises:
        TypeError: non-integer positions; ``inv_freq`` not a float32/float64 tensor;
            ``axis_of_pair`` not an integer tensor.
        ValueError: fractional positions; positions without an axis dimension or whose last
            dim is not ``n = max(axis_of_pair) + 1`` (the wrong number of axes);
            ``axis_of_pair`` of the wrong shape or negative.

    Source: Heo et al. (2024), RoPE-Axial; Wang et al. (2024), section 2.1 (M-RoPE).
    With one axis it is :func:`posenc.rope.rope_angles`.
    """
    inv_freq = _check_inv_freq(inv_freq)
    axis_of_pair = _check_axis_of_pair(axis_of_pair, inv_freq.numel())
    n_axes = int(axis_of_pair.max()) + 1
    pos = as_positions("positions", positions, minimum=None)
    if pos.ndim < 2 or pos.shape[-1] != n_axes:
        raise ValueError(
            f"positions must have shape (..., s, n_axes) with n_axes = {n_axes} (the axes "
            f"axis_of_pair uses), got {tuple(pos.shape)}"
        )
    pos = pos.to(device=inv_freq.device, dtype=inv_freq.dtype)
    return pos[..., axis_of_pair.to(inv_freq.device)] * inv_freq


def multi_axis_cos_sin(
    positions,
    inv_freq: torch.Tensor,
    axis_of_pair,
    *,
    layout: str = "half",
    attention_factor: float = 1.0,
    dtype=torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin tables of multi-axis RoPE, laid out per channel for ``apply_rope``.

    Args:
        positions, inv_freq, axis_of_pair: as :func:`multi_axis_angles`.
        layout: ``"half"`` (``cat(angles, angles)``, as ``transformers``) or
            ``"interleaved"`` (each angle twice in a row).
        attention_factor: multiplies cos and sin (1 for every model named here); ``> 0``.
        dtype: floating dtype of the returned tables; computed in ``inv_freq``'s dtype.

    Returns:
        ``(cos, sin)``, each ``(..., s, r)``; pass them to
        ``posenc.rope.apply_rope(x, cos=cos, sin=sin, layout=layout)``.

    Raises:
        ValueError: unknown ``layout``; ``attention_factor <= 0``; the errors of
            :func:`multi_axis_angles`.
        TypeError: ``dtype`` not a floating torch dtype.

    Source: matches the ``(cos, sin)`` of ``transformers``' ``Qwen2VLRotaryEmbedding``,
    ``Qwen3VLTextRotaryEmbedding``, ``Qwen2VLVisionRotaryEmbedding`` (after its
    ``cat((freqs, freqs))``) and ``PixtralVisionRotaryEmbedding`` for ``layout="half"``.
    """
    layout = check_choice("layout", layout, LAYOUTS)
    attention_factor = check_real("attention_factor", attention_factor, gt=0.0)
    dtype = check_float_dtype("dtype", dtype)
    angles = multi_axis_angles(positions, inv_freq, axis_of_pair)
    if layout == "half":
        emb = torch.cat((angles, angles), dim=-1)
    else:
        emb = torch.repeat_interleave(angles, 2, dim=-1)
    return (emb.cos() * attention_factor).to(dtype), (emb.sin() * attention_factor).to(dtype)


def apply_multi_axis_rope(
    x: torch.Tensor,
    positions,
    inv_freq: torch.Tensor,
    axis_of_pair,
    *,
    layout: str = "half",
) -> torch.Tensor:
    """Rotate the first ``r`` channels of ``x`` by multi-axis RoPE; pass the rest through.

    Pair ``i`` of the token with position vector ``p`` turns by ``p[axis_of_pair[i]]·θ_i``.
    Because every pair still turns by (coordinate × frequency), the score of a rotated query
    at ``p`` and key at ``p'`` depends on the positions only through ``p − p'`` (see the
    chapter "RoPE beyond one axis").

    Args:
        x: ``(..., s, d)`` floating tensor (queries or keys).
        positions: integer positions ``(..., s, n)`` broadcastable with ``x.shape[:-1]`` plus
            the axis dim; for ``x: (b, h, s, d)`` pass ``(s, n)`` or ``(b, 1, s, n)``.
        inv_freq, axis_of_pair: ``(r/2,)`` tables from :func:`axial_inv_freq`, or
            :func:`posenc.rope.rope_inv_freq` with :func:`mrope_axis_index`.
        layout: ``"half"`` (default, ``transformers``) or ``"interleaved"``.

    Returns:
        Tensor shaped and typed like ``x``, on its device; the rotation runs in the wider of
        ``x``'s dtype and ``inv_freq``'s.

    Raises:
        ValueError: ``r = 2·len(inv_freq) > d``; positions that do not broadcast against
            ``x``; the errors of :func:`multi_axis_angles` and
            :func:`posenc.rope.apply_rope`.
        TypeError: ``x`` not a floating tensor; non-integer positions.

    Source: Heo et al. (2024), RoPE-Axial; Wang et al. (2024), section 2.1; with
    ``layout="half"`` matches ``transformers``' ``apply_rotary_pos_emb`` fed by the
    rotary embeddings listed in :func:`multi_axis_cos_sin`.
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    inv_freq = _check_inv_freq(inv_freq).to(x.device)
    cos, sin = multi_axis_cos_sin(
        positions, inv_freq, axis_of_pair, layout=layout, dtype=inv_freq.dtype
    )
    return apply_rope(x, cos=cos, sin=sin, layout=layout)


#: Names that moved to :mod:`posenc.mrope_positions` when this module was split;
#: ``posenc.multi_axis.<name>`` still finds them (PEP 562). Each is documented once.
_MOVED = ("mrope_position_ids", "TEXT_AFTER_VISION")


def __getattr__(name: str):
    if name in _MOVED:
        from . import mrope_positions

        return getattr(mrope_positions, name)
    raise AttributeError(f"module 'posenc.multi_axis' has no attribute {name!r}")
