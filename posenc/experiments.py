"""The measured length-extrapolation study: train short, test long.

    python -m posenc.experiments                      # full study → posenc/data/extrapolation.json
    python -m posenc.experiments --quick --out x.json # the reduced run the tests use

Every positional scheme trains the same :class:`posenc.model.TinyDecoder` (same seed, so
the same initial weights for every shared part; the same batches in the same order; the
same number of steps) at one length ``L`` and is evaluated at ``L, 2L, 4L, 8L``, on a
synthetic task with a well-defined answer at any length:

``"lag"`` — at every position ``t >= lag``, output the token ``lag`` places back
    (``y_t = x_{t−lag}``, tokens uniform and independent). Content cannot help, only
    position can; the offset that matters never grows with length, but every longer test
    adds positions (absolute schemes) or distances (relative ones) never seen in training.

Evaluation-time variants (no retraining): the learned table stretched with
:meth:`~posenc.learned.LearnedPositionalEmbedding.interpolate`, and RoPE with the PI,
NTK-aware and YaRN frequencies of :mod:`posenc.scaling` for the factor ``s = length / L``,
plus YaRN's two changes one at a time (its frequencies with no logit scaling, and the
trained frequencies with its logit scaling). A learned table asked for a position it does
not have is recorded as ``"cannot run"``.

A budget check (``budget_check`` of :class:`StudyConfig`) trains chosen schemes again with more
steps, to tell "cannot learn the task" from "has not learned it yet"; every training run
also records its loss curve.

Determinism: fixed seeds, a fixed number of torch threads, data drawn on the CPU from
seeded generators, results rounded to 4 decimals and written with sorted keys, so the
command reproduces the committed file byte for byte (same torch version and device).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import platform
import sys
from pathlib import Path

import numpy as np
import torch

from ._checks import check_choice, check_int
from .model import POSITIONS, TinyDecoder, cross_entropy_masked
from .scaling import ROPE_SCALING, yarn, yarn_attention_factor

__all__ = [
    "FULL",
    "QUICK",
    "RESULTS_PATH",
    "TASKS",
    "VARIANTS",
    "StudyConfig",
    "evaluate",
    "load_results",
    "make_batch",
    "run_study",
    "save_results",
    "summarize",
    "train",
]

#: The synthetic tasks :func:`make_batch` can generate.
TASKS = ("lag",)

#: The evaluation variants, each name mapped to (trained position scheme, evaluation-time
#: change or ``None``). A change is ``"interpolate"`` (the learned table), a method of
#: :data:`posenc.scaling.ROPE_SCALING`, ``"yarn-freq"`` (YaRN's frequencies with attention
#: factor 1) or ``"yarn-temp"`` (the trained frequencies with YaRN's attention factor).
VARIANTS = {
    "none": ("none", None),
    "sinusoidal": ("sinusoidal", None),
    "learned": ("learned", None),
    "learned+interp": ("learned", "interpolate"),
    "rope": ("rope", None),
    "rope+pi": ("rope", "linear"),
    "rope+ntk": ("rope", "ntk_aware"),
    "rope+yarn": ("rope", "yarn"),
    "rope+yarn-freq": ("rope", "yarn-freq"),
    "rope+yarn-temp": ("rope", "yarn-temp"),
    "alibi": ("alibi", None),
    "t5": ("t5", None),
}


@dataclasses.dataclass(frozen=True)
class StudyConfig:
    """Everything that decides the numbers of a study (written into the results file).

    ``plan`` lists, per task, the evaluation variants to run; every position scheme a task's
    variants need is trained once per seed with the same ``steps``, batches and seed.
    ``budget_check`` lists ``(position, steps)`` pairs trained once more per task and seed
    with that many steps (same data, schedule stretched to the new length) and evaluated
    without variants. ``t5_num_buckets``/``t5_max_distance`` configure the T5 bias
    (causal); the default ``max_distance`` is ``train_len / 4``, T5's own ratio (128 for
    its 512-token inputs). Training losses are averaged over windows of ``loss_every``
    steps for the loss curves.
    """

    plan: tuple[tuple[str, tuple[str, ...]], ...] = (("lag", tuple(VARIANTS)),)
    seeds: tuple[int, ...] = (0,)
    train_len: int = 64
    multiples: tuple[int, ...] = (1, 2, 4, 8)
    d_model: int = 64
    num_heads: int = 4
    num_layers: int = 2
    d_ff: int = 128
    steps: int = 600
    batch_size: int = 32
    lr: float = 3e-3
    warmup: int = 100
    weight_decay: float = 0.01
    lag: int = 4
    lag_vocab: int = 32
    eval_sequences: int = 32
    eval_batch: int = 16
    threads: int = 1
    t5_num_buckets: int = 16
    t5_max_distance: int = 16
    budget_check: tuple[tuple[str, int], ...] = (("alibi", 1800),)
    loss_every: int = 100

    def to_dict(self) -> dict:
        def plain(v):
            return [plain(x) for x in v] if isinstance(v, tuple) else v
        return {k: plain(v) for k, v in dataclasses.asdict(self).items()}


#: The configuration of the committed study (``python -m posenc.experiments``).
FULL = StudyConfig()
#: The reduced configuration the tests re-run end to end (``--quick``).
QUICK = StudyConfig(
    plan=(("lag", ("sinusoidal", "learned", "learned+interp", "rope", "rope+yarn",
                   "rope+yarn-freq", "rope+yarn-temp")),),
    train_len=32,
    multiples=(1, 4),
    batch_size=16,
    steps=200,
    warmup=50,
    lr=5e-3,
    eval_sequences=16,
    t5_max_distance=8,
    budget_check=(),
)


# --------------------------------------------------------------------------- tasks


def make_batch(task: str, batch_size: int, seq_len: int, generator: torch.Generator, *,
               vocab_size: int, lag: int = 4):
    """One batch of a task: ``(tokens, targets, mask)``, each ``(b, s)``.

    ``mask`` marks the positions that are scored; ``targets`` holds the answer there (and 0
    elsewhere). Drawn on the CPU from ``generator`` so every device sees the same data.

    Args:
        task: ``"lag"`` (see the module docstring).
        batch_size: sequences ``b >= 1``.
        seq_len: length ``s > lag``.
        generator: a seeded :class:`torch.Generator`.
        vocab_size: tokens ``V >= 2``, drawn uniformly (chance accuracy ``1/V``).
        lag: the offset (``>= 1``).

    Raises:
        ValueError: unknown task, or sizes outside the ranges above.
        TypeError: a size that is not an integer.
    """
    check_choice("task", task, TASKS)
    b = check_int("batch_size", batch_size, minimum=1)
    s = check_int("seq_len", seq_len, minimum=2)
    v = check_int("vocab_size", vocab_size, minimum=2)
    lag = check_int("lag", lag, minimum=1)
    if s <= lag:
        raise ValueError(f"seq_len must be > lag ({lag}), got {s}")
    tokens = torch.randint(0, v, (b, s), generator=generator)
    targets = torch.zeros_like(tokens)
    targets[:, lag:] = tokens[:, :-lag]
    mask = torch.zeros(b, s, dtype=torch.bool)
    mask[:, lag:] = True
    return tokens, targets, mask


def _task_kwargs(cfg: StudyConfig, task: str) -> dict:
    return {"vocab_size": cfg.lag_vocab, "lag": cfg.lag}


# --------------------------------------------------------------------------- train / eval


def _device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def build_model(cfg: StudyConfig, task: str, position: str, seed: int) -> TinyDecoder:
    """The model of one run, initialised from ``seed`` (same shared weights for every scheme)."""
    vocab = _task_kwargs(cfg, task)["vocab_size"]
    torch.manual_seed(seed)
    return TinyDecoder(
        vocab, vocab, position,
        d_model=cfg.d_model, num_heads=cfg.num_heads, num_layers=cfg.num_layers,
        d_ff=cfg.d_ff, max_position_embeddings=cfg.train_len,
        num_buckets=cfg.t5_num_buckets, max_distance=cfg.t5_max_distance,
    )


def train(cfg: StudyConfig, task: str, position: str, seed: int, *, device=None,
          curve: list | None = None):
    """Train one model at ``cfg.train_len``; return ``(model, final_loss)``.

    AdamW with linear warm-up and cosine decay, gradient clipping at 1.0. The batches come
    from a generator seeded by ``seed`` alone, so every scheme sees the same data.
    ``final_loss`` is the mean training loss (nats) of the last 20 steps. If ``curve`` is a
    list, the mean loss of every window of ``cfg.loss_every`` steps is appended to it.
    """
    device = _device() if device is None else device
    model = build_model(cfg, task, position, seed).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)

    def lr_at(step: int) -> float:
        if step < cfg.warmup:
            return (step + 1) / cfg.warmup
        t = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    gen = torch.Generator().manual_seed(1_000_003 * seed + TASKS.index(task))
    kwargs = _task_kwargs(cfg, task)
    model.train()
    recent, window = [], []
    for _ in range(cfg.steps):
        tokens, targets, mask = (
            t.to(device) for t in make_batch(task, cfg.batch_size, cfg.train_len, gen, **kwargs)
        )
        loss, _ = cross_entropy_masked(model(tokens), targets, mask)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        value = loss.detach().item()
        recent = (recent + [value])[-20:]
        window.append(value)
        if len(window) == cfg.loss_every:
            if curve is not None:
                curve.append(sum(window) / len(window))
            window = []
    if curve is not None and window:
        curve.append(sum(window) / len(window))
    model.eval()
    return model, sum(recent) / len(recent)


def _eval_forward_kwargs(model: TinyDecoder, change: str | None, seq_len: int, train_len: int):
    """Keyword arguments of ``model(...)`` for an evaluation-time variant at ``seq_len``."""
    if change is None:
        return {}
    if change == "interpolate":
        if seq_len <= train_len:
            return {}
        return {"learned_table": model.learned.interpolate(seq_len)}
    factor = seq_len / train_len
    if factor <= 1.0:
        return {}
    if change == "yarn-freq":
        inv_freq, attention_factor = yarn(
            model.head_dim, factor, train_len, base=model.rope_base, attention_factor=1.0
        )
    elif change == "yarn-temp":
        inv_freq, attention_factor = model.inv_freq, yarn_attention_factor(factor)
    else:
        inv_freq, attention_factor = ROPE_SCALING[change](
            model.head_dim, factor, train_len, base=model.rope_base
        )
    return {"rope_scaling": (inv_freq.to(model.inv_freq.device), attention_factor)}


@torch.no_grad()
def evaluate(model: TinyDecoder, cfg: StudyConfig, task: str, variant: str, seq_len: int,
             *, device=None) -> dict:
    """Accuracy and loss of ``model`` on ``cfg.eval_sequences`` fresh sequences of ``seq_len``.

    Returns a dict with ``status`` (``"ok"`` or ``"cannot run"``), ``accuracy`` (fraction of
    scored positions answered correctly), ``loss`` (mean cross-entropy, nats),
    ``accuracy_beyond`` (accuracy on scored positions ``>= train_len`` only; ``None`` when
    there are none) and ``accuracy_within`` (scored positions ``< train_len`` only: the
    training window, where a causal model without evaluation-time changes computes exactly
    what it computes at the training length). All are ``None`` when the variant cannot
    run. The evaluation data depend only on ``task`` and ``seq_len``.
    """
    device = next(model.parameters()).device if device is None else device
    _, change = VARIANTS[variant]
    gen = torch.Generator().manual_seed(7919 * seq_len + TASKS.index(task))
    tokens, targets, mask = make_batch(
        task, cfg.eval_sequences, seq_len, gen, **_task_kwargs(cfg, task)
    )
    try:
        kwargs = _eval_forward_kwargs(model, change, seq_len, cfg.train_len)
    except IndexError:
        kwargs = None
    correct = torch.zeros(seq_len, dtype=torch.float64)
    counted = torch.zeros(seq_len, dtype=torch.float64)
    nll = 0.0
    for i in range(0, cfg.eval_sequences, cfg.eval_batch):
        x, y, m = (t[i:i + cfg.eval_batch].to(device) for t in (tokens, targets, mask))
        try:
            logits = model(x, **(kwargs or {}))
        except IndexError:
            return {"status": "cannot run", "accuracy": None, "loss": None,
                    "accuracy_beyond": None, "accuracy_within": None}
        logp = torch.log_softmax(logits.double(), dim=-1)
        nll -= float(logp.gather(-1, y[..., None])[..., 0][m].sum())
        hit = (logits.argmax(-1) == y) & m
        correct += hit.sum(0).double().cpu()
        counted += m.sum(0).double().cpu()
    beyond, within = slice(cfg.train_len, None), slice(None, cfg.train_len)
    n_beyond = float(counted[beyond].sum())
    return {
        "status": "ok",
        "accuracy": float(correct.sum() / counted.sum()),
        "loss": nll / float(counted.sum()),
        "accuracy_beyond": float(correct[beyond].sum()) / n_beyond if n_beyond else None,
        "accuracy_within": float(correct[within].sum() / counted[within].sum()),
    }


# --------------------------------------------------------------------------- the study


def _round(x, nd=4):
    return None if x is None else round(float(x), nd)


def versions() -> dict:
    """Library versions that can change the numbers."""
    return {
        "python": platform.python_version(),
        "torch": torch.__version__.split("+")[0],
        "numpy": np.__version__,
    }


def _row(task: str, seed: int, length: int, row: dict) -> dict:
    return {"task": task, "seed": seed, "length": length, "status": row["status"],
            **{k: _round(row[k]) for k in ("accuracy", "loss", "accuracy_beyond",
                                            "accuracy_within")}}


def run_study(cfg: StudyConfig = FULL, *, device=None, log=None) -> dict:
    """Train every scheme the variants need, evaluate every variant at every length.

    Args:
        cfg: the study configuration (:data:`FULL` or :data:`QUICK`, or your own).
        device: torch device (default: CUDA when present, else CPU).
        log: optional ``print``-like callable for progress lines.

    Returns:
        A JSON-ready dict: ``config``, ``versions``, ``device``, ``training`` (per run: the
        steps, final training loss and loss curve), ``results`` (one row per task ×
        variant × seed × length) and ``budget_check`` (one row per task × budget-check
        run × seed × length, with its ``position`` and ``steps``).

    Raises:
        ValueError: an unknown task, variant or budget-check position in ``cfg``, or a
            budget-check step count ``< 1``.
    """
    for task, variants in cfg.plan:
        check_choice("task", task, TASKS)
        for v in variants:
            check_choice("variant", v, tuple(VARIANTS))
    for position, steps in cfg.budget_check:
        check_choice("budget_check position", position, POSITIONS)
        check_int("budget_check steps", steps, minimum=1)
    device = _device() if device is None else torch.device(device)
    old_threads = torch.get_num_threads()
    torch.set_num_threads(cfg.threads)
    training, results, budget = [], [], []

    def trained(run_cfg, task, position, seed):
        curve = []
        model, final = train(run_cfg, task, position, seed, device=device, curve=curve)
        training.append({"task": task, "position": position, "seed": seed,
                         "steps": run_cfg.steps, "final_train_loss": _round(final),
                         "loss_curve": [_round(x) for x in curve]})
        return model

    def say(name, r):
        if log:
            log(f"{r['task']:6s} {name:15s} seed {r['seed']} len {r['length']:4d}"
                f"  {r['status']:10s} acc {r['accuracy']}")

    try:
        for task, variants in cfg.plan:
            for position in dict.fromkeys(VARIANTS[v][0] for v in variants):
                for seed in cfg.seeds:
                    model = trained(cfg, task, position, seed)
                    for variant in (v for v in variants if VARIANTS[v][0] == position):
                        for n in (m * cfg.train_len for m in cfg.multiples):
                            row = evaluate(model, cfg, task, variant, n)
                            results.append({"variant": variant, **_row(task, seed, n, row)})
                            say(variant, results[-1])
            for position, steps in cfg.budget_check:
                run_cfg = dataclasses.replace(cfg, steps=steps)
                for seed in cfg.seeds:
                    model = trained(run_cfg, task, position, seed)
                    for n in (m * cfg.train_len for m in cfg.multiples):
                        row = evaluate(model, cfg, task, position, n)
                        budget.append({"position": position, "steps": steps,
                                       **_row(task, seed, n, row)})
                        say(f"{position}@{steps}", budget[-1])
    finally:
        torch.set_num_threads(old_threads)
    return {"config": cfg.to_dict(), "versions": versions(), "device": device.type,
            "training": training, "results": results, "budget_check": budget}


def save_results(study: dict, path) -> None:
    """Write ``study`` as JSON (sorted keys, 1-space indent, trailing newline)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(study, indent=1, sort_keys=True) + "\n", encoding="utf-8")


