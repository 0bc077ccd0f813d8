"""A layer list in words: the summaries the config report and the atlas share.

:func:`layer_pattern` says how a model's layer types repeat (``"5 sliding : 1 full (26
layers)"``, the unit found from the list itself by :func:`period`); :func:`rotated_part`
says which channels of a RoPE layer's head rotate (``"1/4 leading of 256"``); ``_num``
writes a base or a factor in one number style (``10000``, ``1e6``, ``1.6e5``). The report
of ``python -m posenc inspect`` (:mod:`posenc.hf_config.report`) uses them, and so does the
book's atlas page (rendered by the dev-side ``booktools.atlas``, not part of this package).

Pure functions of layer types and :class:`~posenc.hf_config.LayerSpec`: nothing here
imports ``transformers``. ``tests/test_atlas.py`` checks them on hand-made layer lists.
"""

from __future__ import annotations

from fractions import Fraction

from .layers import LayerSpec

__all__ = ["layer_pattern", "period", "rotated_part"]

#: Largest denominator written as a fraction (``"1/4"``); wider ratios are given as counts.
_MAX_DENOMINATOR = 8


# ------------------------------------------------------------------- layer patterns ----


def _short(layer_type: str) -> str:
    """``"sliding_attention"`` -> ``"sliding"``; other names unchanged."""
    return layer_type.removesuffix("_attention")


def period(labels: list) -> int:
    """The shortest ``p`` with ``labels[i] == labels[i % p]`` for every ``i``.

    The list is the unit repeated, the last repeat possibly cut short (26 Gemma 3 layers
    are four units of six and two more). Returns ``len(labels)`` when nothing shorter
    repeats.

    Raises:
        ValueError: ``labels`` is empty.
    """
    n = len(labels)
    if n == 0:
        raise ValueError("labels must hold at least one layer")
    for p in range(1, n + 1):
        if all(labels[i] == labels[i % p] for i in range(p, n)):
            return p
    return n  # unreachable: p == n always repeats


def _counts(labels: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    return counts


def _unit(unit: list[str]) -> str:
    """``""`` when each type of the unit forms one block, else ``", unit S F S S"``."""
    blocks = sum(1 for i in range(len(unit)) if i == 0 or unit[i] != unit[i - 1])
    if blocks == len(set(unit)):
        return ""
    initials = {label: label[0].upper() for label in unit}
    short = len(set(initials.values())) == len(initials)
    return ", unit " + " ".join(initials[label] if short else label for label in unit)


def layer_pattern(layer_types: list[str]) -> str:
    """The layer pattern in words, from the list of layer types.

    * one type: ``"all full (32 layers)"``;
    * a unit that repeats at least twice (the shortest, see :func:`period`): the counts
      of one unit in the order it lists them, ``"5 sliding : 1 full (26 layers)"``; when
      the types of the unit do not come in one block each, the unit follows in initials
      (``"3 sliding : 1 full (62 layers, unit S F S S)"``: layer 1 is the first full one);
    * the same with only the last layer breaking the repeat (Gemma 4 forces it):
      ``"…, last layer full"``;
    * otherwise ``"irregular"``: the counts, and the indices (from 0) of every type but
      the most common one.

    Args:
        layer_types: one ``layer_type`` per layer (``"full_attention"``,
            ``"sliding_attention"``, ``"linear_attention"`` …); the ``"_attention"``
            suffix is dropped in the text.

    Raises:
        ValueError: ``layer_types`` is empty.
    """
    labels = [_short(t) for t in layer_types]
    n = len(labels)
    if n == 0:
        raise ValueError("layer_types must hold at least one layer")
    if len(set(labels)) == 1:
        return f"all {labels[0]} ({n} layers)"
    p = period(labels)
    if 2 * p <= n:
        return f"{_ratio(labels[:p])} ({n} layers{_unit(labels[:p])})"
    body = labels[:-1]
    q = period(body)
    if len(set(body)) > 1 and 2 * q <= n - 1:
        return f"{_ratio(body[:q])} ({n} layers{_unit(body[:q])}, last layer {labels[-1]})"
    counts = _counts(labels)
    common = max(counts, key=counts.get)
    where = "; ".join(
        f"{label} at " + ", ".join(str(i) for i, x in enumerate(labels) if x == label)
        for label in counts if label != common)
    listed = ", ".join(f"{c} {label}" for label, c in counts.items())
    return f"irregular ({n} layers): {listed}; {where}"


def _ratio(unit: list[str]) -> str:
    return " : ".join(f"{c} {label}" for label, c in _counts(unit).items())


# ------------------------------------------------------------------------ cells -------


def _num(x: float) -> str:
    """``10000`` stays ``"10000"``; ``1e6`` is ``"1e6"``, ``160000`` ``"1.6e5"``, 0.1 ``"0.1"``."""
    if x != int(x):
        return f"{x:g}"
    if abs(x) < 1e5:
        return str(int(x))
    mantissa, exponent = f"{x:e}".split("e")
    return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"


def rotated_part(spec: LayerSpec) -> str:
    """Which channels of one RoPE layer's head rotate, in words.

    ``"all 128"`` when the whole head rotates; else the fraction (``"1/4 leading of 256"``)
    when its denominator is at most 8, or the counts (``"64 of 192 trailing"``), with the
    channels named as :attr:`~posenc.hf_config.LayerSpec.rope_channels` does (leading,
    trailing, spread).

    Raises:
        ValueError: ``spec`` is a layer without RoPE.
    """
    if not spec.use_rope:
        raise ValueError("rotated_part needs a layer with RoPE (spec.use_rope is False)")
    r, d = spec.rotary_dim, spec.head_dim
    if r == d and spec.rope_channels == "leading":
        return f"all {d}"
    frac = Fraction(r, d)
    if frac.denominator <= _MAX_DENOMINATOR:
        return f"{frac} {spec.rope_channels} of {d}"
    return f"{r} of {d} {spec.rope_channels}"
