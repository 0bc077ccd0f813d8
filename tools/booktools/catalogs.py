"""The Chinese edition's message catalogs: regenerated from the English, updated, checked.

Each page of the book has a catalog, ``locale/zh_CN/LC_MESSAGES/<page>.po``, whose
messages are the page's paragraphs, headings, captions and alt texts in English
(``msgid``) and Chinese (``msgstr``). The English is the source of truth, so a catalog is
stale as soon as a page's English changes. This module

* regenerates the message templates from the English (:func:`templates`): Sphinx's
  gettext builder on the sources, the pages in scope only (about 30 s on 2 cores; run
  on README command 1's doctrees instead, it took as long: loading the pickled doctrees,
  which hold every figure, costs what reading the notebooks does);
* updates the catalogs from them (:func:`update`, ``python scripts/i18n.py update``): a
  new message is added untranslated, a changed one is marked fuzzy with its old
  translation kept as a draft, a removed one becomes obsolete (``#~``) and is dropped on
  the next update; a message with nothing to translate, and one of a page's generated
  parts (:data:`GENERATED`), is filled with its English (identity);
* checks them (:func:`check`, ``python scripts/i18n.py check``, ``tests/test_i18n.py``):
  every page in scope has its catalog and no other catalog exists; no message is
  untranslated, fuzzy or obsolete, none is missing from or extra to the template; every
  translation carries over its English message's machinery (:mod:`booktools.po_tokens`).

Scope (:data:`OUT_OF_SCOPE`): every page but the per-module API pages ``book/api/*``,
whose text is ``posenc``'s docstrings (autodoc); they stay English on the Chinese site,
as the Chinese API page says.
"""

from __future__ import annotations

import argparse
import copy
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po

from booktools import po_tokens

ROOT = Path(__file__).resolve().parents[2]
LANGUAGE = "zh_CN"
#: Pages (docnames, by prefix) whose messages stay English: no catalog.
OUT_OF_SCOPE = ("book/api/",)
#: The book's root document (``_toc.yml``'s ``root``): Sphinx reads it in every build.
ROOT_DOC = "book/intro"
#: Catalogs are written with this line width (as sphinx-intl writes them).
WIDTH = 76


def catalog_dir(root: Path = ROOT) -> Path:
    return Path(root) / "locale" / LANGUAGE / "LC_MESSAGES"


def in_scope(docname: str) -> bool:
    return not docname.startswith(OUT_OF_SCOPE)


# ------------------------------------------------------------------- generated parts ----

def _atlas_generated(source: str) -> Callable[[str], bool]:
    """The atlas page (``scripts/build_atlas.py``) is generated whole, but only its table
    and lists are data: the family table (the ``list-table``), the refusal reasons (a
    definition list: the term line and its ``: `` lines) and the lists of model types
    (a paragraph of code spans only). The rest, the reading guide, is prose."""
    data: list[str] = []
    in_table = False
    lines = source.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("```{list-table}"):
            in_table = True
        elif in_table and line.startswith("```"):
            in_table = False
        elif in_table:
            data.append(line)
        elif line.startswith(": ") or (i + 1 < len(lines) and lines[i + 1].startswith(": ")):
            data.append(line)
        elif line and re.fullmatch(r"(`[^`]+`,?\s*)+(and\s+`[^`]+`\.?)?\s*", line):
            data.append(line)
    region = "\n".join(data)

    def generated(msgid: str) -> bool:
        return msgid.strip() != "" and all(part in region for part in msgid.split("\n"))

    return generated


#: Pages with generated parts whose messages stay as generated (their English), so that
#: regenerating the page needs no translator; the rule reads the page's source.
GENERATED: dict[str, tuple[str, Callable[[str], Callable[[str], bool]]]] = {
    "book/atlas": ("book/atlas.md", _atlas_generated),
}


