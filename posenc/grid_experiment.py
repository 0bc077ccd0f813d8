"""The patch-grid study: train on 8 × 8 grids, test on 16 × 16.

    python -m posenc.grid_experiment                      # → posenc/data/grid_extrapolation.json
    python -m posenc.grid_experiment --quick --out x.json # the reduced run the tests use

Task ``"below"``: a grid of ``H × W`` tokens, each uniform over ``vocab_size`` values and
independent. At every patch that has a patch below it, output the token of that patch
(offset ``(Δh, Δw) = (+1, 0)``). Content cannot help, only position can, and the offset
that matters is the same on every grid size; a larger test grid adds rows and columns
never seen in training.

Six ways to give the patches positions, each in the same one-layer, one-head attention
model (:class:`GridAttention`):

* ``"raster_rope"`` — 1-D RoPE on the raster index ``h·W + w`` (:func:`posenc.rope.apply_rope`);
* ``"axial_rope"`` — axial 2-D RoPE, half the pairs on ``h`` and half on ``w``
  (:func:`posenc.multi_axis.apply_multi_axis_rope`);
* ``"mixed_rope"`` — RoPE-Mixed (Heo et al., 2024): pair ``i`` turns by ``⟨ω_i, (h, w)⟩``
  with learned frequency vectors ``ω_i``, initialised as the reference code does
  (:func:`posenc.rope_mixed.mixed_inv_freq`, magnitude base 10, a random direction);
* ``"learned_2d"`` — a learned ``(H, W, d)`` table added to the inputs, resized bilinearly
  to a larger grid at test time, as ViT does (Dosovitskiy et al., 2021, section 3.2);
* ``"alibi_1d"`` — ALiBi's bias ``−m·|i − j|`` on the raster index (Press et al., 2022, in
  the symmetric non-causal form of :func:`posenc.alibi.alibi_bias`);
* ``"alibi_2d"`` — a 2-D distance bias ``−m·(|Δh| + |Δw|)`` (Manhattan distance; CROMA's
  2D-ALiBi, Fuller et al., 2023, uses the Euclidean distance, equally symmetric).

The ALiBi arms have no position parameters but one: the slope ``m = exp(log_slope)``,
learned from ``m = 1`` (with a single head, the fixed geometric slopes of Press et al.
would give the one slope ``2⁻⁸``, a nearly flat bias). A distance bias is symmetric, so it
cannot prefer the patch below to the patch above; that caps what these arms can reach.

Protocol (as in :mod:`posenc.experiments`): every setting fixed before looking at the test
grid; the same seeds, data order, step count and shared initial weights for every scheme;
several seeds, reported as mean and range. Determinism: fixed seeds, one torch thread,
data drawn on the CPU from seeded generators, results rounded to 4 decimals and written with
sorted keys, so the command reproduces the committed file byte for byte (same torch
version). The full run takes about a minute of CPU time on one core (about two minutes of
wall time on a busy machine).
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
from torch import nn

from ._checks import check_choice, check_int
from .multi_axis import apply_multi_axis_rope, axial_inv_freq, grid_positions
from .rope import apply_rope, rope_inv_freq
from .rope_mixed import apply_mixed_rope, mixed_inv_freq

SCHEMES = ("raster_rope", "axial_rope", "learned_2d", "alibi_1d", "alibi_2d", "mixed_rope")

__all__ = [
    "FULL",
    "QUICK",
    "RESULTS_PATH",
    "SCHEMES",
    "GridAttention",
    "GridConfig",
    "evaluate",
    "load_results",
    "make_grid_batch",
    "run_study",
    "save_results",
    "summarize",
    "train",
]


@dataclasses.dataclass(frozen=True)
class GridConfig:
    """Every setting of the study, fixed before it is run.

    Attributes:
        vocab_size: tokens per patch are uniform over ``0 … vocab_size − 1``.
        d_model: model and head width (one head); even, and a multiple of 4 for axial RoPE.
        base: RoPE ``rope_theta``.
        train_grid: ``(H, W)`` of every training grid.
        test_grids: grids evaluated after training (the training grid first).
        steps, batch_size, lr: Adam training budget (constant learning rate).
        seeds: one training run per scheme and seed.
        eval_grids: grids drawn per evaluation (fixed seed, the same for every scheme).
        threads: torch intra-op threads during the study.
        budget_check: ``(scheme, steps)`` pairs trained again with more steps (same seeds
            and data), to tell "cannot learn the task" from "has not learned it yet".
    """

    vocab_size: int = 16
    d_model: int = 32
    base: float = 10000.0
    train_grid: tuple[int, int] = (8, 8)
    test_grids: tuple[tuple[int, int], ...] = ((8, 8), (12, 12), (16, 16))
    steps: int = 400
    batch_size: int = 32
    lr: float = 3e-3
    seeds: tuple[int, ...] = (0, 1, 2)
    eval_grids: int = 64
    threads: int = 1
    budget_check: tuple[tuple[str, int], ...] = (("learned_2d", 1200),)

    def to_dict(self) -> dict:
        return {k: (list(map(list, v)) if k in ("test_grids", "budget_check") else
                    list(v) if isinstance(v, tuple) else v)
                for k, v in dataclasses.asdict(self).items()}


FULL = GridConfig()
QUICK = GridConfig(steps=40, seeds=(0,), eval_grids=8, test_grids=((8, 8), (16, 16)),
                   budget_check=(("learned_2d", 60),))


def make_grid_batch(batch_size: int, grid, generator: torch.Generator, *,
                    vocab_size: int = 16) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A batch of the ``"below"`` task.

    Args:
        batch_size: grids in the batch, ``>= 1``.
        grid: ``(H, W)``, each ``>= 1``.
        generator: a seeded CPU generator (the data order).
        vocab_size: token values, ``>= 2``.

    Returns:
        ``(tokens, targets, mask)``, each ``(batch, H·W)`` in raster order: ``targets[j]`` is
        the token of the patch below patch ``j``; ``mask`` is ``False`` on the bottom row,
        which has no patch below.

    Raises:
        ValueError: a size below its minimum.
        TypeError: a size that is not an integer.
    """
    batch_size = check_int("batch_size", batch_size, minimum=1)
    H, W = (check_int(f"grid[{a}]", n, minimum=1) for a, n in enumerate(grid))
    vocab_size = check_int("vocab_size", vocab_size, minimum=2)
    tokens = torch.randint(0, vocab_size, (batch_size, H, W), generator=generator)
    targets = torch.zeros_like(tokens)
    targets[:, :-1] = tokens[:, 1:]
    mask = torch.zeros(batch_size, H, W, dtype=torch.bool)
    mask[:, :-1] = True
    return tokens.reshape(batch_size, -1), targets.reshape(batch_size, -1), \
        mask.reshape(batch_size, -1)


