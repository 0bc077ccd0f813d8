"""Every example in ``posenc``'s docstrings runs and prints what it says.

Each module of the package (found by walking it, not listed by hand) has its docstring
examples run by :mod:`doctest` with torch's and numpy's default print options (a chapter's
``setup()`` in the same worker must not change what an example prints). A self-test puts
back the wrong value one example used to show and checks that the run fails.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil

import numpy as np
import pytest
import torch

import posenc
import posenc.sinusoidal

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
#: numpy's defaults (``np.set_printoptions`` has no "reset" before numpy 2.x's context).
NUMPY_DEFAULTS = dict(edgeitems=3, infstr="inf", linewidth=75, nanstr="nan", precision=8,
                      suppress=False, threshold=1000, formatter=None, sign="-",
                      floatmode="maxprec", legacy=False)


def _modules() -> list[str]:
    found = ["posenc"]
    for info in pkgutil.walk_packages(posenc.__path__, "posenc."):
        if not info.name.endswith("__main__"):
            found.append(info.name)
    return found


def run_examples(tests) -> tuple[int, int, str]:
    """``(failed, attempted, report)`` of running doctest ``tests`` with default printing."""
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report: list[str] = []
    for test in tests:
        torch.set_printoptions(profile="default")
        np.set_printoptions(**NUMPY_DEFAULTS)
        runner.run(test, out=report.append)
    torch.set_printoptions(profile="default")
    return runner.failures, runner.tries, "".join(report)


def _tests(name: str):
    module = importlib.import_module(name)
    return doctest.DocTestFinder(exclude_empty=True).find(module, name)


MODULES = _modules()


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    failed, _, report = run_examples(_tests(name))
    assert failed == 0, report


def test_examples_are_found_where_they_are_written():
    counts = {name: run_examples(_tests(name))[1] for name in MODULES}
    for name in ("posenc.sinusoidal", "posenc.rope", "posenc.alibi", "posenc.attention",
                 "posenc.hf_config.report", "posenc.notebook"):
        assert counts[name] > 0, f"no docstring example found in {name}"
    assert sum(counts.values()) >= 15


def test_self_test_a_wrong_example_fails():
    source = inspect.getdoc(posenc.sinusoidal.sinusoidal_encoding)
    assert "0.0100, 0.9999])" in source
    wrong = source.replace("0.0100, 0.9999])", "0.0100, 1.0000])")  # what it used to say
    parser = doctest.DocTestParser()
    globs = vars(posenc.sinusoidal).copy()
    good = parser.get_doctest(source, globs, "good", None, 0)
    bad = parser.get_doctest(wrong, globs, "bad", None, 0)
    assert run_examples([good])[0] == 0
    failed, attempted, report = run_examples([bad])
    assert (failed, attempted) == (1, 1) and "1.0000" in report