def identity_rule(root: Path, docname: str) -> Callable[[object], bool]:
    """Which messages of ``docname`` :func:`update` fills with their English: one with
    nothing to translate (:func:`booktools.po_tokens.translatable`), always; one of the
    page's generated parts (:data:`GENERATED`) when it has no current translation
    (untranslated, or fuzzy because the generator changed it), so regenerating the page
    never waits for a translator; a translator's translation of a generated message that
    is still current is kept."""
    rule = GENERATED.get(docname)
    generated = rule[1]((Path(root) / rule[0]).read_text(encoding="utf-8")) if rule else None

    def same(message) -> bool:
        if not po_tokens.translatable(message.id):
            return True
        return generated is not None and generated(message.id) and (
            not message.string or message.fuzzy)

    return same


# ------------------------------------------------------------------------ templates ----

def extract(root: Path, out: Path, only: tuple[str, ...] = ()) -> int:
    """Run Sphinx's gettext builder on the book in ``root``, writing ``<page>.pot`` under
    ``out`` for the pages in scope (the others are not read), or only for the pages named
    in ``only`` (docnames such as ``book/01_why_positions``; every other page but the root
    document, which Sphinx must read, is left unread). Runs in its own process
    (:func:`templates`)."""
    import yaml
    from jupyter_book.sphinx import build_sphinx

    root = Path(root).resolve()  # as README command 1 names the sources
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    skip = [prefix + "*" for prefix in OUT_OF_SCOPE]
    if only:
        skip += sorted({p.relative_to(root).with_suffix("").as_posix() + p.suffix
                        for p in (root / "book").rglob("*") if p.suffix in (".md", ".ipynb")
                        and p.relative_to(root).with_suffix("").as_posix()
                        not in (*only, ROOT_DOC)})
    status = build_sphinx(
        root, Path(out), noconfig=True, path_config=str(root / "_config.yml"),
        confoverrides={"latex_individualpages": False,
                       "external_toc_path": (root / "_toc.yml").as_posix(),
                       "exclude_patterns": config.get("exclude_patterns", []) + skip},
        doctreedir=Path(out).parent / "doctrees", builder="gettext", quiet=True,
        really_quiet=True)
    return 1 if isinstance(status, Exception) else int(status or 0)


def templates(root: Path = ROOT, only: tuple[str, ...] = ()) -> tuple[dict[str, Catalog],
                                                                       float]:
    """Every in-scope page's message template (or only those of the pages named in
    ``only``), regenerated from the English in ``root`` (``{docname: Catalog}``), and the
    seconds it took."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="posenc-pot-") as tmp:
        out = Path(tmp) / "gettext"
        cmd = [sys.executable, "-m", "booktools.catalogs", "_extract", str(root), str(out),
               *only]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=root,
                              env={**os.environ, "PYTHONWARNINGS": "ignore"})
        if proc.returncode != 0:
            raise RuntimeError("regenerating the message templates failed:\n"
                               + (proc.stdout + proc.stderr)[-4000:])
        found = {}
        for pot in sorted(out.rglob("*.pot")):
            with pot.open("rb") as f:
                found[pot.relative_to(out).with_suffix("").as_posix()] = read_po(f)
    return found, round(time.perf_counter() - start, 1)


# ------------------------------------------------------------------------- catalogs ----

def read(path: Path) -> Catalog:
    with Path(path).open("rb") as f:
        return read_po(f, locale=LANGUAGE)


def write(catalog: Catalog, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with Path(path).open("wb") as f:
        write_po(f, catalog, width=WIDTH, omit_header=False, include_previous=True)


def catalogs(root: Path = ROOT) -> dict[str, Path]:
    """Every catalog under the locale folder, keyed by its page's docname."""
    base = catalog_dir(root)
    return {p.relative_to(base).with_suffix("").as_posix(): p
            for p in sorted(base.rglob("*.po"))}


