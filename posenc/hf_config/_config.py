"""A ``transformers`` config as the plain dict every reader in :mod:`posenc.hf_config` reads.

Both :mod:`.params` (the RoPE reader) and :mod:`.layers` (the per-layer reader) start from
:func:`_as_dict`: a config object's ``to_dict()`` or a ``config.json`` dict, read through a
multimodal config's ``text_config``, with the family record's aliases, class defaults and
legacy-key translation applied (:class:`~posenc.hf_config.families.Family`). A deep copy:
the caller's config is never changed.
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Mapping

from .._checks import check_int
from .families import FAMILIES, FLAT_TEXT_CONFIGS
from .files import read_config


def _as_dict(config) -> dict:
    """The text model's config as a plain dict (deep copy: the caller's is never changed).

    ``config`` may also be a path to a ``config.json`` (or to its directory), read by
    :func:`~posenc.hf_config.read_config`.
    """
    if isinstance(config, str | os.PathLike):
        config = read_config(config)
    if isinstance(config, Mapping):
        d = copy.deepcopy(dict(config))
        text = d.get("text_config")
        if isinstance(text, Mapping) and "num_attention_heads" not in d:
            d = copy.deepcopy(dict(text))
        elif text is None and d.get("model_type") in FLAT_TEXT_CONFIGS:
            d["model_type"] = FLAT_TEXT_CONFIGS[d["model_type"]]  # a flat multimodal file
        rec = FAMILIES.get(str(d.get("model_type", "")))
        for key, alias in (rec.aliases if rec else ()):  # GPT-J's n_layer, n_head, ...
            if d.get(key) is None and alias in d:  # a null alias is a null key
                d[key] = d[alias]
        for key, value in (rec.defaults if rec else ()):  # the class's own defaults
            if key not in d:
                d[key] = value
        if rec is not None and rec.default_rope_parameters and d.get(
                "rope_parameters") is None and not d.get("rope_scaling"):
            d["rope_parameters"] = copy.deepcopy(dict(rec.default_rope_parameters))
        if rec is not None and rec.translate is not None:
            rec.translate(d)  # the config class's own renaming of legacy keys
        return d
    if hasattr(config, "to_dict"):
        if hasattr(config, "get_text_config"):
            config = config.get_text_config()
        return _as_dict(config.to_dict())
    raise TypeError(
        "config must be a transformers config object, a config.json dict or a path to "
        f"a config.json, got {type(config).__name__}"
    )


def _model_type(d: dict) -> str:
    mt = d.get("model_type")
    if mt is not None and not isinstance(mt, str):
        raise ValueError(f"config['model_type'] must be a string naming the family, got {mt!r}")
    if not mt:
        raise ValueError("config has no 'model_type'; posenc reads a family by its model_type")
    return mt


def _number(where: str, name: str, value, *, integer: bool = False,
            minimum: int | None = None):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        kind = "an integer" if integer else "a number"
        raise TypeError(f"{where}[{name!r}] must be {kind}, got {value!r}")
    if integer:
        return check_int(f"{where}[{name!r}]", value, minimum=minimum)
    if not math.isfinite(value):
        raise ValueError(f"{where}[{name!r}] must be finite, got {value!r}")
    return float(value)
