"""The Chinese edition's fixed terminology, shown on the Chinese notation page.

The terms are data, ``locale/zh_CN/glossary.yml`` (English, 中文, a note), the one
source of truth the translators follow. ``book/notation.md`` holds the directive
``posenc-terminology``: in a build whose ``language`` has such a file it renders the
file's title, introduction and table (a section under the page's glossary); in any
other build (the English site, the gettext builder) it renders nothing, so the English
page and its messages are unchanged.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from docutils import nodes
from sphinx.util.docutils import SphinxDirective

#: Where a language's terminology lies, relative to the book's source folder.
GLOSSARY = "locale/{language}/glossary.yml"


def glossary_path(srcdir: Path, language: str | None) -> Path | None:
    """The terminology file of ``language`` under ``srcdir``, or ``None`` if it has none."""
    if not language:
        return None
    path = Path(srcdir) / GLOSSARY.format(language=language)
    return path if path.is_file() else None


def load(path: Path) -> dict:
    """The terminology file's data: ``title``, ``intro``, ``columns`` and ``terms``
    (each ``{en, zh, note?}``)."""
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    for key in ("title", "intro", "columns", "terms"):
        if key not in data:
            raise ValueError(f"{path}: no {key!r}")
    for term in data["terms"]:
        # an unquoted comma in a YAML flow mapping splits a term: no stray keys allowed
        if not term.get("en") or not term.get("zh") or set(term) - {"en", "zh", "note"}:
            raise ValueError(f"{path}: a term has 'en', 'zh' and maybe 'note': {term!r}")
    return data


class Terminology(SphinxDirective):
    """``posenc-terminology``: the build language's term table, or nothing."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        path = glossary_path(Path(self.env.srcdir), self.config.language)
        if path is None:
            return []
        self.env.note_dependency(str(path))
        data = load(path)
        section = nodes.section(ids=["posenc-terminology"], names=["posenc-terminology"])
        section += nodes.title(text=data["title"])
        intro = nodes.paragraph()
        parsed, _ = self.state.inline_text(data["intro"], self.lineno)
        intro += parsed
        section += intro
        table = nodes.table(classes=["posenc-terminology"])
        group = nodes.tgroup(cols=3)
        table += group
        for _ in range(3):
            group += nodes.colspec(colwidth=1)
        head, body = nodes.thead(), nodes.tbody()
        group += head
        group += body
        head += self._row(data["columns"], lang=None)
        for term in data["terms"]:
            body += self._row([term["en"], term["zh"], term.get("note", "")], lang="en")
        section += table
        return [section]

    def _row(self, cells: list[str], lang: str | None) -> nodes.row:
        row = nodes.row()
        for i, text in enumerate(cells):
            entry = nodes.entry()
            para = nodes.paragraph()
            parsed, _ = self.state.inline_text(str(text), self.lineno)
            para += parsed
            if lang and i == 0:  # the English term, marked as English for screen readers
                para = nodes.inline("", "", *para.children, language=lang)
                para = nodes.paragraph("", "", para)
            entry += para
            row += entry
        return row
