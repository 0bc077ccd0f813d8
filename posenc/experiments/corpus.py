"""The corpus: Python's standard library source, split into train and validation by file.

Real text that no one here wrote, present offline wherever Python is, under the PSF licence.
A file goes to validation when the first byte of the SHA-256 of its relative path is
``< 26`` (about 10 %), so the split depends only on the file names.
"""

from __future__ import annotations

import hashlib
import sysconfig
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch

from .._checks import check_int
from .config import BOS

__all__ = ["corpus_files", "load_corpus", "sample_batch"]


def _stdlib_root() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def corpus_files(root=None) -> list[tuple[str, str]]:
    """The corpus documents: ``[(relative path, "train" | "validation"), …]``, sorted by path.

    ``root`` defaults to the running Python's standard library. Kept: ``*.py`` files outside
    ``site-packages``, test suites (any path part ``test``, ``tests``, ``idle_test`` or
    starting with ``test_``) and the generated ``_sysconfigdata*`` modules. A file is in
    validation when ``sha256(path)[0] < 26`` (≈ 10 %).

    Raises:
        ValueError: ``root`` holds no such file.
    """
    root = _stdlib_root() if root is None else Path(root)
    out = []
    for p in sorted(root.rglob("*.py")):
        rel = p.relative_to(root)
        parts = rel.parts
        if parts[0] == "site-packages" or rel.name.startswith("_sysconfigdata"):
            continue
        if any(x in ("test", "tests", "idle_test") or x.startswith("test_") for x in parts):
            continue
        name = rel.as_posix()
        split = "validation" if hashlib.sha256(name.encode()).digest()[0] < 26 else "train"
        out.append((name, split))
    if not out:
        raise ValueError(f"root holds no .py file of the corpus: {root}")
    return out


@lru_cache(maxsize=2)
def load_corpus(root=None) -> dict:
    """The corpus as two byte streams: ``{"train": (N,), "validation": (M,), "stats": …}``.

    Each split is its documents' bytes concatenated in path order, as a ``uint8`` tensor.
    ``stats`` gives the number of files and bytes per split and the SHA-256 of its bytes
    (distributions can ship different files under one Python version);
    ``validation_files`` lists ``(path, end offset)`` of each validation document.
    """
    root = _stdlib_root() if root is None else Path(root)
    chunks = {"train": [], "validation": []}
    names = {"train": [], "validation": []}
    for name, split in corpus_files(root):
        chunks[split].append((root / name).read_bytes())
        names[split].append(name)
    out = {k: torch.frombuffer(bytearray(b"".join(v)), dtype=torch.uint8)
           for k, v in chunks.items()}
    out["stats"] = {k: {"files": len(v), "bytes": sum(map(len, v)),
                        "sha256": hashlib.sha256(b"".join(v)).hexdigest()}
                    for k, v in chunks.items()}
    ends = np.cumsum([len(c) for c in chunks["validation"]])
    out["validation_files"] = list(zip(names["validation"], ends.tolist(), strict=True))
    return out


def sample_batch(data: torch.Tensor, batch_size: int, seq_len: int,
                 generator: torch.Generator):
    """Random training windows: ``(inputs, targets)``, each ``(b, s)`` int64.

    ``inputs[:, 0]`` is :data:`BOS` and ``inputs[:, 1:] = targets[:, :-1]``: the model
    predicts every byte of a window of ``s`` bytes from the BOS token and the bytes
    before it. Offsets are uniform over the stream, drawn from ``generator`` on the CPU.

    Raises:
        ValueError: ``seq_len`` or ``batch_size < 1``, or a stream shorter than ``s + 1``.
    """
    b = check_int("batch_size", batch_size, minimum=1)
    s = check_int("seq_len", seq_len, minimum=1)
    if data.numel() < s + 1:
        raise ValueError(f"data must hold more than seq_len={s} bytes, got {data.numel()}")
    starts = torch.randint(0, data.numel() - s, (b,), generator=generator)
    targets = data[starts[:, None] + torch.arange(s)].long()
    return _with_bos(targets), targets


def _with_bos(targets: torch.Tensor) -> torch.Tensor:
    bos = torch.full_like(targets[:, :1], BOS)
    return torch.cat([bos, targets[:, :-1]], dim=1)
