"""Read RoPE settings from a Hugging Face model config: what a checkpoint's config does.

A ``transformers`` config object (``LlamaConfig``, ``Gemma3Config``, …) or the plain dict of
a ``config.json`` goes in; the frequencies and attention factor that ``transformers`` 5.24
builds for it come out, in the ``(inv_freq, attention_factor)`` form of
:mod:`posenc.scaling`:

* :func:`rope_parameters` — the resolved settings of one layer type (``rope_type``,
  ``rope_theta``, ``head_dim``, ``rotary_dim``, the scaling keys), with every default and
  legacy spelling applied the way ``transformers`` applies it;
* :func:`rope_from_config` — ``(inv_freq, attention_factor)`` for those settings;
* :func:`layer_specs` — one :class:`LayerSpec` per layer: RoPE or none (Llama 4's NoPE
  layers), its frequencies (Gemma 3's local and global bases), and its sliding window.

Shape notation: ``d`` = ``head_dim``, ``r`` = ``rotary_dim``; ``inv_freq`` is ``(r/2,)``
(``(d/2,)`` for ``proportional``), radians per position.

What is read, in ``transformers``' order of precedence:

* the RoPE dict: ``rope_scaling`` (older configs) if non-empty, else ``rope_parameters``;
  it may be nested per layer type (``{"sliding_attention": {...}, "full_attention": {...}}``);
  ``rope_type`` or its old name ``type``, with the family's legacy names
  (``Family.rope_type_aliases``: ``"su"`` and ``"yarn"`` mean ``"longrope"`` in Phi-3
  configs; ``"mrope"`` means the default 1-D frequencies in Qwen2-VL's);
* ``rope_theta``: the RoPE dict (the class's own when a file has none:
  :attr:`Family.default_rope_parameters`), then the top level, then ``rotary_emb_base``
  (GPT-NeoX; GPT-J and CodeGen hard-code 10000: :attr:`Family.hardcoded_base`),
  then the config class's default (:attr:`Family.default_theta`: 10000 unless the class
  says otherwise; Gemma 3: 1e6 global, ``rope_local_base_freq`` or 1e4 local);
* the rotated width: ``rotary_dim`` at the top level (GPT-J, CodeGen), else
  ``int(head_dim · partial_rotary_factor)`` with the factor from the RoPE dict, the top
  level (where the config class moves it: :attr:`Family.top_level_rope`), or
  ``rotary_pct`` (GPT-NeoX, default 0.25 there; 1 elsewhere) — except that most families'
  ``"default"`` rope never reads the factor (:attr:`Family.default_rope_partial`; the key
  is then reported as ignored);
* ``head_dim``: ``qk_rope_head_dim`` (DeepSeek's rotary part), else ``head_dim``, else
  ``hidden_size // num_attention_heads``;
* ``original_max_position_embeddings`` (yarn, longrope, llama3): the top level first (Phi-3
  keeps it there), then the RoPE dict, then ``max_position_embeddings``; dynamic NTK uses
  ``max_position_embeddings`` itself, as ``transformers`` does.

Legacy keys a family's config class renames in its constructor (MiniMax-M2's
``rotary_dim``, LFM2's ``full_attn_idxs``, old layer-type names such as ``"mamba"``) are
renamed first, by the family record's ``translate`` function and
:data:`~posenc.hf_config.families.LEGACY_LAYER_TYPES`.

A multimodal config is read through its ``text_config``. Unknown keys in the RoPE dict, an
unknown ``rope_type``, missing required keys and malformed values raise an error that names
the key. Source for every rule: ``transformers`` 5.24 ``modeling_rope_utils``
(``RotaryEmbeddingConfigMixin`` and ``ROPE_INIT_FUNCTIONS``) and the model config classes
named above; ``tests/test_hf_config.py`` checks each against the model's own rotary module.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import torch

from .. import scaling
from ._config import _as_dict, _number
from ._patterns import _layer_types
from .families import family

__all__ = ["ROPE_KEYS", "rope_from_config", "rope_parameters"]

#: Every key a RoPE dict may hold (``transformers``' ``RopeParameters`` plus the legacy
#: ``type``); anything else is rejected as a typo.
ROPE_KEYS = frozenset({
    "rope_type", "type", "rope_theta", "partial_rotary_factor", "factor",
    "original_max_position_embeddings", "attention_factor", "beta_fast", "beta_slow",
    "short_factor", "long_factor", "low_freq_factor", "high_freq_factor", "mscale",
    "mscale_all_dim", "truncate", "mrope_section", "mrope_interleaved",
})


#: Why a family's ``"default"`` rope ignores ``partial_rotary_factor``
#: (:attr:`Family.default_rope_partial`).
_IGNORED_PARTIAL = ("the family's default rope (its compute_default_rope_parameters) builds "
                    "frequencies over the whole head; only the other rope types read it")
#: Why a family with :attr:`Family.hardcoded_base` ignores the config's RoPE keys.
_HARDCODED = ("the family's rotary module hard-codes its base and no scaling "
              "(create_sinusoidal_positions); nothing reads this key")
#: Why a legacy ``rope_scaling`` that names its type ``type`` is ignored
#: (:attr:`Family.legacy_type_shadowed`).
_SHADOWED = ("the config class updates a default {'rope_type': 'default'} with the legacy "
             "rope_scaling, so its old 'type' key is shadowed: the layers get no scaling")
#: Why a family with :attr:`Family.reads_rope_scaling` false ignores ``rope_scaling``.
_UNREAD_SCALING = ("the config class keeps rope_scaling as a plain field that its "
                   "standardize_rope_params never reads: the layers get the default rope")

# --------------------------------------------------------------------------- plumbing


def _rope_source(d: dict, fam=None) -> tuple[str, dict]:
    """``(key name, RoPE dict)``: ``rope_scaling`` if non-empty (and the family's class
    reads it: :attr:`Family.reads_rope_scaling`), else ``rope_parameters``."""
    keys = ("rope_scaling", "rope_parameters")
    for key in keys if fam is None or fam.reads_rope_scaling else keys[1:]:
        value = d.get(key)
        if value is None or (isinstance(value, Mapping) and not value):
            continue
        if not isinstance(value, Mapping):
            raise TypeError(f"{key} must be a dict, got {type(value).__name__}")
        return key, dict(value)
    return "rope_parameters", {}


def _nested(d: dict, raw: dict) -> bool:
    labels = set(d.get("_rope_type_labels") or d.get("layer_types") or ())
    if any(k in labels for k in raw):
        return True
    return bool(raw) and all(
        k not in ROPE_KEYS and (v is None or isinstance(v, Mapping)) for k, v in raw.items()
    )


def _per_type(d: dict) -> tuple[str, dict, bool]:
    """``(source key, RoPE dict, nested)``, with a family's per-type rules made explicit.

    A flat RoPE dict becomes one dict per layer type when the family's record says the
    types differ: OLMo 3's scaling on full attention only (:attr:`Family.flat_rope_types`),
    a base per type read from its own key (:attr:`Family.type_bases`: Gemma 3, ModernBERT),
    or a head width per type (:attr:`Family.type_head_dim`: Gemma 4).
    """
    fam = family(str(d.get("model_type", "")))
    key, raw = _rope_source(d, fam)
    nested = _nested(d, raw)
    if nested and fam.type_bases:  # a per-type dict without a base takes the type's own
        raw = {lt: dict(v) if isinstance(v, Mapping) else v for lt, v in raw.items()}
        for lt, k, default in fam.type_bases:
            if isinstance(raw.get(lt), dict) and raw[lt].get("rope_theta") is None:
                raw[lt]["rope_theta"] = default if d.get(k) is None else d[k]
    if nested or not (fam.flat_rope_types or fam.type_bases or fam.type_head_dim):
        return key, raw, nested
    bases = {lt: (k, default) for lt, k, default in fam.type_bases}
    per = {}
    for lt in dict.fromkeys(_layer_types(d, fam)):
        scaled = fam.flat_rope_types is None or lt in fam.flat_rope_types
        p = dict(raw) if (raw and scaled) else {"rope_type": "default"}
        if not scaled and "rope_theta" in raw:
            p["rope_theta"] = raw["rope_theta"]
        if lt in bases:
            k, default = bases[lt]
            p["rope_theta"] = d.get(k, default) if k != "rope_theta" or "rope_theta" not in p \
                else p["rope_theta"]
            if p["rope_theta"] is None:
                p["rope_theta"] = default
        else:
            p.setdefault("rope_theta", d.get("rope_theta", fam.default_theta))
        per[lt] = p
    return key, per, True


def _head_dim(d: dict, fam=None, layer_type: str | None = None) -> int:
    """Width of the head that RoPE's frequencies are built for (the rope slice for MLA)."""
    keys = ([fam.head_dim_key] if fam and fam.head_dim_key else []) + ["head_dim"]
    if fam and layer_type is not None:
        for lt, key, default in fam.type_head_dim:
            if lt == layer_type:
                return _number("config", key, d.get(key, default), integer=True)
    for key in keys:
        if d.get(key) is not None:
            return _number("config", key, d[key], integer=True)
    try:
        hidden, heads = d["hidden_size"], d["num_attention_heads"]
    except KeyError as err:
        raise ValueError(
            f"config has no head_dim and no {err.args[0]!r} to derive it from "
            "(head_dim = hidden_size // num_attention_heads)"
        ) from None
    return _number("config", "hidden_size", hidden, integer=True, minimum=1) // _number(
        "config", "num_attention_heads", heads, integer=True, minimum=1
    )


