"""What the theme and docutils write, changed for the reader: lighter pages, no duplicate
scripts, and accessible names and roles (hooks of ``_ext/posenc_site.py``).

Page weight (tests/test_browser.py measures every page against a limit): pydata-sphinx-
theme's template loads Font Awesome's JavaScript kit (``scripts/fontawesome.js``, 1.5 MB,
every icon as SVG data) on every page, only "so that users can add custom icons". The
theme's own stylesheet already carries Font Awesome's CSS and web fonts, which draw every
icon the theme and sphinx-book-theme put on a page (``<i class="fa-solid fa-...">``), so
after the build :func:`strip_icon_kit` removes that ``<script>`` from every page and the
kit from ``_static``. The book adds no custom icons. The same template also loads Sphinx's
search index (``searchindex.js``, with ``searchtools.js`` and ``language_data.js``) on
every page, for the theme's search-as-you-type, which is off (its default): the search box
sends the query to ``search.html``, which loads them itself. They are removed from every
other page too.

:func:`dedupe_scripts` removes duplicate ``<script>`` entries from each page: sphinx-thebe
adds its inline configuration while Sphinx 7.4 already has a builder, so it reaches the page
twice (once with filename ``None``, once with ``""``), and the second ``const
THEBE_JS_URL`` is an uncaught SyntaxError on every page (the browser check in
``tests/test_browser.py`` reports it).

Accessibility fixes to what the theme and docutils write (axe-core checks every page in
``tests/test_browser.py``): each sidebar toggle gets a name (:func:`name_toc_toggles`),
bibliography entries a list-item role (:func:`citation_roles`), and the index of the
highlighted sources nests a subpackage's modules inside its own item
(:func:`nest_module_index`).
"""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from booktools import zh_build

logger = logging.getLogger(__name__)

#: The folders of the other editions inside the English site's output.
OTHER_EDITIONS = (zh_build.FOLDER,)


def written_pages(outdir: Path) -> list[Path]:
    """The HTML pages this build wrote in ``outdir``: not the theme's templates under any
    ``_static``, nor another edition's pages in its own folder inside this one (the
    Chinese edition, built into ``zh_CN`` after the English, or left there by an earlier
    build)."""
    others = [outdir / folder for folder in OTHER_EDITIONS]
    return sorted(
        page for page in outdir.rglob("*.html")
        if "_static" not in page.relative_to(outdir).parts
        and not any(other in page.parents for other in others))


#: The theme's Font Awesome kit (relative to ``_static``) and its ``<script>`` tag.
ICON_KIT = "scripts/fontawesome.js"
ICON_KIT_TAG = re.compile(
    r'[ \t]*(?:<!-- So that users can add custom icons -->\s*)?'
    r'<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>\n?'
)


#: The search scripts the theme's template adds to every page but the search page.
SEARCH_TAGS = re.compile(
    r'[ \t]*<script src="[^"]*(?:_static/searchtools|_static/language_data|searchindex)'
    r'\.js"></script>\n?'
)


def drop_icon_kit(html: str, search: bool = True) -> str:
    """``html`` without the theme's ``<script>`` for Font Awesome's JavaScript kit, and,
    unless ``search``, without the search index and its scripts."""
    html = ICON_KIT_TAG.sub("", html)
    return html if search else SEARCH_TAGS.sub("", html)


def strip_icon_kit(app: Sphinx, exception: Exception | None) -> None:
    """Remove the icon kit's ``<script>`` from every page written, and the kit itself:
    the theme's CSS web fonts draw the icons (see this module's docstring)."""
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    as_you_type = (app.config.html_theme_options or {}).get("search_as_you_type", False)
    pages = 0
    for page in out.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        search = as_you_type or page == out / "search.html"
        lighter = drop_icon_kit(text, search=search)
        if lighter != text:
            page.write_text(lighter, encoding="utf-8")
            pages += 1
    for name in (ICON_KIT, ICON_KIT + ".map", ICON_KIT + ".LICENSE.txt"):
        (out / "_static" / name).unlink(missing_ok=True)
    logger.info(f"posenc_site: icon kit (and search index) dropped from {pages} pages")


