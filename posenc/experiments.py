"""The measured length-extrapolation study: byte-level language modelling on real text.

    python -m posenc.experiments                      # full study → posenc/data/extrapolation.json
    python -m posenc.experiments --quick --out x.json # the reduced run the tests use
    python -m posenc.experiments --tune-lr            # the learning-rate choice (at L only)
    python -m posenc.experiments --config large       # a larger configuration for a GPU

**Corpus.** The source code of the running Python's standard library (:func:`load_corpus`):
every ``.py`` file under ``sysconfig.get_paths()["stdlib"]`` except test suites, installed
third-party packages and the machine-generated ``_sysconfigdata*`` files; real text that no
one here wrote, present offline wherever Python is, under the PSF licence. Files are split
into train and validation *by document*: a file goes to validation when the first byte of
the SHA-256 of its relative path is ``< 26`` (about 10 %), so the split depends only on the
file names. The Python version is recorded with the results: another version ships
different files and gives other (similar) numbers.

**Model.** Every positional scheme trains the same byte-level :class:`posenc.model.TinyDecoder`
(vocabulary 256 bytes + a BOS token at position 0 of every window, as Kazemnejad et al.
(2023) assume for NoPE): same seed, so the same initial weights for every shared part; the
same windows in the same order; the same optimiser and number of steps; at one length ``L``
(BOS included).

**Evaluation** on the validation text at ``L, 2L, 4L, 8L, 16L``, in bits per byte, over
the same ``eval_bytes`` bytes at every length — spans of ``16L`` bytes spread evenly over
the validation files (:func:`eval_spans`) — with Press et al.'s (2022) two protocols:

- ``"nonoverlapping"``: consecutive windows of ``n`` tokens, every byte scored — early bytes
  of each window see little context (the "early-token curse");
- ``"sliding"``: windows of ``n`` tokens moved by ``n / sliding_fraction``, only the last
  ``n / sliding_fraction`` bytes of each scored, so every scored byte sees at least
  ``n (1 − 1/sliding_fraction)`` bytes of context (a cheaper form of sliding by one
  token, where every token sees ``n − 1``).

plus the mean loss at each position inside the longest non-overlapping window (binned).

**Variants** (:data:`VARIANTS`) are evaluation-time changes of a trained model — the
learned table stretched by interpolation; RoPE with PI, NTK-aware and YaRN frequencies for
``s = n / L`` at every length ``n``, dynamic NTK as ``transformers`` computes it for a
configured factor, YaRN's two halves one at a time; attention restricted to the last ``L``
keys (the window ablation) — and RoPE models fine-tuned for ``finetune_steps`` steps at
``finetune_len`` with PI or YaRN scaling for ``s = finetune_len / L`` (or with no scaling,
the control), then evaluated with ``s = max(finetune_len, n) / L``.

**Determinism.** Every (depth, seed, scheme) job is independent: fixed seeds, one torch
thread, data drawn on the CPU from seeded generators, results rounded to 4 decimals and
written with sorted keys. Jobs run in ``workers`` processes (2: both cores of the reference
machine) and are merged in a fixed order, so the command reproduces the committed file
byte for byte on the same versions and device.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import hashlib
import json
import math
import platform
import sys
import sysconfig
import time
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import torch

from ._checks import check_choice, check_int
from .model import TinyDecoder
from .scaling import ROPE_SCALING, dynamic_ntk, yarn, yarn_attention_factor

__all__ = [
    "BOS",
    "CLAIMS",
    "MARGIN",
    "FULL",
    "LARGE",
    "LR_CANDIDATES",
    "LARGE_RESULTS_PATH",
    "LR_SWEEP_PATH",
    "PROTOCOLS",
    "QUICK",
    "RESULTS_PATH",
    "VARIANTS",
    "StudyConfig",
    "check_claims",
    "claims_table",
    "corpus_files",
    "eval_spans",
    "evaluate",
    "finetune",
    "load_corpus",
    "load_results",
    "paired_difference",
    "run_study",
    "sample_batch",
    "save_results",
    "summarize",
    "train",
    "tune_lr",
]

#: The BOS token id; bytes are 0–255, so the input vocabulary has 257 ids.
BOS = 256
#: Press et al.'s two evaluation protocols (see the module docstring).
PROTOCOLS = ("nonoverlapping", "sliding")

#: The evaluation variants, each name mapped to (trained position scheme, evaluation-time
#: change).
#: Changes: ``None``; ``"interpolate"`` (learned table stretched to ``n``); a RoPE scaling
#: method of :data:`posenc.scaling.ROPE_SCALING` with ``s = n / L`` (``"linear"`` = PI,
#: ``"ntk_aware"``, ``"yarn"``); ``"dynamic_ntk"`` (configured factor
#: ``StudyConfig.dynamic_factor``, base recomputed from ``n``); ``"yarn-freq"`` /
#: ``"yarn-temp"`` (YaRN's frequencies with attention factor 1 / the trained frequencies
#: with YaRN's attention factor); ``"window"`` (attention to the last ``L`` keys only);
#: ``"ft"``, ``"ft+linear"``, ``"ft+yarn"`` (fine-tuned at ``finetune_len``, see
#: :func:`finetune`; ``"ft"`` alone also for ALiBi, the control for comparing a fine-tuned
#: RoPE with ALiBi at ``finetune_len``).
VARIANTS = {
    "nope": ("none", None),
    "sinusoidal": ("sinusoidal", None),
    "sinusoidal+window": ("sinusoidal", "window"),
    "learned": ("learned", None),
    "learned+interp": ("learned", "interpolate"),
    "rope": ("rope", None),
    "rope+pi": ("rope", "linear"),
    "rope+ntk": ("rope", "ntk_aware"),
    "rope+dynamic-ntk": ("rope", "dynamic_ntk"),
    "rope+yarn": ("rope", "yarn"),
    "rope+yarn-freq": ("rope", "yarn-freq"),
    "rope+yarn-temp": ("rope", "yarn-temp"),
    "rope+window": ("rope", "window"),
    "rope+ft": ("rope", "ft"),
    "rope+pi+ft": ("rope", "ft+linear"),
    "rope+yarn+ft": ("rope", "ft+yarn"),
    "alibi": ("alibi", None),
    "alibi+window": ("alibi", "window"),
    "alibi+ft": ("alibi", "ft"),
    "t5": ("t5", None),
    "t5+window": ("t5", "window"),
}


@dataclasses.dataclass(frozen=True)
class StudyConfig:
    """Everything that decides the numbers of a study (written into the results file).

    ``variants`` are evaluated with both protocols except those in ``nonoverlapping_only``.
    ``depths`` × ``seeds`` × schemes are trained with the same ``steps``; the T5 bias is
    causal with ``t5_num_buckets`` and ``t5_max_distance`` (default ``L/4``, T5's own ratio
    of 128 to 512). Fine-tunes use ``finetune_steps`` at ``finetune_len`` with the same
    bytes per step as training, a constant ``finetune_lr`` after ``finetune_warmup`` steps.
    Training losses are averaged over windows of ``loss_every`` steps for the loss curves;
    the position-loss curve at the longest length is averaged over ``position_bins`` bins.
    """

    variants: tuple[str, ...] = tuple(VARIANTS)
    nonoverlapping_only: tuple[str, ...] = (
        "rope+yarn-freq", "rope+yarn-temp", "sinusoidal+window", "rope+window",
        "alibi+window", "t5+window",
    )
    depths: tuple[int, ...] = (2, 4)
    seeds: tuple[int, ...] = (0, 1, 2)
    train_len: int = 64
    multiples: tuple[int, ...] = (1, 2, 4, 8, 16)
    d_model: int = 64
    num_heads: int = 4
    d_ff: int = 256
    steps: int = 800
    batch_size: int = 16
    lr: float = 1e-2
    warmup: int = 80
    weight_decay: float = 0.01
    eval_bytes: int = 16384
    sliding_fraction: int = 2
    dynamic_factor: float = 2.0
    finetune_len: int = 256
    finetune_steps: int = 50
    finetune_lr: float = 3e-4
    finetune_warmup: int = 5
    t5_num_buckets: int = 16
    t5_max_distance: int = 16
    loss_every: int = 50
    position_bins: int = 32

    def to_dict(self) -> dict:
        def plain(v):
            return [plain(x) for x in v] if isinstance(v, tuple) else v
        return {k: plain(v) for k, v in dataclasses.asdict(self).items()}

    @property
    def lengths(self) -> tuple[int, ...]:
        return tuple(m * self.train_len for m in self.multiples)


#: The configuration of the committed study (``python -m posenc.experiments``).
FULL = StudyConfig()
#: The reduced configuration the tests re-run end to end (``--quick``).
QUICK = StudyConfig(
    variants=("sinusoidal", "learned", "learned+interp", "rope", "rope+pi", "rope+ntk",
              "rope+yarn", "alibi"),
    nonoverlapping_only=(),
    depths=(2,),
    seeds=(0,),
    multiples=(1, 4, 8),
    steps=400,
    warmup=40,
    eval_bytes=4096,
    position_bins=8,
)


#: A larger configuration for a GPU (``python -m posenc.experiments --config large``): twice
#: the width and training length, head width 32, depths 4 and 8, five seeds, four times the
#: training bytes; its learning rate is chosen by :func:`tune_lr` at ``L`` in the same run.
LARGE = StudyConfig(
    depths=(4, 8),
    seeds=(0, 1, 2, 3, 4),
    train_len=128,
    d_model=128,
    num_heads=4,
    d_ff=512,
    steps=1600,
    batch_size=16,
    warmup=160,
    eval_bytes=32768,
    finetune_len=512,
    finetune_steps=100,
    t5_max_distance=32,
)


# --------------------------------------------------------------------------- the corpus


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


# --------------------------------------------------------------------------- train / eval


def _device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def build_model(cfg: StudyConfig, position: str, depth: int, seed: int) -> TinyDecoder:
    """The model of one run, initialised from ``seed`` (same shared weights for every scheme)."""
    torch.manual_seed(seed)
    return TinyDecoder(
        BOS + 1, 256, position,
        d_model=cfg.d_model, num_heads=cfg.num_heads, num_layers=depth, d_ff=cfg.d_ff,
        max_position_embeddings=cfg.train_len,
        num_buckets=cfg.t5_num_buckets, max_distance=cfg.t5_max_distance,
    )


def _optimise(model, cfg, data, *, steps, seq_len, batch_size, lr_at, lr, gen, device,
              forward_kwargs, curve):
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    model.train()
    recent, window = [], []
    for _ in range(steps):
        x, y = (t.to(device) for t in sample_batch(data, batch_size, seq_len, gen))
        logits = model(x, **forward_kwargs)
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        value = loss.detach().item()
        recent = (recent + [value])[-20:]
        window.append(value)
        if len(window) == cfg.loss_every:
            curve.append(sum(window) / len(window))
            window = []
    if window:
        curve.append(sum(window) / len(window))
    model.eval()
    return sum(recent) / len(recent)


def train(cfg: StudyConfig, position: str, depth: int, seed: int, *, device=None,
          curve: list | None = None):
    """Train one model at ``cfg.train_len`` on the training bytes; ``(model, final_loss)``.

    AdamW with linear warm-up and cosine decay to a tenth, gradient clipping at 1.0. The
    windows come from a generator seeded by ``seed`` alone, so every scheme and depth sees
    the same bytes in the same order. ``final_loss`` is the mean training loss (nats per
    byte) of the last 20 steps; if ``curve`` is a list, the mean loss of every
    ``cfg.loss_every`` steps is appended to it.
    """
    device = _device() if device is None else device
    model = build_model(cfg, position, depth, seed).to(device)

    def lr_at(step: int) -> float:
        if step < cfg.warmup:
            return (step + 1) / cfg.warmup
        t = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t))

    final = _optimise(
        model, cfg, load_corpus()["train"], steps=cfg.steps, seq_len=cfg.train_len,
        batch_size=cfg.batch_size, lr_at=lr_at, lr=cfg.lr,
        gen=torch.Generator().manual_seed(1_000_003 * seed + 17), device=device,
        forward_kwargs={}, curve=[] if curve is None else curve,
    )
    return model, final


def _scaling(model: TinyDecoder, method: str | None, factor: float, cfg: StudyConfig,
             seq_len: int):
    """``(inv_freq, attention_factor)`` of a RoPE change for factor ``s`` at ``seq_len``
    tokens, or ``None`` (the trained frequencies) for no change or ``s <= 1``."""
    d_h, L = model.head_dim, cfg.train_len
    if method is None or factor <= 1.0:
        return None
    if method == "dynamic_ntk":
        return dynamic_ntk(d_h, cfg.dynamic_factor, L, seq_len=seq_len, base=model.rope_base)
    if method == "yarn-freq":
        return yarn(d_h, factor, L, base=model.rope_base, attention_factor=1.0)
    if method == "yarn-temp":
        return model.inv_freq, yarn_attention_factor(factor)
    return ROPE_SCALING[method](d_h, factor, L, base=model.rope_base)


def finetune(model: TinyDecoder, cfg: StudyConfig, method: str | None, seed: int, *,
             device=None, curve: list | None = None):
    """A copy of a trained ``model`` fine-tuned at ``cfg.finetune_len``; ``(copy, loss)``.

    For RoPE, ``method`` is ``"linear"`` (PI), ``"yarn"`` or ``None`` (no scaling, the
    control); any other scheme takes ``None`` (fine-tuned as it is). The
    factor is ``s = finetune_len / L``. ``cfg.finetune_steps`` steps of AdamW at a constant
    ``cfg.finetune_lr`` after ``cfg.finetune_warmup`` warm-up steps, with
    ``batch_size · L / finetune_len`` windows per step (the same bytes per step as
    training), from a generator seeded by ``seed`` (the same windows for every method).
    """
    device = _device() if device is None else device
    tuned = copy.deepcopy(model).to(device)
    factor = cfg.finetune_len / cfg.train_len
    scaling = _scaling(tuned, method, factor, cfg, cfg.finetune_len)
    kwargs = {} if scaling is None else {"rope_scaling": scaling}
    final = _optimise(
        tuned, cfg, load_corpus()["train"], steps=cfg.finetune_steps,
        seq_len=cfg.finetune_len,
        batch_size=max(1, cfg.batch_size * cfg.train_len // cfg.finetune_len),
        lr_at=lambda step: min(1.0, (step + 1) / cfg.finetune_warmup), lr=cfg.finetune_lr,
        gen=torch.Generator().manual_seed(1_000_003 * seed + 29), device=device,
        forward_kwargs=kwargs, curve=[] if curve is None else curve,
    )
    return tuned, final


def _forward_kwargs(model: TinyDecoder, change: str | None, seq_len: int, cfg: StudyConfig):
    """Keyword arguments of ``model(...)`` for a variant's change at ``seq_len`` tokens."""
    L = cfg.train_len
    if change is None:
        return {}
    if change == "window":
        return {"attention_window": L}
    if change == "interpolate":
        return {} if seq_len <= L else {"learned_table": model.learned.interpolate(seq_len)}
    if change.startswith("ft"):
        method = change.partition("+")[2] or None
        factor = max(cfg.finetune_len, seq_len) / L if method else 1.0
        scaling = _scaling(model, method, factor, cfg, seq_len)
    else:
        scaling = _scaling(model, change, seq_len / L, cfg, seq_len)
    if scaling is None:
        return {}
    inv_freq, attention_factor = scaling
    return {"rope_scaling": (inv_freq.to(model.inv_freq.device), attention_factor)}


