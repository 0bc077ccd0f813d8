"""MathJax 3 served from the site itself (hooks of ``_ext/posenc_site.py``).

Jupyter Book 1 loads MathJax from a CDN by default, so offline (CI, this machine, a reader
behind a strict firewall) every formula stays raw TeX. The pip package
``django-static-mathjax`` ships MathJax 3.2.2's ``es5/`` tree as plain files (no Django is
needed to copy them). These hooks

* point ``mathjax_path`` at ``_static/mathjax/tex-mml-chtml.js`` (unless ``_config.yml``
  sets another local path), and
* after an HTML build copy the files that component loads — its own script, the TeX
  input extensions it autoloads, the CHTML fonts, and the menu/accessibility/speech modules
  the MathJax menu can load — into ``<build>/html/_static/mathjax/``.

TeX's text-mode macros are on (MathJax's ``textmacros`` package, :func:`use_local_mathjax`):
without it MathJax prints ``\\text{max\\_distance}`` as ``max\\_distance``, backslash and all,
where LaTeX prints ``max_distance``.

MathJax's own accessibility extensions stay on (its default): every formula carries hidden
MathML for screen readers, and the explorer lets a reader walk through a formula from the
keyboard; their files are copied with the rest of MathJax (:data:`RUNTIME_TREES`).
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
    mj = config.mathjax3_config = dict(config.mathjax3_config or {})
    loader = mj.setdefault("loader", {})
    loader["load"] = [*loader.get("load", []), *(f"[tex]/{p}" for p in TEX_PACKAGES)]
    tex = mj.setdefault("tex", {})
    packages = tex.setdefault("packages", {})
    packages["[+]"] = [*packages.get("[+]", []), *TEX_PACKAGES]
    current = config.mathjax_path or ""
    if "://" in current or current.startswith("//") or not current:
        config.mathjax_path = f"{STATIC_SUBDIR}/{COMPONENT}"


def copy_mathjax(app: Sphinx, exception: Exception | None) -> None:
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
