"""The theme's stylesheet cut to the rules the site can use (a hook of
``_ext/posenc_site.py``, after the build and after :mod:`booktools.site.icons`).

pydata-sphinx-theme's stylesheet (``_static/styles/pydata-sphinx-theme.css``, 311 kB once
the unused icons are gone) is loaded by every page and holds all of Bootstrap 5: grid
columns, spacing and display utilities at every breakpoint, components the theme never
shows. Two thirds of its bytes are rules no page can match. :func:`used_rules` keeps a
rule unless one of its selectors' required classes can never be on the page:

* a *required* class is one outside any parenthesis, bracket or string:
  ``.btn:not(.disabled)`` requires ``btn`` only, ``:is(.a, .b)`` and
  ``a[href$=".pdf"]`` require nothing;
* a class can be on a page when the name occurs in a page this build wrote
  (:func:`booktools.site.pages.written_pages`) or in any script in its output folder
  (every ``.js``, ``_static`` included): scripts name the classes they add
  (``classList.add("show")``); or when it starts with a prefix that a script builds
  names from (a string that ends in ``-`` right before a substitution, a ``+`` or
  ``.concat(``, as Bootstrap's ```bs-${name}-auto```).

Everything else stays as it was: rules with no class (elements, attributes, ``:root``),
rules whose selectors hold a backslash escape, ``@font-face``, ``@keyframes``, ``@layer``
and the other at-rules not listed in :data:`NESTING`; an ``@media``, ``@supports`` or
``@container`` block keeps its used rules, or goes when none is left. The licence comment
stays. A stylesheet it cannot parse (an unbalanced brace) is left as it is.

The cut file keeps its name, so each page's link to it gets a ``digest`` of the cut
content (the theme's is of its own file, the same for any cut): a browser that cached
another build's cut stylesheet fetches this one.

The site crawl (tests/test_browser.py, booktools.cut_rules) looks up every selector the
served stylesheet lacks (against the theme's own) on every page it loads, in each state
it takes the page in (on a phone, in both themes, with the download menu open), and
requires that none matches; tests/test_browser_styles.py says which selectors.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from booktools.site.icons import THEME_CSS, theme_stylesheet
from booktools.site.pages import written_pages

logger = logging.getLogger(__name__)

#: At-rules whose block holds rules (and is cut rule by rule); any other block at-rule
#: (``@font-face``, ``@keyframes``, ``@page``, ``@property``, ...) is kept whole.
NESTING = ("@media", "@supports", "@container")
_NAME = re.compile(r"[\w-]+")
#: A string fragment a script builds class names from: ends in ``-`` and is followed by a
#: template substitution or a concatenation.
_PREFIX = re.compile(r"""([A-Za-z][\w-]*-)(?:\$\{|["'`]\s*\+|["'`]\.concat\()""")
_CLASS = re.compile(r"\.(-?[_a-zA-Z][\w-]*)")


def site_names(html: Path) -> tuple[frozenset[str], tuple[str, ...]]:
    """``(names, prefixes)``: every word of the pages this build wrote and of every script
    in ``html``, and the prefixes the scripts build class names from."""
    names: set[str] = set()
    prefixes: set[str] = set()
    for path in written_pages(html):
        names.update(_NAME.findall(path.read_text("utf-8", "replace")))
    for path in html.rglob("*.js"):
        text = path.read_text("utf-8", "replace")
        names.update(_NAME.findall(text))
        prefixes.update(_PREFIX.findall(text))
    return frozenset(names), tuple(sorted(prefixes))


def _top_level(text: str) -> list[int]:
    """The positions in ``text`` outside any parenthesis, bracket or quoted string (the
    brackets and quotes themselves excluded)."""
    depth, quote, top = 0, None, []
    for i, ch in enumerate(text):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0:
            top.append(i)
    return top


def required_classes(selector: str) -> list[str]:
    """The classes an element must have for ``selector`` to match it (those outside any
    parenthesis, bracket or string)."""
    return _CLASS.findall("".join(selector[i] for i in _top_level(selector)))


def _split_top(text: str, sep: str) -> list[str]:
    """``text`` split on ``sep`` outside parentheses, brackets and quotes."""
    cuts = [i for i in _top_level(text) if text[i] == sep]
    return [text[a + 1:b] for a, b in zip([-1, *cuts], [*cuts, len(text)], strict=True)]


def _blocks(css: str) -> list[tuple[str, str | None]]:
    """The top-level statements of ``css``: ``(prelude, body)`` for a block (``body``
    without its braces), ``(statement, None)`` for one ending in ``;`` and
    ``(comment, None)`` for a comment.

    Raises:
        ValueError: an unbalanced brace.
    """
    out, i, n = [], 0, len(css)
    while i < n:
        while i < n and css[i].isspace():
            i += 1
        if i >= n:
            break
        if css.startswith("/*", i):
            end = css.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append((css[i:end], None))
            i = end
            continue
        j, quote = i, None
        while j < n:
            ch = css[j]
            if quote:
                if ch == "\\":
                    j += 1
                elif ch == quote:
                    quote = None
            elif ch in "\"'":
                quote = ch
            elif ch in "{;":
                break
            elif ch == "}":
                raise ValueError(f"unbalanced '}}' at {j}")
            j += 1
        if j >= n:
            out.append((css[i:].strip(), None))
            break
        if css[j] == ";":
            out.append((css[i:j + 1].strip(), None))
            i = j + 1
            continue
        depth, k, quote = 1, j + 1, None
        while k < n and depth:
            ch = css[k]
            if not quote and css.startswith("/*", k):
                end = css.find("*/", k + 2)
                k = n if end < 0 else end + 2
                continue
            if quote:
                if ch == "\\":
                    k += 1
                elif ch == quote:
                    quote = None
            elif ch in "\"'":
                quote = ch
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            k += 1
        if depth:
            raise ValueError(f"unbalanced '{{' at {j}")
        out.append((css[i:j].strip(), css[j + 1:k - 1]))
        i = k
    return out


def used_rules(css: str, names: Iterable[str], prefixes: Iterable[str] = ()) -> str:
    """``css`` without the rules no page can match (see the module's docstring).

    Raises:
        ValueError: the stylesheet has an unbalanced brace.
    """
    names = frozenset(names)
    prefixes = tuple(prefixes)

    def possible(cls: str) -> bool:
        return cls in names or cls.startswith(prefixes)

    def alive(selector: str) -> bool:
        return "\\" in selector or all(possible(c) for c in required_classes(selector))

    def cut(text: str) -> str:
        kept = []
        for prelude, body in _blocks(text):
            if body is None:
                if not prelude.startswith("/*") or prelude.startswith("/*!"):
                    kept.append(prelude)
            elif prelude.startswith(NESTING):
                inner = cut(body)
                if inner or not body.strip():
                    kept.append(f"{prelude}{{{inner}}}")
            elif prelude.startswith("@") or any(map(alive, _split_top(prelude, ","))):
                kept.append(f"{prelude}{{{body}}}")
        return "".join(kept)

    return cut(css)


def cut_theme_css(app: Sphinx, exception: Exception | None) -> None:
    """Cut the theme's stylesheet in the build's ``_static`` to the rules the written
    pages and the served scripts can use."""
    if exception is not None or app.builder.format != "html":
        return
    html = Path(app.outdir)
    sheet = theme_stylesheet(html)
    if sheet is None:
        return
    css = sheet.read_text(encoding="utf-8")
    try:
        lighter = used_rules(css, *site_names(html))
    except ValueError as err:
        logger.warning(f"posenc_site: {THEME_CSS} left whole: {err}")
        return
    sheet.write_text(lighter, encoding="utf-8")
    digest = hashlib.sha256(lighter.encode()).hexdigest()[:20]
    link = re.compile(re.escape(THEME_CSS) + r"\?digest=\w+")
    for page in written_pages(html):
        text = page.read_text(encoding="utf-8")
        linked = link.sub(f"{THEME_CSS}?digest={digest}", text)
        if linked != text:
            page.write_text(linked, encoding="utf-8")
    logger.info(f"posenc_site: {THEME_CSS} cut to the rules the site can use, "
                f"{len(css.encode()):,} -> {len(lighter.encode()):,} bytes")
