"""Tests for posenc.multi_axis: axial N-D RoPE, M-RoPE and its position ids.

Reference functions, written from the papers independently of the package:
``ref_multi_axis_pairwise`` (every pair turned by coordinate × frequency, a loop),
``ref_axis_of_pair`` (the Qwen2-VL / Qwen3-VL rules spelled out pair by pair) and
``ref_position_ids`` (the Qwen2-VL paper's rule: text ids count on, a vision block starts
every axis at the same id, the next text starts one past the largest id). Parity tests run
Hugging Face ``transformers`` 5.24 on configs built here (nothing is downloaded).
"""

from __future__ import annotations

import functools
import math
import types

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.multi_axis import (
    apply_multi_axis_rope,
    axial_inv_freq,
    grid_positions,
    mrope_axis_index,
    mrope_position_ids,
    multi_axis_angles,
    multi_axis_cos_sin,
)
from posenc.rope import apply_rope, rope_inv_freq

F64 = torch.float64
LAYOUTS = ["half", "interleaved"]


# --------------------------------------------------------------------------- references
def ref_multi_axis_pairwise(x, positions, inv_freq, axis_of_pair, layout):
    """Pair i of token j turns by positions[j][axis_of_pair[i]] * inv_freq[i] (a loop)."""
    x = x.to(F64)
    out = x.clone()
    r = 2 * len(inv_freq)
    for j, p in enumerate(positions):
        for i, (theta, a) in enumerate(zip(inv_freq, axis_of_pair, strict=True)):
            ia, ib = (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + r // 2)
            c, s = math.cos(p[a] * theta), math.sin(p[a] * theta)
            u, v = x[..., j, ia], x[..., j, ib]
            out[..., j, ia] = u * c - v * s
            out[..., j, ib] = u * s + v * c
    return out


def ref_axis_of_pair(mrope_section, interleaved):
    """Qwen2-VL: blocks t|h|w. Qwen3-VL: pair i is h if i%3==1 and i<3*sec_h, w if i%3==2
    and i<3*sec_w, t otherwise (recomposition_frequencies of the two models)."""
    half = sum(mrope_section)
    if not interleaved:
        return [a for a, n in enumerate(mrope_section) for _ in range(n)]
    out = []
    for i in range(half):
        if i % 3 == 1 and i < 3 * mrope_section[1]:
            out.append(1)
        elif i % 3 == 2 and i < 3 * mrope_section[2]:
            out.append(2)
        else:
            out.append(0)
    return out


def ref_position_ids(segments, merge=1):
    """segments: ("text", n) or ("vision", t, h, w, dt) with h, w before merging."""
    rows, nxt = [], 0
    for seg in segments:
        if seg[0] == "text":
            rows += [[nxt + k] * 3 for k in range(seg[1])]
            nxt += seg[1]
        else:
            _, t, h, w, dt = seg
            block = [
                [nxt + int(k * dt), nxt + i, nxt + j]
                for k in range(t) for i in range(h // merge) for j in range(w // merge)
            ]
            rows += block
            nxt = max(max(r) for r in block) + 1
    return torch.tensor(rows, dtype=torch.int64)


# --------------------------------------------------------------------------- grid_positions
def test_grid_positions_raster_order():
    pos = grid_positions((2, 3))
    assert pos.tolist() == [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]
    assert pos.dtype == torch.int64
    video = grid_positions((2, 2, 2), offset=5)
    assert video.shape == (8, 3)
    assert video[0].tolist() == [5, 5, 5] and video[-1].tolist() == [6, 6, 6]
    assert video[1].tolist() == [5, 5, 6]  # w fastest


@pytest.mark.parametrize("grid", [(4,), (3, 5), (2, 3, 4), (1, 1, 1, 2)])
def test_grid_positions_flattening_index(grid):
    pos = grid_positions(grid)
    strides = [math.prod(grid[a + 1:]) for a in range(len(grid))]
    flat = (pos * torch.tensor(strides)).sum(-1)
    assert torch.equal(flat, torch.arange(math.prod(grid)))


@pytest.mark.parametrize(
    ("grid", "err"),
    [((), ValueError), ((0, 3), ValueError), ((2.5, 3), TypeError), ("ab", TypeError),
     (3, TypeError)],
)
def test_grid_positions_bad_input(grid, err):
    with pytest.raises(err, match="grid"):
        grid_positions(grid)


@pytest.mark.parametrize("grid", [(1, 4, 6), (3, 4, 4), (2, 6, 8), (1, 2, 2)])
def test_grid_positions_merge_order_matches_transformers(grid):
    """Qwen-VL vision towers emit patches block-major over 2 x 2 merge windows."""
    from transformers.vision_utils import get_vision_position_ids

    got = grid_positions(grid, merge_size=2)
    ref = get_vision_position_ids(torch.tensor([grid]), 2)  # (T*H*W, 2): (h, w)
    assert torch.equal(got[:, 1:], ref)
    assert torch.equal(got[:, 0], torch.arange(grid[0]).repeat_interleave(grid[1] * grid[2]))
    # the same set of positions as the raster order, in another order
    raster = grid_positions(grid)
    assert sorted(map(tuple, got.tolist())) == sorted(map(tuple, raster.tolist()))
    assert torch.equal(grid_positions(grid[1:], merge_size=2), ref[: grid[1] * grid[2]])


def test_grid_positions_merge_order_small():
    pos = grid_positions((2, 4), merge_size=2, offset=1).tolist()
    assert pos == [[1, 1], [1, 2], [2, 1], [2, 2], [1, 3], [1, 4], [2, 3], [2, 4]]
    assert torch.equal(grid_positions((3, 5), merge_size=1), grid_positions((3, 5)))


@pytest.mark.parametrize(
    ("grid", "merge", "err", "match"),
    [((4, 6), 0, ValueError, "merge_size"), ((4, 6), 2.0, TypeError, "merge_size"),
     ((4, 5), 2, ValueError, r"grid\[-1\] = 5"), ((3, 4), 2, ValueError, r"grid\[-2\]"),
     ((4,), 2, ValueError, "two axes")],
)
def test_grid_positions_merge_bad_input(grid, merge, err, match):
    with pytest.raises(err, match=match):
        grid_positions(grid, merge_size=merge)


# --------------------------------------------------------------------------- frequency tables
@pytest.mark.parametrize("axes_dim", [[8], [4, 4], [16, 56, 56], [2, 6, 4]])
@pytest.mark.parametrize("base", [100.0, 10000.0])
def test_axial_inv_freq_per_axis(axes_dim, base):
    inv_freq, axis_of_pair = axial_inv_freq(axes_dim, base, dtype=F64)
    expect = [base ** (-2 * i / n) for n in axes_dim for i in range(n // 2)]
    assert inv_freq.tolist() == pytest.approx(expect, rel=1e-15)
    assert axis_of_pair.tolist() == [a for a, n in enumerate(axes_dim) for _ in range(n // 2)]


@pytest.mark.parametrize("d", [8, 16, 64])
def test_axial_inv_freq_shared_is_pixtral_split(d):
    """One ladder over d, frequencies 0, 2, 4, ... to h and 1, 3, 5, ... to w."""
    inv_freq, axis_of_pair = axial_inv_freq([d // 2, d // 2], dtype=F64, ladder="shared")
    full = [10000.0 ** (-2 * i / d) for i in range(d // 2)]
    assert inv_freq.tolist() == pytest.approx(full[0::2] + full[1::2], rel=1e-15)
    assert axis_of_pair.tolist() == [0] * (d // 4) + [1] * (d // 4)
    # h's ladder is exactly the per-axis one; w's is half a step lower
    per_axis, _ = axial_inv_freq([d // 2, d // 2], dtype=F64)
    assert torch.equal(inv_freq[: d // 4], per_axis[: d // 4])


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"axes_dim": [4, 3]}, ValueError, r"axes_dim\[1\]"),
        ({"axes_dim": [0, 4]}, ValueError, r"axes_dim\[0\]"),
        ({"axes_dim": []}, ValueError, "axes_dim"),
        ({"axes_dim": 8}, TypeError, "axes_dim"),
        ({"axes_dim": [4, 8], "ladder": "shared"}, ValueError, "equal"),
        ({"axes_dim": [4, 4], "ladder": "mixed"}, ValueError, "ladder"),
        ({"axes_dim": [4, 4], "base": 0.0}, ValueError, "base"),
        ({"axes_dim": [4, 4], "dtype": torch.bfloat16}, ValueError, "dtype"),
    ],
)
def test_axial_inv_freq_bad_input(kwargs, err, match):
    with pytest.raises(err, match=match):
        axial_inv_freq(**kwargs)


@pytest.mark.parametrize(
    ("section", "interleaved"),
    [(s, False) for s in ([16, 24, 24], [24, 20, 20], [2, 3, 3], [1, 1, 1], [3, 1, 2])]
    + [(s, True) for s in ([24, 20, 20], [4, 4, 4], [1, 1, 1], [3, 1, 2], [22, 21, 21])],
)
def test_mrope_axis_index_matches_reference(section, interleaved):
    got = mrope_axis_index(section, interleaved=interleaved)
    assert got.tolist() == ref_axis_of_pair(section, interleaved)
    assert torch.bincount(got, minlength=3).tolist() == section


@pytest.mark.parametrize(
    ("section", "kwargs", "err", "match"),
    [
        ([16, 0, 24], {}, ValueError, r"mrope_section\[1\]"),
        ([16.0, 24, 24], {}, TypeError, r"mrope_section\[0\]"),
        ([], {}, ValueError, "mrope_section"),
        ([8], {"interleaved": True}, ValueError, "at least 2 axes"),
        ([2, 8, 2], {"interleaved": True}, ValueError, "cannot realise"),
        ([16, 24, 24], {"interleaved": True}, ValueError, r"gives \[22, 21, 21\]"),
    ],
)
def test_mrope_axis_index_bad_input(section, kwargs, err, match):
    with pytest.raises(err, match=match):
        mrope_axis_index(section, **kwargs)


@pytest.mark.parametrize("half", [12, 13, 64])
def test_mrope_axis_index_interleaved_bound(half):
    """Realisable exactly when a + n*(sec[a] - 1) < half for every axis a >= 1."""
    n = 3
    for s1 in range(1, half):
        for s2 in range(1, half - s1):
            section = [half - s1 - s2, s1, s2]
            ok = all(a + n * (section[a] - 1) < half for a in (1, 2))
            if ok:
                assert mrope_axis_index(section, interleaved=True).tolist() == \
                    ref_axis_of_pair(section, True)
            else:
                with pytest.raises(ValueError, match=f"< {half}"):
                    mrope_axis_index(section, interleaved=True)
    # the counter-example to the old message "n*sec[a] <= half + a": 66 <= 66 yet it raises
    with pytest.raises(ValueError, match=r"gives \[22, 21, 21\]"):
        mrope_axis_index([21, 21, 22], interleaved=True)


# --------------------------------------------------------------------------- rotation
TABLES = {
    "axial-2d": lambda: axial_inv_freq([8, 8], dtype=F64),
    "axial-3d": lambda: axial_inv_freq([4, 6, 6], dtype=F64),
    "pixtral": lambda: axial_inv_freq([8, 8], dtype=F64, ladder="shared"),
    "mrope": lambda: (rope_inv_freq(16, dtype=F64), mrope_axis_index([2, 3, 3])),
    "mrope-interleaved": lambda: (
        rope_inv_freq(16, dtype=F64), mrope_axis_index([3, 3, 2], interleaved=True)
    ),
}


@pytest.mark.parametrize("table", sorted(TABLES))
@pytest.mark.parametrize("layout", LAYOUTS)
def test_apply_multi_axis_rope_matches_pairwise_reference(table, layout):
    inv_freq, axis_of_pair = TABLES[table]()
    n = int(axis_of_pair.max()) + 1
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 5, 16, dtype=F64, generator=g)
    positions = torch.randint(-7, 40, (5, n), generator=g)
    got = apply_multi_axis_rope(x, positions, inv_freq, axis_of_pair, layout=layout)
    ref = ref_multi_axis_pairwise(
        x, positions.tolist(), inv_freq.tolist(), axis_of_pair.tolist(), layout
    )
    torch.testing.assert_close(got, ref, rtol=0, atol=1e-12)


def test_partial_rotation_passes_other_channels_through():
    inv_freq, axis_of_pair = axial_inv_freq([4, 4], dtype=F64)
    x = torch.randn(3, 12, dtype=F64)
    out = apply_multi_axis_rope(x, grid_positions((1, 3)), inv_freq, axis_of_pair)
    assert torch.equal(out[..., 8:], x[..., 8:])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_one_axis_is_plain_rope(layout):
    inv_freq = rope_inv_freq(16, 500.0)
    axis_of_pair = torch.zeros(8, dtype=torch.int64)
    x = torch.randn(2, 4, 6, 16)
    pos = torch.arange(3, 9)
    got = apply_multi_axis_rope(x, pos[:, None], inv_freq, axis_of_pair, layout=layout)
    torch.testing.assert_close(
        got, apply_rope(x, pos, inv_freq=inv_freq, layout=layout), rtol=0, atol=0
    )


@pytest.mark.parametrize("interleaved", [False, True])
def test_text_tokens_get_plain_rope(interleaved):
    """Equal ids on t, h, w make M-RoPE the model's ordinary 1-D RoPE (Qwen2-VL's design)."""
    inv_freq = rope_inv_freq(128, 1e6)
    axis_of_pair = mrope_axis_index([16, 24, 24] if not interleaved else [24, 20, 20],
                                    interleaved=interleaved)
    pos = torch.arange(50)
    x = torch.randn(2, 50, 128)
    got = apply_multi_axis_rope(x, pos[:, None].expand(-1, 3), inv_freq, axis_of_pair)
    assert torch.equal(got, apply_rope(x, pos, inv_freq=inv_freq))


@settings(max_examples=40, deadline=None)
@given(
    p=st.lists(st.integers(-50, 50), min_size=3, max_size=3),
    q=st.lists(st.integers(-50, 50), min_size=3, max_size=3),
    shift=st.lists(st.integers(-1000, 1000), min_size=3, max_size=3),
    table=st.sampled_from(sorted(TABLES)),
)
def test_score_depends_only_on_offset(p, q, shift, table):
    """The 2-D/3-D relative-position theorem: q_p · k_p' is unchanged by a common shift."""
    inv_freq, axis_of_pair = TABLES[table]()
    n = int(axis_of_pair.max()) + 1
    g = torch.Generator().manual_seed(1)
    qv, kv = torch.randn(2, 1, 16, dtype=F64, generator=g)
    p, q, shift = torch.tensor(p[:n]), torch.tensor(q[:n]), torch.tensor(shift[:n])

    def score(a, b):
        qa = apply_multi_axis_rope(qv, a[None], inv_freq, axis_of_pair)
        kb = apply_multi_axis_rope(kv, b[None], inv_freq, axis_of_pair)
        return float((qa * kb).sum())

    assert score(p, q) == pytest.approx(score(p + shift, q + shift), abs=1e-9)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_dtype_kept_and_angles_in_float(dtype):
    inv_freq, axis_of_pair = axial_inv_freq([8, 8])
    x = torch.randn(4, 16).to(dtype)
    out = apply_multi_axis_rope(x, grid_positions((2, 2)), inv_freq, axis_of_pair)
    assert out.dtype == dtype
    ref = apply_multi_axis_rope(x.float(), grid_positions((2, 2)), inv_freq, axis_of_pair)
    if dtype == torch.bfloat16:  # rotated in float32, rounded once at the end
        assert torch.equal(out, ref.to(dtype))
    else:
        torch.testing.assert_close(out.float(), ref, rtol=0, atol=1e-6)
    angles = multi_axis_angles(grid_positions((2, 2)), inv_freq, axis_of_pair)
    assert angles.dtype == torch.float32 and angles.shape == (4, 8)


def test_cos_sin_layouts_and_factor():
    inv_freq, axis_of_pair = axial_inv_freq([4, 4], dtype=F64)
    pos = grid_positions((2, 3))
    angles = multi_axis_angles(pos, inv_freq, axis_of_pair)
    cos, sin = multi_axis_cos_sin(pos, inv_freq, axis_of_pair, dtype=F64)
    assert torch.equal(cos, torch.cat((angles.cos(), angles.cos()), -1))
    cos_i, sin_i = multi_axis_cos_sin(
        pos, inv_freq, axis_of_pair, layout="interleaved", attention_factor=2.0, dtype=F64
    )
    assert torch.equal(sin_i, 2.0 * torch.repeat_interleave(angles.sin(), 2, -1))
    assert cos.shape == (6, 8) and sin.shape == (6, 8) and cos_i.dtype == F64


@pytest.mark.parametrize(
    ("call", "err", "match"),
    [
        (lambda t, a: multi_axis_angles(torch.zeros(4, 3), t, a), ValueError, "n_axes = 2"),
        (lambda t, a: multi_axis_angles(torch.zeros(4), t, a), ValueError, "n_axes"),
        (lambda t, a: multi_axis_angles([[0.5, 1]], t, a), ValueError, "whole numbers"),
        (lambda t, a: multi_axis_angles([[0, 1]], t.half(), a), TypeError, "inv_freq"),
        (lambda t, a: multi_axis_angles([[0, 1]], t, a.float()), TypeError, "axis_of_pair"),
        (lambda t, a: multi_axis_angles([[0, 1]], t, a[:3]), ValueError, "axis_of_pair"),
        (lambda t, a: multi_axis_angles([[0, 1]], t, a - 1), ValueError, "axis_of_pair"),
        (lambda t, a: multi_axis_cos_sin([[0, 1]], t, a, layout="x"), ValueError, "layout"),
        (lambda t, a: multi_axis_cos_sin([[0, 1]], t, a, dtype=torch.int32), TypeError,
         "dtype"),
        (lambda t, a: apply_multi_axis_rope(torch.zeros(2, 6), [[0, 1]] * 2, t, a),
         ValueError, "rotary_dim"),
        (lambda t, a: apply_multi_axis_rope(torch.zeros(3, 8), [[0, 1]] * 2, t, a),
         ValueError, "broadcast"),
        (lambda t, a: apply_multi_axis_rope(torch.zeros(2, 8, dtype=torch.int64),
                                            [[0, 1]] * 2, t, a), TypeError, "x"),
        (lambda t, a: apply_multi_axis_rope([[0.0] * 8], [[0, 1]], t, a), TypeError, "x"),
    ],
)
def test_rotation_bad_input(call, err, match):
    inv_freq, axis_of_pair = axial_inv_freq([4, 4])
    with pytest.raises(err, match=match):
        call(inv_freq, axis_of_pair)


# --------------------------------------------------------------------------- position ids
def test_position_ids_small_example():
    """3 text, a 4x4 image merged 2x2 to 2x2, 2 text."""
    types_ = [0, 0, 0, 1, 1, 1, 1, 0, 0]
    got = mrope_position_ids(types_, image_grid_thw=[[1, 4, 4]], spatial_merge_size=2)
    assert got.tolist() == [
        [0, 0, 0], [1, 1, 1], [2, 2, 2],
        [3, 3, 3], [3, 3, 4], [3, 4, 3], [3, 4, 4],
        [5, 5, 5], [6, 6, 6],
    ]


@pytest.mark.parametrize("rule", ["max", "hw"])
@pytest.mark.parametrize(
    "segments",
    [
        [("text", 4), ("vision", 1, 4, 6, 1.0), ("text", 3)],
        [("vision", 1, 2, 2, 1.0), ("text", 1), ("vision", 2, 4, 4, 1.0), ("text", 2)],
        [("text", 2), ("vision", 3, 6, 4, 1.0), ("text", 2)],  # T = 3 = max(H, W)
    ],
)
def test_position_ids_match_paper_rule(segments, rule):
    types_, images, videos = [], [], []
    for seg in segments:
        if seg[0] == "text":
            types_ += [0] * seg[1]
        else:
            _, t, h, w, _ = seg
            kind = 1 if t == 1 else 2
            types_ += [kind] * (t * (h // 2) * (w // 2))
            (images if kind == 1 else videos).append([t, h, w])
    got = mrope_position_ids(
        types_, image_grid_thw=images or None, video_grid_thw=videos or None,
        spatial_merge_size=2, text_after_vision=rule,
    )
    assert torch.equal(got, ref_position_ids(segments, merge=2))


def test_position_ids_rules_differ_for_long_video():
    types_ = [0] + [2] * 4 * 4 + [0]  # a 4-frame 2x2 (merged) video between two text tokens
    kw = {"video_grid_thw": [[4, 4, 4]], "spatial_merge_size": 2}
    paper = mrope_position_ids(types_, **kw)
    hw = mrope_position_ids(types_, text_after_vision="hw", **kw)
    assert paper[-1].tolist() == [5, 5, 5]  # one past the video's last time id 1 + 3
    assert hw[-1].tolist() == [3, 3, 3]  # 1 + max(H, W) = 3: reuses time ids 2 and 3
    assert torch.equal(paper[:-1], hw[:-1])


def test_position_ids_time_interval():
    types_ = [2] * 3 + [0]
    got = mrope_position_ids(types_, video_grid_thw=[[3, 1, 1]], video_time_interval=2.5)
    assert got[:, 0].tolist() == [0, 2, 5, 6]
    assert mrope_position_ids([0, 0]).tolist() == [[0] * 3, [1] * 3]
    assert mrope_position_ids([]).shape == (0, 3)


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"token_types": [0, 3]}, ValueError, "token_types"),
        ({"token_types": [[0, 1]]}, ValueError, r"shape \(s,\)"),
        ({"token_types": [0.5]}, ValueError, "token_types"),
        ({"token_types": [1, 1]}, ValueError, "image_grid_thw has 0"),
        ({"token_types": [1, 1], "image_grid_thw": [[1, 1, 1]]}, ValueError, "does not match"),
        ({"token_types": [1], "image_grid_thw": [[1, 3, 2]], "spatial_merge_size": 2},
         ValueError, "multiple of spatial_merge_size"),
        ({"token_types": [1], "image_grid_thw": [[1, 2]]}, ValueError, "triple"),
        ({"token_types": [1], "image_grid_thw": [[1, 0, 1]]}, ValueError, r"\[0\]\[1\]"),
        ({"token_types": [1], "image_grid_thw": torch.ones(1, 3)}, TypeError, "integers"),
        ({"token_types": [0], "spatial_merge_size": 0}, ValueError, "spatial_merge_size"),
        ({"token_types": [2], "video_grid_thw": [[1, 1, 1]], "video_time_interval": -1.0},
         ValueError, "video_time_interval"),
        ({"token_types": [2], "video_grid_thw": [[1, 1, 1]], "video_time_interval": [1, 2]},
         ValueError, "one per video"),
        ({"token_types": [0], "text_after_vision": "min"}, ValueError, "text_after_vision"),
    ],
)
def test_position_ids_bad_input(kwargs, err, match):
    with pytest.raises(err, match=match):
        mrope_position_ids(**kwargs)


def test_moved_names_are_still_found_in_posenc_multi_axis():
    """mrope_position_ids moved to posenc.mrope_positions; the old path names the same
    objects, and an unknown name still raises AttributeError."""
    import posenc.mrope_positions as ids
    import posenc.multi_axis as multi_axis

    for name in ids.__all__:
        assert getattr(multi_axis, name) is getattr(ids, name)
    with pytest.raises(AttributeError, match="no_such_name"):
        multi_axis.no_such_name  # noqa: B018


# ------------------------------------------------------------------- transformers parity
needs_transformers = pytest.mark.needs("transformers")


def _text_config(cls, head_dim, section, theta):
    cfg = cls(
        hidden_size=head_dim * 2, num_attention_heads=2, num_key_value_heads=2,
        head_dim=head_dim, num_hidden_layers=1, intermediate_size=32, vocab_size=64,
        rope_parameters={"rope_type": "default", "rope_theta": theta,
                         "mrope_section": section},
    )
    return cfg


@needs_transformers
@pytest.mark.parametrize(
    ("model", "head_dim", "section", "theta"),
    [
        ("qwen2_vl", 128, [16, 24, 24], 1e6),
        ("qwen2_vl", 16, [2, 3, 3], 1e4),
        ("qwen2_5_vl", 128, [16, 24, 24], 1e6),
        ("qwen3_vl", 128, [24, 20, 20], 5e6),
        ("qwen3_vl", 24, [4, 4, 4], 1e4),
    ],
)
def test_mrope_matches_transformers(model, head_dim, section, theta):
    if model == "qwen2_vl":
        from transformers import Qwen2VLTextConfig as Cfg
        from transformers.models.qwen2_vl.modeling_qwen2_vl import (
            Qwen2VLRotaryEmbedding as Rot,
        )
        from transformers.models.qwen2_vl.modeling_qwen2_vl import apply_rotary_pos_emb
    elif model == "qwen2_5_vl":
        from transformers import Qwen2_5_VLTextConfig as Cfg
        from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import (
            Qwen2_5_VLRotaryEmbedding as Rot,
        )
        from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import apply_rotary_pos_emb
    else:
        from transformers import Qwen3VLTextConfig as Cfg
        from transformers.models.qwen3_vl.modeling_qwen3_vl import (
            Qwen3VLTextRotaryEmbedding as Rot,
        )
        from transformers.models.qwen3_vl.modeling_qwen3_vl import apply_rotary_pos_emb
    rot = Rot(_text_config(Cfg, head_dim, section, theta))
    types_ = [0] * 3 + [1] * 12 + [0] * 2 + [2] * 16 + [0] * 4
    pos = mrope_position_ids(
        types_, image_grid_thw=[[1, 6, 8]], video_grid_thw=[[4, 4, 4]], spatial_merge_size=2
    )  # (s, 3)
    position_ids = pos.T[:, None, :]  # transformers: (3, batch, s)
    q = torch.randn(1, 2, pos.shape[0], head_dim)
    k = torch.randn(1, 2, pos.shape[0], head_dim)
    cos_ref, sin_ref = rot(q, position_ids)
    inv_freq = rope_inv_freq(head_dim, theta)
    axis_of_pair = mrope_axis_index(section, interleaved=model == "qwen3_vl")
    cos, sin = multi_axis_cos_sin(pos, inv_freq, axis_of_pair)
    # transformers builds inv_freq in float32 arithmetic; ours is float64 rounded once.
    torch.testing.assert_close(cos, cos_ref[0], rtol=0, atol=2e-6)
    torch.testing.assert_close(sin, sin_ref[0], rtol=0, atol=2e-6)
    q_ref, k_ref = apply_rotary_pos_emb(q, k, cos_ref, sin_ref)
    q_got = apply_multi_axis_rope(q, pos, inv_freq, axis_of_pair)
    k_got = apply_multi_axis_rope(k, pos, inv_freq, axis_of_pair)
    torch.testing.assert_close(q_got, q_ref, rtol=0, atol=2e-5)
    torch.testing.assert_close(k_got, k_ref, rtol=0, atol=2e-5)
    # with transformers' own inv_freq the tables agree to float32 rounding of cos/sin only
    cos_same, _ = multi_axis_cos_sin(pos, rot.inv_freq, axis_of_pair)
    torch.testing.assert_close(cos_same, cos_ref[0], rtol=0, atol=0)


@needs_transformers
@pytest.mark.parametrize("head_dim", [16, 64, 80])
@pytest.mark.parametrize("model", ["qwen2_vl_vision", "pixtral"])
def test_vision_2d_rope_matches_transformers(model, head_dim):
    if model == "pixtral":
        from transformers import PixtralVisionConfig as Cfg
        from transformers.models.pixtral.modeling_pixtral import (
            PixtralVisionRotaryEmbedding as Rot,
        )
        cfg = Cfg(hidden_size=head_dim * 2, num_attention_heads=2, head_dim=head_dim,
                  image_size=64, patch_size=8)
        ladder = "shared"
    else:
        from transformers.models.qwen2_vl.configuration_qwen2_vl import (
            Qwen2VLVisionConfig as Cfg,
        )
        from transformers.models.qwen2_vl.modeling_qwen2_vl import (
            Qwen2VLVisionRotaryEmbedding as Rot,
        )
        cfg = Cfg(embed_dim=head_dim * 2, num_heads=2, depth=1)
        ladder = "per_axis"
    rot = Rot(cfg)
    pos = grid_positions((5, 7))  # (35, 2): (h, w) per patch
    x = torch.randn(35, head_dim)
    cos_ref, sin_ref = rot(x, pos)
    inv_freq, axis_of_pair = axial_inv_freq([head_dim // 2] * 2, 1e4, ladder=ladder)
    cos, sin = multi_axis_cos_sin(pos, inv_freq, axis_of_pair)
    torch.testing.assert_close(cos, cos_ref, rtol=0, atol=2e-6)
    torch.testing.assert_close(sin, sin_ref, rtol=0, atol=2e-6)


@needs_transformers
def test_qwen2_vl_vision_tower_positions_need_merge_order():
    """The tower rotates patch j by get_vision_position_ids' (h, w), not the raster one."""
    from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLVisionConfig
    from transformers.models.qwen2_vl.modeling_qwen2_vl import (
        Qwen2VLVisionRotaryEmbedding,
    )
    from transformers.vision_utils import get_vision_position_ids

    head_dim = 16
    rot = Qwen2VLVisionRotaryEmbedding(Qwen2VLVisionConfig(embed_dim=32, num_heads=2))
    grid = (2, 4, 6)
    tower_pos = get_vision_position_ids(torch.tensor([grid]), 2)  # what the tower uses
    x = torch.randn(tower_pos.shape[0], head_dim)
    cos_ref, _ = rot(x, tower_pos)
    inv_freq, axis_of_pair = axial_inv_freq([head_dim // 2] * 2, 1e4)
    merged = grid_positions(grid, merge_size=2)[:, 1:]
    cos, _ = multi_axis_cos_sin(merged, inv_freq, axis_of_pair)
    torch.testing.assert_close(cos, cos_ref, rtol=0, atol=2e-6)
    raster = grid_positions(grid)[:, 1:]
    cos_raster, _ = multi_axis_cos_sin(raster, inv_freq, axis_of_pair)
    assert (cos_raster - cos_ref).abs().max() > 0.1  # raster order rotates the wrong patch


def _stub(model_cls, **vision):
    """An object with just what get_rope_index reads: config.vision_config and its helper."""
    stub = types.SimpleNamespace(config=types.SimpleNamespace(
        vision_config=types.SimpleNamespace(**vision)
    ))
    stub.get_vision_position_ids = functools.partial(model_cls.get_vision_position_ids, stub)
    return stub


SEQUENCE = [0] * 5 + [1] * 12 + [0] * 3 + [2] * 32 + [0] * 4 + [1] * 4 + [0] * 2
# Qwen3-VL puts timestamp text between the frames of a video
SEQUENCE_QWEN3 = [0] * 5 + [1] * 12 + [0] * 3 + [2] * 16 + [0] * 2 + [2] * 16 + [0] * 4 \
    + [1] * 4 + [0] * 2
IMAGES = [[1, 6, 8], [1, 4, 4]]
VIDEOS = [[2, 8, 8]]


@needs_transformers
@pytest.mark.parametrize("model", ["qwen2_vl", "qwen2_5_vl", "qwen3_vl"])
def test_position_ids_match_get_rope_index(model):
    seq = SEQUENCE_QWEN3 if model == "qwen3_vl" else SEQUENCE
    types_ = torch.tensor([seq])
    images = torch.tensor(IMAGES)
    videos = torch.tensor(VIDEOS)
    kwargs, ours = {}, {}
    if model == "qwen2_vl":
        from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLModel as M
        stub = _stub(M, spatial_merge_size=2)
    elif model == "qwen2_5_vl":
        from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import (
            Qwen2_5_VLModel as M,
        )
        stub = _stub(M, spatial_merge_size=2, tokens_per_second=2)
        kwargs = {"second_per_grid_ts": torch.tensor([1.5])}
        ours = {"video_time_interval": [2 * 1.5]}
    else:
        from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLModel as M
        stub = _stub(M, spatial_merge_size=2)
    ref, delta = M.get_rope_index(
        stub, types_, types_, image_grid_thw=images, video_grid_thw=videos, **kwargs
    )
    video_rows = VIDEOS
    if model == "qwen3_vl":  # Qwen3-VL splits a video into frames with t = 1
        video_rows = [[1, h, w] for t, h, w in VIDEOS for _ in range(t)]
    for rule in ("hw", "max"):  # here the video is short enough for both rules to agree
        got = mrope_position_ids(
            seq, image_grid_thw=IMAGES, video_grid_thw=video_rows,
            spatial_merge_size=2, text_after_vision=rule, **ours,
        )
        assert torch.equal(got, ref[:, 0].T), rule
    assert int(got.max()) + 1 - len(seq) == int(delta)


@needs_transformers
@pytest.mark.parametrize("model", ["qwen2_vl", "qwen2_5_vl"])
def test_long_video_hw_rule_is_transformers(model):
    """A video whose time ids outrun max(H, W): transformers 5.24 follows the 'hw' rule."""
    seq = [0] * 2 + [2] * 6 * 4 + [0] * 3
    videos = [[6, 4, 4]]
    if model == "qwen2_vl":
        from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLModel as M
        stub, kwargs, ours = _stub(M, spatial_merge_size=2), {}, {}
    else:
        from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import (
            Qwen2_5_VLModel as M,
        )
        stub = _stub(M, spatial_merge_size=2, tokens_per_second=25)
        kwargs = {"second_per_grid_ts": torch.tensor([2.0])}
        ours = {"video_time_interval": 50.0}
    t = torch.tensor([seq])
    ref, _ = M.get_rope_index(stub, t, t, video_grid_thw=torch.tensor(videos), **kwargs)
    hw = mrope_position_ids(seq, video_grid_thw=videos, spatial_merge_size=2,
                            text_after_vision="hw", **ours)
    paper = mrope_position_ids(seq, video_grid_thw=videos, spatial_merge_size=2, **ours)
    assert torch.equal(hw, ref[:, 0].T)
    assert int(paper[-3, 0]) == int(paper[:-3].max()) + 1 > int(hw[-3, 0])


@needs_transformers
@pytest.mark.parametrize(("hidden", "heads", "image", "patch"), [(128, 2, 56, 14),
                                                                 (192, 3, 48, 8)])
def test_llama4_vision_rope_matches_transformers(hidden, heads, image, patch):
    """Llama 4's vision encoder: axial RoPE on (w + 1, h + 1), interleaved layout."""
    from transformers import Llama4VisionConfig
    from transformers.models.llama4.modeling_llama4 import Llama4VisionRotaryEmbedding

    cfg = Llama4VisionConfig(hidden_size=hidden, num_attention_heads=heads,
                             image_size=image, patch_size=patch)
    freqs_ci = Llama4VisionRotaryEmbedding._compute_freqs_ci(cfg)[:-1, 0]  # drop CLS
    side, head_dim = image // patch, hidden // heads
    pos = grid_positions((side, side)).flip(-1) + 1  # (w + 1, h + 1) per patch
    inv_freq, axis_of_pair = axial_inv_freq([head_dim // 2] * 2, 1e4)
    x = torch.randn(side * side, head_dim)
    got = apply_multi_axis_rope(x, pos, inv_freq, axis_of_pair, layout="interleaved")
    ref = torch.view_as_real(torch.view_as_complex(x.reshape(-1, head_dim // 2, 2))
                             * freqs_ci).flatten(-2)
    torch.testing.assert_close(got, ref, rtol=0, atol=5e-6)
