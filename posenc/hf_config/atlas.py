"""The atlas: one row per model family, saying what its layers do with positions.

:func:`atlas_row` reads a family's config (a ``transformers`` config object or a
``config.json`` dict) through :func:`~posenc.hf_config.layer_specs` and summarises the
layer list in words: the layer pattern (``"5 sliding : 1 full"``, its period found from
the list itself), the base(s), how much of each head rotates and which channels, how the
pairs are laid out, the scaling type(s), the layers without RoPE, extra position terms,
M-RoPE, the window(s) and the family record's note. A family that ``layer_specs`` refuses
gets a row that gives the refusal's reason instead. :func:`render_table` writes the rows
as a MyST ``list-table`` and :func:`render_page` the whole page
(``scripts/build_atlas.py`` feeds it every family of the pinned ``transformers`` and writes
``book/atlas.md``).

Everything here is a pure function of configs and ``posenc``: nothing imports
``transformers``. Where one value holds for every RoPE layer a cell gives it once;
otherwise it gives one value per layer type (``"sliding 10000 · full 1e6"``), in the
order the types first appear in the layer list. Bases above 10⁵ are written ``1e6``,
``1.6e5``; a window is the number of keys a query sees, itself included, as
:attr:`~posenc.hf_config.LayerSpec.sliding_window` counts it.

Source: every fact in a row is :func:`~posenc.hf_config.layer_specs`'s, which
``tests/test_hf_sweep.py`` checks layer by layer against each family's own rotary module
and attention layers; ``tests/test_atlas.py`` checks the summaries on hand-made configs
and that ``book/atlas.md`` is what ``scripts/build_atlas.py`` writes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from fractions import Fraction

from .families import FAMILIES, UNVERIFIED
from .layers import LayerSpec, layer_specs
from .params import _as_dict

__all__ = [
    "AtlasRow", "COLUMNS", "NONE", "atlas_row", "atlas_rows", "layer_pattern", "period",
    "render_footnotes", "render_page", "render_table", "rotated_part", "short_reason",
]

#: What a cell says when the property does not apply (no RoPE layer, no window …).
NONE = "—"
#: ``(field of AtlasRow, column header)`` in the order the table shows them.
COLUMNS = (
    ("family", "model_type"), ("layers", "layers"), ("bases", "base"),
    ("rotated", "rotated"), ("layout", "pairs"), ("scaling", "scaling"),
    ("no_rope", "no RoPE"), ("extras", "extra terms"), ("windows", "window"),
    ("note", "note"),
)
#: Largest denominator written as a fraction (``"1/4"``); wider ratios are given as counts.
_MAX_DENOMINATOR = 8


@dataclass(frozen=True)
class AtlasRow:
    """One family's row: every field is the text of one cell (see :data:`COLUMNS`).

    ``refused`` holds the reason ``posenc`` refuses the family (the ``ValueError`` message
    of :func:`~posenc.hf_config.layer_specs`, in full); its ``layers`` cell then says
    ``"refused"``, the note gives the reason in one short line (:func:`short_reason`; the
    page gives the full reason below the table) and the other cells say nothing
    (:data:`NONE`).
    """

    model_type: str
    outer: tuple[str, ...] = ()
    layers: str = NONE
    bases: str = NONE
    rotated: str = NONE
    layout: str = NONE
    scaling: str = NONE
    no_rope: str = NONE
    extras: str = NONE
    windows: str = NONE
    note: str = ""
    refused: str | None = None

    @property
    def family(self) -> str:
        """``"qwen2_vl_text via qwen2_vl"``: the text model type, then the outer ones
        (``"llama (also via glmasr)"`` where ``llama`` is a model type of its own)."""
        return _family(self, lambda m: m)


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


def _per_type(specs: list[LayerSpec], cell) -> str:
    """``cell(spec)`` over the RoPE layers: once if one value, else per layer type."""
    values: dict[str, list[str]] = {}
    for s in specs:
        if s.use_rope:
            v = cell(s)
            per = values.setdefault(_short(s.layer_type), [])
            if v not in per:
                per.append(v)
    if not values:
        return NONE
    distinct = {v for per in values.values() for v in per}
    if len(distinct) == 1:
        return distinct.pop()
    return " · ".join(f"{t} {' / '.join(per)}" for t, per in values.items())


def _no_rope(specs: list[LayerSpec]) -> str:
    n = len(specs)
    off = [i for i, s in enumerate(specs) if not s.use_rope]
    if not off:
        return NONE
    if len(off) == n:
        return f"all {n} layers"
    off_types = {specs[i].layer_type for i in off}
    whole = [t for t in dict.fromkeys(specs[i].layer_type for i in off)
             if all(not s.use_rope for s in specs if s.layer_type == t)]
    if set(whole) == off_types:
        return f"{' and '.join(_short(t) for t in whole)} layers ({len(off)} of {n})"
    flags = [s.use_rope for s in specs]
    p = period(flags)
    if 2 * p <= n and flags[:p].count(False) == 1:
        return f"{len(off)} of {n} (every {_ordinal(p)})"
    return f"{len(off)} of {n}"


def _ordinal(p: int) -> str:
    suffix = "th" if 10 <= p % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(p % 10, "th")
    return f"{p}{suffix}"


def _mrope(d: dict, default: tuple[int, ...] | None = None) -> str | None:
    """``"M-RoPE (sections 16+24+24)"`` from the RoPE dict's ``mrope_section`` (flat or
    per layer type), else from ``default`` (the family's rotary module's own), else
    ``None``."""
    raw = d.get("rope_scaling") or d.get("rope_parameters") or {}
    dicts = [raw, *raw.values()] if isinstance(raw, Mapping) else []
    for r in dicts:
        if isinstance(r, Mapping) and r.get("mrope_section") is not None:
            return "M-RoPE (sections " + "+".join(str(int(x)) for x in r["mrope_section"]) \
                + ")"
    if default:
        return "M-RoPE (sections " + "+".join(map(str, default)) \
            + ", the rotary module's default)"
    return None


def _extras(specs: list[LayerSpec], d: dict, mrope_default=None) -> str:
    out = []
    temp = next((s.attn_temperature for s in specs if s.attn_temperature), None)
    if temp is not None:
        out.append(f"query temperature on layers without RoPE (floor_scale {temp[0]}, "
                   f"attn_scale {_num(temp[1])})")
    scale = next((s.query_scale for s in specs if s.query_scale), None)
    if scale is not None:
        out.append(f"query scale on every layer (beta {_num(scale[0])}, "
                   f"original length {scale[1]})")
    mrope = _mrope(d, mrope_default)
    if mrope:
        out.append(mrope)
    ignored = dict.fromkeys(k for s in specs for k, _ in s.ignored)
    if ignored:
        out.append("ignored RoPE key(s): " + ", ".join(ignored))
    return "; ".join(out) or NONE


def _windows(specs: list[LayerSpec], d: dict | None = None) -> str:
    """Sliding windows per layer type, and the chunk of chunked layers: transformers'
    chunked mask reads ``config.attention_chunk_size`` for every ``"chunked_attention"``
    layer (``masking_utils``), so the chunk is that key's value."""
    values: dict[str, list[str]] = {}
    for s in specs:
        if s.sliding_window is not None:
            v = str(s.sliding_window)
        elif s.attention_chunk_size is not None:
            v = f"chunks of {s.attention_chunk_size}"
        else:
            continue
        per = values.setdefault(s.layer_type, [])
        if v not in per:
            per.append(v)
    if not values:
        return NONE
    return " · ".join(" / ".join(per) if t == "chunked_attention"
                      else f"{_short(t)} {' / '.join(per)}" for t, per in values.items())


