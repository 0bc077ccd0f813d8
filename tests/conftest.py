"""Shared fixtures and hooks: the project root, the notebooks, one book build per session,
the figures nbval's run produced (for test_figures.py) and a short site-check summary."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from booktools.stamp import STAMP, inputs_digest

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"

#: Outputs of every notebook code cell that nbval executed in this session, keyed by the
#: notebook's path and then the code cell's index (0-based, code cells only). nbval runs the
#: notebooks in a fresh kernel anyway, so test_figures.py compares *those* figures with the
#: committed ones instead of executing every notebook a second time.
EXECUTED: dict[Path, dict[int, list]] = {}

def missing_tool(check: str, reason: str):
    """Skip ``check`` for a missing system tool, except under ``CI=true``, where it fails."""
    message = f"{check} not run: {reason}"
    if os.environ.get("CI") == "true":
        pytest.fail(message + f" (CI=true: the {check} is required)", pytrace=False)
    pytest.skip(message)


class OptionalModule:
    """A module that only some tests in a file need, imported when a test first uses it.

    ``T5 = OptionalModule("transformers.models.t5.modeling_t5")`` at the top of a test file
    costs nothing at collection; the first attribute a test reads imports the module. When it
    cannot be imported, that test (and only that test) is skipped with the reason, except
    under ``CI=true``, where it fails: a module-level ``pytest.importorskip`` would skip the
    whole file, the tests that need no ``transformers`` with it.

    Outside a test (no ``PYTEST_CURRENT_TEST``, which pytest sets only while it sets up,
    runs and tears down a test) every attribute is missing: collection reads attributes of
    each object in a test module (pytest 9 asks every one for ``_mock_name``), and that read
    must neither import the module (three ``transformers`` modules took 3 s of each worker's
    collection) nor skip the file when the module is missing.
    """

    def __init__(self, name: str):
        self._name = name
        self._module = None

    def __getattr__(self, attr: str):
        if attr.startswith("__") or "PYTEST_CURRENT_TEST" not in os.environ:
            raise AttributeError(f"{self._name}.{attr} is read only by a running test")
        if self._module is None:
            try:
                self._module = importlib.import_module(self._name)
            except ImportError as exc:
                missing_tool(f"test needing {self._name}", f"{exc}")
        return getattr(self._module, attr)


def pytest_runtest_setup(item):
    """Apply the ``needs`` marker: skip (fail under ``CI=true``) a test whose modules are
    missing."""
    for mark in item.iter_markers("needs"):
        for name in mark.args:
            try:
                importlib.import_module(name)
            except ImportError as exc:
                missing_tool(f"test needing {name}", f"{exc}")


#: Numbers the site checks report at the end of the run (pages, images, timings).
SITE_REPORT: dict[str, object] = {}
#: Coverage of the sweeps against transformers (tests/test_hf_keys.py), printed at the end
#: of the run: ``{title: text}``.
SWEEP_REPORT: dict[str, str] = {}


def toc_pages() -> list[str]:
    """Every page listed in ``_toc.yml`` (root included), as ``book/<name>.html``."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]

    def walk(node) -> None:
        if isinstance(node, dict):
            if "file" in node:
                files.append(node["file"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc.get("parts", toc.get("chapters", [])))
    return [f"{f}.html" for f in files]


def notebooks() -> list[Path]:
    return sorted(p for p in BOOK.glob("*.ipynb"))


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


def current_site(build_dir: Path, digest: str | None) -> bool:
    """Whether ``build_dir`` holds a clean site build of exactly these inputs: its stamp
    (:data:`booktools.stamp.STAMP`, written by _ext/posenc_stamp.py after a build with no
    warning under ``-n -W``) names ``digest``."""
    stamp = build_dir / STAMP
    if digest is None or not stamp.is_file() or not (build_dir / "html" / "index.html").is_file():
        return False
    try:
        return json.loads(stamp.read_text()).get("inputs") == digest
    except (ValueError, AttributeError):
        return False


@pytest.fixture(scope="session")
def book_build(tmp_path_factory):
    """The site in both editions, built at most once per run with warnings as errors,
    shared by every worker that checks it: the English site and, in its ``zh_CN`` folder,
    the Chinese one (``booktools.zh_build``).

    README command 1 has usually just built both into ``_build``: an edition whose stamp
    names the current inputs (:func:`current_site`, ``zh_build.current_site``) is copied
    and not built again (``POSENC_FRESH_BUILD=1`` forces both builds); any other is built
    into a temp folder. The site's checks run as several units of work on several workers
    (``booktools.run_layout.SITE_FILES``): the first worker to need the site copies or
    builds it into the run's shared temp folder under a file lock, and the others wait for
    it and read the same folder.

    Returns ``(returncode, combined output, html_dir)`` of the English build; the Chinese
    build's is :func:`zh_site`'s.
    """
    from filelock import FileLock

    from booktools import zh_build

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    out, result = shared / "book", shared / "book-build.json"
    html = out / "_build" / "html"
    with FileLock(str(shared / "book-build.lock")):
        if result.is_file():
            code, output, _ = json.loads(result.read_text(encoding="utf-8"))
            return code, output, html
        fresh = os.environ.get("POSENC_FRESH_BUILD") == "1"
        start = time.perf_counter()
        if not fresh and current_site(ROOT / "_build", inputs_digest(ROOT)):
            shutil.copytree(ROOT / "_build" / "html", html,
                            ignore=lambda d, names: [zh_build.FOLDER] if Path(d) == ROOT
                            / "_build" / "html" else [])
            SITE_REPORT["book build"] = "reused README command 1's build (its stamp is current)"
            code, output = 0, ""
        else:
            proc = subprocess.run(
                [_tool("jupyter-book"), "build", str(ROOT), "--path-output", str(out), "-n",
                 "-W", "--keep-going"],
                capture_output=True, text=True, cwd=ROOT, timeout=900)
            SITE_REPORT["book build"] = "built in this run"
            code, output = proc.returncode, proc.stdout + proc.stderr
        SITE_REPORT["book build seconds"] = round(time.perf_counter() - start, 1)
        start = time.perf_counter()
        zh = None if fresh else zh_build.current_site(ROOT)
        if zh is not None:
            shutil.copytree(zh, html / zh_build.FOLDER)
            SITE_REPORT["Chinese build"] = "reused README command 1's build (its stamp is current)"
            zh_code, zh_output = 0, ""
        else:
            proc = subprocess.run(
                [sys.executable, str(ROOT / "scripts" / "build_zh.py"),
                 "--output", str(html / zh_build.FOLDER),
                 "--doctrees", str(out / "_build" / f".doctrees-{zh_build.LANGUAGE}")],
                capture_output=True, text=True, cwd=ROOT, timeout=900)
            SITE_REPORT["Chinese build"] = "built in this run"
            zh_code, zh_output = proc.returncode, proc.stdout + proc.stderr
        SITE_REPORT["Chinese build seconds"] = round(time.perf_counter() - start, 1)
        result.write_text(json.dumps([code, output, [zh_code, zh_output]]), encoding="utf-8")
    return code, output, html


def _tool(name: str) -> str:
    return shutil.which(name) or str(Path(sys.executable).with_name(name))


@pytest.fixture(scope="session")
def zh_site(book_build, tmp_path_factory):
    """The Chinese site's folder (``<English site>/zh_CN``) of the session's build; a failed
    test where its build warned (listing the warnings)."""
    from booktools import zh_build

    _, _, html = book_build
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    _, _, (code, output) = json.loads((shared / "book-build.json").read_text(encoding="utf-8"))
    if code != 0:
        pytest.fail("the Chinese build failed or warned:\n" + output[-6000:], pytrace=False)
    return html / zh_build.FOLDER


class _NotebookOutputRecorder:
    """Keeps the outputs of each notebook cell nbval runs (passing or not) in EXECUTED.

    Registered as a plugin (not a conftest hook) because conftest hooks only see items
    under tests/, and the notebooks live in book/.
    """

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        yield
        outputs = getattr(item, "test_outputs", None)
        cell_num = getattr(item, "cell_num", None)
        if outputs is not None and cell_num is not None and item.path.suffix == ".ipynb":
            EXECUTED.setdefault(item.path.resolve(), {})[cell_num] = list(outputs)


@pytest.fixture(scope="module")
def site(book_build):
    """``(base_url, html_dir)`` of the session build, served on 127.0.0.1 (the browser
    checks: tests/test_browser*.py)."""
    from booktools.browser import serve

    _, _, html = book_build
    if not (html / "index.html").is_file():
        pytest.fail(f"no built site at {html}: see test_book_build.py", pytrace=False)
    with serve(html) as base:
        yield base, html


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium, launched by Playwright (skipped when either is missing, failed
    under ``CI=true``)."""
    from booktools.browser import find_chromium, launch

    executable = find_chromium()
    if executable is None:
        missing_tool("browser check", "no Chromium found (install Debian's `chromium`)")
    try:
        import playwright.sync_api  # noqa: F401 - launch() imports it; fail clearly here
    except ImportError:
        missing_tool("browser check",
                     "Playwright for Python is not installed (pip install -r requirements.txt)")
    with launch(executable) as chromium:
        yield chromium


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "needs(*modules): the test imports these modules; skipped when one is "
        "missing (failed under CI=true), the other tests of its file still run")
    if not config.pluginmanager.has_plugin("posenc-notebook-outputs"):
        config.pluginmanager.register(_NotebookOutputRecorder(), "posenc-notebook-outputs")


def pytest_sessionfinish(session):
    """On an xdist worker, hand this worker's :data:`SITE_REPORT` and :data:`SWEEP_REPORT`
    to the controller."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["site_report"] = json.dumps(SITE_REPORT, default=sorted)
        workeroutput["sweep_report"] = json.dumps(SWEEP_REPORT)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """On the xdist controller, merge each worker's report (figure counts add up)."""
    SWEEP_REPORT.update(json.loads(getattr(node, "workeroutput", {}).get("sweep_report", "{}")))
    report = json.loads(getattr(node, "workeroutput", {}).get("site_report", "{}"))
    for key, value in report.items():
        mine = SITE_REPORT.get(key)
        if key == "figures" and isinstance(mine, dict):
            for field in ("notebooks", "compared", "seconds"):
                mine[field] = round(mine[field] + value[field], 1)
            mine["max RMS"] = max(mine["max RMS"], value["max RMS"])
            mine["fresh run from"] = sorted(
                set(mine["fresh run from"]) | set(value["fresh run from"])
            )
        else:
            SITE_REPORT[key] = value


def pytest_terminal_summary(terminalreporter):
    for title, text in SWEEP_REPORT.items():
        terminalreporter.section(title)
        for line in text.splitlines():
            terminalreporter.write_line(line)
    if SITE_REPORT:
        terminalreporter.section("site checks")
        for key, value in SITE_REPORT.items():
            terminalreporter.write_line(f"{key}: {value}")
