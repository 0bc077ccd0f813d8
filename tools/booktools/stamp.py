"""A stamp of a clean site build, so the test command can reuse the site that README
command 1 has just built instead of building it a second time.

After an HTML build that finished with no warning under ``-n -W`` (nitpicky, warnings as
errors) that read every document (an incremental build does not repeat the warnings
of the pages it did not re-read, so it is never stamped: :func:`clean_build`), the Sphinx
extension ``_ext/posenc_stamp.py`` writes ``<build>/posenc-html-stamp.json`` beside the
``html`` folder (:func:`stamp_path`; the Chinese edition's, built into ``html/zh_CN``,
``<build>/posenc-html-zh_CN-stamp.json``): :func:`inputs_digest`, a digest of every input of the
build. ``tests/conftest.py`` (the ``book_build`` fixture) computes the same digest and
reuses the built site only when the two agree; any other build (a warning, an error, no
``-W``, an incremental build) removes the stamp. This module holds what both sides share;
the extension holds only the Sphinx hooks.

The inputs are the files git lists in the repository (tracked, and untracked but not
ignored) except those no build reads (:data:`NOT_INPUTS`), each file's
path and bytes, plus the name and version of every installed distribution (a changed
Sphinx, theme or ``posenc`` changes the digest). Without git the digest is ``None``:
nothing is stamped and nothing reused.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from importlib import metadata
from pathlib import Path

STAMP = "posenc-html-stamp.json"
#: Folders and files of the repository that no build of the site reads: the tests and
#: their helpers (the browser and server, axe-core's runs, the look-up of the cut
#: stylesheet's rules, the run's layout, the PDF builder and its script, none imported
#: by a build: tests/test_build_stamp.py checks), the benchmarks, CI.
NOT_INPUTS = ("tests/", "benchmarks/", ".ci/", "CONTRIBUTING.md", "conftest.py",
              "tools/booktools/axe.py", "tools/booktools/cut_rules.py",
              "tools/booktools/browser.py", "tools/booktools/run_layout.py",
              "tools/booktools/pdf.py", "tools/booktools/chromium.py", "scripts/build_pdf.py")


def inputs_digest(root: Path) -> str | None:
    """SHA-256 of the site build's inputs under ``root`` and the installed distributions,
    or ``None`` where git cannot list the files."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root, capture_output=True, check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    digest = hashlib.sha256()
    for name in sorted({n for n in listed.decode().split("\0") if n}):
        if name.startswith(NOT_INPUTS) or not (root / name).is_file():
            continue
        digest.update(name.encode() + b"\0" + (root / name).read_bytes() + b"\0")
    # a set: a distribution found twice on sys.path (an egg-info in the cwd) counts once
    dists = sorted({f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions()})
    digest.update("\n".join(dists).encode())
    return digest.hexdigest()


def stamp_path(html_dir: Path, language: str | None = None) -> Path:
    """Where the stamp of a build whose HTML is in ``html_dir`` lies: beside that folder;
    for another edition than the English (``language``, e.g. ``zh_CN``), whose folder is
    inside the English site's (:mod:`booktools.zh_build`), beside the English site's
    folder and named for the language (:func:`edition_stamp`), never inside a site."""
    if language and language != "en":
        return Path(html_dir).parent.parent / edition_stamp(language)
    return Path(html_dir).parent / STAMP


def edition_stamp(language: str) -> str:
    """The stamp's file name for the edition in ``language`` (``posenc-html-zh_CN-stamp.json``)."""
    return STAMP.replace("-stamp", f"-{language}-stamp")


def clean_build(app, exception) -> bool:
    """Whether ``app``'s build is one the tests may reuse: HTML, nitpicky, warnings as
    errors, every document read, finished without an exception or a single warning."""
    return (exception is None and app.builder.name == "html" and bool(app.config.nitpicky)
            and getattr(app, "posenc_read_all", False)
            # -W: Sphinx 7.4 keeps it as warningiserror, or with --keep-going as keep_going
            and bool(getattr(app, "warningiserror", False) or getattr(app, "keep_going", False))
            and getattr(app, "_warncount", 1) == 0)


#: What the PDF reads besides the site's inputs (:func:`pdf_digest`): its builder and
#: the browser machinery that prints it.
PDF_TOOLS = ("tools/booktools/pdf.py", "tools/booktools/chromium.py", "scripts/build_pdf.py")


def pdf_digest(root: Path, browser_version: str) -> str | None:
    """SHA-256 of a PDF build's inputs: the site's (:func:`inputs_digest`), the PDF's own
    tools (:data:`PDF_TOOLS`) and the printing browser's version (``chromium
    --version``); ``None`` where git cannot list the files."""
    site = inputs_digest(root)
    if site is None:
        return None
    digest = hashlib.sha256(site.encode())
    for name in PDF_TOOLS:
        digest.update(name.encode() + b"\0" + (root / name).read_bytes() + b"\0")
    digest.update(browser_version.encode())
    return digest.hexdigest()


def pdf_stamp_path(pdf: Path) -> Path:
    """The stamp of a PDF, beside it: ``<name>.pdf.stamp.json``."""
    return pdf.with_name(pdf.name + ".stamp.json")


def current_pdf(pdf: Path, digest: str | None) -> bool:
    """Whether ``pdf`` exists and its stamp names ``digest`` (a PDF built from exactly
    these inputs, by ``scripts/build_pdf.py``, which stamps only a build that succeeded)."""
    stamp = pdf_stamp_path(pdf)
    if digest is None or not pdf.is_file() or not stamp.is_file():
        return False
    try:
        return json.loads(stamp.read_text(encoding="utf-8")).get("inputs") == digest
    except (ValueError, AttributeError):
        return False