#: Longest short reason (characters) before :func:`short_reason` cuts it at a word.
_SHORT = 72


def short_reason(reason: str) -> str:
    """A refusal's reason in one short line, for the atlas's note cell.

    Drops the ``"model_type 'x' is refused: "`` prefix and parenthesised asides, keeps the
    first clause (up to the first ``"; "`` or ``", so "``) and cuts it at a word boundary
    after at most 72 characters (``"…"`` marks a cut). The full reason stays in
    ``AtlasRow.refused``.
    """
    text = reason.split(" is refused: ", 1)[-1]
    text = re.sub(r"\s*\([^()]*\)", "", text)
    for stop in ("; ", ", so "):
        text = text.split(stop, 1)[0]
    text = text.rstrip(" .,")
    if len(text) > _SHORT:
        text = text[:_SHORT].rsplit(" ", 1)[0].rstrip(" ,;") + "…"
    return text


def atlas_row(model_type: str, config, *, outer: list[str] = (),
              mrope_default: tuple[int, ...] | None = None) -> AtlasRow:
    """The atlas row of one family, from its (default or published) config.

    Args:
        model_type: the text config's ``model_type`` (the key of
            :data:`~posenc.hf_config.FAMILIES`).
        config: a ``transformers`` config object or ``config.json`` dict of that family.
        outer: the ``model_type``\\ s that lead to this text config (a multimodal model's
            own type), shown after it.
        mrope_default: the ``mrope_section`` the family's rotary module uses when the
            config has none (its M-RoPE is not optional), or ``None``.

    Returns:
        An :class:`AtlasRow`; if :func:`~posenc.hf_config.layer_specs` raises
        ``ValueError`` (an unknown or refused family, a config it cannot read), a row whose
        ``refused`` and ``note`` give the message.
    """
    outer = tuple(outer)
    rec = FAMILIES.get(model_type)
    note = rec.note if rec is not None else ""
    try:
        specs = layer_specs(config)
    except ValueError as err:
        return AtlasRow(model_type, outer, layers="refused", note=short_reason(str(err)),
                        refused=str(err))
    d = _as_dict(config)
    return AtlasRow(
        model_type, outer,
        layers=layer_pattern([s.layer_type for s in specs]),
        bases=_per_type(specs, lambda s: _num(s.rope_theta)),
        rotated=_per_type(specs, rotated_part),
        layout=_per_type(specs, lambda s: s.layout),
        scaling=_per_type(specs, lambda s: s.rope_type),
        no_rope=_no_rope(specs),
        extras=_extras(specs, d, mrope_default),
        windows=_windows(specs, d),
        note=note,
    )


