"""The book's source, one click away (hooks of ``_ext/posenc_site.py``).

After an HTML build :func:`write_site_archive` writes the repository's tracked files, as
built (``git stash create`` folds uncommitted changes of tracked files into a commit
object; a clean tree is ``HEAD`` itself), with ``git archive`` into the site at
:data:`booktools.book_home.SOURCE_ARCHIVE`, adds it to each chapter's download menu
(:func:`source_download_button`, after the theme's ``.ipynb`` and ``.pdf``), and sets the
``book_source`` MyST substitution (a link to it) that the landing page uses. A reader who
downloads a notebook can so get ``posenc``, ``requirements.txt`` and the README's install
command from the same site. No external host is named; the configured home
(:mod:`booktools.site.home`) stays as it is.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from booktools import book_home

logger = logging.getLogger(__name__)


#: The MyST substitution that links the site's source archive (book/intro.md).
SOURCE_SUBSTITUTION = "book_source"


def source_revision(root: Path) -> tuple[str, str]:
    """``(tree-ish, label)`` of the tracked files in the git work tree ``root`` as they
    are now: ``HEAD`` when clean, else a commit object (``git stash create``, which
    changes no ref and no file) holding the uncommitted changes too; the label is the
    commit's short id, with ``+changes`` when the tree was not clean.

    Raises:
        RuntimeError: ``root`` is not in a git work tree, or git is not installed.
    """
    def git(*args: str) -> str:
        proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                              text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)}: {proc.stderr.strip()}")
        return proc.stdout.strip()

    try:
        head = git("rev-parse", "--short=12", "HEAD")
    except (OSError, RuntimeError) as err:
        raise RuntimeError(f"the book's source archive needs a git work tree: {err}") from err
    dirty = git("stash", "create")
    return (dirty, f"{head}+changes") if dirty else ("HEAD", head)


def write_source_archive(root: Path, dest: Path) -> str:
    """Write the repository at ``root`` (tracked files, as now) to ``dest`` as a
    ``.tar.gz`` whose files sit under ``positional-encoding-executed-<label>/``; return
    the label (see :func:`source_revision`)."""
    tree, label = source_revision(root)
    dest.parent.mkdir(parents=True, exist_ok=True)
    prefix = f"positional-encoding-executed-{label}/"
    proc = subprocess.run(
        ["git", "-C", str(root), "archive", "--format=tar.gz", f"--prefix={prefix}",
         "-o", str(dest), tree], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"git archive failed: {proc.stderr.strip()}")
    return label


def source_link(app: Sphinx, config) -> None:
    """The ``book_source`` substitution: a link from the landing page (``book/``) to the
    archive. (In the single page printed as the PDF it is the file's name on paper.)"""
    archive = book_home.SOURCE_ARCHIVE
    substitutions = dict(config.myst_substitutions or {})
    substitutions[SOURCE_SUBSTITUTION] = (
        f'<a href="../{archive}" download>{Path(archive).name}</a>'
    )
    config.myst_substitutions = substitutions


def write_site_archive(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.name != "html":
        return
    dest = Path(app.outdir) / book_home.SOURCE_ARCHIVE
    try:
        label = write_source_archive(Path(app.srcdir), dest)
    except RuntimeError as err:
        logger.warning(f"posenc_site: no source archive on the site: {err}")
        return
    logger.info(f"posenc_site: the book's source at {label} written to {dest}")


def source_download_button(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Add the source archive to the page's download menu (sphinx-book-theme's
    ``download-buttons`` group), after the page's own files."""
    if app.builder.name != "html":
        return
    for group in context.get("header_buttons") or []:
        if group.get("label") == "download-buttons":
            group["buttons"].append({
                "type": "link",
                "url": context["pathto"](book_home.SOURCE_ARCHIVE, 1),
                "text": "book source",
                "tooltip": "Download the book's source: the repository at the revision "
                           "that built this site (posenc, requirements.txt, notebooks)",
                "icon": "fas fa-box-archive",
                "label": "download-book-source-button",
            })
