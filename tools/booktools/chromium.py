"""Debian's Chromium, headless, and a local static server: the one browser set-up of the
site checks (:mod:`booktools.browser`) and the PDF (:mod:`booktools.pdf`).

* :func:`serve`: a folder served on 127.0.0.1 by a thread-based ``http.server``;
* :data:`CHROMIUM_ARGS`, :func:`find_chromium`, :func:`launch`: Debian's ``chromium``,
  never Playwright's own download, with every host but localhost unresolvable, so a
  third-party request fails at once even where there is network.

It is one of the PDF's inputs (``booktools.stamp.PDF_TOOLS``); the crawl is not.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

#: Chromium's flags, shared by the site checks and the PDF: every host but localhost is
#: unresolvable, so a third-party request fails at once even where there is network.
CHROMIUM_ARGS = [
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
]
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - signature fixed by http.server
        pass


@contextlib.contextmanager
def serve(directory: Path) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 (a free port) while the block runs; yield its base
    URL, ``http://127.0.0.1:<port>/``."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


# --------------------------------------------------------------------------- browser ----

def find_chromium() -> str | None:
    """Debian's Chromium or another Chromium on PATH (never a downloaded one)."""
    if Path("/usr/bin/chromium").is_file():
        return "/usr/bin/chromium"
    for name in ("chromium", "chromium-browser"):
        if shutil.which(name):
            return shutil.which(name)
    return None


@contextlib.contextmanager
def launch(executable: str):
    """Headless Chromium at ``executable`` with :data:`CHROMIUM_ARGS`, driven by
    Playwright (imported here: ``ImportError`` where it is not installed)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(
            executable_path=executable, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            chromium.close()
