"""What a model does with positions, layer by layer, in a few lines: the report of
``python -m posenc inspect``.

:func:`config_report` reads a config (object, ``config.json`` dict or path) with
:func:`~posenc.hf_config.layer_specs` and collapses the layer list into runs of identical
layers (:class:`LayerGroup`): same layer type, window, positions or not, base, widths,
channels, pairing, scaling and extra terms, and the same ``inv_freq`` to the last bit.
Its :meth:`ConfigReport.text` is what the command line prints, :meth:`ConfigReport.to_dict`
what ``--json`` prints (:meth:`ConfigReport.to_json`), and :meth:`ConfigReport.from_dict`
reads that back.

Source: every fact is :func:`~posenc.hf_config.layer_specs`'s (checked against each
family's own ``transformers`` modules by ``tests/test_hf_sweep.py``); the layer pattern is
:func:`~posenc.hf_config.summary.layer_pattern`'s.
"""

from __future__ import annotations

import json
import math
import os
import re
import textwrap
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from fractions import Fraction

from .families import ATTENTION_TYPES
from .files import read_config
from .layers import LayerSpec, layer_specs
from .params import _as_dict
from .summary import _num, layer_pattern, period  # one number style for the atlas and the report

__all__ = ["ConfigReport", "LayerGroup", "config_report", "layer_ranges"]

#: Width the text report wraps at (characters).
WIDTH = 88
#: A run list longer than this many ranges is shortened to its first three and last one.
_MAX_RANGES = 8


@dataclass(frozen=True)
class LayerGroup:
    """Layers that do the same thing with positions (one
    :class:`~posenc.hf_config.LayerSpec`, many indices).

    Every field but ``layers`` and the frequency summary is the
    :class:`~posenc.hf_config.LayerSpec` field
    of the same name; ``scaling`` and ``ignored`` are lists of pairs, as JSON keeps them.
    """

    #: the layer indices (from 0) of the run, ascending.
    layers: tuple[int, ...]
    layer_type: str
    use_rope: bool
    sliding_window: int | None
    head_dim: int
    attention_chunk_size: int | None = None
    rotary_dim: int = 0
    rope_channels: str | None = None
    layout: str | None = None
    rope_type: str | None = None
    rope_theta: float | None = None
    attention_factor: float = 1.0
    scaling: tuple[tuple[str, object], ...] = ()
    #: number of rotating pairs (non-zero frequencies), the highest and lowest frequency
    #: in radians per position (``None`` without RoPE).
    num_frequencies: int = 0
    highest_frequency: float | None = None
    lowest_frequency: float | None = None
    attn_temperature: tuple[int, float] | None = None
    query_scale: tuple[float, int] | None = None
    ignored: tuple[tuple[str, str], ...] = ()

    def describe(self) -> str:
        """The group's facts in words, without the layer list."""
        out = [self.layer_type]
        attention = self.use_rope or self.layer_type in ATTENTION_TYPES
        if attention:
            if self.sliding_window:
                out.append(f"window {self.sliding_window}")
            elif self.attention_chunk_size:
                out.append(f"chunks of {self.attention_chunk_size}")
            else:
                out.append("global")
        if self.use_rope:
            out.append(f"RoPE base {_num(self.rope_theta)}")
            out.append(_rotated(self.rotary_dim, self.head_dim, self.rope_channels))
            out.append(f"{self.layout} pairs")
            out.append(_scaling(self.rope_type, self.scaling))
            if self.attention_factor != 1.0:
                out.append(f"attention factor {self.attention_factor:.6g}")
        elif attention:
            out.append(f"NoPE (no position encoding), head {self.head_dim}")
        else:  # linear attention, SSM and convolution blocks carry order in their recurrence
            out.append("no RoPE (not softmax attention: its recurrence or convolution "
                       "carries order)")
        if self.attn_temperature is not None:
            floor, scale = self.attn_temperature
            out.append(f"query temperature (floor_scale {floor}, attn_scale {_num(scale)})")
        if self.query_scale is not None:
            beta, orig = self.query_scale
            out.append(f"query scale by position (beta {_num(beta)}, original length {orig})")
        text = ", ".join(out)
        if self.use_rope and self.num_frequencies:
            hi, lo = 2 * math.pi / self.highest_frequency, 2 * math.pi / self.lowest_frequency
            text += (f"; {self.num_frequencies} frequencies, wavelengths {_sig(hi)} to "
                     f"{_sig(lo)} positions")
        return text