def atlas_rows(configs: dict[str, object], outer: dict[str, list[str]] | None = None,
               mrope_defaults: dict[str, tuple[int, ...]] | None = None) -> list[AtlasRow]:
    """:func:`atlas_row` of every ``{model_type: config}`` entry, sorted by ``model_type``.

    ``outer`` maps a ``model_type`` to the model types that lead to it, ``mrope_defaults``
    to its rotary module's default ``mrope_section`` (missing: none).
    """
    outer, mrope_defaults = outer or {}, mrope_defaults or {}
    return [atlas_row(mt, configs[mt], outer=outer.get(mt, ()),
                      mrope_default=mrope_defaults.get(mt)) for mt in sorted(configs)]


# ----------------------------------------------------------------------- rendering ----

#: Characters that MyST would read as markup inside a cell; each is backslash-escaped.
_MARKUP = set("\\`*_[]<>$|{}~#")


def _escape(text: str) -> str:
    return "".join("\\" + c if c in _MARKUP else c for c in text)


def _family(row: AtlasRow, code) -> str:
    outer = [m for m in row.outer if m != row.model_type]
    if not outer:
        return code(row.model_type)
    via = ", ".join(code(m) for m in outer)
    if row.model_type in row.outer:
        return f"{code(row.model_type)} (also via {via})"
    return f"{code(row.model_type)} via {via}"


def _cell(row: AtlasRow, name: str, footnote: str | None = None) -> str:
    if name == "family":
        return _family(row, lambda m: f"`{m}`")
    value = getattr(row, name)
    if name == "layers" and row.refused:
        return "**refused**"
    if name == "note" and footnote:
        return f"{_escape(value)} ({{ref}}`full reason <{footnote}>`)"
    return _escape(value) if value else NONE


def _footnotes(rows: list[AtlasRow]) -> dict[str, str]:
    """``{model_type: label}`` of the refused rows' full reasons (``atlas-refusal-1`` …, in
    order)."""
    refused = [r.model_type for r in rows if r.refused]
    return {mt: f"atlas-refusal-{i}" for i, mt in enumerate(refused, 1)}


def render_table(rows: list[AtlasRow], *, name: str = "atlas-table") -> str:
    """The rows as a MyST ``list-table`` with class ``posenc-atlas`` (sortable on the site).

    ``name`` becomes the table's label (a link target). The header row is
    :data:`COLUMNS`; code spans hold the model types, every other cell is escaped text. A
    refused row's note is its short reason and a link (``{ref}`` to ``atlas-refusal-1`` …)
    to its full reason, which :func:`render_footnotes` writes below the table.
    """
    notes = _footnotes(rows)
    lines = [
        "```{list-table}",
        ":header-rows: 1",
        ":class: posenc-atlas",
        f":name: {name}",
        "",
    ]
    for cells in ([header for _, header in COLUMNS],
                  *([_cell(row, field, notes.get(row.model_type)) for field, _ in COLUMNS]
                    for row in rows)):
        lines.append(f"* - {cells[0]}")
        lines.extend(f"  - {c}" for c in cells[1:])
    lines.append("```")
    return "\n".join(lines) + "\n"