def update(root: Path, pots: dict[str, Catalog]) -> list[str]:
    """Bring every in-scope catalog up to its template and fill identity messages;
    remove the catalogs of pages out of scope or gone. Returns what it did, one line a
    catalog."""
    done = []
    have = catalogs(root)
    for docname, path in have.items():
        if docname not in pots or not in_scope(docname):
            path.unlink()
            why = "out of scope" if docname in pots else "no such page"
            done.append(f"{docname}: removed ({why})")
    for docname, pot in sorted(pots.items()):
        if not in_scope(docname):
            continue
        path = catalog_dir(root) / f"{docname}.po"
        catalog = read(path) if path.is_file() else Catalog(locale=LANGUAGE)
        catalog.obsolete.clear()  # obsolete since the last update: gone for good
        # a copy: babel puts the template's own message objects into the catalog
        catalog.update(copy.deepcopy(pot), update_creation_date=False)
        same = identity_rule(root, docname)
        filled = 0
        for message in catalog:
            if message.id and same(message) and (message.string != message.id
                                                  or message.fuzzy):
                message.string = message.id
                message.flags.discard("fuzzy")
                filled += 1
        write(catalog, path)
        counts = status(catalog)
        done.append(f"{docname}: {counts['untranslated']} untranslated, {counts['fuzzy']} "
                    f"fuzzy, {len(catalog.obsolete)} obsolete, {filled} filled with the English")
    return done


def status(catalog: Catalog) -> dict[str, int]:
    messages = [m for m in catalog if m.id]
    return {"messages": len(messages),
            "untranslated": sum(1 for m in messages if not m.string),
            "fuzzy": sum(1 for m in messages if m.fuzzy and m.string)}


def check(root: Path, pots: dict[str, Catalog]) -> list[str]:
    """Every reason the catalogs are not a complete, current translation of ``pots`` (the
    regenerated templates); ``[]`` when they are."""
    problems = []
    have = catalogs(root)
    for docname in sorted(set(have) - {d for d in pots if in_scope(d)}):
        why = "its page is out of scope" if docname in pots else "no such page"
        problems.append(f"{docname}.po: a catalog that should not exist ({why})")
    for docname, pot in sorted(pots.items()):
        if not in_scope(docname):
            continue
        if docname not in have:
            problems.append(f"{docname}.po: missing (run python scripts/i18n.py update)")
            continue
        catalog = read(have[docname])
        wanted = {m.id for m in pot if m.id}
        for message in catalog:
            if not message.id:
                continue
            where = f"{docname}.po:{message.lineno}"
            short = message.id[:70].replace("\n", " ")
            if message.id not in wanted:
                problems.append(f"{where}: obsolete (no such English message now): {short!r}")
            elif message.fuzzy:
                problems.append(f"{where}: fuzzy (its English changed): {short!r}")
            elif not message.string:
                problems.append(f"{where}: untranslated: {short!r}")
            for why in po_tokens.problems(message.id, message.string or ""):
                problems.append(f"{where}: {why}: {short!r}")
        for message in catalog.obsolete.values():
            problems.append(f"{docname}.po: obsolete entry (#~): {str(message.id)[:70]!r}")
        for msgid in sorted(wanted - {m.id for m in catalog if m.id}):
            problems.append(f"{docname}.po: new English message, not in the catalog: "
                            f"{msgid[:70]!r}")
    return problems


# ----------------------------------------------------------------------------- main ----

def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["_extract"]:  # the subprocess of templates()
        return extract(Path(argv[1]), Path(argv[2]), tuple(argv[3:]))
    parser = argparse.ArgumentParser(
        prog="python scripts/i18n.py",
        description="The Chinese edition's catalogs (locale/zh_CN): update them from the "
                    "English, or check that they are complete and current.")
    parser.add_argument("command", choices=["update", "check"])
    args = parser.parse_args(argv)
    pots, seconds = templates(ROOT)
    print(f"{len(pots)} message templates regenerated from the English in {seconds} s")
    if args.command == "update":
        for line in update(ROOT, pots):
            print(line)
        print("Translate the untranslated and fuzzy messages (remove the fuzzy flag once the "
              "Chinese matches the English), then run: python scripts/i18n.py check")
        return 0
    problems = check(ROOT, pots)
    for line in problems:
        print(line)
    in_scope_pots = [d for d in pots if in_scope(d)]
    print(f"{len(problems)} problem(s) in {len(in_scope_pots)} catalogs", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