@dataclass(frozen=True)
class ConfigReport:
    """A model's layers in runs (:class:`LayerGroup`), with the pattern they form.

    ``model_type`` is the text model's (the one :data:`~posenc.hf_config.FAMILIES` reads);
    ``outer_model_type`` the multimodal wrapper's when the config was read through its
    ``text_config``, else ``None``. ``pattern`` is
    :func:`~posenc.hf_config.summary.layer_pattern` of the layer types and ``period`` the
    length of the shortest repeating unit of the layer specs (the number of layers when
    nothing repeats). ``seq_len`` is the length the length-dependent RoPE types (dynamic
    NTK, LongRoPE) were evaluated at, ``None`` for what the model builds at load time.
    """

    model_type: str
    num_layers: int
    pattern: str
    period: int
    groups: tuple[LayerGroup, ...]
    outer_model_type: str | None = None
    seq_len: int | None = None
    #: RoPE-dict keys the family's code never reads, with the reason (``[(key, why)]``).
    ignored: tuple[tuple[str, str], ...] = field(default=())

    def text(self, *, every_layer: bool = False) -> str:
        """The report as ``python -m posenc inspect`` prints it.

        Args:
            every_layer: one unwrapped line per layer (``--layers``, for ``grep``) instead
                of one wrapped entry per run.
        """
        via = f" (via {self.outer_model_type})" if self.outer_model_type else ""
        head = f"{self.model_type}{via}: {self.pattern}"
        nope = sum(len(g.layers) for g in self.groups
                   if not g.use_rope and g.layer_type in ATTENTION_TYPES)
        if nope:
            head += f"; NoPE on {nope} of {self.num_layers}"
        if self.period < self.num_layers and len(self.groups) > 1:
            head += f"; the layers repeat every {self.period}"
        lengthy = any(g.rope_type in _LENGTH_DEPENDENT for g in self.groups)
        if lengthy:
            head += ("; frequencies at load time" if self.seq_len is None
                     else f"; frequencies at {self.seq_len} tokens")
        lines = [head]
        rows = []
        for g in self.groups:
            if every_layer:
                rows.extend((f"layer {i}", g) for i in g.layers)
            else:
                word = "layer" if len(g.layers) == 1 else "layers"
                rows.append((f"{word} {layer_ranges(g.layers)}", g))
        if every_layer:
            rows.sort(key=lambda r: int(r[0].split()[1]))
        for label, g in rows:
            if every_layer:
                lines.append(f"  {label}: {g.describe()}")
                continue
            lines.extend(textwrap.wrap(f"{label}: {g.describe()}", WIDTH,
                                       initial_indent="  ", subsequent_indent="    ",
                                       break_on_hyphens=False))
        for key, why in self.ignored:
            lines.extend(textwrap.wrap(f"ignored by this family: {key} ({why})", WIDTH,
                                       initial_indent="  ", subsequent_indent="    "))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def to_dict(self) -> dict:
        """The same facts as plain JSON-ready values: lists for tuples, and objects for
        ``scaling`` (``{key: value}``) and ``ignored`` (``{key: reason}``)."""
        out = _plain(asdict(self))
        for g in [out, *out["groups"]]:
            g["ignored"] = dict(g["ignored"])
        for g in out["groups"]:
            g["scaling"] = dict(g["scaling"])
        return out

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text (what ``--json`` prints): two-space indents, lists
        of numbers on one line.

        Raises:
            ValueError: a value that is not finite (JSON has no ``Infinity``).
        """
        text = json.dumps(self.to_dict(), indent=2, allow_nan=False, ensure_ascii=False)
        return re.sub(r"\[\s+(-?[\d.e+-]+(?:,\s+-?[\d.e+-]+)*)\s+\]",
                      lambda m: "[" + re.sub(r",\s+", ", ", m.group(1)) + "]", text)

    @classmethod
    def from_dict(cls, data: dict) -> ConfigReport:
        """The report :meth:`to_dict` wrote (``json.loads`` of ``--json`` output).

        Raises:
            KeyError, TypeError: ``data`` is not a report's dict.
        """
        groups = tuple(LayerGroup(**_fields(g)) for g in data["groups"])
        return cls(groups=groups, **_fields({k: v for k, v in data.items() if k != "groups"}))


_TUPLE_FIELDS = {"layers", "attn_temperature", "query_scale"}
_PAIR_FIELDS = {"scaling", "ignored"}
#: The RoPE types whose frequencies depend on the current length.
_LENGTH_DEPENDENT = ("dynamic", "longrope")


def _fields(d: dict) -> dict:
    out = {}
    for k, v in d.items():
        if k in _PAIR_FIELDS:
            v = tuple((key, _tuples(value)) for key, value in v.items())
        elif k in _TUPLE_FIELDS:
            v = _tuples(v)
        out[k] = v
    return out


def _plain(x):
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_plain(v) for v in x]
    return x


def _tuples(x):
    return tuple(_tuples(v) for v in x) if isinstance(x, list) else x


def _sig(x: float) -> str:
    """Three significant digits, exponents written like the bases: ``58470`` ->
    ``"5.85e4"``, ``6.2832`` -> ``"6.28"``."""
    text = f"{x:.3g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}e{int(exponent)}"
    return text


def _rotated(r: int, d: int, channels: str | None) -> str:
    if r == d and channels == "leading":
        return f"all {d} channels"
    frac = Fraction(r, d)
    return f"{r} of {d} channels ({frac}, {channels})"


def _scaling(rope_type: str | None, scaling) -> str:
    if rope_type in (None, "default"):
        return "no scaling"
    parts = []
    for k, v in scaling:
        if k == "attention_factor":  # printed once, as the group's attention factor
            continue
        if isinstance(v, tuple | list) and len(v) > 2:
            parts.append(f"{k} <{len(v)} values>")
        elif isinstance(v, float):
            parts.append(f"{k} {_num(v)}")
        else:
            parts.append(f"{k} {v}")
    return f"{rope_type} ({', '.join(parts)})" if parts else rope_type


def layer_ranges(indices) -> str:
    """``[0, 1, 2, 4, 5, 6, 8]`` -> ``"0–2, 4–6, 8"``; past eight ranges the first three,
    ``…`` and the last, with the count (``"0–4, 6–10, 12–16, …, 42–46 (40 layers)"``).

    >>> layer_ranges([0, 1, 2, 4, 5, 6, 8])
    '0–2, 4–6, 8'
    """
    idx = sorted(indices)
    runs: list[tuple[int, int]] = []
    for i in idx:
        if runs and i == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    text = [f"{a}" if a == b else f"{a}–{b}" for a, b in runs]
    if len(text) > _MAX_RANGES:
        return ", ".join([*text[:3], "…", text[-1]]) + f" ({len(idx)} layers)"
    return ", ".join(text)


def _group_key(spec: LayerSpec) -> tuple:
    inv = None if spec.inv_freq is None else tuple(spec.inv_freq.tolist())
    return (spec.layer_type, spec.use_rope, spec.sliding_window, spec.attention_chunk_size,
            spec.head_dim,
            spec.rotary_dim, spec.rope_channels if spec.use_rope else None,
            spec.layout if spec.use_rope else None, spec.rope_type, spec.rope_theta,
            spec.attention_factor, spec.scaling, inv, spec.attn_temperature,
            spec.query_scale, spec.ignored)


def _group(indices: list[int], spec: LayerSpec) -> LayerGroup:
    freqs = [] if spec.inv_freq is None else [f for f in spec.inv_freq.tolist() if f > 0]
    return LayerGroup(
        layers=tuple(indices), layer_type=spec.layer_type, use_rope=spec.use_rope,
        sliding_window=spec.sliding_window, head_dim=spec.head_dim,
        attention_chunk_size=spec.attention_chunk_size,
        rotary_dim=spec.rotary_dim,
        rope_channels=spec.rope_channels if spec.use_rope else None,
        layout=spec.layout if spec.use_rope else None, rope_type=spec.rope_type,
        rope_theta=spec.rope_theta, attention_factor=float(spec.attention_factor),
        scaling=spec.scaling, num_frequencies=len(freqs),
        highest_frequency=max(freqs) if freqs else None,
        lowest_frequency=min(freqs) if freqs else None,
        attn_temperature=spec.attn_temperature, query_scale=spec.query_scale,
        ignored=spec.ignored,
    )


def config_report(config, *, seq_len: int | None = None) -> ConfigReport:
    """The compact per-layer report of a config: what ``python -m posenc inspect`` prints.

    Args:
        config: a ``transformers`` config object, a ``config.json`` dict, or a path to a
            ``config.json`` or its directory (as :func:`~posenc.hf_config.layer_specs`).
        seq_len: tokens so far, for the length-dependent RoPE types (``"dynamic"``,
            ``"longrope"``); ``None`` reports what the model builds at load time (as
            :func:`~posenc.hf_config.rope_from_config`).

    Returns:
        A :class:`ConfigReport`: runs of identical layers in the order their first layer
        appears, the layer pattern and its period, ignored keys.

    Raises:
        ValueError, TypeError: what :func:`~posenc.hf_config.layer_specs` raises (an
            unknown or refused family, a config it cannot read: the message says why).

    Example (Llama 3.1 8B's published ``config.json``, the scaling block abridged to what
    it says):

    >>> from posenc.hf_config import config_report
    >>> report = config_report({
    ...     "model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
    ...     "num_hidden_layers": 32, "max_position_embeddings": 131072,
    ...     "rope_theta": 500000.0, "rope_scaling": {
    ...         "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
    ...         "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}})
    >>> print(report.text())
    llama: all full (32 layers)
      layers 0–31: full_attention, global, RoPE base 5e5, all 128 channels, half pairs,
        llama3 (factor 8, original_max_position_embeddings 8192, low_freq_factor 1,
        high_freq_factor 4); 64 frequencies, wavelengths 6.28 to 2.05e7 positions
    >>> report.groups[0].rope_type, len(report.groups[0].layers)
    ('llama3', 32)
    """
    if isinstance(config, str | os.PathLike):
        config = read_config(config)
    d = _as_dict(config)
    specs = layer_specs(d, seq_len=seq_len)
    given = config.get("model_type") if isinstance(config, Mapping) \
        else getattr(config, "model_type", None)
    outer = given if given and given != d["model_type"] else None
    keys: dict[tuple, list[int]] = {}
    first: dict[tuple, LayerSpec] = {}
    for i, s in enumerate(specs):
        k = _group_key(s)
        keys.setdefault(k, []).append(i)
        first.setdefault(k, s)
    groups = tuple(_group(idx, first[k]) for k, idx in keys.items())
    ignored = tuple(dict.fromkeys(pair for s in specs for pair in s.ignored))
    return ConfigReport(
        model_type=d["model_type"], num_layers=len(specs),
        pattern=layer_pattern([s.layer_type for s in specs]),
        period=period([_group_key(s) for s in specs]), groups=groups,
        outer_model_type=outer, seq_len=seq_len, ignored=ignored,
    )
