"""The book's home: the one setting that names the repository readers install from.

The ``repository`` block of ``_config.yml`` holds it, empty until the book has a public
repository of its own::

    repository:
      url: ""        # https://github.com/OWNER/REPO, or "" for no public home
      revision: ""   # with a url: the release tag (or commit) the outputs were made with
      path_to_book: ""

Everything that links to or installs from the home is derived from those two values:

* every chapter's first code cell (:func:`install_cell`), written into the notebooks by
  :func:`stamp` -- ``scripts/execute_notebooks.py`` stamps each notebook before running
  it, and ``python scripts/book_home.py`` stamps them all without running anything;
* the repository, Binder and Colab buttons, and the API page's link to the repository
  (:func:`theme_options` and :func:`api_link`, applied by :func:`apply_home` from
  :mod:`booktools.site.home`, a hook of ``_ext/posenc_site.py``).

With no home the buttons are off and the install cell fetches nothing: where ``posenc``
is missing it stops with a message that says where the book's source is (the archive the
site carries, :data:`SOURCE_ARCHIVE`, linked from its landing page and from each chapter's
download menu) and how to install it from there. With a home
the cell installs ``git+URL@REVISION``, the exact revision, and the launch buttons open
the notebooks at that revision, so a reader gets the code that produced the outputs.

    python scripts/book_home.py           # stamp every notebook's install cell
    python scripts/book_home.py --check   # exit 1 if a notebook's install cell differs

(``scripts/book_home.py`` is the entry point; this module, :mod:`booktools.book_home`, the
logic, imported by :mod:`booktools.site`, ``scripts/execute_notebooks.py`` and the tests.)
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "_config.yml"
#: What a reader runs in a clone to install posenc and everything else (README, "Set up").
CLONE_INSTALL = "python -m pip install -r requirements.txt"
#: The site's own copy of the repository at the revision that built it (written by
#: booktools.site.source into the built site, linked from the landing page and from each
#: chapter's download menu), relative to the site's root.
SOURCE_ARCHIVE = "_downloads/positional-encoding-executed-source.tar.gz"
#: The widest code line a chapter may have (tests/test_code_width.py).
MAX_LINE = 88
#: A public GitHub repository (Colab's launch button opens notebooks from GitHub only).
URL_RE = re.compile(r"https://github\.com/[A-Za-z0-9](?:[A-Za-z0-9-]*)/[A-Za-z0-9._-]+")
#: A git ref: a tag name or a commit SHA (no spaces, no URL syntax).
REVISION_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*")
#: Names that move with new commits, so they do not name the code behind the outputs.
MOVING_REFS = frozenset({"HEAD", "main", "master", "develop", "trunk"})
#: Launch-button providers (sphinx-book-theme's ``launch_buttons`` keys that open a host).
LAUNCH_PROVIDERS = (
    "binderhub_url",
    "jupyterhub_url",
    "colab_url",
    "deepnote_url",
    "jupyterlite_url",
)
#: Header buttons that link to the repository.
REPOSITORY_BUTTONS = (
    "use_repository_button",
    "use_issues_button",
    "use_edit_page_button",
    "use_source_button",
)


@dataclass(frozen=True)
class Home:
    """A public repository of the book and the exact revision its outputs come from."""

    url: str
    revision: str

    @property
    def pip_target(self) -> str:
        return f"git+{self.url}@{self.revision}"


def parse_home(repository: dict | None) -> Home | None:
    """The home named by a ``repository`` block, or ``None`` when ``url`` is empty.

    Raises:
        ValueError: ``url`` is not ``https://github.com/OWNER/REPO``; or a url is given
            without ``revision``, or with a moving name (``main``, ``HEAD``, ...) or a
            malformed one; or ``revision`` is given without a url.
    """
    repository = repository or {}
    url = (repository.get("url") or "").strip()
    revision = str(repository.get("revision") or "").strip()
    if not url:
        if revision:
            raise ValueError(
                f"_config.yml repository.revision is {revision!r} but repository.url is "
                "empty: set both (a published home) or neither"
            )
        return None
    if not URL_RE.fullmatch(url) or url.endswith(".git"):
        raise ValueError(
            f"_config.yml repository.url must be https://github.com/OWNER/REPO (no "
            f"trailing slash or .git), got {url!r}"
        )
    if not revision:
        raise ValueError(
            f"_config.yml repository.url is {url!r} but repository.revision is empty: "
            "set it to the release tag (or commit) whose code produced the outputs"
        )
    if not REVISION_RE.fullmatch(revision) or revision in MOVING_REFS:
        raise ValueError(
            f"_config.yml repository.revision must be a tag or commit, not a moving "
            f"branch name ({', '.join(sorted(MOVING_REFS))}), got {revision!r}"
        )
    return Home(url, revision)


def load_home(config: Path = CONFIG) -> Home | None:
    """The home configured in ``config`` (``_config.yml``); see :func:`parse_home`."""
    data = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
    return parse_home(data.get("repository"))


def install_cell(home: Home | None) -> str:
    """The source of every chapter's first code cell for ``home``.

    Raises:
        ValueError: a line of the cell would be wider than :data:`MAX_LINE` characters.
    """
    if home is None:
        source = f'''\
# A fresh environment (e.g. Colab) lacks posenc: stop and say how to install it.
import importlib.util

if importlib.util.find_spec("posenc") is None:
    raise ModuleNotFoundError(
        "This chapter needs the posenc package. Download the book's source from "
        "the site this notebook came from (linked on its landing page and in each "
        "chapter's download menu: {Path(SOURCE_ARCHIVE).name}), "
        "unpack it, run `{CLONE_INSTALL}` in its folder "
        "and open the chapter there."
    )'''
    else:
        source = f'''\
# Colab (or any fresh environment): install posenc at the revision of these outputs.
import importlib.util
import subprocess
import sys

HOME = "{home.url}"
REVISION = "{home.revision}"
if importlib.util.find_spec("posenc") is None:
    target = f"git+{{HOME}}@{{REVISION}}"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", target]
    subprocess.run(pip, check=True)
    importlib.invalidate_caches()'''
    wide = [line for line in source.splitlines() if len(line) > MAX_LINE]
    if wide:
        raise ValueError(
            f"the install cell would have lines over {MAX_LINE} characters (shorten "
            f"repository.url or repository.revision): {wide}"
        )
    return source


def first_code_cell(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The notebook's first code cell (the install cell).

    Raises:
        ValueError: the notebook has no code cell.
    """
    for cell in nb.cells:
        if cell.cell_type == "code":
            return cell
    raise ValueError("the notebook has no code cell to hold the install cell")


