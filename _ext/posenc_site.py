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
every page: the interactive blocks' controls, and code that fits the page on a phone.

The book's home (``scripts/book_home.py``): the ``repository`` block of ``_config.yml`` is
the one place that names the public repository. At ``config-inited`` the extension reads
it and sets the theme's repository and launch buttons from it (none at all while it is
empty; with a home, the repository button and Binder/Colab at the recorded revision), and
the ``book_repository`` MyST substitution that the API page uses to name the repository.

Enabled in ``_config.yml`` under ``sphinx: local_extensions: {posenc_site: _ext}``.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
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


#: The module that reads the book's home (one place for the extension and the scripts).
BOOK_HOME_SCRIPT = HERE.parent / "scripts" / "book_home.py"
#: The MyST substitution that names the repository on the API page (book/api.md).
REPOSITORY_SUBSTITUTION = "book_repository"


def book_home_module():
    """``scripts/book_home.py`` as a module (it is a script, not part of ``posenc``)."""
    name = "posenc_book_home"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, BOOK_HOME_SCRIPT)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def apply_home(config, home) -> None:
    """Set the repository/launch buttons and the API page's link in ``config`` for
    ``home`` (a ``book_home.Home`` or ``None``).

    Raises:
        ExtensionError: the theme's repository URL (as Jupyter Book passed it on) is not
            the configured home, e.g. ``repository.url`` was deleted from ``_config.yml``
            and Jupyter Book's default repository took its place.
    """
    book_home = book_home_module()
    options = dict(config.html_theme_options or {})
    given = options.get("repository_url") or ""
    if given and given != (home.url if home else ""):
        raise ExtensionError(
            f"the theme's repository_url is {given!r}, not the book's home "
            f"({home.url if home else 'none'}): set repository.url in _config.yml only, "
            'and keep url: "" there while the book has no public repository'
        )
    config.html_theme_options = book_home.theme_options(options, home)
    substitutions = dict(config.myst_substitutions or {})
    substitutions[REPOSITORY_SUBSTITUTION] = book_home.api_link(home)
    config.myst_substitutions = substitutions


def _configure_home(app: Sphinx, config) -> None:
    try:
        home = book_home_module().load_home(Path(app.srcdir) / "_config.yml")
    except ValueError as err:
        raise ExtensionError(str(err)) from err
    apply_home(config, home)
    where = f"{home.url} at {home.revision}" if home else "none (no repository buttons)"
    logger.info(f"posenc_site: book home {where}")


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
    app.connect("config-inited", _configure_home)
    app.connect("builder-inited", _single_page_support)
    app.connect("build-finished", _copy_mathjax)
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
