"""The tests that need ``transformers`` skip one by one when it is missing (and fail under
``CI=true``), instead of a module-level ``importorskip`` skipping whole files.

Run on two test files in a subprocess whose ``transformers`` cannot be imported (a package
on ``PYTHONPATH`` that raises ``ImportError``): without ``CI`` the tests that need no
``transformers`` pass and the others are skipped; with ``CI=true`` the others fail. The
self-test is the same run with the old module-level ``importorskip`` put back: then
nothing in the file runs. A unit test checks that collecting a file never imports an
``OptionalModule``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT, OptionalModule

FILES = ["tests/test_relative.py", "tests/test_rope.py"]
#: Two tests of each file: one needs transformers (through ``OptionalModule`` in the first
#: file, the ``needs`` marker in the second), one does not.
NEEDS = ["tests/test_relative.py::test_bias_parity_with_transformers_compute_bias",
         "tests/test_rope.py::test_llama_parity_bf16_tables"]
FREE = ["tests/test_relative.py::test_relative_positions_is_key_minus_query",
        "tests/test_rope.py::test_positions_broadcast_over_heads"]


def _run(tmp_path, files, ci: bool) -> dict[str, int]:
    fake = tmp_path / "fake" / "transformers"
    fake.mkdir(parents=True, exist_ok=True)
    (fake / "__init__.py").write_text(
        "raise ModuleNotFoundError('transformers hidden by the test', name='transformers')\n")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = str(tmp_path / "fake")
    # no installed plugin (nbval, xdist, hypothesis's): what is checked is the repository's
    # own conftest files, and loading the plugins took half of each run
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    if ci:
        env["CI"] = "true"
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-o", "addopts=", "-p", "no:cacheprovider",
         "-q", "--rootdir", str(ROOT), *files],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    tail = out.stdout.strip().splitlines()[-1]
    counts = {k: int(n) for n, k in re.findall(r"(\d+) (passed|skipped|failed|error)", tail)}
    counts["tail"] = tail
    return counts


def test_missing_transformers_skips_only_the_tests_that_need_it(tmp_path):
    nodes = [str(ROOT / n) for n in NEEDS + FREE]
    local = _run(tmp_path, nodes, ci=False)
    assert local.get("passed") == len(FREE), local
    assert local.get("skipped", 0) >= len(NEEDS) and "failed" not in local, local
    ci = _run(tmp_path, nodes, ci=True)
    assert ci.get("failed", 0) + ci.get("error", 0) == local["skipped"], ci
    assert ci.get("passed") == local["passed"], ci


def test_self_test_module_level_importorskip_skips_the_whole_file(tmp_path):
    text = (ROOT / FILES[0]).read_text()
    broken = re.sub(r'^T5 = OptionalModule\(("[^"]+")\)$', r"T5 = pytest.importorskip(\1)",
                    text, flags=re.M)
    assert broken != text
    copy = tmp_path / "tests" / "test_relative_broken.py"
    copy.parent.mkdir()
    copy.write_text(broken)
    (tmp_path / "tests" / "conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text())
    result = _run(tmp_path, [str(copy)], ci=False)
    assert "passed" not in result and result.get("skipped") == 1, result


def test_an_optional_module_is_imported_only_by_a_running_test(monkeypatch):
    """Collection reads attributes of every object of a test module (pytest 9 asks each for
    ``_mock_name``): outside a test an ``OptionalModule`` has none, so collecting a file
    neither imports the module nor skips the file when the module is missing. Inside a
    test, the first attribute imports it (here it is missing: the test is skipped)."""
    missing = OptionalModule("posenc_tests_no_such_module")
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    try:
        probed = getattr(missing, "_mock_name", None)
    except BaseException as exc:  # noqa: BLE001 - a skip or fail raised while collecting
        pytest.fail(f"an attribute read outside a test tried the import: {exc!r}")
    assert probed is None and not hasattr(missing, "relative_position_bucket")
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/test_x.py::test_y (call)")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="posenc_tests_no_such_module"):
        _ = missing.relative_position_bucket
