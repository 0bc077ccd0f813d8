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
from ._config import _as_dict, _model_type, _number
from ._patterns import _layer_types, _rope_flags
from .families import Family, family
from .params import _full_head_dim, _per_type, rope_from_config, rope_parameters

__all__ = ["LAYER_SPEC_FIELDS", "LayerSpec", "apply_layer_rope", "layer_specs", "layer_types"]


class LayerSpec(NamedTuple):
    """What one decoder layer does with positions (see :func:`layer_specs`).

    A named tuple; ``repr`` is one short line (``inv_freq`` summarised, never dumped), and
    each field's meaning is in :data:`~posenc.hf_config.LAYER_SPEC_FIELDS` (shown by
    ``help(LayerSpec)``).
    :func:`posenc.hf_config.config_report` groups a model's layers into runs of identical
    specs.
    """

    layer_type: str
    use_rope: bool
    inv_freq: torch.Tensor | None
    attention_factor: float
    sliding_window: int | None
    attn_temperature: tuple[int, float] | None = None
    head_dim: int = 0
    rotary_dim: int = 0
    rope_channels: str = "leading"
    layout: str = "half"
    rope_type: str | None = None
    rope_theta: float | None = None
    query_scale: tuple[float, int] | None = None
    ignored: tuple[tuple[str, str], ...] = ()
    scaling: tuple[tuple[str, object], ...] = ()
    attention_chunk_size: int | None = None

    def __repr__(self) -> str:
        parts = [repr(self.layer_type)]
        if self.sliding_window is not None:
            parts.append(f"sliding_window={self.sliding_window}")
        if self.attention_chunk_size is not None:
            parts.append(f"attention_chunk_size={self.attention_chunk_size}")
        parts.append(f"head_dim={self.head_dim}")
        if self.use_rope:
            parts.append(f"rope_type={self.rope_type!r}")
            parts.append(f"rope_theta={self.rope_theta!r}")
            parts.append(f"rotary_dim={self.rotary_dim}")
            parts.append(f"rope_channels={self.rope_channels!r}")
            parts.append(f"layout={self.layout!r}")
            inv = self.inv_freq
            if inv is not None and inv.numel():
                parts.append(f"inv_freq=<{inv.numel()} from {float(inv[0]):.4g} to "
                             f"{float(inv[-1]):.4g}, {str(inv.dtype).removeprefix('torch.')}>")
            if self.attention_factor != 1.0:
                parts.append(f"attention_factor={self.attention_factor:.6g}")
            parts.extend(f"{k}=<{len(v)} values>" if isinstance(v, tuple | list) and len(v) > 4
                         else f"{k}={v!r}" for k, v in self.scaling)
        else:
            parts.append("use_rope=False")
        if self.attn_temperature is not None:
            parts.append(f"attn_temperature={self.attn_temperature!r}")
        if self.query_scale is not None:
            parts.append(f"query_scale={self.query_scale!r}")
        if self.ignored:
            parts.append(f"ignored={[k for k, _ in self.ignored]!r}")
        return f"LayerSpec({', '.join(parts)})"


#: Each :class:`LayerSpec` field and what it holds (also its ``help()`` text).
LAYER_SPEC_FIELDS = {
    "layer_type": "``config.layer_types[i]`` as the config names it (``\"full_attention\"``, "
                  "``\"sliding_attention\"``, ``\"chunked_attention\"``, "
                  "``\"linear_attention\"`` …).",
    "use_rope": "``False`` for a layer without positions (NoPE layers, linear attention, "
                "SSM blocks).",
    "inv_freq": "``(r/2,)`` frequencies in radians per position (``(d/2,)`` with zeros for "
                "``proportional``), or ``None`` without RoPE.",
    "attention_factor": "multiplier of the cos/sin tables (1.0 for layers without RoPE).",
    "sliding_window": "the window the layer's attention receives in ``transformers`` — for "
                      "causal layers the keys visible per query, itself included "
                      "(:func:`posenc.attention.sliding_window_mask`); for bidirectional "
                      "encoders (ModernBERT, NeoMME, UltraBERT) ``w + 1``, an exclusive bound "
                      "on ``|i − j|`` with ``w`` keys on each side — or ``None`` for global "
                      "layers.",
    "attn_temperature": "``(floor_scale, attn_scale)`` of Llama 4's query temperature on NoPE "
                        "layers (:func:`posenc.attention.llama4_attn_scale`), else ``None``.",
    "head_dim": "the layer's q/k head width ``d``.",
    "rotary_dim": "channels that rotate, ``r`` (0 without RoPE).",
    "rope_channels": "which channels rotate — ``\"leading\"`` (``[0, r)``), ``\"trailing\"`` "
                     "(``[d − r, d)``) or ``\"spread\"`` (``proportional``: pairs "
                     "``(i, i + d/2)`` for ``i < r/2``).",
    "layout": "pair layout inside the rotated channels — ``\"half\"`` or "
              "``\"interleaved\"``.",
    "rope_type": "``rope_type`` of this layer (``\"default\"``, ``\"yarn\"`` …), ``None`` "
                 "without RoPE.",
    "rope_theta": "``rope_theta`` (the base) of this layer, ``None`` without RoPE.",
    "query_scale": "``(beta, original_max_position_embeddings)`` of a query scale applied on "
                   "every layer by position (Ministral 3's ``llama_4_scaling_beta``), else "
                   "``None``.",
    "ignored": "RoPE-dict keys the family's code never reads, as ``((key, reason), …)``.",
    "attention_chunk_size": "for ``\"chunked_attention\"`` layers, the chunk: a query sees "
                            "the keys of its own chunk of ``attention_chunk_size`` positions "
                            "(``transformers``' chunked mask reads the config key); else "
                            "``None``.",
    "scaling": "the scaling parameters of ``rope_type`` as ``transformers`` resolves them, "
               "as ``((key, value), …)`` (``factor``, ``original_max_position_embeddings``, "
               "``beta_fast`` …); ``()`` for ``default`` and layers without RoPE.",
}
for _name, _doc in LAYER_SPEC_FIELDS.items():
    getattr(LayerSpec, _name).__doc__ = _doc
