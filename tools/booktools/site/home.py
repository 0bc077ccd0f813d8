"""The book's home (:mod:`booktools.book_home`) on the site (a hook of ``_ext/posenc_site.py``).

The ``repository`` block of ``_config.yml`` is the one place that names the public
repository. At ``config-inited`` :func:`configure_home` reads it and sets the theme's
repository and launch buttons from it (none at all while it is empty; with a home, the
repository button and Binder/Colab at the recorded revision), and the ``book_repository``
MyST substitution that the API page uses to name the repository.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

from booktools import book_home

logger = logging.getLogger(__name__)


def configure_home(app: Sphinx, config) -> None:
    try:
        home = book_home.load_home(Path(app.srcdir) / "_config.yml")
        book_home.apply_home(config, home)
    except ValueError as err:
        raise ExtensionError(str(err)) from err
    where = f"{home.url} at {home.revision}" if home else "none (no repository buttons)"
    logger.info(f"posenc_site: book home {where}")
