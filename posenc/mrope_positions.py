"""M-RoPE position ids: how Qwen2-VL-style models number a text + image + video sequence.

A token's M-RoPE position is a ``(t, h, w)`` triple (:mod:`posenc.multi_axis` rotates with
it). Text tokens carry the same number on all three axes; an image or a video carries its
patch grid, offset to where the text left off. Where the text after a picture resumes has
changed between versions of the reference code (``text_after_vision``), and
:func:`mrope_position_ids` names both rules.

Shape notation: ``s`` tokens; ids have shape ``(s, 3)``.
"""

from __future__ import annotations

import numbers

import torch

from ._checks import as_positions, check_choice, check_int, check_real
from .multi_axis import grid_positions

TEXT_AFTER_VISION = ("max", "hw")

__all__ = ["TEXT_AFTER_VISION", "mrope_position_ids"]


def _grid_rows(name: str, grid_thw, merge: int) -> list[list[int]]:
    if grid_thw is None:
        return []
    if isinstance(grid_thw, torch.Tensor):
        if grid_thw.is_floating_point() or grid_thw.is_complex():
            raise TypeError(f"{name} must hold integers, got dtype {grid_thw.dtype}")
        grid_thw = grid_thw.tolist()
    rows = []
    for k, row in enumerate(grid_thw):
        t, h, w = _triple(f"{name}[{k}]", row)
        for axis, v in (("h", h), ("w", w)):
            if v % merge:
                raise ValueError(
                    f"{name}[{k}] has {axis} = {v}, not a multiple of spatial_merge_size "
                    f"= {merge} (the merged grid would not be whole)"
                )
        rows.append([t, h // merge, w // merge])
    return rows


def _triple(name: str, row) -> list[int]:
    if isinstance(row, (str, bytes)) or not hasattr(row, "__len__") or len(row) != 3:
        raise ValueError(f"{name} must be a (t, h, w) triple of integers, got {row!r}")
    return [check_int(f"{name}[{i}]", v, minimum=1) for i, v in enumerate(row)]


def mrope_position_ids(
    token_types,
    *,
    image_grid_thw=None,
    video_grid_thw=None,
    spatial_merge_size: int = 1,
    video_time_interval=1.0,
    text_after_vision: str = "max",
) -> torch.Tensor:
    """M-RoPE ``(t, h, w)`` position ids of one text + image + video sequence.

    Text tokens get the same id on all three axes, counting on from the previous segment.
    An image or video of merged grid ``(T, H, W)`` starting at id ``p`` gets
    ``(p + ⌊k·Δt⌋, p + i, p + j)`` for its patch ``(k, i, j)`` in raster order (``Δt`` the
    video's ``video_time_interval``; 1 for images). The text after it starts at:

    * ``text_after_vision="max"`` — one past the largest id used so far (the rule of the
      Qwen2-VL paper, of the Qwen team's reference code and of ``transformers`` up to 5.2;
      use it when porting);
    * ``"hw"`` — ``p + max(H, W)``, as ``transformers`` 5.24's ``get_rope_index`` does (a
      change reported against 5.3.0 in transformers#45381; 4.57.1 and 5.2.0 use
      ``max + 1``); use it only for bit-for-bit parity with 5.24. The two agree for images
      and for videos with ``⌊(T−1)·Δt⌋ < max(H, W)``; for a longer video (common with
      Qwen2.5-VL, whose ``Δt`` is 2 at 2 fps) ``"hw"`` lets the following text reuse ids of
      the video's time axis. Qwen3-VL's ``(1, h, w)`` grids make the two rules agree.

    Generation in 5.24 adds two more numberings (``tests/test_qwen_vl_generation.py``):
    ``model.generate()`` continues from the *last* prompt id + 1, while a cached forward
    call without ``position_ids`` (or generation resumed from a cache) uses
    ``rope_deltas``, i.e. ``max + 1``. Time ids: ``⌊k·Δt⌋``, as 5.24 computes them;
    4.57.1 and 5.2.0 truncate ``second_per_grid_t`` to an integer *before* multiplying, so
    they differ from both rules here when it is fractional.

    Args:
        token_types: ``(s,)`` integer modality per token: 0 text, 1 image, 2 video (the
            ``mm_token_type_ids`` of ``transformers``). Each maximal run of 1s (2s) is one
            image (video); put a text token (e.g. ``<|vision_end|>``) between two of them.
        image_grid_thw: ``(num_images, 3)`` patch grids ``(t, h, w)`` before merging, in
            order of appearance; integers ``>= 1``.
        video_grid_thw: ``(num_videos, 3)`` likewise. For Qwen3-VL, which separates frame
            groups (temporal patches) by timestamp text, pass one row ``(1, h, w)`` per
            frame group.
        spatial_merge_size: patches merged per side before the language model (2 in every
            Qwen-VL); ``h`` and ``w`` must be multiples of it.
        video_time_interval: ``Δt``, temporal id step per video frame group: 1 for Qwen2-VL,
            ``tokens_per_second · second_per_grid_t`` for Qwen2.5-VL; a number ``>= 0`` or
            one per video.
        text_after_vision: ``"max"`` (default) or ``"hw"``, see above.

    Returns:
        ``(s, 3)`` int64 position ids (``transformers`` returns the transpose,
        ``(3, batch, s)``). Under the ``"max"`` rule the next token takes ``max + 1``.

    Raises:
        TypeError: non-integer token types, grids or merge size.
        ValueError: a token type outside ``{0, 1, 2}``; a vision run whose length is not
            ``T·H·W`` of its merged grid; more or fewer grids than vision runs; ``h``/``w``
            not divisible by ``spatial_merge_size``; a negative ``video_time_interval``;
            unknown ``text_after_vision``. No padding: pass the unpadded tokens.

    Source: Wang et al. (2024), Qwen2-VL, section 2.1; Bai et al. (2025), Qwen2.5-VL
    (absolute time ids); matches ``transformers``' ``Qwen2VLModel.get_rope_index``,
    ``Qwen2_5_VLModel.get_rope_index`` and ``Qwen3VLModel.get_rope_index`` with
    ``text_after_vision="hw"`` (and with ``"max"`` where the two rules agree).
    """
    types = as_positions("token_types", token_types)
    if types.ndim != 1:
        raise ValueError(f"token_types must have shape (s,), got {tuple(types.shape)}")
    if types.numel() and int(types.max()) > 2:
        raise ValueError(
            f"token_types must be 0 (text), 1 (image) or 2 (video), got {int(types.max())}"
        )
    merge = check_int("spatial_merge_size", spatial_merge_size, minimum=1)
    text_after_vision = check_choice("text_after_vision", text_after_vision, TEXT_AFTER_VISION)
    grids = {
        1: _grid_rows("image_grid_thw", image_grid_thw, merge),
        2: _grid_rows("video_grid_thw", video_grid_thw, merge),
    }
    n_videos = len(grids[2])
    if isinstance(video_time_interval, (numbers.Real, torch.Tensor)) and not (
        isinstance(video_time_interval, torch.Tensor) and video_time_interval.ndim > 0
    ):
        intervals = [video_time_interval] * n_videos
    else:
        intervals = list(video_time_interval)
        if len(intervals) != n_videos:
            raise ValueError(
                f"video_time_interval must be one number or one per video ({n_videos}), "
                f"got {len(intervals)}"
            )
    intervals = [
        check_real(f"video_time_interval[{k}]", v, ge=0.0) for k, v in enumerate(intervals)
    ]
    # maximal runs of one modality
    runs, start = [], 0
    values = types.tolist()
    for j in range(1, len(values) + 1):
        if j == len(values) or values[j] != values[start]:
            runs.append((values[start], j - start))
            start = j
    used = {1: 0, 2: 0}
    for kind in (1, 2):
        n_runs = sum(1 for m, _ in runs if m == kind)
        if n_runs != len(grids[kind]):
            name = "image_grid_thw" if kind == 1 else "video_grid_thw"
            raise ValueError(
                f"token_types has {n_runs} {'image' if kind == 1 else 'video'} run(s) but "
                f"{name} has {len(grids[kind])} row(s)"
            )
    pieces, current = [], 0
    for kind, length in runs:
        if kind == 0:
            pieces.append(torch.arange(current, current + length)[:, None].expand(-1, 3))
            current += length
            continue
        k = used[kind]
        used[kind] += 1
        t, h, w = grids[kind][k]
        if length != t * h * w:
            name = "image_grid_thw" if kind == 1 else "video_grid_thw"
            raise ValueError(
                f"a run of {length} {'image' if kind == 1 else 'video'} tokens does not match "
                f"{name}[{k}]: T*H*W = {t}*{h}*{w} = {t * h * w} after merging "
                f"{merge}x{merge} patches"
            )
        step = intervals[k] if kind == 2 else 1.0
        pos = grid_positions((t, h, w), offset=current)
        time_ids = (torch.arange(t, dtype=torch.float64) * step).floor().to(torch.int64)
        pos[:, 0] = current + time_ids.repeat_interleave(h * w)
        pieces.append(pos)
        current = int(pos.max()) + 1 if text_after_vision == "max" else current + max(h, w)
    if not pieces:
        return torch.zeros(0, 3, dtype=torch.int64)
    return torch.cat(pieces, dim=0)
