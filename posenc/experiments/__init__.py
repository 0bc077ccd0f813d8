"""The measured length-extrapolation study: byte-level language modelling on real text.

    python -m posenc.experiments                      # full study → posenc/data/extrapolation.json
    python -m posenc.experiments --quick --out x.json # the reduced run the tests use
    python -m posenc.experiments --tune-lr            # the learning-rate choice (at L only)
    python -m posenc.experiments --config large       # a larger configuration for a GPU

One idea per module: ``config`` (the variants and :class:`StudyConfig`), ``corpus``,
``training`` (training, fine-tunes, evaluation-time changes), ``evaluation`` (scored spans and
protocols), ``probe`` (far-context retrieval), ``intervals`` (span × seed intervals),
``verdicts`` (the three-way rule and the claims), ``results`` (the file and summaries),
``study`` (the run), ``tuning`` (the learning rate) and ``cli``. Every public name is
importable from ``posenc.experiments``.

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

**Evaluation** on the validation text at ``L, 2L, 4L, 8L, 16L``, in bits per byte, with Press
et al.'s (2022) two protocols, each on its own fixed spans, one span per validation file
(:func:`eval_spans`), the same bytes at every length:

- ``"nonoverlapping"``: consecutive windows of ``n`` tokens over spans of ``16L`` bytes,
  every byte scored — early bytes of each window see little context (the "early-token
  curse", Press et al., 2021);
- ``"sliding"``: windows of ``n`` tokens over shorter spans, moved by at most ``n / 2``, only
  the bytes past the stride's start scored, so every scored byte sees at least ``n / 2``
  bytes of context (a cheaper form of sliding by one token, where every token sees
  ``n − 1``). This is the primary protocol of the verdicts (:data:`PRIMARY_PROTOCOL`).

Scores are stored per span; every difference gets a paired span × seed interval
(:func:`paired_interval`: a random-effects seed × span interval with a Cochran–Cox
critical value, :func:`crossed_interval`, whose coverage a test simulates) and every
claim the three-way verdict of :func:`verdict` (*holds* / *fails* only when the interval
clears :data:`MARGIN`, *undecided* otherwise).
The mean loss at each position inside the longest non-overlapping window is kept (binned).

**Variants** (:data:`VARIANTS`) are evaluation-time changes of a trained model — the
learned table stretched by interpolation; RoPE with PI, NTK-aware and YaRN frequencies for
``s = n / L`` at every length ``n``, dynamic NTK as ``transformers`` computes it for a
configured factor, YaRN's two halves one at a time; attention restricted to the last ``L``
keys (the window ablation) — and models fine-tuned at ``finetune_len`` with PI or YaRN
scaling for ``s = finetune_len / L`` (or with no scaling, the control; ALiBi too), then
evaluated with ``s = max(finetune_len, n) / L``. One fine-tune per method runs
``max(finetune_sweep)`` steps at a constant learning rate after warm-up; its checkpoints are
the shorter fine-tunes of the budget sweep.

**Probe.** :func:`far_context_probe` asks how far back a model's prediction reads real text:
inside the training window, and up to ``3L`` back in windows of ``4L`` (see
:mod:`posenc.experiments.probe`).

**Determinism.** Every (depth, seed, scheme) job is independent: fixed seeds, one torch
thread, data drawn on the CPU from seeded generators, results rounded to 4 decimals and
written with sorted keys. Jobs run in ``workers`` processes (2: both cores of the reference
machine) and are merged in a fixed order, so the command reproduces the committed file
byte for byte on the same CPU type and torch build; on other hardware the numbers agree
within a tolerance (stated in chapter 10), not to the byte.
"""

from . import config as _config
from . import intervals as _intervals
from . import probe as _probe
from . import tuning as _tuning
from . import verdicts as _verdicts
from .cli import main as main
from .config import StudyConfig
from .corpus import corpus_files, load_corpus, sample_batch
from .evaluation import eval_spans, evaluate
from .intervals import (
    bootstrap_interval,
    crossed_interval,
    crossed_variance,
    paired_interval,
    simulate_coverage,
    span_standard_error,
    t_quantile,
)
from .probe import far_context_probe, probe_distances, probe_gain, probe_starts, probe_windows
from .results import (
    dumps_results,
    load_results,
    paired_difference,
    save_results,
    span_matrix,
    summarize,
)
from .study import job_outputs, merge_jobs, run_study, versions
from .training import build_model, finetune, forward_kwargs, train
from .tuning import tune_lr
from .verdicts import check_claims, claims_table, verdict