class GridAttention(nn.Module):
    """One attention layer with one head over a grid of tokens, positions by ``scheme``.

    ``x = embedding(token) + c`` (``c`` a learned constant, so queries and keys can carry a
    content-free part), plus the learned table for ``"learned_2d"``; then ``q, k, v`` by
    linear maps, RoPE on ``q, k`` for the RoPE schemes, a distance bias ``−m·dist`` on the
    scores for the ALiBi schemes (:meth:`distances`), softmax attention over every patch
    (no mask), and a linear read-out to token logits.

    Args:
        scheme: one of ``SCHEMES``.
        cfg: the :class:`GridConfig` (vocabulary, width, base, training grid).

    Shared parameters are created first and in the same order for every scheme, so one
    seed gives every scheme the same initial embedding, projections and read-out.
    """

    def __init__(self, scheme: str, cfg: GridConfig):
        super().__init__()
        self.scheme = check_choice("scheme", scheme, SCHEMES)
        d = cfg.d_model
        self.embed = nn.Embedding(cfg.vocab_size, d)
        self.const = nn.Parameter(torch.randn(d))
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, d, bias=False)
        self.v = nn.Linear(d, d, bias=False)
        self.out = nn.Linear(d, cfg.vocab_size)
        self.train_grid = tuple(cfg.train_grid)
        self.register_buffer("inv_freq_1d", rope_inv_freq(d, cfg.base), persistent=False)
        inv_freq, axis_of_pair = axial_inv_freq([d // 2, d // 2], cfg.base)
        self.register_buffer("inv_freq_2d", inv_freq, persistent=False)
        self.register_buffer("axis_of_pair", axis_of_pair, persistent=False)
        if scheme == "learned_2d":
            self.table = nn.Parameter(0.02 * torch.randn(*self.train_grid, d))
        if scheme in ("alibi_1d", "alibi_2d"):
            self.log_slope = nn.Parameter(torch.zeros(()))  # slope m = 1 at the start
        if scheme == "mixed_rope":  # the reference's init: one random direction per head
            angle = float(torch.rand(())) * 2 * math.pi
            self.mixed_freqs = nn.Parameter(mixed_inv_freq(d, theta=10.0, angle=angle))

    def distances(self, grid) -> torch.Tensor:
        """``(H·W, H·W)`` distances the ALiBi schemes penalise, in patches.

        ``"alibi_1d"``: ``|i − j|`` of the raster indices; ``"alibi_2d"``:
        ``|Δh| + |Δw|``. Raises ``ValueError`` for the other schemes.
        """
        H, W = grid
        if self.scheme == "alibi_1d":
            idx = torch.arange(H * W)
            return (idx[:, None] - idx[None, :]).abs().float()
        if self.scheme == "alibi_2d":
            hw = grid_positions((H, W))
            return (hw[:, None, :] - hw[None, :, :]).abs().sum(-1).float()
        raise ValueError(f"distances: scheme {self.scheme!r} has no distance bias")

    def position_table(self, grid) -> torch.Tensor:
        """The learned table for ``grid``: as trained, or resized bilinearly (ViT)."""
        H, W = grid
        if (H, W) == self.train_grid:
            return self.table
        t = self.table.permute(2, 0, 1)[None]
        t = nn.functional.interpolate(t, size=(H, W), mode="bilinear", align_corners=False)
        return t[0].permute(1, 2, 0)

    def forward(self, tokens: torch.Tensor, grid) -> torch.Tensor:
        """``tokens: (batch, H·W)`` in raster order → logits ``(batch, H·W, vocab_size)``."""
        H, W = grid
        x = self.embed(tokens) + self.const
        if self.scheme == "learned_2d":
            x = x + self.position_table((H, W)).reshape(H * W, -1)
        q, k, v = self.q(x), self.k(x), self.v(x)
        if self.scheme == "raster_rope":
            pos = torch.arange(H * W, device=x.device)
            q = apply_rope(q, pos, inv_freq=self.inv_freq_1d)
            k = apply_rope(k, pos, inv_freq=self.inv_freq_1d)
        elif self.scheme == "axial_rope":
            pos = grid_positions((H, W)).to(x.device)
            q = apply_multi_axis_rope(q, pos, self.inv_freq_2d, self.axis_of_pair)
            k = apply_multi_axis_rope(k, pos, self.inv_freq_2d, self.axis_of_pair)
        elif self.scheme == "mixed_rope":
            pos = grid_positions((H, W)).to(x.device)
            q = apply_mixed_rope(q, pos, self.mixed_freqs)
            k = apply_mixed_rope(k, pos, self.mixed_freqs)
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        if self.scheme in ("alibi_1d", "alibi_2d"):
            scores = scores - self.log_slope.exp() * self.distances((H, W)).to(x.device)
        weights = torch.softmax(scores, dim=-1)
        return self.out(weights @ v)


def _loss(logits, targets, mask):
    return nn.functional.cross_entropy(logits[mask], targets[mask])


def train(cfg: GridConfig, scheme: str, seed: int) -> tuple[GridAttention, list[float]]:
    """Train one model for ``cfg.steps`` steps on ``cfg.train_grid`` grids.

    Returns:
        The model and its training loss every 20 steps (and at the last step).

    Raises:
        ValueError: an unknown ``scheme``.
    """
    torch.manual_seed(seed)
    model = GridAttention(scheme, cfg)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    data = torch.Generator().manual_seed(10_000 + seed)
    curve = []
    for step in range(cfg.steps):
        tokens, targets, mask = make_grid_batch(cfg.batch_size, cfg.train_grid, data,
                                                vocab_size=cfg.vocab_size)
        loss = _loss(model(tokens, cfg.train_grid), targets, mask)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 20 == 0 or step == cfg.steps - 1:
            curve.append(loss.item())
    return model, curve


@torch.no_grad()
def evaluate(model: GridAttention, cfg: GridConfig, grid) -> dict:
    """Accuracy and loss on ``cfg.eval_grids`` fresh grids of size ``grid`` (fixed seed)."""
    data = torch.Generator().manual_seed(123_456)
    tokens, targets, mask = make_grid_batch(cfg.eval_grids, grid, data,
                                            vocab_size=cfg.vocab_size)
    logits = model(tokens, grid)
    acc = (logits.argmax(-1) == targets)[mask].float().mean().item()
    return {"accuracy": acc, "loss": _loss(logits, targets, mask).item()}


def _round(x, nd=4):
    return round(float(x), nd)


def run_study(cfg: GridConfig = FULL, *, log=None) -> dict:
    """Train every scheme for every seed and evaluate it on every test grid.

    Returns:
        A JSON-ready dict: ``config``, ``versions``, ``training`` (per run: scheme, seed,
        steps, final loss and loss curve), ``results`` (one row per scheme × seed × grid:
        ``accuracy``, ``loss``) and ``budget_check`` (the same rows for the runs of
        ``cfg.budget_check``, with their ``steps``).

    Raises:
        ValueError: an unknown scheme or a step count ``< 1`` in ``cfg.budget_check``.
    """
    for scheme, steps in cfg.budget_check:
        check_choice("budget_check scheme", scheme, SCHEMES)
        check_int("budget_check steps", steps, minimum=1)
    old_threads = torch.get_num_threads()
    torch.set_num_threads(cfg.threads)
    training, results, budget = [], [], []
    runs = [(scheme, cfg.steps, results) for scheme in SCHEMES]
    runs += [(scheme, steps, budget) for scheme, steps in cfg.budget_check]
    try:
        for scheme, steps, rows in runs:
            run_cfg = dataclasses.replace(cfg, steps=steps)
            for seed in cfg.seeds:
                model, curve = train(run_cfg, scheme, seed)
                training.append({"scheme": scheme, "seed": seed, "steps": steps,
                                 "final_train_loss": _round(curve[-1]),
                                 "loss_curve": [_round(x) for x in curve]})
                for grid in cfg.test_grids:
                    row = evaluate(model, cfg, grid)
                    rows.append({"scheme": scheme, "seed": seed, "steps": steps,
                                 "grid": list(grid),
                                 **{k: _round(v) for k, v in row.items()}})
                    if log:
                        log(f"{scheme:12s} {steps:5d} steps, seed {seed}, grid "
                            f"{grid[0]}x{grid[1]}: accuracy {rows[-1]['accuracy']:.4f}")
    finally:
        torch.set_num_threads(old_threads)
    versions = {"python": platform.python_version(), "torch": torch.__version__.split("+")[0],
                "numpy": np.__version__}
    return {"config": cfg.to_dict(), "versions": versions, "training": training,
            "results": results, "budget_check": budget}


def summarize(study: dict, metric: str = "accuracy", *, part: str = "results") -> dict:
    """``{scheme: {"HxW": (mean, min, max) over seeds}}`` for ``metric``.

    Args:
        study: a dict from :func:`run_study` or :func:`load_results`.
        metric: ``"accuracy"`` or ``"loss"``.
        part: ``"results"`` (the main runs) or ``"budget_check"``.

    Raises:
        ValueError: a ``study`` without ``part``, an unknown ``metric`` or ``part``.
    """
    check_choice("part", part, ("results", "budget_check"))
    if not isinstance(study, dict) or part not in study:
        raise ValueError(f"study must be a dict with a {part!r} list (see run_study)")
    check_choice("metric", metric, ("accuracy", "loss"))
    out: dict = {}
    for r in study[part]:
        key = f"{r['grid'][0]}x{r['grid'][1]}"
        out.setdefault(r["scheme"], {}).setdefault(key, []).append(r[metric])
    return {s: {g: (sum(v) / len(v), min(v), max(v)) for g, v in grids.items()}
            for s, grids in out.items()}


def save_results(study: dict, path) -> None:
    """Write ``study`` as JSON (sorted keys, 1-space indent, trailing newline)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(study, indent=1, sort_keys=True) + "\n", encoding="utf-8")


#: The committed results of the full study (read by the chapter "RoPE beyond one axis").
RESULTS_PATH = Path(__file__).resolve().parent / "data" / "grid_extrapolation.json"


def load_results(path=RESULTS_PATH) -> dict:
    """Read a results file written by :func:`save_results` (default: :data:`RESULTS_PATH`)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m posenc.grid_experiment",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=None,
                        help="where to write the results (default: the committed file; "
                             "required with --quick, which never overwrites it)")
    parser.add_argument("--quick", action="store_true", help="the reduced test configuration")
    args = parser.parse_args(argv)
    if args.quick and (args.out is None or Path(args.out).resolve() == RESULTS_PATH):
        parser.error("--quick needs --out PATH other than the committed results file")
    cfg = QUICK if args.quick else FULL
    study = run_study(cfg, log=lambda s: print(s, file=sys.stderr, flush=True))
    save_results(study, args.out or RESULTS_PATH)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