#: The committed results of the full study. They ship inside the package, so a chapter reads
#: them wherever ``posenc`` is installed (a local clone, Binder, Colab).
RESULTS_PATH = Path(__file__).resolve().parent / "data" / "extrapolation.json"


def load_results(path=RESULTS_PATH) -> dict:
    """Read a results file written by :func:`save_results` (default: :data:`RESULTS_PATH`)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def summarize(study: dict, task: str, metric: str = "accuracy") -> dict:
    """``{variant: [mean over seeds or None per length]}`` for one task, lengths ascending.

    ``None`` marks a length where the variant cannot run.

    Raises:
        ValueError: a ``task`` or ``metric`` that ``study`` does not hold (an unknown task
            used to give an empty dict), or a ``study`` without ``"results"``.
    """
    if not isinstance(study, dict) or "results" not in study:
        raise ValueError("study must be a dict with a 'results' list (see run_study)")
    tasks = tuple(dict.fromkeys(r["task"] for r in study["results"]))
    check_choice("task", task, tasks)
    metrics = tuple(k for k in ("accuracy", "accuracy_beyond", "accuracy_within", "loss")
                    if all(k in r for r in study["results"]))
    check_choice("metric", metric, metrics)
    rows = [r for r in study["results"] if r["task"] == task]
    lengths = sorted({r["length"] for r in rows})
    out = {}
    for variant in dict.fromkeys(r["variant"] for r in rows):
        vals = []
        for n in lengths:
            xs = [r[metric] for r in rows if r["variant"] == variant and r["length"] == n]
            xs = [x for x in xs if x is not None]
            vals.append(sum(xs) / len(xs) if xs else None)
        out[variant] = vals
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m posenc.experiments", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(RESULTS_PATH),
                        help="where to write the results (default: the committed file)")
    parser.add_argument("--quick", action="store_true", help="the reduced test configuration")
    args = parser.parse_args(argv)
    cfg = QUICK if args.quick else FULL
    study = run_study(cfg, log=lambda s: print(s, file=sys.stderr, flush=True))
    save_results(study, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