def _maybe_full_head_dim(d: dict, fam, layer_type: str | None) -> int | None:
    try:
        return _full_head_dim(d, fam, layer_type)
    except ValueError:
        return None  # an MLA config without its nope width: only layer_specs needs it


def _full_head_dim(d: dict, fam, layer_type: str | None = None) -> int:
    """Width of the whole q/k head (MLA: nope + rope slices)."""
    if fam.full_head_dim:
        a, b = fam.full_head_dim
        for k in (a, b):
            if d.get(k) is None:
                raise ValueError(f"config[{k!r}] is required: the whole q/k head of "
                                 f"{d.get('model_type')!r} is {a} + {b}")
        return sum(_number("config", k, d[k], integer=True) for k in (a, b))
    return _head_dim(d, fam, layer_type)


# --------------------------------------------------------------------------- public


def rope_parameters(config, *, layer_type: str | None = None) -> dict:
    """The RoPE settings ``transformers`` resolves for ``config`` (one layer type).

    Args:
        config: a ``transformers`` config object or a ``config.json`` dict (a multimodal
            config is read through its ``text_config``).
        layer_type: which entry of a per-layer-type RoPE dict (e.g. Gemma 3's
            ``"sliding_attention"`` / ``"full_attention"``); required when the config has
            one, optional otherwise (any name in ``layer_types`` then gives the same).

    Returns:
        A new dict with ``rope_type`` (a key of :data:`posenc.scaling.ROPE_TYPES`),
        ``rope_theta``, ``head_dim``, ``rotary_dim``, ``partial_rotary_factor``,
        ``max_position_embeddings``, the type's own keys (``factor``,
        ``original_max_position_embeddings``, ``beta_fast`` …) with defaults applied, and
        ``source`` (``"rope_scaling"`` or ``"rope_parameters"``).

    Raises:
        TypeError: ``config`` of another kind; a RoPE dict that is not a dict; a value of
            the wrong type (the message names the key).
        ValueError: an unknown ``rope_type`` or an unknown key (a typo); a missing
            required key (e.g. ``factor`` for ``"linear"``); ``layer_type`` missing or not
            in the config; no ``head_dim`` and nothing to derive it from; an odd rotary
            width.

    Source: matches ``transformers`` 5.24 ``RotaryEmbeddingConfigMixin.standardize_rope_params``
    and the ``_compute_*_parameters`` readers (tested per model family).
    """
    d = _as_dict(config)
    key, raw, nested = _per_type(d)
    layer_types = list(d.get("layer_types") or ())
    if nested:
        available = [k for k, v in raw.items() if v is not None]
        if layer_type is None or layer_type not in raw:
            raise ValueError(
                f"{key} is per layer type; pass layer_type as one of {available}, got "
                f"{layer_type!r}"
            )
        if raw[layer_type] is None:
            raise ValueError(f"{key}[{layer_type!r}] is None: that layer type has no RoPE")
        p, where = dict(raw[layer_type]), f"{key}[{layer_type!r}]"
    else:
        if layer_type is not None and layer_types and layer_type not in layer_types:
            raise ValueError(
                f"layer_type must be one of config.layer_types {sorted(set(layer_types))}, "
                f"got {layer_type!r}"
            )
        p, where = raw, key
    model_type = str(d.get("model_type", ""))
    fam = family(model_type)
    ignored = tuple((k, why) for k, why in fam.ignored_keys if k in p)
    if not fam.reads_rope_scaling and d.get("rope_scaling"):
        ignored += (("rope_scaling", _UNREAD_SCALING),)
    known = ROPE_KEYS | {k for k, _ in fam.ignored_keys}
    if fam.query_scale_key:
        known = known | {fam.query_scale_key}
    if fam.ntk_alpha_key:
        known = known | {fam.ntk_alpha_key}
    if fam.length_mscale:
        known = known | set(fam.length_mscale)
    unknown = sorted(set(p) - known)
    if unknown:
        raise ValueError(
            f"{where} has unknown key(s) {unknown} for model_type {model_type!r}; allowed: "
            f"{sorted(known)}"
        )
    if fam.hardcoded_base is not None:  # GPT-J, CodeGen: nothing reads the RoPE keys
        loose = ["rope_theta"] if d.get("rope_theta") is not None and "rope_theta" not in p \
            else []
        ignored += tuple((k, _HARDCODED) for k in [*sorted(p), *loose])
        p = {"rope_theta": fam.hardcoded_base}
    if fam.legacy_type_shadowed and key == "rope_scaling" and "rope_type" not in p:
        # Gemma 3, OLMo 3 …: {"rope_type": "default"}.update(rope_scaling) keeps "default"
        ignored += tuple((k, _SHADOWED) for k in sorted(p) if k != "rope_theta")
        p = {k: v for k, v in p.items() if k == "rope_theta"}
    rope_type = p.get("rope_type", p.get("type", "default"))
    rope_type = dict(fam.rope_type_aliases).get(rope_type, rope_type)  # Phi-3's "su" …
    if rope_type not in scaling.ROPE_TYPES:
        raise ValueError(
            f"{where}['rope_type'] must be one of {sorted(scaling.ROPE_TYPES)}, got "
            f"{rope_type!r}"
        )

    top = {k: d[k] for k in fam.top_level_rope if k in d}  # Mellum …: the RoPE dict only
    theta = p.get("rope_theta")
    if theta is None:
        theta = top.get("rope_theta", d.get("rotary_emb_base", fam.default_theta))
    prf = p.get("partial_rotary_factor")
    if prf is None:
        prf = top.get("partial_rotary_factor")
    if prf is None:
        prf = d.get("rotary_pct")
    if prf is None:
        prf = fam.partial_rotary_factor if fam.partial_rotary_factor is not None else 1.0
    prf = _number(where, "partial_rotary_factor", prf)
    if not 0.0 < prf <= 1.0:
        raise ValueError(f"{where}['partial_rotary_factor'] must be in (0, 1], got {prf:g}")
    if rope_type == "default" and not fam.default_rope_partial and prf != 1.0:
        # the family's compute_default_rope_parameters spans the whole head (Llama's)
        ignored += (("partial_rotary_factor", _IGNORED_PARTIAL),)
        prf = 1.0
    head_dim = _head_dim(d, fam, layer_type)
    if rope_type == "proportional":
        rotary_dim = 2 * int(prf * head_dim // 2)
    elif fam.rotary_dim_key and d.get(fam.rotary_dim_key) is not None:
        rotary_dim = _number("config", fam.rotary_dim_key, d[fam.rotary_dim_key], integer=True)
    else:
        rotary_dim = int(head_dim * prf)
    if rotary_dim % 2 or not 0 < rotary_dim <= head_dim and rope_type != "proportional":
        raise ValueError(
            f"the rotary width must be even and in [2, head_dim = {head_dim}], got "
            f"{rotary_dim} (head_dim {head_dim} x partial_rotary_factor {prf:g})"
        )
    max_pos = d.get("max_position_embeddings")
    out = {
        "source": key,
        "rope_type": rope_type,
        "rope_theta": _number(where, "rope_theta", theta),
        "head_dim": head_dim,
        "rotary_dim": rotary_dim,
        "partial_rotary_factor": prf,
        "max_position_embeddings": max_pos,
        "full_head_dim": _maybe_full_head_dim(d, fam, layer_type),
        "ignored": ignored,
    }
    if fam.query_scale_key and p.get(fam.query_scale_key) is not None:
        orig_q = p.get("original_max_position_embeddings", max_pos)
        out["query_scale"] = (_number(where, fam.query_scale_key, p[fam.query_scale_key]),
                              _number(where, "original_max_position_embeddings", orig_q,
                                      integer=True))

    _READERS[rope_type](_Read(p, raw, key, where, rope_type, max_pos, nested, d, fam), out)
    return out


# --------------------------------------------------------------------------- rope types
# One reader per rope_type (as transformers dispatches its own validation,
# ``RotaryEmbeddingConfigMixin._validate_*_rope_parameters``): each adds that type's keys,
# with its defaults, to the resolved settings; one builder per rope_type turns them into
# ``(inv_freq, attention_factor)`` with posenc.scaling. A family's variant of a type is a
# key its record names (Hunyuan's ntk_alpha_key, Phi-MoE's length_mscale), read here.


class _Read(NamedTuple):
    """What a rope-type reader sees: the layer type's RoPE dict ``p``, the top-level one
    ``raw``, its config key and the ``where`` prefix of error messages, the resolved type,
    ``max_position_embeddings``, whether the dict is per layer type, the config dict and
    the family record."""

    p: dict
    raw: dict
    key: str
    where: str
    rope_type: str
    max_pos: object
    nested: bool
    d: dict
    fam: object

    def need(self, name: str):
        if self.p.get(name) is None:
            raise ValueError(f"{self.where}[{name!r}] is required for rope_type "
                             f"{self.rope_type!r}")
        return self.p[name]

    def number(self, name: str, value, *, integer: bool = False,
               minimum: int | None = None):
        return _number(self.where, name, value, integer=integer, minimum=minimum)

    def numbers(self, name: str) -> list[float]:
        """A required list of finite numbers (LongRoPE's per-pair factors)."""
        value = self.need(name)
        if isinstance(value, str | bytes) or not hasattr(value, "__iter__"):
            raise TypeError(f"{self.where}[{name!r}] must be a list of numbers, got {value!r}")
        return [self.number(f"{name}[{i}]", v) for i, v in enumerate(value)]


def _original(c: _Read, out: dict) -> None:
    """``original_max_position_embeddings``: the top level first (Phi-3 keeps it there),
    then the RoPE dict, then ``max_position_embeddings``."""
    if not c.nested and c.d.get("original_max_position_embeddings") is not None:
        orig = c.d["original_max_position_embeddings"]
    else:
        orig = c.p.get("original_max_position_embeddings", c.max_pos)
    if orig is None:
        raise ValueError(
            f"{c.where}['original_max_position_embeddings'] is required for rope_type "
            f"{c.rope_type!r} (config has no max_position_embeddings to fall back on)"
        )
    out["original_max_position_embeddings"] = c.number(
        "original_max_position_embeddings", orig, integer=True, minimum=1)


def _factor_or_ratio(c: _Read, out: dict) -> None:
    """yarn / longrope: ``factor``, else ``max_position_embeddings / original``; an explicit
    ``attention_factor`` when given."""
    factor = c.p.get("factor")
    if factor is None:
        if c.max_pos is None:
            raise ValueError(f"{c.where}['factor'] is required for rope_type {c.rope_type!r}")
        factor = c.max_pos / out["original_max_position_embeddings"]
    out["factor"] = c.number("factor", factor)
    if c.p.get("attention_factor") is not None:
        out["attention_factor"] = c.number("attention_factor", c.p["attention_factor"])


def _read_default(c: _Read, out: dict) -> None:
    """``default``: nothing beyond the base and widths."""


def _read_linear(c: _Read, out: dict) -> None:
    """``linear``: ``factor`` (required)."""
    out["factor"] = c.number("factor", c.need("factor"))


def _read_dynamic(c: _Read, out: dict) -> None:
    """``dynamic``: ``factor`` and the top-level ``max_position_embeddings`` (both required);
    a family's fixed NTK alpha (Hunyuan: :attr:`Family.ntk_alpha_key`) when set."""
    out["factor"] = c.number("factor", c.need("factor"))
    if c.max_pos is None:
        raise ValueError("config['max_position_embeddings'] is required for rope_type "
                         "'dynamic'")
    if c.fam.ntk_alpha_key and c.p.get(c.fam.ntk_alpha_key):
        out["alpha"] = c.number(c.fam.ntk_alpha_key, c.p[c.fam.ntk_alpha_key])


def _read_yarn(c: _Read, out: dict) -> None:
    """``yarn``: original length, factor (or the length ratio), ``attention_factor``; the
    ``mscale`` pair only when both are truthy, betas falling back to 32/1 when falsy, and
    ``truncate`` from the top-level RoPE dict — as ``_compute_yarn_parameters`` reads them."""
    _original(c, out)
    _factor_or_ratio(c, out)
    if c.p.get("mscale") and c.p.get("mscale_all_dim"):
        out["mscale"] = c.number("mscale", c.p["mscale"])
        out["mscale_all_dim"] = c.number("mscale_all_dim", c.p["mscale_all_dim"])
    out["beta_fast"] = c.number("beta_fast", c.p.get("beta_fast") or 32.0)
    out["beta_slow"] = c.number("beta_slow", c.p.get("beta_slow") or 1.0)
    truncate = c.raw.get("truncate", True)
    if not isinstance(truncate, bool):
        raise TypeError(f"{c.key}['truncate'] must be true or false, got {truncate!r}")
    out["truncate"] = truncate


def _read_longrope(c: _Read, out: dict) -> None:
    """``longrope``: original length, factor (or the ratio), ``short_factor`` and
    ``long_factor`` (required); a family's length-chosen attention factors (Phi-MoE:
    :attr:`Family.length_mscale`) when its record names them."""
    _original(c, out)
    _factor_or_ratio(c, out)
    out["short_factor"] = c.numbers("short_factor")
    out["long_factor"] = c.numbers("long_factor")
    if c.fam.length_mscale:
        out["length_mscale"] = tuple(c.number(k, c.need(k)) for k in c.fam.length_mscale)


def _read_llama3(c: _Read, out: dict) -> None:
    """``llama3``: original length, ``factor``, ``low_freq_factor``, ``high_freq_factor``
    (all required but the length)."""
    _original(c, out)
    out["factor"] = c.number("factor", c.need("factor"))
    out["low_freq_factor"] = c.number("low_freq_factor", c.need("low_freq_factor"))
    out["high_freq_factor"] = c.number("high_freq_factor", c.need("high_freq_factor"))


def _read_proportional(c: _Read, out: dict) -> None:
    """``proportional``: ``factor`` (default 1)."""
    out["factor"] = c.number("factor", c.p.get("factor", 1.0))


#: ``rope_type`` -> the reader that resolves its keys (one per :data:`posenc.scaling.ROPE_TYPES`).
_READERS = {
    "default": _read_default, "linear": _read_linear, "dynamic": _read_dynamic,
    "yarn": _read_yarn, "longrope": _read_longrope, "llama3": _read_llama3,
    "proportional": _read_proportional,
}


def _build_default(p, d, r, seq_len, common):
    return scaling.default(d, rotary_dim=r, **common)


def _build_linear(p, d, r, seq_len, common):
    return scaling.linear(d, p["factor"], rotary_dim=r, **common)


def _build_dynamic(p, d, r, seq_len, common):
    if p.get("alpha") is not None:
        # Hunyuan's "dynamic" with a fixed alpha: a static NTK-aware base
        # base * alpha^(d/(d-2)) (HunYuanDenseV1RotaryEmbedding, ntk_alpha)
        return scaling.ntk_aware(d, p["alpha"], rotary_dim=r, **common)
    return scaling.dynamic_ntk(d, p["factor"], p["max_position_embeddings"],
                               seq_len=seq_len, rotary_dim=r, **common)


def _build_yarn(p, d, r, seq_len, common):
    extra = {k: p[k] for k in ("attention_factor", "mscale", "mscale_all_dim") if k in p}
    return scaling.yarn(d, p["factor"], p["original_max_position_embeddings"],
                        beta_fast=p["beta_fast"], beta_slow=p["beta_slow"],
                        truncate=p["truncate"], rotary_dim=r, **extra, **common)


def _build_longrope(p, d, r, seq_len, common):
    if "length_mscale" in p:
        # Phi-MoE: transformers 5.24 rebuilds inv_freq without the length (short factors
        # at every length) and switches only the attention factor
        inv, _ = scaling.longrope(d, p["factor"], p["original_max_position_embeddings"],
                                  short_factor=p["short_factor"],
                                  long_factor=p["long_factor"], seq_len=None,
                                  rotary_dim=r, **common)
        short, long = p["length_mscale"]
        longer = seq_len is not None and seq_len > p["original_max_position_embeddings"]
        return inv, long if longer else short
    return scaling.longrope(d, p["factor"], p["original_max_position_embeddings"],
                            short_factor=p["short_factor"], long_factor=p["long_factor"],
                            seq_len=seq_len, attention_factor=p.get("attention_factor"),
                            rotary_dim=r, **common)


def _build_llama3(p, d, r, seq_len, common):
    return scaling.llama3(d, p["factor"], p["original_max_position_embeddings"],
                          low_freq_factor=p["low_freq_factor"],
                          high_freq_factor=p["high_freq_factor"], rotary_dim=r, **common)


def _build_proportional(p, d, r, seq_len, common):
    return scaling.proportional(d, p["factor"], rotary_dim=r, **common)


#: ``rope_type`` -> ``(settings, head_dim, rotary_dim, seq_len, {base, dtype}) ->
#: (inv_freq, attention_factor)``.
_BUILDERS = {
    "default": _build_default, "linear": _build_linear, "dynamic": _build_dynamic,
    "yarn": _build_yarn, "longrope": _build_longrope, "llama3": _build_llama3,
    "proportional": _build_proportional,
}


def rope_from_config(
    config, *, layer_type: str | None = None, seq_len: int | None = None, dtype=torch.float32
) -> tuple[torch.Tensor, float]:
    """``(inv_freq, attention_factor)`` that ``transformers`` builds for ``config``.

    Args:
        config: a ``transformers`` config object or a ``config.json`` dict.
        layer_type: entry of a per-layer-type RoPE dict (see :func:`rope_parameters`).
        seq_len: current length (tokens so far, cache included) for the length-dependent
            types: ``"dynamic"`` (NTK base grows past ``max_position_embeddings``) and
            ``"longrope"`` (long factors past ``original_max_position_embeddings``);
            ``None`` gives what the model builds at load time. Ignored by other types.
        dtype: float32 (default, as ``transformers``) or float64.

    Returns:
        ``(inv_freq, attention_factor)``: ``(r/2,)`` (``(d/2,)`` for ``proportional``)
        tensor and a float multiplying cos and sin.

    Raises:
        TypeError, ValueError: as :func:`rope_parameters`, and the method's own checks
            (e.g. a ``factor`` below 1, factor lists of the wrong length), each prefixed
            with the config key it came from.

    Source: matches the rotary-embedding modules of ``transformers`` 5.24
    (``LlamaRotaryEmbedding``, ``Gemma3RotaryEmbedding``, ``Phi3RotaryEmbedding``,
    ``GptOssRotaryEmbedding``, ``DeepseekV3RotaryEmbedding``, ``GPTNeoXRotaryEmbedding``,
    ``Qwen2RotaryEmbedding``), which call ``ROPE_INIT_FUNCTIONS`` (tested).
    """
    p = rope_parameters(config, layer_type=layer_type)
    t = p["rope_type"]
    common = {"base": p["rope_theta"], "dtype": dtype}
    where = p["source"] if layer_type is None else f"{p['source']}[{layer_type!r}]"
    try:
        return _BUILDERS[t](p, p["head_dim"], p["rotary_dim"], seq_len, common)
    except (TypeError, ValueError) as err:
        raise type(err)(f"{where} (rope_type {t!r}): {err}") from err
