"""Re-run book notebooks top to bottom in a fresh python3 kernel and save their outputs.

    python scripts/execute_notebooks.py                 # every notebook under book/
    python scripts/execute_notebooks.py book/04_rope.ipynb

This is "Restart kernel and run all" done the same way every time: the kernel runs with
book/ as its working directory, cells are numbered 1..N, timing metadata is dropped and the
kernelspec is set to python3, so `python -m pytest` (nbval) compares against a clean run.
It prints each notebook's wall time (the book's budget is ~10 s per notebook).

Before running, it stamps each notebook's first code cell, the install cell, from the
book's home in ``_config.yml`` (``booktools.book_home``; never edit that cell by hand).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from booktools.book_home import load_home, stamp_notebook

ROOT = Path(__file__).resolve().parent.parent
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
LANGUAGE_INFO = {"name": "python"}


def clean(nb: nbformat.NotebookNode) -> None:
    nb.metadata = nbformat.NotebookNode(
        kernelspec=KERNELSPEC, language_info=LANGUAGE_INFO
    )
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        cell.metadata.pop("ExecuteTime", None)
        cell.metadata.pop("collapsed", None)
        cell.metadata.pop("scrolled", None)
        if cell.cell_type == "code":
            for out in cell.outputs:
                out.get("metadata", {}).pop("execution", None)
            cell.outputs = coalesce_streams(cell.outputs)


def coalesce_streams(outputs: list) -> list:
    """Merge consecutive stream outputs of the same name (stdout arrives in chunks whose
    boundaries depend on timing), so a re-run saves the same cell outputs every time."""
    merged: list = []
    for out in outputs:
        if (
            out.get("output_type") == "stream"
            and merged
            and merged[-1].get("output_type") == "stream"
            and merged[-1].get("name") == out.get("name")
        ):
            merged[-1]["text"] += out["text"]
        else:
            merged.append(out)
    return merged


def execute(path: Path, timeout: int = 600) -> float:
    nb = nbformat.read(path, as_version=4)
    stamp_notebook(nb, load_home())
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    start = time.perf_counter()
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,
        allow_errors=False,
    )
    client.execute()
    elapsed = time.perf_counter() - start
    clean(nb)
    nbformat.validate(nb)
    nbformat.write(nb, path)
    return elapsed


def main(argv: list[str]) -> int:
    paths = [Path(a).resolve() for a in argv] or sorted((ROOT / "book").glob("*.ipynb"))
    for path in paths:
        elapsed = execute(path)
        print(f"{elapsed:6.1f} s  {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
