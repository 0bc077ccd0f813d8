"""Notebook hygiene that nbval itself does not check.

nbval skips a cell whose execution_count is null and never compares images, so a notebook
saved without running would pass it silently. These tests make sure every code cell was
run, once, top to bottom, with the python3 kernel, and that outputs carry nothing volatile.
"""

from __future__ import annotations

import json
import re

import pytest
import yaml
from conftest import ROOT, notebooks

NOTEBOOKS = notebooks()
IDS = [p.name for p in NOTEBOOKS]


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def _toc_files(node) -> list[str]:
    if isinstance(node, dict):
        own = [node["file"]] if "file" in node else []
        return own + [f for v in node.values() for f in _toc_files(v)]
    if isinstance(node, list):
        return [f for v in node for f in _toc_files(v)]
    return []


def test_the_notebooks_are_the_numbered_chapters():
    """Every notebook in book/ is a chapter of _toc.yml and every ``NN_`` chapter of
    _toc.yml is a notebook: twelve, numbered 01 to 12 without a gap."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    chapters = [f for f in _toc_files(toc) if re.fullmatch(r"book/\d\d_\w+", f)]
    assert [f"book/{p.stem}" for p in NOTEBOOKS] == chapters
    assert [int(p.name[:2]) for p in NOTEBOOKS] == list(range(1, 13))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_executed_in_order_with_python3(path):
    nb = load(path)
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code, "a chapter without code"
    counts = [c["execution_count"] for c in code]
    assert counts == list(range(1, len(code) + 1)), (
        f"execution counts {counts}: re-run with scripts/execute_notebooks.py"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_outputs_clean(path):
    nb = load(path)
    for i, cell in enumerate(nb["cells"]):
        assert "execution" not in cell.get("metadata", {}), f"timing metadata in cell {i}"
        if cell["cell_type"] != "code":
            continue
        for out in cell["outputs"]:
            assert out["output_type"] != "error", f"cell {i} stored an error"
            if out["output_type"] == "stream":
                assert out["name"] == "stdout", f"cell {i} wrote to stderr: {out['text']!r}"
            text = json.dumps(out.get("text", "")) + json.dumps(
                out.get("data", {}).get("text/plain", "")
            )
            assert not re.search(r"/(?:root|home|tmp|work)/", text), f"a path in cell {i}"
            assert "np.float64(" not in text, f"numpy scalar repr in cell {i}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_chapter_shape(path):
    """Each chapter has a figure, a summary, and exercises with solutions."""
    nb = load(path)
    md = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    images = sum(
        "image/png" in o.get("data", {})
        for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"]
    )
    assert images >= 1, "no figure"
    assert re.search(r"^## Summary", md, re.M), "no '## Summary' section"
    assert re.search(r"^## Exercises", md, re.M), "no '## Exercises' section"
    assert md.count("{exercise}") >= 2, "fewer than two exercises"
    assert md.count("{solution") >= md.count("{exercise}"), "an exercise without a solution"
    assert not re.search(r"\b(TODO|TBD|FIXME)\b", md), "a TODO left in the prose"