def render_footnotes(rows: list[AtlasRow]) -> str:
    """The full reasons of :func:`render_table`'s refused rows, each behind the label its
    note links to, as a definition list (``model_type`` : the reason
    :func:`~posenc.hf_config.layer_specs` gives). Plain paragraphs, not MyST footnotes:
    those render as ``<aside>`` elements inside the page's main landmark, which axe-core
    reports."""
    notes = _footnotes(rows)
    by_type = {r.model_type: r for r in rows}
    return "".join(f"({label})=\n`{mt}`\n: {_escape(by_type[mt].refused)}\n\n"
                   for mt, label in notes.items())


def _counts_note(rows: list[AtlasRow]) -> str:
    """Why the page's counts differ from the registry's (chapter 12 counts the registry)."""
    listed = {r.model_type for r in rows}
    refused = [r for r in rows if r.refused]
    by_record = [r for r in refused if r.model_type in FAMILIES
                 and FAMILIES[r.model_type].refuse]
    unreadable = [r for r in refused if r.model_type in FAMILIES
                  and not FAMILIES[r.model_type].refuse]
    unverified = [r for r in refused if r.model_type in UNVERIFIED]
    other = len(refused) - len(by_record) - len(unreadable) - len(unverified)
    n_refuse = sum(1 for rec in FAMILIES.values() if rec.refuse)
    elsewhere = sorted(set(FAMILIES) - listed)
    def are(n: int) -> str:
        return f"{n} {'is' if n == 1 else 'are'}"

    def have(n: int) -> str:
        return f"{n} {'has' if n == 1 else 'have'}"

    parts = [f"{are(len(by_record))} refused by their family's record"]
    if unreadable:
        parts.append(f"{len(unreadable)} by a default configuration posenc cannot read ("
                     + ", ".join(f"`{r.model_type}`" for r in unreadable)
                     + "; the record is checked on a repaired one)")
    parts.append(f"{have(len(unverified))} no record because `transformers` cannot run "
                 "their default configuration, so no check could verify one "
                 "({py:data}`~posenc.hf_config.families.UNVERIFIED`)")
    if other:
        parts.append(f"{have(other)} no record at all")
    text = (
        "These counts are of the families `transformers` defines. Chapter 12 counts "
        "another set, posenc's registry {py:data}`~posenc.hf_config.FAMILIES`: "
        f"{len(FAMILIES)} records, {n_refuse} of which refuse their family by name. Of "
        f"this page's {len(refused)} refused rows, " + ", ".join(parts[:-1])
        + (" and " if len(parts) > 1 else "") + parts[-1] + "."
    )
    if elsewhere:
        names = ", ".join(f"`{m}`" for m in elsewhere)
        text += (f" The registry also holds records for {len(elsewhere)} model "
                 f"type{'s' if len(elsewhere) > 1 else ''} this page does not list "
                 f"({names}: not a text model by the sweep's test).")
    return text


