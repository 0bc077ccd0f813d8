"""The book on one page: Sphinx's ``singlehtml`` builder (:mod:`booktools.pdf`) made to
render the notebooks (a hook of ``_ext/posenc_site.py``)."""

from __future__ import annotations

from sphinx.application import Sphinx


def single_page_support(app: Sphinx) -> None:
    """Let Sphinx's ``singlehtml`` builder (booktools.pdf) render the notebooks.

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
