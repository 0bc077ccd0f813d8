"""Training and fine-tuning the study's models, and the evaluation-time changes.

Every positional scheme trains the same byte-level :class:`posenc.model.TinyDecoder`: same
seed, so the same initial weights for every shared part; the same windows in the same order;
the same optimiser and number of steps, at one length ``L`` (BOS included).
"""

from __future__ import annotations

import copy
import math

import torch

from ..model import TinyDecoder
from ..scaling import ROPE_SCALING, dynamic_ntk, yarn, yarn_attention_factor
from .config import BOS, SCHEMES, StudyConfig
from .corpus import load_corpus, sample_batch

__all__ = ["build_model", "finetune", "forward_kwargs", "train"]


def _device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def build_model(cfg: StudyConfig, scheme: str, depth: int, seed: int) -> TinyDecoder:
    """The model of one run of ``scheme`` (a key of :data:`SCHEMES`), initialised from
    ``seed`` (same shared weights for every scheme)."""
    torch.manual_seed(seed)
    return TinyDecoder(
        BOS + 1, 256,
        d_model=cfg.d_model, num_heads=cfg.num_heads, num_layers=depth, d_ff=cfg.d_ff,
        max_position_embeddings=cfg.train_len,
        num_buckets=cfg.t5_num_buckets, max_distance=cfg.t5_max_distance,
        **SCHEMES[scheme](cfg, depth),
    )


def _optimise(model, cfg, data, *, steps, seq_len, batch_size, lr_at, lr, gen, device,
              forward_kwargs, curve, on_step=None):
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    model.train()
    recent, window = [], []
    for step in range(steps):
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
        if on_step is not None:
            on_step(step + 1, model)
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
             steps: int | None = None, snapshots: dict | None = None, device=None,
             curve: list | None = None):
    """A copy of a trained ``model`` fine-tuned at ``cfg.finetune_len``; ``(copy, loss)``.

    For RoPE, ``method`` is ``"linear"`` (PI), ``"yarn"`` or ``None`` (no scaling, the
    control); any other scheme takes ``None`` (fine-tuned as it is). The factor is
    ``s = finetune_len / L``. ``steps`` (default ``cfg.finetune_steps``) steps of AdamW at a
    constant ``cfg.finetune_lr`` after ``cfg.finetune_warmup`` warm-up steps, with
    ``batch_size · L / finetune_len`` windows per step (the same bytes per step as
    training), from a generator seeded by ``seed`` (the same windows for every method).

    Because the learning rate after step ``k`` does not depend on ``steps``, the model after
    ``k`` steps of a longer run *is* the ``k``-step fine-tune: if ``snapshots`` is a dict,
    a copy of the model after each step count in ``cfg.finetune_sweep`` (and
    ``cfg.finetune_steps``) up to ``steps`` is stored in it under that count.

    Raises:
        ValueError: ``steps < 1``.
    """
    device = _device() if device is None else device
    steps = cfg.finetune_steps if steps is None else int(steps)
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    tuned = copy.deepcopy(model).to(device)
    factor = cfg.finetune_len / cfg.train_len
    scaling = _scaling(tuned, method, factor, cfg, cfg.finetune_len)
    kwargs = {} if scaling is None else {"rope_scaling": scaling}
    keep = set(cfg.finetune_sweep) | {cfg.finetune_steps}

    def on_step(k, net):
        if snapshots is not None and k in keep:
            snap = copy.deepcopy(net)
            snap.eval()
            snapshots[k] = snap

    final = _optimise(
        tuned, cfg, load_corpus()["train"], steps=steps, seq_len=cfg.finetune_len,
        batch_size=max(1, cfg.batch_size * cfg.train_len // cfg.finetune_len),
        lr_at=lambda step: min(1.0, (step + 1) / cfg.finetune_warmup), lr=cfg.finetune_lr,
        gen=torch.Generator().manual_seed(1_000_003 * seed + 29), device=device,
        forward_kwargs=kwargs, curve=[] if curve is None else curve, on_step=on_step,
    )
    return tuned, final


def forward_kwargs(model: TinyDecoder, change: str | None, seq_len: int, cfg: StudyConfig):
    """Keyword arguments of ``model(...)`` for a variant's change at ``seq_len`` tokens.

    Fine-tuned RoPE models keep at least the factor they were tuned with:
    ``s = max(finetune_len, seq_len) / L``.

    Raises:
        IndexError: a learned table asked for more positions than it has (``"learned"``).
    """
    L = cfg.train_len
    if change is None:
        return {}
    if change == "window":
        return {"attention_window": L}
    if change == "fixed-normaliser":
        return {"fire_progressive": False}
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
