"""The study's settings: the variants, :class:`StudyConfig` and the committed configurations.

Everything that decides a number of the study lives here, so that the results file can
record it (``StudyConfig.to_dict``) and a test can compare it with the code.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

__all__ = [
    "BOS", "EXPLORATORY_SCHEMES", "FULL", "KERNEL_TOLERANCE_PATH", "LARGE",
    "LARGE_RESULTS_PATH", "LR_SWEEP_PATH",
    "NEW_SCHEMES",
    "PRIMARY_PROTOCOL", "PROTOCOLS", "QUICK", "RESULTS_PATH", "SCHEMES", "SCHEME_SETTINGS",
    "VARIANTS", "StudyConfig",
]

#: The BOS token id; bytes are 0–255, so the input vocabulary has 257 ids.
BOS = 256
#: Press et al.'s two evaluation protocols (see the package docstring).
PROTOCOLS = ("nonoverlapping", "sliding")
#: The protocol of the primary verdicts: every scored byte sees at least ``n / 2`` bytes of
#: context at every length ``n``, so a longer window earns no early-token bonus. The
#: non-overlapping verdicts are secondary. Fixed before the study's second run was read.
PRIMARY_PROTOCOL = "sliding"

#: The trained schemes, each mapped to the :class:`posenc.model.TinyDecoder` arguments it
#: adds to the shared ones, as a function of the study's settings and the depth. The first
#: six are the sources'; :data:`NEW_SCHEMES` are the designs models adopted since.
SCHEMES = {
    "none": lambda cfg, depth: {"position": "none"},
    "sinusoidal": lambda cfg, depth: {"position": "sinusoidal"},
    "learned": lambda cfg, depth: {"position": "learned"},
    "rope": lambda cfg, depth: {"position": "rope"},
    "alibi": lambda cfg, depth: {"position": "alibi"},
    "t5": lambda cfg, depth: {"position": "t5"},
    # p-RoPE (Barbero et al. 2025): only the fastest p of the pairs rotate.
    "p-rope": lambda cfg, depth: {"position": "rope", "rope_fraction": cfg.p_rope_fraction},
    # SmolLM3: every nope_interval-th layer has no positions, all layers global.
    "rope-nope": lambda cfg, depth: {"position": "rope",
                                     "nope_layers": cfg.nope_layers(depth)},
    # Cohere's RNoPE-SWA and transformers' cohere2 family (Llama 4 with chunks instead):
    # RoPE layers in a sliding window, NoPE layers global.
    "rope-swa-nope": lambda cfg, depth: {"position": "rope",
                                         "nope_layers": cfg.nope_layers(depth),
                                         "rope_window": cfg.hybrid_rope_window},
    # p-RoPE at Barbero et al.'s best fraction (their 0.75-RoPE), an exploratory arm.
    "p-rope-0.75": lambda cfg, depth: {"position": "rope",
                                       "rope_fraction": cfg.p_rope_fraction_barbero},
    # FIRE (Li et al. 2024): a learned MLP of the normalised log distance.
    "fire": lambda cfg, depth: {"position": "fire", "fire_mlp_width": cfg.fire_mlp_width,
                                "fire_init_c": cfg.fire_init_c},
}
#: The schemes of 2024–26, added to the study after its first six (chapter 10, "What
#: 2024–26 added"); their settings were fixed before any of them was evaluated past ``L``.
NEW_SCHEMES = ("p-rope", "rope-nope", "rope-swa-nope", "fire")
#: Arms added after the :data:`NEW_SCHEMES` results were read (so not pre-registered; the
#: chapter labels their comparisons exploratory): p-RoPE at the fraction Barbero et al.
#: found best (0.75), beside Gemma 4's 0.25 of :data:`NEW_SCHEMES`.
EXPLORATORY_SCHEMES = ("p-rope-0.75",)
#: The settings that only one scheme reads (a change re-runs that scheme's jobs alone).
SCHEME_SETTINGS = {
    "p-rope": ("p_rope_fraction",),
    "p-rope-0.75": ("p_rope_fraction_barbero",),
    "rope-nope": ("nope_interval",),
    "rope-swa-nope": ("nope_interval", "hybrid_rope_window"),
    "fire": ("fire_mlp_width", "fire_init_c"),
}

#: The evaluation variants, each name mapped to (trained scheme of :data:`SCHEMES`,
#: evaluation-time change).
#: Changes: ``None``; ``"interpolate"`` (learned table stretched to ``n``); a RoPE scaling
#: method of :data:`posenc.scaling.ROPE_SCALING` with ``s = n / L`` (``"linear"`` = PI,
#: ``"ntk_aware"``, ``"yarn"``); ``"dynamic_ntk"`` (configured factor
#: ``StudyConfig.dynamic_factor``, base recomputed from ``n``); ``"yarn-freq"`` /
#: ``"yarn-temp"`` (YaRN's frequencies with attention factor 1 / the trained frequencies
#: with YaRN's attention factor); ``"window"`` (attention to the last ``L`` keys only);
#: ``"fixed-normaliser"`` (FIRE with its normaliser frozen at the threshold: no progressive
#: interpolation past it, an exploratory ablation added after FIRE's results were read);
#: ``"ft"``, ``"ft+linear"``, ``"ft+yarn"`` (fine-tuned at ``finetune_len``, see
#: :func:`~posenc.experiments.finetune`; ``"ft"`` alone also for ALiBi, the control for
#: comparing a fine-tuned RoPE with ALiBi at ``finetune_len``). The table is data: a new
#: scheme or scaling method is one more entry (and, for a new change, one more case in
#: ``forward_kwargs`` in ``posenc/experiments/training.py``).
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
    "p-rope": ("p-rope", None),
    "p-rope-0.75": ("p-rope-0.75", None),
    "rope-nope": ("rope-nope", None),
    "rope-swa-nope": ("rope-swa-nope", None),
    "fire": ("fire", None),
    "fire+fixed-norm": ("fire", "fixed-normaliser"),
}


@dataclasses.dataclass(frozen=True)
class StudyConfig:
    """Everything that decides the numbers of a study (written into the results file).

    ``variants`` are evaluated with both protocols except those in ``nonoverlapping_only``.
    ``depths`` × ``seeds`` × schemes are trained with the same ``steps`` (a depth listed
    in ``seeds_at_depth`` trains its own seeds instead, :meth:`seeds_for`; an entry for a
    depth not in ``depths`` is ignored); the T5 bias is
    causal with ``t5_num_buckets`` and ``t5_max_distance`` (default ``L/4``, T5's own ratio
    of 128 to 512).

    Scored bytes (:func:`~posenc.experiments.eval_spans`): ``nonoverlapping_spans`` spans
    of ``max(lengths)`` bytes for the non-overlapping protocol (a window of ``16L`` scores
    ``16L`` consecutive bytes), ``sliding_spans`` shorter spans of ``sliding_span_bytes``
    for the sliding protocol, each span in its own validation file. Sliding windows advance
    by ``min(n / sliding_fraction, sliding_span_bytes)``.

    Fine-tunes use ``finetune_len`` with the same bytes per step as training, a constant
    ``finetune_lr`` after ``finetune_warmup`` steps. One run per method lasts
    ``max(finetune_sweep)`` steps; its checkpoints after each of ``finetune_sweep`` steps
    are the shorter fine-tunes (the learning rate does not depend on the run's length),
    scored at ``sweep_multiples`` × ``L``; the ``"ft"`` variants are the checkpoint after
    ``finetune_steps``.

    The far-context probe (:func:`~posenc.experiments.far_context_probe`) runs
    ``probe_variants`` in windows of ``probe_multiples`` × ``L`` at the ``probe_distances``
    that fit, on ``probe_examples`` windows each ending with a target of
    ``probe_target_bytes``.

    Training losses are averaged over windows of ``loss_every`` steps for the loss curves;
    the position-loss curve at the longest length is averaged over ``position_bins`` bins.

    The schemes of :data:`NEW_SCHEMES`: p-RoPE rotates the fastest ``p_rope_fraction`` of
    the pairs (0.25, Gemma 4's value: 2 of a 16-channel head's 8 pairs; the exploratory
    ``"p-rope-0.75"`` rotates ``p_rope_fraction_barbero`` = 0.75, 6 of 8); the hybrids drop
    positions in every ``nope_interval``-th layer (2: the production interval of 4 would
    leave a 2-layer model without a NoPE layer), ``"rope-swa-nope"`` also restricts its RoPE
    layers to the last ``hybrid_rope_window`` keys (``L / 2``: a window shorter than the
    training length, so those layers never meet a distance they were not trained on, at any
    evaluation length — the point of the design); FIRE has the paper's MLP width
    ``fire_mlp_width`` and initial ``c = fire_init_c``, its threshold starting at ``L``.
    """

    variants: tuple[str, ...] = tuple(VARIANTS)
    nonoverlapping_only: tuple[str, ...] = (
        "rope+yarn-freq", "rope+yarn-temp", "sinusoidal+window", "rope+window",
        "alibi+window", "t5+window",
    )
    depths: tuple[int, ...] = (2, 4)
    seeds: tuple[int, ...] = (0, 1, 2)
    seeds_at_depth: tuple[tuple[int, tuple[int, ...]], ...] = ()
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
    nonoverlapping_spans: int = 16
    sliding_spans: int = 64
    sliding_span_bytes: int = 256
    sliding_fraction: int = 2
    dynamic_factor: float = 2.0
    finetune_len: int = 256
    finetune_steps: int = 50
    finetune_sweep: tuple[int, ...] = (5, 10, 25, 50, 100, 200)
    sweep_multiples: tuple[int, ...] = (4,)
    finetune_lr: float = 3e-4
    finetune_warmup: int = 5
    probe_variants: tuple[str, ...] = (
        "nope", "sinusoidal", "learned", "learned+interp", "rope", "rope+pi", "rope+ntk",
        "rope+dynamic-ntk", "rope+yarn", "rope+window", "rope+ft", "rope+pi+ft",
        "rope+yarn+ft", "alibi", "alibi+window", "alibi+ft", "t5", "p-rope", "p-rope-0.75",
        "rope-nope", "rope-swa-nope", "fire",
    )
    probe_multiples: tuple[int, ...] = (1, 4)
    probe_distances: tuple[int, ...] = (8, 16, 32, 64, 128, 192)
    probe_examples: int = 64
    probe_target_bytes: int = 16
    t5_num_buckets: int = 16
    t5_max_distance: int = 16
    loss_every: int = 50
    position_bins: int = 32
    p_rope_fraction: float = 0.25
    p_rope_fraction_barbero: float = 0.75
    nope_interval: int = 2
    hybrid_rope_window: int = 32
    fire_mlp_width: int = 32
    fire_init_c: float = 0.1

    def seeds_for(self, depth: int) -> tuple[int, ...]:
        """The seeds trained at ``depth``: its entry in ``seeds_at_depth``, else ``seeds``."""
        return dict(self.seeds_at_depth).get(depth, self.seeds)

    def nope_layers(self, depth: int) -> tuple[int, ...]:
        """The layers without positions in the hybrids: ``i`` with ``(i + 1) % interval ==
        0``, the rule of ``transformers``' Llama 4 and SmolLM3 configs."""
        return tuple(i for i in range(depth) if (i + 1) % self.nope_interval == 0)

    def to_dict(self) -> dict:
        def plain(v):
            return [plain(x) for x in v] if isinstance(v, tuple) else v
        return {k: plain(v) for k, v in dataclasses.asdict(self).items()}

    @property
    def lengths(self) -> tuple[int, ...]:
        return tuple(m * self.train_len for m in self.multiples)

    def span_bytes(self, protocol: str) -> int:
        """Bytes per scored span under ``protocol``."""
        return max(self.lengths) if protocol == "nonoverlapping" else self.sliding_span_bytes

    def span_count(self, protocol: str) -> int:
        """Number of scored spans under ``protocol``."""
        return self.nonoverlapping_spans if protocol == "nonoverlapping" \
            else self.sliding_spans

    def stride(self, seq_len: int, protocol: str) -> int:
        """How far the windows of ``seq_len`` tokens advance (= scored bytes per window)."""
        if protocol == "nonoverlapping":
            return seq_len
        return min(seq_len // self.sliding_fraction, self.sliding_span_bytes)


#: The configuration of the committed study (``python -m posenc.experiments``): depths 2
#: and 4; five seeds at 2 layers, three at 4 (seeds 3 and 4 were added at 2 layers only,
#: issue 30: the 4-layer half would have cost more than the CPU budget allowed).
FULL = StudyConfig(seeds=(0, 1, 2, 3, 4), seeds_at_depth=((4, (0, 1, 2)),))
#: The reduced configuration the tests re-run end to end (``--quick``).
QUICK = StudyConfig(
    variants=("sinusoidal", "learned", "learned+interp", "rope", "rope+pi", "rope+ntk",
              "rope+yarn", "rope+window", "rope+yarn+ft", "alibi"),
    nonoverlapping_only=("rope+window",),
    depths=(2,),
    seeds=(0,),
    multiples=(1, 4, 8),
    steps=400,
    warmup=40,
    nonoverlapping_spans=8,
    sliding_spans=16,
    finetune_sweep=(5, 10),
    finetune_steps=10,
    probe_variants=("rope", "rope+window", "rope+yarn+ft", "alibi"),
    probe_multiples=(1, 4),
    probe_distances=(8, 32, 128),
    probe_examples=16,
    position_bins=8,
)


#: A larger configuration for a GPU (``python -m posenc.experiments --config large``): twice
#: the width and training length, head width 32, depths 4 and 8, five seeds, four times the
#: training bytes; its learning rate is chosen by :func:`~posenc.experiments.tune_lr` at
#: ``L`` in the same run.
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
    sliding_span_bytes=512,
    finetune_len=512,
    finetune_steps=100,
    finetune_sweep=(10, 20, 50, 100, 200, 400),
    t5_max_distance=32,
    probe_target_bytes=32,
    probe_distances=(16, 32, 64, 128, 256, 384),
)

_DATA = Path(__file__).resolve().parent.parent / "data"
#: The committed results of the full study. They ship inside the package, so a chapter reads
#: them wherever ``posenc`` is installed (a local clone, Binder, Colab).
RESULTS_PATH = _DATA / "extrapolation.json"
#: Where ``--config large`` writes by default (nothing is committed there: that run needs
#: a GPU to finish in minutes).
LARGE_RESULTS_PATH = _DATA / "extrapolation_large.json"
#: Where ``python -m posenc.experiments --tune-lr`` writes its table.
LR_SWEEP_PATH = _DATA / "lr_sweep.json"
#: Where ``python scripts/kernel_tolerance.py`` writes how far chosen jobs of the committed
#: study move under other CPU kernels (read by chapter 10).
KERNEL_TOLERANCE_PATH = _DATA / "kernel_tolerance.json"
