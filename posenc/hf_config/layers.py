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
from ._config import _as_dict, _model_type
from ._patterns import _layer_types, _rope_flags
from .families import Family, family
from .params import _full_head_dim, _per_type, rope_from_config, rope_parameters

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


def layer_specs(config, *, seq_len: int | None = None, dtype=torch.float32) -> list[LayerSpec]:
    """Per decoder layer: positions or not, window, frequencies, widths, layout, extras.

    The family's rules (:data:`~posenc.hf_config.families.FAMILIES`, keyed by
    ``model_type``) decide the layer pattern of a config without ``layer_types``, which
    layers carry no RoPE (NoPE flags, global NoPE layers, linear-attention and SSM blocks),
    which RoPE settings each layer type gets (per-type dicts, OLMo 3's full-only scaling,
    second bases, a second head size), which channels rotate and how they pair, and the
    extra position terms. Keys a ``config.json`` leaves out take the config class's
    defaults (:attr:`Family.defaults`, :attr:`Family.default_theta`), legacy keys are
    translated as the class translates them (:attr:`Family.translate`), and switches the
    modeling code reads decide which layers rotate (:attr:`Family.rope_rule`,
    :attr:`Family.interleave_switch`). A config object and its ``config.json`` dict give
    the same specs.

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
    compares every family's layers with its rotary module and attention layers, on its
    default config or a repaired one; ``tests/test_hf_config.py`` checks published
    configs, the class defaults of every record, and the families whose model decides per
    layer).
    """
    d = _as_dict(config)
    fam = family(_model_type(d))
    types = _layer_types(d, fam)
    flags = _rope_flags(d, fam, types)
    temperature = None
    if fam.query_temperature and d.get("attn_temperature_tuning", True):
        temperature = (int(d.get("floor_scale", 8192)), float(d.get("attn_scale", 0.1)))
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
