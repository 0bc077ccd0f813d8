"""Local Sphinx extension: serve MathJax 3 from the site itself.

Jupyter Book 1 loads MathJax from a CDN by default, so offline (CI, this machine, a reader
behind a strict firewall) every formula stays raw TeX. The pip package
``django-static-mathjax`` ships MathJax 3.2.2's ``es5/`` tree as plain files (no Django is
needed to copy them). This extension

* points ``mathjax_path`` at ``_static/mathjax/tex-mml-chtml.js`` (unless ``_config.yml``
  sets another local path), and
* after an HTML build copies the files that component loads — its own script, the TeX
  input extensions it autoloads, the CHTML fonts, and the menu/accessibility/speech modules
  the MathJax menu can load — into ``<build>/html/_static/mathjax/``.

It also removes duplicate ``<script>`` entries from each page: sphinx-thebe adds its inline
configuration while Sphinx 7.4 already has a builder, so it reaches the page twice (once
with filename ``None``, once with ``""``), and the second ``const THEBE_JS_URL`` is an
uncaught SyntaxError on every page (the browser check in
``tests/test_browser.py`` reports it).

Interactive figures (:mod:`posenc.interactive`) are drawn by Plotly.js. The extension copies
``plotly.min.js`` from the pinned ``plotly`` package and ``posenc_interactive.js`` (next to
this file) into ``<build>/html/_static/`` and adds both, deferred, to each page whose body
holds an interactive block, so no page loads them from another host and pages without a
figure do not load them at all. ``posenc_site.css`` (also next to this file) is added to
every page: the interactive blocks' controls, code that fits the page on a phone, and link
colours with enough contrast in both themes.

Accessibility fixes to what the theme and docutils write (axe-core checks every page in
``tests/test_browser.py``): each sidebar toggle gets a name (``_name_toc_toggles``) and
bibliography entries a list-item role (``_citation_roles``). MathJax's own accessibility
extensions stay on (its default): every formula carries hidden MathML for screen readers,
and the explorer lets a reader walk through a formula from the keyboard; their files are
copied with the rest of MathJax (``RUNTIME_TREES``).

Enabled in ``_config.yml`` under ``sphinx: local_extensions: {posenc_site: _ext}``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

#: Where the MathJax files go, relative to the HTML ``_static`` folder.
STATIC_SUBDIR = "mathjax"
#: The combined component the site loads: TeX + MathML input, CommonHTML output, menu.
COMPONENT = "tex-mml-chtml.js"
#: What that component may request at run time, relative to MathJax's ``es5/`` folder.
RUNTIME_TREES = ("input", "output/chtml", "ui", "a11y", "sre")

PIP_HINT = "pip install django-static-mathjax==3.2.2.1 (see requirements.txt)"
PLOTLY_HINT = "pip install plotly (the version pinned in requirements.txt)"
#: Files next to this extension that the site serves from ``_static``.
HERE = Path(__file__).resolve().parent
INTERACTIVE_JS = "posenc_interactive.js"
SITE_CSS = "posenc_site.css"
#: The CSS class that marks an interactive block (posenc.interactive.CSS_CLASS).
INTERACTIVE_CLASS = "posenc-interactive"


def mathjax_es5_dir() -> Path:
    """The ``es5/`` folder of the MathJax copy shipped by ``django-static-mathjax``.

    Raises:
        ExtensionError: the package is not installed, or its file layout is not the
            expected MathJax 3 ``es5/`` tree.
    """
    try:
        import mathjax  # the import name of django-static-mathjax
    except ImportError as err:
        raise ExtensionError(f"posenc_site needs MathJax files: {PIP_HINT}") from err
    es5 = Path(mathjax.__file__).resolve().parent / "static" / "mathjax" / "es5"
    if not (es5 / COMPONENT).is_file():
        raise ExtensionError(f"no MathJax 3 component at {es5 / COMPONENT}: {PIP_HINT}")
    return es5


def plotly_js() -> Path:
    """``plotly.min.js`` as shipped by the ``plotly`` Python package.

    Raises:
        ExtensionError: ``plotly`` is not installed or ships no ``plotly.min.js``.
    """
    try:
        import plotly
    except ImportError as err:
        raise ExtensionError(f"posenc_site needs Plotly.js: {PLOTLY_HINT}") from err
    js = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
    if not js.is_file():
        raise ExtensionError(f"no plotly.min.js at {js}: {PLOTLY_HINT}")
    return js


def _use_local_mathjax(app: Sphinx, config) -> None:
    mathjax_es5_dir()  # fail early, before a full build, if the files are missing
    current = config.mathjax_path or ""
    if "://" in current or current.startswith("//") or not current:
        config.mathjax_path = f"{STATIC_SUBDIR}/{COMPONENT}"


def _copy_mathjax(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    es5 = mathjax_es5_dir()
    dest = Path(app.outdir) / "_static" / STATIC_SUBDIR
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(es5 / COMPONENT, dest / COMPONENT)
    for tree in RUNTIME_TREES:
        shutil.copytree(es5 / tree, dest / tree, dirs_exist_ok=True)
    shutil.copy2(es5.parent / "LICENSE", dest / "LICENSE")
    logger.info(f"posenc_site: MathJax 3 copied to {dest}")
    static = Path(app.outdir) / "_static"
    shutil.copy2(plotly_js(), static / "plotly.min.js")
    shutil.copy2(HERE / INTERACTIVE_JS, static / INTERACTIVE_JS)
    shutil.copy2(HERE / SITE_CSS, static / SITE_CSS)


def _interactive_scripts(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Add Plotly.js and the figures' script to the pages that hold an interactive block."""
    if INTERACTIVE_CLASS in (context.get("body") or ""):
        app.add_js_file("plotly.min.js", loading_method="defer")
        app.add_js_file(INTERACTIVE_JS, loading_method="defer")


def _name_toc_toggles(app: Sphinx, pagename, templatename, context, doctree) -> None:
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


def _citation_roles(app: Sphinx, pagename, templatename, context, doctree) -> None:
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


def _dedupe_scripts(app: Sphinx, pagename, templatename, context, doctree) -> None:
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


def _single_page_support(app: Sphinx) -> None:
    """Let Sphinx's ``singlehtml`` builder (scripts/build_pdf.py) render the notebooks.

    Some extensions Jupyter Book loads (myst-nb's hidden cells, sphinx_jupyterbook_latex)
    register their nodes' HTML visitors for the builder named ``html`` only, and Sphinx
    looks visitors up by builder name first, so the ``singlehtml`` translator fails on
    them. Every ``html`` visitor missing for ``singlehtml`` is used there as well.
    """
    if app.builder.name != "singlehtml":
        return
    handlers = app.registry.translation_handlers
    single = handlers.setdefault("singlehtml", {})
    for node_name, visitors in handlers.get("html", {}).items():
        single.setdefault(node_name, visitors)


def setup(app: Sphinx) -> dict:
    app.setup_extension("sphinx.ext.mathjax")
    plotly_js()  # fail early, before a full build, if Plotly.js is missing
    app.add_css_file(SITE_CSS)
    app.connect("html-page-context", _interactive_scripts, priority=400)
    app.connect("config-inited", _use_local_mathjax)
    app.connect("builder-inited", _single_page_support)
    app.connect("build-finished", _copy_mathjax)
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    app.connect("html-page-context", _name_toc_toggles, priority=900)  # after the theme's
    app.connect("html-page-context", _citation_roles)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
