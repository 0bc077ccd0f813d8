"""The pytest hooks of the test run's layout, for every pytest invocation from the repository
root (this file is loaded for any path given on the command line, unlike
``tests/conftest.py``: ``pytest book/04_rope.ipynb`` loads only this one).

Each hook is one line: the layout itself (the units of work, the scheduler, the order, the
fast loop's ``slow`` marker, the workers' busy times) is :mod:`booktools.run_layout`
(``tools/booktools/run_layout.py``). Everything else the tests share is in
``tests/conftest.py``.
"""

from __future__ import annotations

import pytest

from booktools import run_layout


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    return run_layout.make_scheduler(config, log)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    run_layout.order(items)


def pytest_configure(config):
    run_layout.configure(config)
