"""Figures cannot go stale: every committed figure must match a fresh execution.

nbval compares every text output of every notebook but never an image, so a change in
``posenc`` that moves a curve would leave the committed (and published) figure silently
wrong. This test compares each committed PNG with the one a fresh run of the notebook
draws, using matplotlib's image comparison (RMS over the 0–255 pixel values) with a small
tolerance, and fails if a figure differs, appears, or disappears.

The fresh run costs nothing extra in the full suite: nbval has just executed every notebook
in a fresh kernel, and ``conftest.py`` keeps those outputs (``EXECUTED``) and orders this
test after the notebooks. When nbval did not run a notebook completely (this file run on
its own, a skipped or failing cell), the notebook is executed here with nbclient, exactly
as ``scripts/execute_notebooks.py`` does.
"""

from __future__ import annotations

import base64
import time
from pathlib import Path

import nbformat
import pytest
from conftest import EXECUTED, SITE_REPORT, notebooks
from matplotlib.testing.compare import compare_images
from matplotlib.testing.exceptions import ImageComparisonFailure
from nbclient import NotebookClient

NOTEBOOKS = notebooks()
IDS = [p.name for p in NOTEBOOKS]

#: Largest RMS difference (0–255 scale) still accepted. A pinned matplotlib redraws a
#: figure bit for bit (RMS 0.0); 1.0 leaves room for anti-aliasing noise, while a moved
#: line or changed colour scale gives RMS well above it.
TOLERANCE = 1.0
#: Figure outputs. PNGs (what matplotlib's inline backend draws) are compared as images;
#: a JPEG must be byte-identical. SVG is text, which nbval itself compares.
IMAGE_TYPES = ("image/png", "image/jpeg")


def figures(outputs) -> list[tuple[str, bytes]]:
    """The ``(mime, bytes)`` of every image among one cell's outputs, in order."""
    found = []
    for out in outputs:
        data = out.get("data", {}) if out.get("output_type") in (
            "display_data", "execute_result"
        ) else {}
        for mime in IMAGE_TYPES:
            if mime in data:
                payload = data[mime]
                if isinstance(payload, list):
                    payload = "".join(payload)
                found.append((mime, base64.b64decode(payload)))
    return found


def fresh_outputs(path: Path, code_cells: int) -> tuple[dict[int, list], str]:
    """Outputs per code cell from this session's nbval run, or from a new nbclient run."""
    shared = EXECUTED.get(path.resolve(), {})
    complete = len(shared) == code_cells and not any(
        out.get("output_type") == "error" for outs in shared.values() for out in outs
    )
    if complete:
        return shared, "nbval"
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        allow_errors=False,
    ).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    return {i: c.outputs for i, c in enumerate(code)}, "nbclient"


def _ext(mime: str) -> str:
    return ".png" if mime == "image/png" else ".jpg"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_committed_figures_match_a_fresh_run(path, tmp_path):
    start = time.perf_counter()
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    fresh, source = fresh_outputs(path, len(code))

    problems, compared, worst = [], 0, 0.0
    for i, cell in enumerate(code):
        old, new = figures(cell.outputs), figures(fresh[i])
        if len(old) != len(new):
            problems.append(
                f"code cell {i}: {len(old)} committed figure(s), a fresh run draws {len(new)}"
            )
            continue
        pairs = zip(old, new, strict=True)
        for j, ((old_mime, old_bytes), (new_mime, new_bytes)) in enumerate(pairs):
            expected = tmp_path / f"cell{i:02d}_{j}_expected{_ext(old_mime)}"
            actual = tmp_path / f"cell{i:02d}_{j}_actual{_ext(new_mime)}"
            expected.write_bytes(old_bytes)
            actual.write_bytes(new_bytes)
            compared += 1
            if old_bytes == new_bytes:
                continue
            if "image/png" not in (old_mime, new_mime) or old_mime != new_mime:
                problems.append(f"code cell {i}, figure {j}: {old_mime} changed ({new_mime})")
                continue
            try:  # tol=0 makes compare_images return the RMS of any difference
                result = compare_images(str(expected), str(actual), 0, in_decorator=True)
            except ImageComparisonFailure as err:  # e.g. the size changed
                problems.append(f"code cell {i}, figure {j}: {err}")
                continue
            rms = 0.0 if result is None else float(result["rms"])
            worst = max(worst, rms)
            if rms > TOLERANCE:
                problems.append(
                    f"code cell {i}, figure {j}: RMS {rms:.2f} > {TOLERANCE} "
                    f"(diff image: {result['diff']})"
                )

    report = SITE_REPORT.setdefault(
        "figures", {"notebooks": 0, "compared": 0, "max RMS": 0.0, "seconds": 0.0}
    )
    report["notebooks"] += 1
    report["compared"] += compared
    report["max RMS"] = max(report["max RMS"], round(worst, 3))
    report["seconds"] = round(report["seconds"] + time.perf_counter() - start, 1)
    report.setdefault("fresh run from", set()).add(source)

    assert not problems, (
        f"{path.name}: committed figures are stale; re-run "
        f"`python scripts/execute_notebooks.py book/{path.name}`\n" + "\n".join(problems)
    )
