"""MathJax 3 served from the site itself (hooks of ``_ext/posenc_site.py``).

Jupyter Book 1 loads MathJax from a CDN by default, so offline (CI, this machine, a reader
behind a strict firewall) every formula stays raw TeX. The pip package
``django-static-mathjax`` ships MathJax 3.2.2's ``es5/`` tree as plain files (no Django is
needed to copy them). These hooks

* point ``mathjax_path`` at ``_static/mathjax/startup.js`` (unless ``_config.yml`` sets
  another local path) and list, in ``mathjax3_config``, the components it loads
  (:data:`COMPONENTS`): the TeX input, the CommonHTML output and the assistive MathML.
  That is the combined ``tex-mml-chtml.js`` without the MathML input (the book has no
  MathML source) and without the menu (0.43 MB of its 1.17 MB): 0.76 MB in all, so a
  chapter with formulas stays under the page-weight limit;
* add ``posenc_mathjax.js`` (in ``_ext/``, :data:`MENU_JS`) to each page with a formula:
  the menu, and through it the accessibility explorer, loaded when a reader asks for it
  (a right click on a formula, or Space/Enter/Shift+F10 on a focused one);
* after an HTML build copy the files those components load — the loader, the TeX input
  and the extensions it autoloads, the CHTML output and fonts, and the menu, accessibility
  and speech modules the menu can load — into ``<build>/html/_static/mathjax/``.

TeX's text-mode macros are on (MathJax's ``textmacros`` package, :func:`use_local_mathjax`):
without it MathJax prints ``\\text{max\\_distance}`` as ``max\\_distance``, backslash and all,
where LaTeX prints ``max_distance``.

MathJax's assistive MathML stays on: every formula carries hidden MathML for screen
readers; the explorer lets a reader walk through a formula from the keyboard once the
menu is loaded; their files are copied with the rest of MathJax (:data:`RUNTIME_TREES`).
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
#: The script the pages load: MathJax's loader and startup, which loads COMPONENTS.
COMPONENT = "startup.js"
#: The components every page with a formula loads (their dependency, ``core``, too).
COMPONENTS = ("input/tex", "output/chtml", "a11y/assistive-mml")
#: Loaded when a reader opens the menu on a formula (``_ext/posenc_mathjax.js``).
MENU_JS = "posenc_mathjax.js"
#: What the components and the menu may request at run time, relative to ``es5/`` (the
#: whole output tree: the menu can switch to the SVG renderer). The combined component
#: the pages loaded before, ``tex-mml-chtml.js``, is still served, for a reader's own use
#: and the build's checks (tests/test_browser.py); no page loads it.
RUNTIME_FILES = ("core.js", "tex-mml-chtml.js")
RUNTIME_TREES = ("input", "output", "ui", "a11y", "sre")
#: The folder of the local extensions, which holds MENU_JS.
EXT = Path(__file__).resolve().parents[3] / "_ext"

PIP_HINT = "pip install django-static-mathjax==3.2.2.1 (see requirements.txt)"


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


#: The TeX packages loaded on top of the component's: ``textmacros`` reads the macros
#: of text mode (``\\_``, ``\\&``, accents) inside ``\\text{...}`` as LaTeX does.
TEX_PACKAGES = ("textmacros",)


def use_local_mathjax(app: Sphinx, config) -> None:
    mathjax_es5_dir()  # fail early, before a full build, if the files are missing
    current = config.mathjax_path or ""
    if "://" in current or current.startswith("//") or not current:
        config.mathjax_path = f"{STATIC_SUBDIR}/{COMPONENT}"
    settings = dict(config.mathjax3_config or {})
    loader = dict(settings.get("loader") or {})
    # the components, then the TeX packages on top of them (an explicit list is kept)
    load = list(loader.get("load") or COMPONENTS)
    load += [f"[tex]/{p}" for p in TEX_PACKAGES if f"[tex]/{p}" not in load]
    loader["load"] = load
    settings["loader"] = loader
    tex = dict(settings.get("tex") or {})
    packages = dict(tex.get("packages") or {})
    packages["[+]"] = [*packages.get("[+]", []),
                       *(p for p in TEX_PACKAGES if p not in packages.get("[+]", []))]
    tex["packages"] = packages
    settings["tex"] = tex
    config.mathjax3_config = settings


def menu_on_demand(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """On a page that loads MathJax, add :data:`MENU_JS` (not deferred, so it runs before
    MathJax; after Sphinx's inline configuration, which it extends)."""
    mathjax = f"_static/{app.config.mathjax_path}"
    scripts = context.get("script_files") or []
    if any(str(getattr(js, "filename", js) or "") == mathjax for js in scripts):
        app.add_js_file(MENU_JS, priority=501)


def copy_mathjax(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    es5 = mathjax_es5_dir()
    dest = Path(app.outdir) / "_static" / STATIC_SUBDIR
    dest.mkdir(parents=True, exist_ok=True)
    for name in (COMPONENT, *RUNTIME_FILES):
        shutil.copy2(es5 / name, dest / name)
    shutil.copy2(EXT / MENU_JS, Path(app.outdir) / "_static" / MENU_JS)
    for tree in RUNTIME_TREES:
        shutil.copytree(es5 / tree, dest / tree, dirs_exist_ok=True)
    shutil.copy2(es5.parent / "LICENSE", dest / "LICENSE")
    logger.info(f"posenc_site: MathJax 3 copied to {dest}")