def stamp_notebook(nb: nbformat.NotebookNode, home: Home | None) -> bool:
    """Write the install cell into ``nb`` (source only); return whether it changed."""
    cell = first_code_cell(nb)
    source = install_cell(home)
    if cell.source == source:
        return False
    cell.source = source
    return True


def stamp(path: Path, home: Home | None) -> bool:
    """Stamp the notebook file at ``path`` in place; return whether it changed.

    Only the first code cell's source changes: its id, tags, execution count and the
    other cells stay as they are.
    """
    nb = nbformat.read(path, as_version=4)
    changed = stamp_notebook(nb, home)
    if changed:
        nbformat.write(nb, path)
    return changed


def theme_options(options: dict, home: Home | None) -> dict:
    """sphinx-book-theme options with the repository and launch buttons set by ``home``.

    No home: the repository URL is emptied and every repository button and launch
    provider removed, so nothing on the site links to a repository. A home: the
    repository button is on and links and launches use the exact revision.
    """
    options = dict(options)
    launch = dict(options.get("launch_buttons") or {})
    if home is None:
        options["repository_url"] = ""
        for button in REPOSITORY_BUTTONS:
            options[button] = False
        for provider in LAUNCH_PROVIDERS:
            launch.pop(provider, None)
        launch["thebe"] = False
    else:
        options["repository_url"] = home.url
        options["repository_branch"] = home.revision
        options["use_repository_button"] = True
    options["launch_buttons"] = launch
    return options


def api_link(home: Home | None) -> str:
    """Markdown naming where a clone comes from (the ``book_repository`` substitution)."""
    if home is None:
        return "the book's repository"
    return (
        f"the book's [repository]({home.url}) at revision `{home.revision}`, or let a "
        "chapter's first cell install that revision on Colab"
    )


#: The MyST substitution that names the repository on the API page (book/api.md).
REPOSITORY_SUBSTITUTION = "book_repository"


def apply_home(config, home: Home | None) -> None:
    """Set the repository/launch buttons and the API page's link in the Sphinx ``config``
    for ``home`` (:mod:`booktools.site.home` calls it at ``config-inited``).

    Raises:
        ValueError: the theme's repository URL (as Jupyter Book passed it on) is not
            the configured home, e.g. ``repository.url`` was deleted from ``_config.yml``
            and Jupyter Book's default repository took its place.
    """
    options = dict(config.html_theme_options or {})
    given = options.get("repository_url") or ""
    if given and given != (home.url if home else ""):
        raise ValueError(
            f"the theme's repository_url is {given!r}, not the book's home "
            f"({home.url if home else 'none'}): set repository.url in _config.yml only, "
            'and keep url: "" there while the book has no public repository'
        )
    config.html_theme_options = theme_options(options, home)
    substitutions = dict(config.myst_substitutions or {})
    substitutions[REPOSITORY_SUBSTITUTION] = api_link(home)
    config.myst_substitutions = substitutions


def main(argv: list[str]) -> int:
    check = argv == ["--check"]
    if argv and not check:
        print("usage: python scripts/book_home.py [--check]", file=sys.stderr)
        return 2
    home = load_home()
    stale = []
    for path in sorted((ROOT / "book").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        if stamp_notebook(nb, home):
            stale.append(path.relative_to(ROOT))
            if not check:
                nbformat.write(nb, path)
    where = home.pip_target if home else "no home (the cell fetches nothing)"
    verb = "differ from" if check else "stamped for"
    for rel in stale:
        print(f"{rel}: install cell {verb} {where}")
    if not stale:
        print(f"every install cell matches {where}")
    return 1 if check and stale else 0
