"""Layer patterns: the layer type of every decoder layer, and which layers rotate.

What a family's config class derives when a config has no ``layer_types`` (the record's
:attr:`~posenc.hf_config.families.Family.layer_pattern`, block lists, index lists), the
legacy layer-type names every ``transformers`` config renames, and which layers carry RoPE
(NoPE types, flags, index lists and the record's own rule). Read by :mod:`.params` (per-type
RoPE dicts) and :mod:`.layers` (one spec per layer); imports neither.
"""

from __future__ import annotations

from .._checks import check_int
from .families import ATTENTION_TYPES, LEGACY_LAYER_TYPES, AllLayers, Every, Family


def _every(d: dict, n: int, rule: Every) -> list[str]:
    key, default, offset, other = rule
    every = d.get(key, default) if key else default
    if every is None:
        every = default
    if isinstance(every, str):  # EXAONE's "LLLG": L local (sliding), G global
        return ["full_attention" if every[i % len(every)] == "G" else other for i in range(n)]
    every = check_int(f"config[{key!r}]" if key else "layer pattern", every, minimum=1)
    return ["full_attention" if (i + 1 + offset) % every == 0 else other for i in range(n)]


def _layer_types(d: dict, fam: Family) -> list[str]:
    if d.get("num_hidden_layers") is None:
        raise ValueError("config['num_hidden_layers'] is required to list the layers")
    n = check_int("config['num_hidden_layers']", d["num_hidden_layers"], minimum=1)
    if d.get("layer_types"):
        listed = d["layer_types"]
        if not isinstance(listed, list | tuple) or not all(isinstance(t, str) for t in listed):
            raise TypeError(f"config['layer_types'] must be a list of layer-type names, got "
                            f"{listed!r}"[:200])
        # old names ("mamba", "attention") renamed as every transformers config does
        types = [LEGACY_LAYER_TYPES.get(t, t) for t in listed]
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
    elif isinstance(fam.layer_pattern, AllLayers):
        types = [fam.layer_pattern.layer_type] * n
    elif isinstance(fam.layer_pattern, Every):
        types = _every(d, n, fam.layer_pattern)
    elif fam.window_key and d.get(fam.window_key) is not None \
            and d.get("use_sliding_window", True):
        types = ["sliding_attention"] * n
    else:
        types = ["full_attention"] * n
    if len(types) < n:
        raise ValueError(f"config['layer_types'] has {len(types)} entries for {n} layers")
    types = types[:n]
    if fam.last_layer_full and types:  # Gemma 4 forces it on a listed pattern too
        types[-1] = "full_attention"
    if fam.mask_types is not None and set(types) - fam.mask_types:
        raise ValueError(
            f"config['layer_types'] lists {sorted(set(types) - fam.mask_types)}, a type the "
            f"model of {d['model_type']!r} builds no attention mask for (it has "
            f"{sorted(fam.mask_types)}): its forward fails on such a layer")
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