def render_page(rows: list[AtlasRow], *, version: str, command: str,
                not_text: list[str] = (), unbuildable: dict[str, str] | None = None,
                checked_elsewhere: dict[str, str] | None = None) -> str:
    """The atlas page (MyST markdown): what it is, its provenance, counts, the table.

    Args:
        rows: from :func:`atlas_rows`.
        version: the ``transformers`` version the rows were read from.
        command: the command that regenerates the page.
        not_text: model types with a rotary module that are not text models (listed).
        unbuildable: ``{model_type: error}`` of families whose default config
            ``transformers`` itself cannot build (listed with the error).
        checked_elsewhere: ``{model_type: test}`` of rows the sweep cannot run on the meta
            device and a named test checks instead.
    """
    refused = [r for r in rows if r.refused]
    checked_elsewhere = dict(checked_elsewhere or {})
    rows = [r if r.model_type not in checked_elsewhere or r.refused else replace(
        r, note="; ".join(filter(None, [
            r.note, f"checked by tests/{checked_elsewhere[r.model_type]}"])))
        for r in rows]
    parts = [
        "# Atlas of RoPE models in transformers",
        "",
        "<!-- Generated by scripts/build_atlas.py; do not edit by hand. -->",
        "",
        "One row per model family whose text model has a rotary embedding in "
        f"`transformers` {version}, the version this book pins: what each layer of that "
        "family's default configuration does with positions, as "
        "{py:func}`posenc.hf_config.layer_specs` reads it "
        "(summarised by {py:mod}`posenc.hf_config.atlas`). "
        f"**{len(rows)} families, {len(rows) - len(refused)} read, {len(refused)} "
        "refused** (a refused row gives posenc's reason in one line instead of guessing, "
        "and its full reason below the table).",
        "",
        _counts_note(rows),
        "",
        "The family list comes from `transformers` itself (every model type whose modeling "
        "module defines a text rotary-embedding class), not from a hand-kept list. The "
        "sweep in `tests/test_hf_sweep.py` builds each read family's rotary module and "
        "attention layers and checks every layer of the row against them: whether the layer "
        "uses positions, its window, and the cos/sin it rotates with (frequencies, layout "
        "and attention factor at once). A published checkpoint may differ from its "
        "family's default (another base, a scaling block, another layer count, keys the "
        "defaults never set): read its own `config.json` with "
        "{py:func}`~posenc.hf_config.layer_specs` or `posenc inspect` ({doc}`api/cli`). "
        "`tests/test_hf_keys.py` checks those readings key by key: for every family it "
        "varies each position key the config class accepts — found in the class itself "
        "(its fields and attributes, the legacy keys its constructor reads, the keys its "
        "modeling code reads) — through valid values and every rope type, and compares "
        "posenc with the family's own modules on the config object and on the "
        "`config.json` of that shape. Each variant ends matched, refused by name, or a "
        "misread; the misreads it still finds are listed there, one strict expected "
        "failure each, until they are fixed.",
        "",
        f"Regenerate the page with `{command}`; `tests/test_atlas.py` fails when this "
        "file is not what that command writes.",
        "",
        "How to read a row: **layers** is the shortest repeating unit of the layer types, "
        "named as the config names them without the `_attention` suffix (sliding, full, "
        "linear, chunked, Falcon-H1's hybrid, LFM2's conv …; old names such as `mamba` and "
        "`attention` renamed as `transformers` renames them), with the layer count, or, "
        "where nothing "
        "repeats, the counts and the indices (from 0) of the rarer types; **base** is "
        "`rope_theta`; **rotated** says how much of each q/k head rotates and where: "
        "*leading* (the first channels), *trailing* (the last: the rope slice of MLA "
        "heads) or *spread* (`proportional`: pairs across the whole head); **pairs** is "
        "the layout (*half*: channel i with i + r/2; *interleaved*: 2i with 2i + 1); "
        "**scaling** is the `rope_type`; **no RoPE** names the layers that carry no "
        "positions (NoPE layers, linear-attention and state-space blocks); **extra terms** "
        "are position terms besides the rotation (Llama 4's query temperature, Ministral "
        "3's query scale, rotated values), M-RoPE and RoPE keys the family's code ignores; "
        "**window** counts the keys a query sees, itself included (bidirectional encoders: "
        "one more than the keys on each side, as transformers passes it), and chunked "
        "layers give their chunk (`attention_chunk_size`: a query sees the keys of its own "
        "chunk). Where layer types "
        "differ, a cell gives one value per type. M-RoPE is named where the config "
        "carries an `mrope_section` or the family's rotary module falls back on one of "
        "its own: for text tokens the three position streams coincide, and the row gives "
        "those 1-D frequencies (the case the sweep checks).",
        "",
        "On the site, the buttons in the column headers sort the table and the box above "
        "it filters the rows.",
        "",
        render_table(rows),
        *(["## Why each refused family is refused", "",
            render_footnotes(rows).rstrip("\n")] if any(r.refused for r in rows) else []),
        "",
    ]
    if unbuildable:
        parts += [
            "## Families `transformers` cannot build", "",
            "Their default configuration fails in `transformers` itself:", "",
            *(f"- `{mt}`: {_escape(err)}" for mt, err in sorted(unbuildable.items())), "",
        ]
    if not_text:
        parts += [
            "## Rotary modules outside text models", "",
            f"These {len(not_text)} model types define a rotary embedding but are not text "
            "models by the sweep's test: neither the type nor its text config's is in one "
            "of `transformers`' text task mappings (causal LM, masked LM, image-text-to-text "
            "and the like). Most are vision or audio towers of multimodal models. The atlas "
            "leaves them out:", "",
            ", ".join(f"`{mt}`" for mt in sorted(not_text)) + ".", "",
        ]
    return "\n".join(parts).rstrip("\n") + "\n"
