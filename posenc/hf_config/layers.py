"""Per layer: what a ``transformers`` model does with positions, and how to rotate like it.

:func:`layer_specs` reads a config (object or ``config.json`` dict) through the family's
record in :data:`~posenc.hf_config.families.FAMILIES` and returns one :class:`LayerSpec` per
decoder layer; :func:`apply_layer_rope` rotates a query or key head exactly as that layer
does, with :func:`posenc.rope.apply_rope`.

Shape notation: ``d`` = the layer's ``head_dim`` (the whole q/k head), ``r`` =
``rotary_dim`` (channels that rotate), ``s`` = sequence length.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from .. import rope
from .._checks import check_int
from .families import ATTENTION_TYPES, LEGACY_LAYER_TYPES, Family, family
from .params import _as_dict, _full_head_dim, _per_type, rope_from_config, rope_parameters

__all__ = ["LayerSpec", "apply_layer_rope", "layer_specs", "layer_types"]


class LayerSpec(NamedTuple):
    """What one decoder layer does with positions (see :func:`layer_specs`)."""

    #: ``config.layer_types[i]`` (``"full_attention"``, ``"sliding_attention"``,
    #: ``"chunked_attention"``, ``"linear_attention"`` …).
    layer_type: str
    #: ``False`` for a layer without positions (NoPE layers, linear attention, SSM blocks).
    use_rope: bool
    #: ``(r/2,)`` frequencies (``(d/2,)`` with zeros for ``proportional``), or ``None``.
    inv_freq: torch.Tensor | None
    #: cos/sin multiplier (1.0 for layers without RoPE).
    attention_factor: float
    #: the window the layer's attention receives in ``transformers`` — for causal layers the
    #: keys visible per query, itself included (:func:`posenc.attention.sliding_window_mask`);
    #: for bidirectional encoders (ModernBERT, NeoMME, UltraBERT) ``w + 1``, an exclusive
    #: bound on ``|i − j|`` with ``w`` keys on each side — or ``None`` for global layers.
    sliding_window: int | None
    #: ``(floor_scale, attn_scale)`` of Llama 4's query temperature on NoPE layers
    #: (:func:`posenc.attention.llama4_attn_scale`), else ``None``.
    attn_temperature: tuple[int, float] | None = None
    #: the layer's q/k head width ``d``.
    head_dim: int = 0
    #: channels that rotate, ``r`` (0 without RoPE).
    rotary_dim: int = 0
    #: Which channels rotate — ``"leading"`` (``[0, r)``), ``"trailing"`` (``[d − r, d)``)
    #: or ``"spread"`` (``proportional``: pairs ``(i, i + d/2)`` for ``i < r/2``).
    rope_channels: str = "leading"
    #: Pair layout inside the rotated channels — ``"half"`` or ``"interleaved"``.
    layout: str = "half"
    #: ``rope_type`` of this layer (``"default"``, ``"yarn"`` …), ``None`` without RoPE.
    rope_type: str | None = None
    #: ``rope_theta`` of this layer, ``None`` without RoPE.
    rope_theta: float | None = None
    #: ``(beta, original_max_position_embeddings)`` of a query scale applied on every
    #: layer by position (Ministral 3's ``llama_4_scaling_beta``), else ``None``.
    query_scale: tuple[float, int] | None = None
    #: the values carry RoPE too (DeepSeek-V4's shared K = V), and the output's rope slice
    #: is rotated back at the query position.
    values_rotated: bool = False
    #: RoPE-dict keys the family's code never reads, as ``((key, reason), …)``.
    ignored: tuple[tuple[str, str], ...] = ()


def _model_type(d: dict) -> str:
    mt = d.get("model_type")
    if not isinstance(mt, str) or not mt:
        raise ValueError("config has no 'model_type'; posenc reads a family by its model_type")
    return mt


def _every(d: dict, n: int, rule: tuple) -> list[str]:
    _, key, default, offset, other = rule
    every = d.get(key, default) if key else default
    if every is None:
        every = default
    if isinstance(every, str):  # EXAONE's "LLLG": L local (sliding), G global
        return ["full_attention" if every[i % len(every)] == "G" else other for i in range(n)]
    every = check_int(f"config[{key!r}]" if key else "layer pattern", every, minimum=1)
    return ["full_attention" if (i + 1 + offset) % every == 0 else other for i in range(n)]


def layer_types(config) -> list[str]:
    """The layer type of every decoder layer, as the family's config class derives it.

    ``config.layer_types`` when present; else the family's rule
    (:attr:`Family.layer_pattern`, :attr:`Family.block_types_key`), else every layer
    ``"sliding_attention"`` if the config has a ``sliding_window`` (and
    ``use_sliding_window`` is not false), else ``"full_attention"``.

    Raises:
        ValueError: no ``num_hidden_layers``; an unknown ``model_type``; a list shorter
            than the layer count.
    """
    d = _as_dict(config)
    return _layer_types(d, family(_model_type(d)))


def _layer_types(d: dict, fam: Family) -> list[str]:
    if d.get("num_hidden_layers") is None:
        raise ValueError("config['num_hidden_layers'] is required to list the layers")
    n = check_int("config['num_hidden_layers']", d["num_hidden_layers"], minimum=1)
    if d.get("layer_types"):
        # old names ("mamba", "attention") renamed as every transformers config does
        types = [LEGACY_LAYER_TYPES.get(t, t) for t in d["layer_types"]]
    elif fam.attention_index_key:
        attn = set(d.get(fam.attention_index_key) or ())
        types = ["full_attention" if i in attn else "linear_attention" for i in range(n)]
    elif fam.block_types_key and d.get(fam.block_types_key[0]):
        key, mapping = fam.block_types_key
        table = dict(mapping)
        blocks = list(d[key])
        types = []
        for i in range(n):
            block = blocks[i % len(blocks)]  # RecurrentGemma repeats its block pattern
            if block not in table:
                raise ValueError(f"config[{key!r}][{i}] = {block!r} is not one of {sorted(table)}")
            types.append(table[block])
    elif fam.layer_pattern == "listed":
        raise ValueError(
            f"config of model_type {d['model_type']!r} has no 'layer_types'; posenc does not "
            "encode this family's default layer pattern, so it needs the list"
        )
    elif fam.layer_pattern is not None and fam.layer_pattern[0] == "all":
        types = [fam.layer_pattern[1]] * n
    elif fam.layer_pattern is not None:
        types = _every(d, n, fam.layer_pattern)
    elif fam.window_key and d.get(fam.window_key) is not None \
            and d.get("use_sliding_window", True):
        types = ["sliding_attention"] * n
    else:
        types = ["full_attention"] * n
    if len(types) < n:
        raise ValueError(f"config['layer_types'] has {len(types)} entries for {n} layers")
    types = types[:n]
    if fam.last_layer_full and not d.get("layer_types"):
        types[-1] = "full_attention"
    return types


def _rope_flags(d: dict, fam: Family, types: list[str]) -> list[bool]:
    n = len(types)
    flags = [t not in fam.nope_types for t in types]
    if fam.nope_index_key:
        off = set(d.get(fam.nope_index_key) or ())
        flags = [f and i not in off for i, f in enumerate(flags)]
    if fam.nope_flags is not None:
        key, interval_key, default = fam.nope_flags
        listed = d.get(key)
        if not listed:
            every = check_int(f"config[{interval_key!r}]", d.get(interval_key) or default,
                              minimum=1)
            listed = [int((i + 1) % every != 0) for i in range(n)]
        if len(listed) < n:
            raise ValueError(f"config[{key!r}] has {len(listed)} entries for {n} layers")
        flags = [f and bool(x) for f, x in zip(flags, listed[:n], strict=True)]
    if fam.rope_rule is not None:  # a family's own switch (see the record's function)
        flags = list(fam.rope_rule(d, types, flags))
    for i, (t, f) in enumerate(zip(types, flags, strict=True)):
        if f and t not in ATTENTION_TYPES | fam.attention_types:
            raise ValueError(
                f"layer {i} has layer type {t!r}, which posenc's record for "
                f"{d['model_type']!r} does not know: it cannot tell whether it uses RoPE"
            )
    return flags


def layer_specs(config, *, seq_len: int | None = None, dtype=torch.float32) -> list[LayerSpec]:
    """Per decoder layer: positions or not, window, frequencies, widths, layout, extras.

    The family's rules (:data:`~posenc.hf_config.families.FAMILIES`, keyed by
    ``model_type``) decide the layer pattern of a config without ``layer_types``, which
    layers carry no RoPE (NoPE flags, global NoPE layers, linear-attention and SSM blocks),
    which RoPE settings each layer type gets (per-type dicts, OLMo 3's full-only scaling,
    second bases, a second head size), which channels rotate and how they pair, and the
    extra position terms. A config object and its ``config.json`` dict give the same specs.

    Args:
        config: a ``transformers`` config object or ``config.json`` dict (a multimodal
            config is read through its ``text_config``).
        seq_len, dtype: as :func:`~posenc.hf_config.rope_from_config`.

    Returns:
        ``num_hidden_layers`` :class:`LayerSpec` entries.

    Raises:
        ValueError: an unknown or refused ``model_type``; ``num_hidden_layers`` missing or
            ``< 1``; ``layer_types`` or NoPE flags shorter than the layer count; a layer
            type the family's record does not know; the errors of
            :func:`~posenc.hf_config.rope_from_config`.

    Source: ``transformers`` 5.24, each family's ``Config.__post_init__`` /
    ``convert_rope_params_to_dict`` and attention ``forward`` (``tests/test_hf_sweep.py``
    compares every family's layers with its rotary module and attention layers).
    """
    d = _as_dict(config)
    fam = family(_model_type(d))
    types = _layer_types(d, fam)
    flags = _rope_flags(d, fam, types)
    temperature = None
    if fam.query_temperature and d.get("attn_temperature_tuning", True):
        temperature = (int(d.get("floor_scale", 8192)), float(d.get("attn_scale", 0.1)))
    if fam.nope_flags and fam.query_temperature and not d.get("layer_types") \
            and d.get("attention_chunk_size", 8192) is not None:
        # Llama4TextConfig: RoPE layers attend within chunks, NoPE layers globally
        types = ["chunked_attention" if f else "full_attention" for f in flags]
    _, _, nested = _per_type(d)
    layout = fam.layout
    if fam.interleave_switch is not None and not d.get(*fam.interleave_switch):
        layout = "half"  # e.g. DeepSeek-V3's rope_interleave false: rotate_half on the slice
    per_layer = {int(k): dict(v) for k, v in (d.get("per_layer_config") or {}).items()}
    cache: dict[tuple, tuple] = {}
    specs = []
    for i, (lt, uses) in enumerate(zip(types, flags, strict=True)):
        over = per_layer.get(i, {})
        di = {**d, **over} if over else d
        w = di.get(fam.window_key) if fam.window_key else None
        w = w // fam.window_divisor if w is not None else None
        sw = w + fam.window_offset if lt == "sliding_attention" and w else None
        if not uses:
            specs.append(LayerSpec(lt, False, None, 1.0, sw, temperature,
                                   head_dim=_type_head_dim(di, fam, lt),
                                   rope_channels=fam.channels, layout=layout))
            continue
        per_type = nested or fam.flat_rope_types or fam.type_bases or fam.type_head_dim
        key = (lt if per_type else "", tuple(sorted((k, str(v)) for k, v in over.items())))
        if key not in cache:
            lt_arg = lt if per_type else None
            p = rope_parameters(di, layer_type=lt_arg)
            inv, att = rope_from_config(di, layer_type=lt_arg, seq_len=seq_len, dtype=dtype)
            cache[key] = (p, inv, att)
        p, inv, att = cache[key]
        channels = "spread" if p["rope_type"] == "proportional" else fam.channels
        specs.append(LayerSpec(
            lt, True, inv, att, sw, None,
            head_dim=p["full_head_dim"] or _type_head_dim(di, fam, lt),
            rotary_dim=p["rotary_dim"], rope_channels=channels, layout=layout,
            rope_type=p["rope_type"], rope_theta=p["rope_theta"],
            query_scale=p.get("query_scale"), ignored=p.get("ignored", ()),
        ))
    return specs


def _type_head_dim(d: dict, fam: Family, lt: str) -> int:
    return _full_head_dim(d, fam, lt)


def apply_layer_rope(x: torch.Tensor, positions, spec: LayerSpec) -> torch.Tensor:
    """Rotate a query or key head ``x`` exactly as the layer described by ``spec`` does.

    Selects the rotated channels (:attr:`LayerSpec.rope_channels`), pairs them by
    :attr:`LayerSpec.layout`, rotates with :func:`posenc.rope.apply_rope` using the layer's
    ``inv_freq`` and multiplies by its ``attention_factor`` (``transformers`` scales the
    cos/sin tables, so the rotated channels carry it and the pass-through ones do not).
    A layer without RoPE returns ``x`` unchanged.

    Args:
        x: ``(..., s, d)`` floating tensor with ``d == spec.head_dim``.
        positions: integer positions ``(s,)`` or broadcastable ``(..., s)``.
        spec: one entry of :func:`layer_specs`.

    Returns:
        Tensor shaped and typed like ``x``.

    Raises:
        ValueError: ``x.shape[-1]`` is not ``spec.head_dim``; the checks of
            :func:`posenc.rope.apply_rope`.
    """
    if not spec.use_rope:
        return x
    d = x.shape[-1]
    if d != spec.head_dim:
        raise ValueError(f"x's last dim must be the layer's head_dim {spec.head_dim}, got {d}")
    cos, sin = rope.rope_cos_sin(positions, spec.inv_freq.to(x.device), layout=spec.layout,
                                 attention_factor=spec.attention_factor,
                                 dtype=spec.inv_freq.dtype)
    r = cos.shape[-1]
    if spec.rope_channels == "trailing":
        head, tail = x[..., : d - r], x[..., d - r:]
        return torch.cat((head, rope.apply_rope(tail, cos=cos, sin=sin, layout=spec.layout)),
                         dim=-1)
    return rope.apply_rope(x, cos=cos, sin=sin, layout=spec.layout)