del _name, _doc


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
        config: a ``transformers`` config object, a ``config.json`` dict, or a path to a
            ``config.json`` (or to the checkpoint directory holding it); a multimodal
            config is read through its ``text_config``.
        seq_len, dtype: as :func:`~posenc.hf_config.rope_from_config`.

    Returns:
        ``num_hidden_layers`` :class:`LayerSpec` entries.

    Raises:
        ConfigFileError: (a ``ValueError``) a path that is not a readable
            ``config.json`` object (:func:`~posenc.hf_config.read_config`).
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
        temperature = (_number("config", "floor_scale", d.get("floor_scale", 8192),
                               integer=True, minimum=1),
                       _number("config", "attn_scale", d.get("attn_scale", 0.1)))
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
        if w is not None:
            w = check_int(f"config[{fam.window_key!r}]", w, minimum=0) // fam.window_divisor
        windowed = lt == "sliding_attention" or fam.window_every_layer
        sw = w + fam.window_offset if windowed and w else None
        chunk = None
        if lt == "chunked_attention" and di.get("attention_chunk_size") is not None:
            chunk = check_int("config['attention_chunk_size']", di["attention_chunk_size"],
                              minimum=1)
        if not uses:
            specs.append(LayerSpec(lt, False, None, 1.0, sw, temperature,
                                   head_dim=_type_head_dim(di, fam, lt),
                                   rope_channels=fam.channels, layout=layout,
                                   attention_chunk_size=chunk))
            continue
        per_type = nested or fam.flat_rope_types or fam.type_bases or fam.type_head_dim
        key = (lt if per_type else "", tuple(sorted((k, str(v)) for k, v in over.items())))
        if key not in cache:
            lt_arg = lt if per_type else None
            p = rope_parameters(di, layer_type=lt_arg)
            inv, att = rope_from_config(di, layer_type=lt_arg, seq_len=seq_len, dtype=dtype)
            cache[key] = (p, inv, att)
        p, inv, att = cache[key]
        channels = fam.channels
        if p["rope_type"] == "proportional" and fam.channels == "leading":
            channels = "spread"  # on an MLA rope slice it spreads over the slice's pairs
        specs.append(LayerSpec(
            lt, True, inv, att, sw, None,
            head_dim=p["full_head_dim"] or _type_head_dim(di, fam, lt),
            rotary_dim=p["rotary_dim"], rope_channels=channels, layout=layout,
            rope_type=p["rope_type"], rope_theta=p["rope_theta"],
            query_scale=p.get("query_scale"), ignored=p.get("ignored", ()),
            scaling=_scaling(p), attention_chunk_size=chunk,
        ))
    return specs


#: The keys of a resolved RoPE dict that parametrise its ``rope_type`` (the rest — base,
#: widths, source — have fields of their own), in the order :attr:`LayerSpec.scaling`
#: lists them.
_SCALING_KEYS = (
    "factor", "original_max_position_embeddings", "attention_factor", "beta_fast",
    "beta_slow", "mscale", "mscale_all_dim", "truncate", "low_freq_factor",
    "high_freq_factor", "alpha", "length_mscale", "short_factor", "long_factor",
)


def _scaling(p: dict) -> tuple[tuple[str, object], ...]:
    out = [(k, tuple(p[k]) if isinstance(p[k], list) else p[k])
           for k in _SCALING_KEYS if k in p]
    if p["rope_type"] == "dynamic" and "alpha" not in p:
        out.append(("max_position_embeddings", p["max_position_embeddings"]))
    return tuple(out)


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
