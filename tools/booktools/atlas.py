"""The atlas page (``book/atlas.md``): one row per model family, saying what its layers do
with positions.

:func:`atlas_row` reads a family's config (a ``transformers`` config object or a
``config.json`` dict) through :func:`posenc.hf_config.layer_specs` and summarises the
layer list in words: the layer pattern (``"5 sliding : 1 full"``, its period found from
the list itself), the base(s), how much of each head rotates and which channels, how the
pairs are laid out, the scaling type(s), the layers without RoPE, extra position terms,
M-RoPE, the window(s) and the family record's note. The pattern, the rotated part and the
number style are the library's own (:mod:`posenc.hf_config.summary`, which the config
report of ``posenc inspect`` uses too). A family that ``layer_specs`` refuses gets a row
that gives the refusal's reason instead. :func:`render_table` writes the rows as a MyST
``list-table`` and :func:`render_page` the whole page; :func:`build_page` feeds it every
family of the pinned ``transformers`` (found by :mod:`booktools.hf_sweep`) and
:func:`main` is ``scripts/build_atlas.py``:

    python scripts/build_atlas.py           # write book/atlas.md
    python scripts/build_atlas.py --check   # exit 1 if book/atlas.md is not what it writes

Everything above :func:`build_page` is a pure function of configs and ``posenc``: importing
this module does not import ``transformers``. Where one value holds for every RoPE layer a
cell gives it once; otherwise it gives one value per layer type (``"sliding 10000 · full
1e6"``), in the order the types first appear in the layer list. Bases above 10⁵ are written
``1e6``, ``1.6e5``; a window is the number of keys a query sees, itself included, as
:attr:`posenc.hf_config.LayerSpec.sliding_window` counts it.

Source: every fact in a row is :func:`posenc.hf_config.layer_specs`'s, which
``tests/test_hf_sweep.py`` checks layer by layer against each family's own rotary module
and attention layers; ``tests/test_atlas.py`` checks the summaries on hand-made configs
and that ``book/atlas.md`` is what ``scripts/build_atlas.py`` writes.
"""

from __future__ import annotations

import argparse
import re
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from posenc.hf_config.families import FAMILIES, UNVERIFIED
from posenc.hf_config.layers import LayerSpec, layer_specs
from posenc.hf_config.params import _as_dict
from posenc.hf_config.summary import _num, _short, layer_pattern, period, rotated_part

__all__ = [
    "AtlasRow", "COLUMNS", "NONE", "atlas_row", "atlas_rows", "build_page", "main",
    "mrope_default", "render_footnotes", "render_page", "render_table", "short_reason",
]

#: The repository (``tools/booktools/atlas.py`` is two levels below it).
ROOT = Path(__file__).resolve().parents[2]
#: The page the command writes.
PAGE = ROOT / "book" / "atlas.md"
COMMAND = "python scripts/build_atlas.py"
#: How a rotary module falls back on an M-RoPE section of its own when the config has none
#: (``config.rope_parameters.get("mrope_section", [16, 24, 24])`` in Qwen2-VL).
MROPE_DEFAULT = re.compile(r"""get\(\s*["']mrope_section["']\s*,\s*\[([\d,\s]+)\]\s*\)""")

#: What a cell says when the property does not apply (no RoPE layer, no window …).
NONE = "—"
#: ``(field of AtlasRow, column header)`` in the order the table shows them.
COLUMNS = (
    ("family", "model_type"), ("layers", "layers"), ("bases", "base"),
    ("rotated", "rotated"), ("layout", "pairs"), ("scaling", "scaling"),
    ("no_rope", "no RoPE"), ("extras", "extra terms"), ("windows", "window"),
    ("note", "note"),
)


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
        "(summarised with {py:mod}`posenc.hf_config.summary`). "
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


# ------------------------------------------------------------------ the page, built ----


def mrope_default(sweep, model_type: str) -> tuple[int, ...] | None:
    """The ``mrope_section`` a family's text rotary module uses without one in the
    config, read from the module's source (``None``: it has no such fallback). Each
    modeling module is parsed once, by the key sweep's reader, which shares it."""
    from booktools.hf_keys import module_classes

    module = sweep._modeling(model_type)
    for cls in sweep.rotary_classes(module) if module is not None else ():
        found = MROPE_DEFAULT.search(module_classes(cls.__module__)[cls.__name__])
        if found:
            return tuple(int(x) for x in found.group(1).split(",") if x.strip())
    return None


def build_page() -> str:
    """The atlas page for the installed ``transformers`` (what the command writes).

    The families and their default text configs come from :mod:`booktools.hf_sweep`, in
    the same process as the tests that use it (its discovery is computed once); the
    families it cannot run are listed as checked elsewhere
    (:data:`booktools.hf_sweep.CHECKED_ELSEWHERE`)."""
    import transformers

    from booktools import hf_sweep as sweep

    checked_elsewhere = sweep.CHECKED_ELSEWHERE
    families = sweep.text_families()
    configs, outer, unbuildable = {}, {}, {}
    for name, fam in families.items():
        if not fam.is_text:
            continue
        if fam.build_error:
            unbuildable[name] = fam.build_error
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            configs[name] = sweep.default_text_config(name)
        outer[name] = fam.outer
    mrope = {name: m for name in configs if (m := mrope_default(sweep, name))}
    rows = atlas_rows(configs, outer, mrope)
    not_text = [name for name, fam in families.items() if not fam.is_text]
    return render_page(rows, version=transformers.__version__, command=COMMAND,
                       not_text=not_text, unbuildable=unbuildable,
                       checked_elsewhere=checked_elsewhere)


def main(argv: list[str] | None = None) -> int:
    """``scripts/build_atlas.py``: write the page, or with ``--check`` exit 1 when the
    committed page is not what it would write."""
    parser = argparse.ArgumentParser(
        description="Regenerate book/atlas.md: one row per RoPE family of the pinned transformers.")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if book/atlas.md differs from what would be written")
    args = parser.parse_args(argv)
    page = build_page()
    if args.check:
        current = PAGE.read_text(encoding="utf-8") if PAGE.is_file() else ""
        if current != page:
            print(f"{PAGE.relative_to(ROOT)} is stale: run {COMMAND}", file=sys.stderr)
            return 1
        print(f"{PAGE.relative_to(ROOT)} is up to date")
        return 0
    PAGE.write_text(page, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0

