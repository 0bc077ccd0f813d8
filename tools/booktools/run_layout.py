"""Test-run layout for every pytest invocation from the repository root.

pyproject.toml runs the tests on every core: pytest-xdist with ``-n auto --dist
loadscope``. This module decides what each worker gets and in which order; the root
``conftest.py`` (loaded for any path given on the command line, unlike
``tests/conftest.py``: ``pytest book/04_rope.ipynb`` loads only that one) holds the pytest
hooks, each a line that calls a function here:

* :func:`unit_of` names the unit of work of each test id, and :func:`make_scheduler`
  (the hook ``pytest_xdist_make_scheduler``) hands xdist a ``loadscope`` scheduler that
  uses it: a notebook's nbval cells (which must
  run in order, in one kernel) together with that notebook's figure check (which reuses
  nbval's outputs, ``tests/test_figures.py``); the site's checks as a few units
  sharing one build (each crawl group of the browser check, the PDF, the rest:
  :data:`SITE_FILES`); the family and key sweeps of ``transformers`` and the
  atlas page (``test_hf_sweep.py``, ``test_hf_keys.py``, ``test_hf_published.py``,
  ``test_atlas.py``: the key sweep starts from the family sweep's results, all four share
  the imported modeling modules);
  every other test file as a whole (its module fixtures run once). Without it, plain
  ``loadscope`` still keeps each notebook and each test file on one worker.
* :func:`order` (the hook ``pytest_collection_modifyitems``) orders the collection so that
  the longest units start first and each figure check follows its notebook, and marks the
  slow part of the run (:func:`is_slow`);
* :func:`configure` (the hook ``pytest_configure``) declares the ``slow`` marker and
  registers :class:`WorkerTimes`, which prints each worker's busy time at the end.

(``--dist loadgroup`` with ``xdist_group`` marks is not used: pytest-xdist 3.8 renames the
test ids to carry the group, which pytest 9.2's structured node ids ignore.)

Everything else the tests share is in ``tests/conftest.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

#: Test files that share the session's book build (the ``book_build`` fixture, built at
#: most once per run: reused from README command 1 when its stamp is current, else built
#: by the first worker that needs it while the others wait for it). They form several units
#: of work, so the site's checks run side by side: each crawl group of the browser check
#: (the ``pagesN`` in a test id: tests/test_browser.py, ``CRAWL_GROUPS``), the PDF, and the
#: rest (the build's own checks and the browser's single-page checks).
SITE_FILES = ("test_book_build.py", "test_browser.py", "test_browser_zh.py",
              "test_browser_styles.py", "test_pdf.py")
SITE_UNIT = "site"
PDF_UNIT = "site-pdf"
CRAWL_GROUP = re.compile(r"\[(?P<group>pages\d+)\b")
#: The family sweep, the key sweep, the published configs and the atlas page: one unit of
#: work, so the key sweep reuses the family sweep's outcomes, and all four the imported
#: modeling modules (every one imported once per run).
HF_SWEEP_FILES = ("test_hf_sweep.py", "test_hf_keys.py", "test_hf_published.py",
                  "test_atlas.py")
HF_SWEEP_UNIT = "hf-sweeps"
#: Files whose module-scoped fixtures run a study: queued right after the site, so the
#: longest units of work start early and the workers finish together.
HEAVY_FILES = ("test_experiments.py", "test_grid_experiment.py")
#: Files outside those units that are slow for another reason: a built wheel installed in
#: fresh virtual environments, pytest run in subprocesses, every notebook re-executed when
#: nbval did not run it.
SLOW_FILES = ("test_wheel.py", "test_optional_modules.py", "test_figures.py")
FIGURE_CHECK = re.compile(r"tests/test_figures\.py::\w+\[(?P<nb>[\w-]+)\.ipynb\]")


def unit_of(nodeid: str) -> str:
    """The unit of work a test id belongs to (see the module docstring)."""
    path = nodeid.split("::", 1)[0]
    name = path.rsplit("/", 1)[-1]
    if name == "test_pdf.py":
        return PDF_UNIT
    if name in SITE_FILES:
        group = CRAWL_GROUP.search(nodeid)
        return f"{SITE_UNIT}-{group['group']}" if group else SITE_UNIT
    if name in HF_SWEEP_FILES:
        return HF_SWEEP_UNIT
    if path.endswith(".ipynb"):
        return f"nb-{Path(path).stem}"
    figure = FIGURE_CHECK.match(nodeid)
    if figure:
        return f"nb-{figure['nb']}"
    return path


def make_scheduler(config, log):
    """``--dist loadscope`` with the units of :func:`unit_of` as its scopes (``None``
    under another ``--dist``: xdist's own scheduler)."""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class UnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    return UnitScheduling(config, log)


def _rank(item) -> int:
    unit = unit_of(item.nodeid)
    if unit.startswith(SITE_UNIT):
        return 0
    if item.path.name in HEAVY_FILES or unit == HF_SWEEP_UNIT:
        return 1
    if unit.startswith("nb-"):
        return 2
    return 3


def order(items: list) -> None:
    """Order the run in place: longest units first (the site, the studies, the notebooks, then the
    rest in file order; xdist hands out units in this order), and each notebook's figure
    check right after that notebook's cells, so it can reuse nbval's execution
    (``EXECUTED`` in tests/conftest.py) in the same worker.

    The order is a pure function of the collection, so every worker collects the same.
    """
    figures = {
        Path(i.callspec.params["path"]).resolve(): i
        for i in items if i.path.name == "test_figures.py" and hasattr(i, "callspec")
    }
    ordered = []
    for here, after in zip(items, [*items[1:], None][:len(items)], strict=True):
        if here.path.name == "test_figures.py" and hasattr(here, "callspec"):
            continue
        ordered.append(here)
        last_cell = here.path.suffix == ".ipynb" and (after is None or after.path != here.path)
        if last_cell and here.path.resolve() in figures:
            ordered.append(figures.pop(here.path.resolve()))
    ordered += list(figures.values())  # notebooks not collected: figure checks run nbclient
    ordered.sort(key=_rank)  # stable: file and cell order kept within a rank
    items[:] = ordered
    for item in items:
        if is_slow(item.nodeid):
            item.add_marker(pytest.mark.slow)


def is_slow(nodeid: str) -> bool:
    """Whether a test belongs to the slow part of the run that the fast loop leaves out
    (``-m "not slow"``): the site, the sweeps of transformers, the studies, the slow files
    above and the notebooks' nbval cells."""
    unit = unit_of(nodeid)
    name = nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    return (unit.startswith(SITE_UNIT) or unit == HF_SWEEP_UNIT or unit.startswith("nb-")
            or name in HEAVY_FILES + SLOW_FILES)


class WorkerTimes:
    """Where the run's time goes: each worker's busy seconds (setup, call and teardown of
    the tests it ran, fixtures included) and each unit of work's, printed at the end of the
    run as "workers" (``benchmarks/run.py`` reads it). Summed on the controller from the
    reports the workers send, or in the one process under ``-n 0``."""

    def __init__(self):
        import time

        self.clock = time.perf_counter
        self.start = self.clock()
        self.busy: dict[str, float] = {}
        self.units: dict[str, float] = {}

    def pytest_runtest_logreport(self, report):
        node = getattr(report, "node", None)
        gateway = getattr(node, "gateway", None)
        worker = getattr(gateway, "id", None) or "main"
        self.busy[worker] = self.busy.get(worker, 0.0) + report.duration
        unit = unit_of(report.nodeid)
        self.units[unit] = self.units.get(unit, 0.0) + report.duration

    def pytest_terminal_summary(self, terminalreporter):
        if not self.busy:
            return
        wall = self.clock() - self.start
        terminalreporter.section("workers")
        terminalreporter.write_line(f"wall: {wall:.1f} s (collection to summary)")
        for worker in sorted(self.busy):
            busy = self.busy[worker]
            terminalreporter.write_line(
                f"busy {worker}: {busy:.1f} s ({100 * busy / wall:.0f} % of the wall time)")
        slowest = sorted(self.units.items(), key=lambda kv: -kv[1])[:8]
        terminalreporter.write_line(
            "slowest units: " + ", ".join(f"{unit} {secs:.1f} s" for unit, secs in slowest))


def configure(config) -> None:
    """Declare the ``slow`` marker; on the controller (or under ``-n 0``), register
    :class:`WorkerTimes` once."""
    config.addinivalue_line(
        "markers", "slow: the site, the sweeps, the studies, the wheel, the notebooks "
        "(booktools.run_layout.is_slow); the fast loop is -m \"not slow\"")
    if not hasattr(config, "workerinput") and not config.pluginmanager.has_plugin(
            "posenc-worker-times"):
        config.pluginmanager.register(WorkerTimes(), "posenc-worker-times")