def eval_spans(cfg: StudyConfig, n_bytes: int) -> torch.Tensor:
    """Start offsets of the scored spans in a validation stream of ``n_bytes`` bytes.

    The ``eval_bytes`` scored bytes are ``eval_bytes / max(lengths)`` spans of
    ``max(lengths)`` bytes, spread evenly over the stream (so over many files), each at
    least ``max(lengths)`` bytes from the start, so that every protocol has its full
    context before every span at every length.

    Raises:
        ValueError: a stream too short for the spans.
    """
    span = max(cfg.lengths)
    count = cfg.eval_bytes // span
    gap = (n_bytes - 2 * span) // count
    if gap < span:
        raise ValueError(f"the validation stream ({n_bytes} bytes) is too short for "
                         f"{count} spans of {span} bytes")
    return span + gap * torch.arange(count)


def _windows(cfg: StudyConfig, seq_len: int, protocol: str, n_bytes: int):
    """``(starts, first_scored)``: byte offsets of the evaluation windows and the first
    scored position of each; every protocol scores the same bytes, the spans of
    :func:`eval_spans`."""
    span = max(cfg.lengths)
    if protocol == "nonoverlapping":
        stride, first = seq_len, 0
    else:
        stride = seq_len // cfg.sliding_fraction
        first = seq_len - stride
    within = torch.arange(0, span, stride) + stride - seq_len   # relative to a span start
    starts = (eval_spans(cfg, n_bytes)[:, None] + within[None, :]).flatten()
    return starts, first