# The package's constants, re-bound here with their descriptions so that the API page
# documents them under ``posenc.experiments`` (the same objects as in the submodules).
#: The BOS token id (bytes are 0–255, so the input vocabulary has 257 ids).
BOS = _config.BOS
#: Press et al.'s two evaluation protocols, ``("nonoverlapping", "sliding")``.
PROTOCOLS = _config.PROTOCOLS
#: The protocol of the primary verdicts (``"sliding"``: no early-token bonus at longer
#: windows); the non-overlapping verdicts are secondary.
PRIMARY_PROTOCOL = _config.PRIMARY_PROTOCOL
#: Every evaluation variant, mapped to (trained scheme, evaluation-time change); the
#: changes are described where the table is defined, ``posenc/experiments/config.py``.
VARIANTS = _config.VARIANTS
#: The trained schemes, each mapped to the ``TinyDecoder`` arguments it adds (a function of
#: the study's settings and the depth).
SCHEMES = _config.SCHEMES
#: The schemes of 2024–26 (p-RoPE, two RoPE/NoPE hybrids, FIRE), added after the first six.
NEW_SCHEMES = _config.NEW_SCHEMES
#: Exploratory arms, added after the new schemes' results were read (p-RoPE at 0.75).
EXPLORATORY_SCHEMES = _config.EXPLORATORY_SCHEMES
#: The settings that only one scheme reads.
SCHEME_SETTINGS = _config.SCHEME_SETTINGS
#: The configuration of the committed study (``python -m posenc.experiments``): depths 2
#: and 4; five seeds at 2 layers, three at 4.
FULL = _config.FULL
#: The reduced configuration the tests re-run end to end (``--quick``).
QUICK = _config.QUICK
#: A larger configuration for a GPU (``--config large``).
LARGE = _config.LARGE
#: The committed results of the full study (shipped inside the package).
RESULTS_PATH = _config.RESULTS_PATH
#: Where ``--config large`` writes by default.
LARGE_RESULTS_PATH = _config.LARGE_RESULTS_PATH
#: Where ``python -m posenc.experiments --tune-lr`` writes its table.
LR_SWEEP_PATH = _config.LR_SWEEP_PATH
#: The measured drift of chosen committed jobs under other CPU kernels
#: (``scripts/kernel_tolerance.py``).
KERNEL_TOLERANCE_PATH = _config.KERNEL_TOLERANCE_PATH
#: Learning rates compared by :func:`tune_lr` (validation at ``L`` only).
LR_CANDIDATES = _tuning.LR_CANDIDATES
#: Bits per byte within which two results count as "the same level" in :data:`CLAIMS`.
MARGIN = _verdicts.MARGIN
#: The sources' claims as comparisons ``(claim, a, multiple_a, b, multiple_b, relation)``,
#: fixed before the study first ran; see :mod:`posenc.experiments.verdicts`.
CLAIMS = _verdicts.CLAIMS
#: Claims of 2024–26 on p-RoPE, the RoPE/NoPE hybrids and FIRE, same form, fixed before
#: those schemes were evaluated past ``L``.
NEW_CLAIMS = _verdicts.NEW_CLAIMS
#: Far-context gain (bits per byte) that counts as use in :func:`probe_gain`.
PROBE_MARGIN = _probe.PROBE_MARGIN
#: The interval methods of :func:`paired_interval`: ``"crossed"`` (:func:`crossed_interval`,
#: the study's since issue 30) and ``"bootstrap"`` (:func:`bootstrap_interval`, the first).
INTERVAL_METHODS = _intervals.INTERVAL_METHODS

__all__ = [
    "BOS",
    "CLAIMS",
    "EXPLORATORY_SCHEMES",
    "FULL",
    "KERNEL_TOLERANCE_PATH",
    "LARGE",
    "LARGE_RESULTS_PATH",
    "INTERVAL_METHODS",
    "LR_CANDIDATES",
    "LR_SWEEP_PATH",
    "MARGIN",
    "NEW_CLAIMS",
    "NEW_SCHEMES",
    "PRIMARY_PROTOCOL",
    "PROBE_MARGIN",
    "PROTOCOLS",
    "QUICK",
    "RESULTS_PATH",
    "SCHEMES",
    "SCHEME_SETTINGS",
    "VARIANTS",
    "StudyConfig",
    "bootstrap_interval",
    "build_model",
    "check_claims",
    "claims_table",
    "corpus_files",
    "crossed_interval",
    "crossed_variance",
    "dumps_results",
    "eval_spans",
    "evaluate",
    "far_context_probe",
    "finetune",
    "forward_kwargs",
    "job_outputs",
    "load_corpus",
    "load_results",
    "merge_jobs",
    "paired_difference",
    "paired_interval",
    "probe_distances",
    "probe_gain",
    "probe_starts",
    "probe_windows",
    "run_study",
    "sample_batch",
    "simulate_coverage",
    "save_results",
    "span_matrix",
    "span_standard_error",
    "summarize",
    "t_quantile",
    "train",
    "tune_lr",
    "verdict",
    "versions",
]