def name_toc_toggles(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Give each expand/collapse toggle of the navigation sidebar an accessible name.

    pydata-sphinx-theme draws a section of the sidebar that has sub-pages as a
    ``<details>`` whose ``<summary>`` holds only a decorative chevron (``role=
    "presentation"``), so a screen reader announces a nameless button (axe-core's
    ``summary-name``, WCAG 4.1.2). The theme's ``generate_toctree_html`` is wrapped so
    that each such summary is labelled with the page it opens: "Sub-pages of <title>".
    """
    generate = context.get("generate_toctree_html")
    if generate is None or getattr(generate, "posenc_named", False):
        return

    def named(*args, **kwargs):
        soup = generate(*args, **kwargs)
        if isinstance(soup, str):
            return soup
        for summary in soup.select("summary"):
            if summary.get_text(strip=True) or summary.get("aria-label"):
                continue
            item = summary.find_parent("li")
            link = item.find("a", recursive=False) if item is not None else None
            title = link.get_text(" ", strip=True) if link is not None else "this section"
            summary["aria-label"] = f"Sub-pages of {title}"
        return soup

    named.posenc_named = True
    context["generate_toctree_html"] = named


def citation_roles(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Mark each bibliography entry as a list item, not with the deprecated ARIA role.

    docutils writes the bibliography as ``<div role="list">`` of ``<div
    role="doc-biblioentry">``; DPUB-ARIA 1.1 deprecates ``doc-biblioentry`` (axe-core's
    ``aria-deprecated-role``), and a list whose children have no list-item role is
    malformed (``aria-required-children``, WCAG 1.3.1). ``role="listitem"`` is what
    DPUB-ARIA 1.1 recommends in its place.
    """
    body = context.get("body")
    if isinstance(body, str) and 'role="doc-biblioentry"' in body:
        context["body"] = body.replace('role="doc-biblioentry"', 'role="listitem"')


def dedupe_scripts(app: Sphinx, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if not isinstance(scripts, list):
        return
    seen, unique = set(), []
    for js in scripts:
        # The copies differ in the filename of an inline script (None vs ""), so compare
        # the normalised filename and the attributes (which hold the inline body).
        filename = getattr(js, "filename", js) or ""
        key = (str(filename), repr(sorted(getattr(js, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(js)
    scripts[:] = unique


#: One token of the module index Sphinx's viewcode writes: a list opened or closed, or an
#: item (one line, ``<li>...</li>``).
_INDEX_TOKEN = re.compile(r"<ul>|</ul>|<li>(?:(?!<ul>|<li>).)*?</li>\n?", re.S)


def nest_lists(body: str) -> str:
    """``body`` with each nested ``<ul>`` moved inside the item before it.

    sphinx.ext.viewcode 7.4 writes a module whose submodules also have source pages as
    ``<li>package</li><ul><li>package.sub</li></ul>``: a ``<ul>`` directly inside a
    ``<ul>``, which HTML does not allow and screen readers announce as a list of unnamed
    items (axe-core's rule ``list``). Here the inner list becomes part of the package's
    item, ``<li>package<ul><li>package.sub</li></ul></li>``. Text outside the lists is
    kept as it is."""
    first = body.find("<ul>")
    if first < 0:
        return body
    last = body.rfind("</ul>") + len("</ul>")
    root: list = []  # items: [html_inside_li, child_items or None]
    stack: list[list] = []
    lists, at = body[first:last], 0
    tokens = []
    for found in _INDEX_TOKEN.finditer(lists):
        if lists[at:found.start()].strip():
            raise ValueError(f"unbalanced lists in the module index at {lists[at:][:80]!r}")
        tokens.append(found.group())
        at = found.end()
    for token in tokens:
        if token == "<ul>":
            new: list = []
            if stack and stack[-1]:
                stack[-1][-1][1] = new
            elif stack:
                stack[-1].append(["", new])
            else:
                new = root
            stack.append(new)
        elif token == "</ul>" and stack:
            stack.pop()
        elif stack and token.startswith("<li>"):
            inside = token.strip()[len("<li>"):-len("</li>")]
            stack[-1].append([inside, None])
        else:
            raise ValueError(f"unbalanced lists in the module index at {token!r}")
    if stack:
        raise ValueError("unbalanced lists in the module index: a <ul> is never closed")

    def render(items: list) -> str:
        return "<ul>" + "".join(
            f"<li>{inside}{render(child) if child is not None else ''}</li>\n"
            for inside, child in items) + "</ul>"

    return body[:first] + render(root) + body[last:]


def nest_module_index(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """``html-page-context`` hook: the highlighted sources' index (``_modules/index``)
    with its lists nested as HTML allows (:func:`nest_lists`)."""
    if pagename == "_modules/index" and "body" in context:
        context["body"] = nest_lists(context["body"])