@torch.no_grad()
def evaluate(model: TinyDecoder, cfg: StudyConfig, variant: str, seq_len: int,
             protocol: str = "nonoverlapping", *, device=None) -> dict:
    """Bits per byte of ``model`` on the validation bytes with windows of ``seq_len`` tokens.

    Returns ``{"status": "ok" | "cannot run", "bpb": float | None, "position_nll":
    (seq_len,) float64 tensor | None}``: ``bpb`` is the mean negative log2-likelihood of
    the ``cfg.eval_bytes`` scored bytes; ``position_nll`` the mean per position of the
    window (nats; scored positions only, ``nan`` elsewhere). A learned table asked for a
    position it does not have cannot run.

    Raises:
        ValueError: an unknown variant or protocol, or ``eval_bytes`` not a multiple of the
            window's stride.
    """
    check_choice("variant", variant, tuple(VARIANTS))
    check_choice("protocol", protocol, PROTOCOLS)
    device = next(model.parameters()).device if device is None else device
    _, change = VARIANTS[variant]
    data = load_corpus()["validation"]
    starts, first = _windows(cfg, seq_len, protocol, data.numel())
    stride = seq_len - first
    if cfg.eval_bytes % stride:
        raise ValueError(f"eval_bytes={cfg.eval_bytes} must be a multiple of the stride {stride}")
    try:
        kwargs = _forward_kwargs(model, change, seq_len, cfg)
    except IndexError:
        return {"status": "cannot run", "bpb": None, "position_nll": None}
    nll = torch.zeros(seq_len, dtype=torch.float64)
    per_batch = max(1, 8192 // seq_len)
    for i in range(0, len(starts), per_batch):
        s0 = starts[i:i + per_batch]
        y = data[s0[:, None] + torch.arange(seq_len)].long()
        x = _with_bos(y)
        try:
            logits = model(x.to(device), **kwargs)
        except IndexError:
            return {"status": "cannot run", "bpb": None, "position_nll": None}
        logp = torch.log_softmax(logits.double(), dim=-1)
        nll -= logp.gather(-1, y.to(device)[..., None])[..., 0].sum(0).cpu()
    nll /= len(starts)
    nll[:first] = float("nan")
    bpb = float(nll[first:].mean()) / math.log(2)
    return {"status": "ok", "bpb": bpb, "position_nll": nll}


# --------------------------------------------------------------------------- the study


def _round(x, nd=4):
    return None if x is None else round(float(x), nd)


def versions() -> dict:
    """Library versions that can change the numbers (the Python version fixes the corpus)."""
    return {
        "python": platform.python_version(),
        "torch": torch.__version__.split("+")[0],
        "numpy": np.__version__,
    }


def _bins(nll: torch.Tensor, bins: int) -> list:
    return [_round(x) for x in nll.view(bins, -1).mean(1).tolist()]


def _job(args) -> dict:
    """Train one (depth, seed, scheme) model, evaluate its variants (fine-tunes included)."""
    cfg, depth, seed, position, device = args
    device = torch.device(device)
    torch.set_num_threads(1)
    training, results, positions = [], [], []
    names = [v for v in cfg.variants if VARIANTS[v][0] == position]
    curve = []
    model, final = train(cfg, position, depth, seed, device=device, curve=curve)
    training.append({"position": position, "depth": depth, "seed": seed, "stage": "train",
                     "steps": cfg.steps, "final_train_loss": _round(final),
                     "loss_curve": [_round(x) for x in curve]})
    tuned = {}
    for name in names:
        change = VARIANTS[name][1]
        net = model
        if change is not None and change.startswith("ft"):
            method = change.partition("+")[2] or None
            if method not in tuned:
                curve = []
                tuned[method], final = finetune(model, cfg, method, seed, device=device,
                                                curve=curve)
                training.append({"position": position, "depth": depth, "seed": seed,
                                 "stage": f"finetune {method or 'none'}",
                                 "steps": cfg.finetune_steps,
                                 "final_train_loss": _round(final),
                                 "loss_curve": [_round(x) for x in curve]})
            net = tuned[method]
        protocols = PROTOCOLS[:1] if name in cfg.nonoverlapping_only else PROTOCOLS
        for protocol in protocols:
            for n in cfg.lengths:
                row = evaluate(net, cfg, name, n, protocol, device=device)
                results.append({"variant": name, "depth": depth, "seed": seed, "length": n,
                                "protocol": protocol, "status": row["status"],
                                "bpb": _round(row["bpb"])})
                if protocol == "nonoverlapping" and n == max(cfg.lengths) \
                        and row["status"] == "ok":
                    positions.append({"variant": name, "depth": depth, "seed": seed,
                                      "length": n, "bits": _bins(
                                          row["position_nll"] / math.log(2),
                                          cfg.position_bins)})
    return {"training": training, "results": results, "position_loss": positions}


def _jobs(cfg: StudyConfig, device: str) -> list:
    positions = list(dict.fromkeys(VARIANTS[v][0] for v in cfg.variants))
    # The longest jobs first (deeper models, RoPE with its fine-tunes), so two workers
    # finish together; the merge below does not depend on this order.
    cost = {"rope": 3}
    jobs = [(cfg, depth, seed, p, device) for depth in cfg.depths for seed in cfg.seeds
            for p in positions]
    return sorted(jobs, key=lambda j: -(j[1] * cost.get(j[3], 1)))


def _span_files(cfg: StudyConfig, corpus: dict) -> list[dict]:
    """The validation file each scored span starts in (with its offset)."""
    files = corpus["validation_files"]
    out = []
    for start in eval_spans(cfg, corpus["validation"].numel()).tolist():
        name = next(n for n, end in files if end > start)
        out.append({"offset": start, "file": name})
    return out


def run_study(cfg: StudyConfig = FULL, *, device=None, workers: int = 2, log=None) -> dict:
    """Train every scheme at every depth and seed; evaluate every variant.

    Args:
        cfg: the study configuration (:data:`FULL` or :data:`QUICK`, or your own).
        device: torch device (default: CUDA when present, else CPU).
        workers: worker processes (default 2, both cores of the reference machine; each
            job runs on one thread, so the results do not depend on this). On a GPU
            several processes share the device, which small models leave mostly idle.
        log: optional ``print``-like callable for progress lines.

    Returns:
        A JSON-ready dict: ``config``, ``versions``, ``device``, ``corpus`` (files,
        bytes and SHA-256 per split; the file and offset of every scored span),
        ``training`` (per run and fine-tune: steps, final training loss,
        loss curve), ``results`` (one row per variant × depth × seed × length × protocol:
        ``bpb`` or ``status == "cannot run"``) and ``position_loss`` (per variant × depth
        × seed: mean bits per byte in ``position_bins`` bins of the longest window).

    Raises:
        ValueError: an unknown variant, a depth or seed list that is empty, or lengths that
            the evaluation strides do not divide.
    """
    for v in cfg.variants:
        check_choice("variant", v, tuple(VARIANTS))
    if not cfg.depths or not cfg.seeds:
        raise ValueError("depths and seeds must each hold at least one value")
    for n in cfg.lengths:
        if cfg.eval_bytes % n or n % cfg.sliding_fraction:
            raise ValueError(f"eval_bytes={cfg.eval_bytes} and sliding_fraction="
                             f"{cfg.sliding_fraction} must divide every length; got {n}")
    device = str(_device() if device is None else torch.device(device))
    corpus = load_corpus()
    jobs = _jobs(cfg, device)
    start = time.perf_counter()
    workers = check_int("workers", workers, minimum=1)
    if workers > 1:
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
            outs = []
            for job, out in zip(jobs, pool.map(_job, jobs), strict=True):
                outs.append(out)
                if log:
                    log(f"depth {job[1]} seed {job[2]} {job[3]:10s} done "
                        f"({time.perf_counter() - start:.0f} s)")
    else:
        outs = []
        for job in jobs:
            outs.append(_job(job))
            if log:
                log(f"depth {job[1]} seed {job[2]} {job[3]:10s} done "
                    f"({time.perf_counter() - start:.0f} s)")
    order = {v: i for i, v in enumerate(VARIANTS)}

    def key(r):
        return (r["depth"], order.get(r.get("variant"), -1), r.get("position", ""),
                r.get("stage", ""), r["seed"], r.get("protocol", ""), r.get("length", 0))

    merged = {k: sorted((r for o in outs for r in o[k]), key=key)
              for k in ("training", "results", "position_loss")}
    return {"config": cfg.to_dict(), "versions": versions(), "device": torch.device(device).type,
            "corpus": {"name": "Python standard library source (.py, tests excluded)",
                       "licence": "PSF-2.0", **corpus["stats"],
                       "eval_spans": _span_files(cfg, corpus)},
            **merged}


def save_results(study: dict, path) -> None:
    """Write ``study`` as JSON (sorted keys, 1-space indent, trailing newline)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(study, indent=1, sort_keys=True) + "\n", encoding="utf-8")


#: The committed results of the full study. They ship inside the package, so a chapter reads
#: them wherever ``posenc`` is installed (a local clone, Binder, Colab).
RESULTS_PATH = Path(__file__).resolve().parent / "data" / "extrapolation.json"


#: Where ``--config large`` writes by default (nothing is committed there: that run needs
#: a GPU to finish in minutes).
LARGE_RESULTS_PATH = RESULTS_PATH.with_name("extrapolation_large.json")


def load_results(path=RESULTS_PATH) -> dict:
    """Read a results file written by :func:`save_results` (default: :data:`RESULTS_PATH`)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _rows(study):
    if not isinstance(study, dict) or "results" not in study:
        raise ValueError("study must be a dict with a 'results' list (see run_study)")
    return study["results"]


def summarize(study: dict, depth: int, protocol: str = "nonoverlapping") -> dict:
    """``{variant: [(mean, min, max) or None per length]}`` over seeds, lengths ascending.

    ``None`` marks a length where the variant cannot run (or was not evaluated with this
    protocol).

    Raises:
        ValueError: a ``study`` without ``"results"``, or a ``depth`` or ``protocol`` it
            does not hold.
    """
    rows = _rows(study)
    check_choice("protocol", protocol, PROTOCOLS)
    depths = sorted({r["depth"] for r in rows})
    if depth not in depths:
        raise ValueError(f"depth must be one of {depths}, got {depth!r}")
    rows = [r for r in rows if r["depth"] == depth and r["protocol"] == protocol]
    lengths = sorted({r["length"] for r in _rows(study)})
    out = {}
    for variant in dict.fromkeys(r["variant"] for r in rows):
        vals = []
        for n in lengths:
            xs = [r["bpb"] for r in rows if r["variant"] == variant and r["length"] == n]
            xs = [x for x in xs if x is not None]
            vals.append((sum(xs) / len(xs), min(xs), max(xs)) if xs else None)
        out[variant] = vals
    return out


def paired_difference(study: dict, a: str, b: str, length: int, depth: int,
                      protocol: str = "nonoverlapping", *, length_b: int | None = None):
    """Per-seed ``bpb(a) − bpb(b)`` (same seed, depth and protocol): ``(mean, min, max)``,
    rounded to 4 decimals.

    ``length_b`` (default ``length``) lets ``b`` be read at another length, e.g. ALiBi at
    ``8L`` against ALiBi at ``L``. The two variants share every seed's data and initial
    weights, so the per-seed differences are the fair comparison; a verdict holds where
    all of them have one sign. ``None`` when either side cannot run for some seed.

    Raises:
        ValueError: a ``study`` without ``"results"``, or no rows for ``a`` or ``b`` at
            that setting.
    """
    length_b = length if length_b is None else length_b
    diffs = _per_seed(study, a, length, b, length_b, depth, protocol)
    if diffs is None:
        return None
    return tuple(_round(x) for x in (sum(diffs) / len(diffs), min(diffs), max(diffs)))


#: Bits per byte within which two results count as "the same level" in :data:`CLAIMS`
#: (about 2 % of the models' ≈ 2.3 bits per byte at ``L``); fixed before the study ran.
MARGIN = 0.05

#: The sources' extrapolation claims as measurable comparisons, fixed before the study
#: ran: ``(claim, a, multiple_a, b, multiple_b, relation)`` with per-seed differences
#: ``d = bpb(a, multiple_a · L) − bpb(b, multiple_b · L)``; ``"<="`` claims that
#: ``d <= MARGIN`` (a is no worse than b by more than the margin), ``">"`` that
#: ``d > MARGIN`` (a is worse by more than the margin).
CLAIMS = (
    ("sinusoidal degrades past L", "sinusoidal", 2, "sinusoidal", 1, ">"),
    ("ALiBi stays flat to 8L", "alibi", 8, "alibi", 1, "<="),
    ("ALiBi stays flat to 16L", "alibi", 16, "alibi", 1, "<="),
    ("T5 bias holds up to 4L", "t5", 4, "t5", 1, "<="),
    ("plain RoPE holds up to 4L", "rope", 4, "rope", 1, "<="),
    ("RoPE + NTK-aware reaches ALiBi at 4L", "rope+ntk", 4, "alibi", 4, "<="),
    ("RoPE + NTK-aware reaches ALiBi at 16L", "rope+ntk", 16, "alibi", 16, "<="),
    ("RoPE + YaRN reaches ALiBi at 4L", "rope+yarn", 4, "alibi", 4, "<="),
    ("RoPE + YaRN reaches ALiBi at 16L", "rope+yarn", 16, "alibi", 16, "<="),
    ("NTK-aware needs no fine-tuning (4L at RoPE's level at L)", "rope+ntk", 4, "rope", 1,
     "<="),
    ("PI without fine-tuning is worse than NTK-aware (4L)", "rope+pi", 4, "rope+ntk", 4, ">"),
    ("PI needs fine-tuning (the fine-tune gains more than the margin at 4L)", "rope+pi", 4,
     "rope+pi+ft", 4, ">"),
    ("YaRN needs few steps (4L at RoPE's level at L after the fine-tune)", "rope+yarn+ft", 4,
     "rope", 1, "<="),
    ("YaRN fine-tunes at least as well as PI (4L)", "rope+yarn+ft", 4, "rope+pi+ft", 4, "<="),
)


def check_claims(study: dict, claims=CLAIMS, *, margin: float = MARGIN) -> list[dict]:
    """Every claim of ``claims`` (default :data:`CLAIMS`) at every depth and protocol.

    ``claims`` has the form of :data:`CLAIMS`. Returns one dict per claim × depth ×
    protocol: ``claim``, ``comparison`` (e.g. ``"alibi@8L − alibi@1L <= +0.05"``),
    ``depth``, ``protocol``, ``diff`` (``(mean, min, max)`` of the per-seed differences, see
    :func:`paired_difference`) and ``verdict``: ``"holds"`` when every seed's difference
    satisfies the claim, ``"fails"`` when none does, ``"mixed"`` otherwise (the seeds
    disagree: no verdict). Claims on a variant the study did not evaluate with a protocol
    are skipped.
    """
    rows = _rows(study)
    have = {(r["variant"], r["protocol"]) for r in rows}
    lengths = {r["length"] for r in rows}
    L = study["config"]["train_len"]
    out = []
    for depth in sorted({r["depth"] for r in rows}):
        for protocol in PROTOCOLS:
            for claim, a, ma, b, mb, rel in claims:
                if (a, protocol) not in have or (b, protocol) not in have \
                        or ma * L not in lengths or mb * L not in lengths:
                    continue
                diffs = _per_seed(study, a, ma * L, b, mb * L, depth, protocol)
                if diffs is None:
                    continue
                ok = [d <= margin if rel == "<=" else d > margin for d in diffs]
                verdict = "holds" if all(ok) else "fails" if not any(ok) else "mixed"
                comparison = f"{a}@{ma}L − {b}@{mb}L {rel} {margin:+.2f}"
                out.append({"claim": claim, "comparison": comparison,
                            "depth": depth, "protocol": protocol,
                            "diff": paired_difference(study, a, b, ma * L, depth, protocol,
                                                      length_b=mb * L),
                            "verdict": verdict})
    return out


def claims_table(rows: list[dict]) -> str:
    """:func:`check_claims` rows as text: per claim, its comparison, then one line per depth
    with the verdict and ``mean (min, max)`` of the per-seed differences per protocol."""
    lines = []
    for claim in dict.fromkeys(r["claim"] for r in rows):
        mine = [r for r in rows if r["claim"] == claim]
        lines += [claim, f"   {mine[0]['comparison']}"]
        for depth in dict.fromkeys(r["depth"] for r in mine):
            line = f"   {depth} layers"
            for r in (r for r in mine if r["depth"] == depth):
                mean, lo, hi = r["diff"]
                line += (f"   {r['protocol'][:7]:7s} {r['verdict']:5s} "
                         f"{mean:+.3f} ({lo:+.3f}, {hi:+.3f})")
            lines.append(line)
    return "\n".join(lines)


def _per_seed(study, a, length_a, b, length_b, depth, protocol):
    """Per-seed ``bpb(a) − bpb(b)`` (seeds ascending), or ``None`` if one cannot run."""
    rows = _rows(study)

    def get(v, n):
        got = {r["seed"]: r["bpb"] for r in rows if r["variant"] == v and r["length"] == n
               and r["depth"] == depth and r["protocol"] == protocol}
        if not got:
            raise ValueError(f"no results for variant {v!r} at length {n}, depth {depth}, "
                             f"protocol {protocol!r}")
        return got

    xa, xb = get(a, length_a), get(b, length_b)
    if any(x is None for x in (*xa.values(), *xb.values())):
        return None
    return [xa[s] - xb[s] for s in sorted(xa)]


#: Learning rates compared by :func:`tune_lr` before the study (validation at ``L`` only).
LR_CANDIDATES = (3e-3, 6e-3, 1e-2)
#: Where ``python -m posenc.experiments --tune-lr`` writes its table.
LR_SWEEP_PATH = RESULTS_PATH.with_name("lr_sweep.json")


def _tune_job(args):
    cfg, position, device = args
    torch.set_num_threads(1)
    model, _ = train(cfg, position, cfg.depths[0], cfg.seeds[0], device=torch.device(device))
    name = next(v for v in VARIANTS if VARIANTS[v] == (position, None))
    return evaluate(model, cfg, name, cfg.train_len)["bpb"]


def tune_lr(cfg: StudyConfig = FULL, lrs=LR_CANDIDATES, *, seed: int = 100,
            depth: int | None = None, workers: int = 2, device=None) -> dict:
    """Choose the learning rate before the study: validation bits per byte at ``L`` only.

    Every scheme is trained at ``depth`` (default: the first of ``cfg.depths``) with a seed
    that the study does not use, once per
    learning rate, and scored on the non-overlapping validation windows of length ``L``;
    nothing past ``L`` is evaluated. Returns ``{"lrs", "schemes", "bpb": {lr: {scheme:
    bpb}}, "mean": {lr: mean bpb}, "chosen": the lr with the lowest mean}``.
    """
    device = str(_device() if device is None else torch.device(device))
    depth = cfg.depths[0] if depth is None else depth
    schemes = list(dict.fromkeys(VARIANTS[v][0] for v in cfg.variants))
    jobs = [(dataclasses.replace(cfg, lr=lr, depths=(depth,), seeds=(seed,)), p, device)
            for lr in lrs for p in schemes]
    if workers > 1:
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
            bpb = list(pool.map(_tune_job, jobs))
    else:
        bpb = [_tune_job(job) for job in jobs]
    table = {str(lr): {p: _round(bpb[i * len(schemes) + j]) for j, p in enumerate(schemes)}
             for i, lr in enumerate(lrs)}
    mean = {k: _round(sum(v.values()) / len(v)) for k, v in table.items()}
    return {"lrs": list(lrs), "seed": seed, "depth": depth, "schemes": schemes,
            "bpb": table, "mean": mean, "chosen": float(min(mean, key=mean.get)),
            "versions": versions()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m posenc.experiments", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=None,
                        help="where to write the results (default: the committed file for the "
                             "full study; required with --quick)")
    parser.add_argument("--quick", action="store_true",
                        help="the reduced test configuration (never writes the committed file)")
    parser.add_argument("--config", choices=("full", "large"), default="full",
                        help="large: the GPU configuration; tunes the learning rate at L, then "
                             "runs the study (default output posenc/data/extrapolation_large.json)")
    parser.add_argument("--workers", type=int, default=None,
                        help="worker processes on the CPU (default 2)")
    parser.add_argument("--tune-lr", action="store_true",
                        help="only compare LR_CANDIDATES at L (writes posenc/data/lr_sweep.json)")
    args = parser.parse_args(argv)
    workers = 2 if args.workers is None else check_int("--workers", args.workers, minimum=1)
    if args.tune_lr:
        save_results(tune_lr(FULL, workers=workers), args.out or LR_SWEEP_PATH)
        return 0
    if args.config == "large":
        sweep = tune_lr(LARGE, workers=workers)
        cfg = dataclasses.replace(LARGE, lr=sweep["chosen"])
        study = run_study(cfg, workers=workers,
                          log=lambda s: print(s, file=sys.stderr, flush=True))
        study["lr_sweep"] = sweep
        save_results(study, args.out or LARGE_RESULTS_PATH)
        return 0
    cfg = QUICK if args.quick else FULL
    out = Path(args.out) if args.out else (None if args.quick else RESULTS_PATH)
    if out is None:
        parser.error("--quick needs --out PATH (it never overwrites the committed results)")
    if args.quick and out.resolve() == RESULTS_PATH.resolve():
        parser.error(f"--quick never writes the committed results ({RESULTS_PATH.name})")
    start = time.perf_counter()
    study = run_study(cfg, workers=workers, log=lambda s: print(s, file=sys.stderr, flush=True))
    save_results(study, out)
    print(f"wrote {out} in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
