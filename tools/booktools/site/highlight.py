"""Lighter highlighted code (a hook of ``_ext/posenc_site.py``, after the build).

Pygments wraps each token of a code block in a span naming its token class
(``<span class="n">keys</span>``), and the site's code colours (``_static/pygments.css``,
one set of rules per theme) give several classes nothing but the colour the code block's
own text already has: names, punctuation and whitespace in both of the theme's styles.
Those spans change nothing a reader sees, yet they are most of a code block's markup:
94 kB of chapter 10's 425 kB page.

:func:`plain_classes` reads from the stylesheet the site serves which classes are drawn
exactly as the block's text in *every* theme (a rule that is the block's colour and
nothing else, or no rule), and leaves out any class that a selector of another stylesheet
in ``_static`` names after ``.highlight``. :func:`unwrap_plain_tokens` removes the spans
of those classes (their text stays) inside a code block's ``<pre>`` only, and only spans
with no markup inside. A class with a colour, a weight, a style or a background of its
own keeps its spans. Printed outputs (a ``pre`` inside a ``div.output``) are left as they
are: they keep the theme's text colour, where code takes the code style's
(``_ext/posenc_site.css``); so is a token inside a link (viewcode's ``[docs]``), whose
colour could be the link's.
"""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from booktools.site.pages import written_pages

logger = logging.getLogger(__name__)

#: The stylesheet of the code colours, in the site's ``_static``.
PYGMENTS_CSS = "pygments.css"
#: ``[html[data-theme="T"] ].highlight[ .CLASS] { DECLARATIONS }``: a rule of
#: ``pygments.css`` for the block itself (no class) or for one token class.
_RULE = re.compile(
    r'(?:html\[data-theme="(?P<theme>[\w-]+)"\]\s+)?\.highlight'
    r'(?:\s+\.(?P<cls>[\w-]+))?\s*\{(?P<body>[^}]*)\}'
)
#: A code block: ``<div class="highlight"><pre>...</pre>``, with the classes of the
#: element around it (``output ...`` for a printed output) when it is a ``div``.
_BLOCK = re.compile(r'(?:<div class="(?P<outer>[^"]*)">)?<div class="highlight"><pre\b'
                    r'[^>]*>.*?</pre>', re.S)
_LINK = re.compile(r"(<a\b[^>]*>.*?</a>)", re.S)


def _declarations(body: str) -> tuple[str, ...]:
    return tuple(sorted(" ".join(d.split()).lower().replace(": ", ":")
                        for d in body.split(";") if d.strip()))


def plain_classes(pygments_css: str, other_css: tuple[str, ...] = ()) -> frozenset[str]:
    """The token classes drawn exactly as the code block's text in every theme of
    ``pygments_css``: each theme's rule for the class, if it has one, is the colour of that
    theme's ``.highlight`` rule and nothing else. A class named after ``.highlight`` in a
    selector of any of ``other_css`` is never plain. Empty when the stylesheet has no
    ``.highlight`` colour to compare with."""
    base: dict[str | None, str] = {}
    rules: dict[str, dict[str | None, tuple[str, ...]]] = {}
    for m in _RULE.finditer(pygments_css):
        theme, cls, decl = m["theme"], m["cls"], _declarations(m["body"])
        if cls is None:
            colour = [d for d in decl if d.startswith("color:")]
            if colour:
                base[theme] = colour[0]
        else:
            rules.setdefault(cls, {})[theme] = decl
    if not base:
        return frozenset()
    plain = {cls for cls, by_theme in rules.items()
             if set(by_theme) <= set(base)
             and all(by_theme.get(t, (c,)) == (c,) for t, c in base.items())}
    styled_elsewhere = {
        cls for css in other_css for selector in re.findall(r"([^{}]*)\{", css)
        if ".highlight" in selector
        for cls in re.findall(r"\.([\w-]+)", selector.split(".highlight", 1)[1])}
    return frozenset(plain - styled_elsewhere)


def unwrap_plain_tokens(html: str, plain: frozenset[str]) -> str:
    """``html`` with each ``<span class="C">text</span>`` inside a code block's ``<pre>``
    replaced by its text, for ``C`` in ``plain`` (not in a printed output's block, nor in
    a link inside the block)."""
    if not plain:
        return html
    classes = "|".join(re.escape(c) for c in sorted(plain))
    span = re.compile(rf'<span class="(?:{classes})">([^<]*)</span>')

    def lighter(block: re.Match) -> str:
        if "output" in (block["outer"] or "").split():
            return block.group(0)
        parts = _LINK.split(block.group(0))  # links at the odd places, left as they are
        return "".join(part if i % 2 else span.sub(r"\1", part)
                       for i, part in enumerate(parts))

    return _BLOCK.sub(lighter, html)


def site_plain_classes(static: Path) -> frozenset[str]:
    """:func:`plain_classes` of the site whose ``_static`` folder is ``static``: its
    ``pygments.css`` against every other stylesheet in it; empty without one."""
    sheet = static / PYGMENTS_CSS
    if not sheet.is_file():
        return frozenset()
    others = tuple(p.read_text(encoding="utf-8", errors="replace")
                   for p in sorted(static.rglob("*.css")) if p != sheet)
    return plain_classes(sheet.read_text(encoding="utf-8"), others)


def lighter_code(app: Sphinx, exception: Exception | None) -> None:
    """Unwrap the plain token spans (:func:`plain_classes`) in every page written."""
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    plain = site_plain_classes(out / "_static")
    if not plain:
        logger.info("posenc_site: no code token drawn in the code's own colour: spans kept")
        return
    before = after = 0
    for page in written_pages(out):
        text = page.read_text(encoding="utf-8")
        lighter = unwrap_plain_tokens(text, plain)
        before, after = before + len(text), after + len(lighter)
        if lighter != text:
            page.write_text(lighter, encoding="utf-8")
    logger.info(f"posenc_site: plain code spans ({', '.join(sorted(plain))}) unwrapped, "
                f"{before:,} -> {after:,} characters")
