"""The oracle of the key sweep: every position-relevant key a family's config accepts, moved.

The family sweep (:mod:`booktools.hf_sweep`, ``tests/test_hf_sweep.py``) checks each family
on its *default* config. Published checkpoints carry keys the defaults never set, so this
module moves each key, one at a time, through a few valid values and checks posenc against
what ``transformers`` then does (the same :func:`booktools.hf_sweep.observe` /
:func:`booktools.hf_sweep.compare`).

**Which keys** (:func:`discover`) — nothing is hand-listed per family. For the family's text
config class ``cls``:

* its dataclass fields, and the public attributes a default instance carries;
* the legacy keys its code reads from ``kwargs``: every ``kwargs.pop("k")``,
  ``kwargs.get("k")``, ``kwargs.setdefault("k")``, ``kwargs["k"]`` and ``"k" in kwargs`` in
  the source of ``cls`` and its ``transformers`` bases below ``PreTrainedConfig`` (so the
  RoPE mixin's ``rope_scaling`` / ``rope_theta`` / ``partial_rotary_factor`` too);
* the keys the family's modeling module reads (``config.k``, ``getattr(config, "k")``) when
  they name RoPE, NoPE, windows or layer types (:data:`MODELING_NAMES`).

A key is a *candidate* when its name matches :data:`POSITION_NAMES` and not
:data:`NOT_POSITION_NAMES`. It is *position-relevant* when at least one of its variants
changes what ``transformers`` does with positions — the rotary tables, which layers call
the rotary function and with which tensors, the window the attention receives
(:func:`same_truths`); candidates no variant moves are reported as *inert* (still checked:
posenc must then give the default's answer).

**Which values** (:func:`variants`): a rule per name (bases 1e6 or 5e5, rotated fractions and
widths halved, head sizes halved, windows 64 and null, switches toggled, intervals 2 or 3,
layer-type lists rotated by one and spelled with ``transformers``' legacy names, index lists,
NoPE flag lists, the string values the source compares the key with), and every
``rope_type`` of ``ROPE_INIT_FUNCTIONS`` with its parameters (YaRN also with
``beta_fast == beta_slow`` and with an ``mscale`` pair), the legacy ``rope_scaling`` in both
spellings, and the family's own RoPE-dict keys (Hunyuan's ``alpha`` ...). A key that acts
only with another moves with it (Qwen 2's window keys with ``use_sliding_window`` on; a NoPE
switch of a family whose default has no attention layer with attention layers listed).
Values ``transformers`` itself refuses (its config class or rotary module raises) are
counted, not checked. Each family also gets one variant without any candidate key in its
config.json (``(no position keys)``: every default is the family's).

**How** (:func:`check`): the variant's config is built by ``transformers`` (the class with
the override kwargs: that is how legacy keys are translated) on a slimmed layer count, its
layers observed, and posenc's :func:`~posenc.hf_config.layer_specs` compared on the config
object *and* on the ``config.json`` a checkpoint of that shape would carry: the baseline's
saved dict with the keys the override changed dropped and the override written as the file
writes it (legacy keys untranslated). Variants that change nothing but the RoPE dict reuse
the baseline's attention calls with fresh tables (:func:`booktools.hf_sweep.retable`).
"""

from __future__ import annotations

import ast
import contextlib
import copy
import dataclasses
import functools
import inspect
import re
import warnings
from dataclasses import dataclass, field

import torch

from booktools import hf_sweep

#: Names of position-relevant keys (a key is a candidate when its name matches).
POSITION_NAMES = re.compile(
    r"rope|rotary|theta|base_freq|partial|head_dim|sliding|window|layer_types|_idxs?$|"
    r"_indices$|attn_layer|attention_layers|full_attn_idxs|nope|no_rope|"
    r"position_embedding_type|interleave|pattern|interval|attention_chunk_size|every_n|"
    r"group_size|block_type|local_attention|global_attn")
#: ... unless the name says it is about something else (experts, SSM/conv blocks, other
#: modalities, the sparse-attention indexer, values, feed-forward chunking, AltUp).
NOT_POSITION_NAMES = re.compile(
    r"mamba|linear_|conv|ssm|vision|audio|image|video|expert|mtp|router|^_|vocab|moe|"
    r"index|compress|mlp|feed_forward|^v_|altup|sparsity|ignore_keys|intermediate|"
    r"alpha_factor|beta_factor|^qk_head_dim$|cross_layer")
#: Keys the modeling code reads that count as accepted keys (the rest of what it reads is
#: either a field already or another sub-config's business).
MODELING_NAMES = re.compile(
    r"rope|rotary|nope|position_embedding_type|sliding_window$|layer_types|head_dim$|"
    r"attention_chunk_size")
_KWARG_READS = (
    re.compile(r"kwargs\.(?:pop|get|setdefault)\(\s*[\"'](\w+)[\"']"),
    re.compile(r"kwargs\[\s*[\"'](\w+)[\"']\s*\]"),
    re.compile(r"[\"'](\w+)[\"']\s+(?:not\s+)?in\s+kwargs"),
)
_CONFIG_READS = (
    re.compile(r"\bconfig\.(\w+)"),
    re.compile(r"getattr\(\s*(?:self\.)?config\s*,\s*[\"'](\w+)[\"']"),
)
#: The rope types a variant tries (transformers' ROPE_INIT_FUNCTIONS; "default" is the
#: baseline) with the parameters each needs. original_max_position_embeddings is above the
#: positions observed (2048) so every table is the one transformers builds at load time.
ROPE_TYPE_VARIANTS = (
    ("linear", {"rope_type": "linear", "factor": 4.0}),
    ("dynamic", {"rope_type": "dynamic", "factor": 2.0}),
    ("yarn", {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}),
    ("yarn beta_fast == beta_slow", {"rope_type": "yarn", "factor": 4.0, "beta_fast": 1.0,
                                     "beta_slow": 1.0,
                                     "original_max_position_embeddings": 4096}),
    ("yarn mscale, truncate false", {"rope_type": "yarn", "factor": 40.0, "mscale": 1.0,
                                     "mscale_all_dim": 1.0, "truncate": False,
                                     "original_max_position_embeddings": 4096}),
    ("llama3", {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                "high_freq_factor": 4.0, "original_max_position_embeddings": 4096}),
    ("longrope", {"rope_type": "longrope", "factor": 4.0,
                  "original_max_position_embeddings": 4096}),
    ("proportional", {"rope_type": "proportional"}),
)
#: Keys a rope-type variant replaces in each RoPE dict (the others, e.g. mrope_section, stay).
_SCALING_KEYS = frozenset({
    "rope_type", "type", "factor", "original_max_position_embeddings", "attention_factor",
    "beta_fast", "beta_slow", "short_factor", "long_factor", "low_freq_factor",
    "high_freq_factor", "mscale", "mscale_all_dim", "truncate", "alpha",
})
#: Layer types without attention (a NoPE switch on a baseline of only these is moved with
#: attention layers listed).
_NO_ATTENTION_TYPES = frozenset({"linear_attention", "mamba", "conv", "recurrent"})
#: Fewest layers of the slimmed baseline (enough for index lists such as [1, 3]).
MIN_LAYERS = 4


# --------------------------------------------------------------------------- discovery


@functools.cache
def module_classes(module_name: str) -> dict[str, str]:
    """``{class name: source}`` of a module's top-level classes (parsed once per module:
    ``inspect.getsource`` on a class re-parses the whole file every time)."""
    import sys

    src = inspect.getsource(sys.modules[module_name])
    lines = src.splitlines(keepends=True)
    return {node.name: "".join(lines[node.lineno - 1: node.end_lineno])
            for node in ast.parse(src).body if isinstance(node, ast.ClassDef)}


@functools.cache
def _module_source(module_name: str) -> str:
    import sys

    return inspect.getsource(sys.modules[module_name])


def _sources(cls) -> list[str]:
    """The source of ``cls`` and of its ``transformers`` bases below ``PreTrainedConfig``."""
    from transformers.configuration_utils import PreTrainedConfig

    out = []
    for k in cls.__mro__:
        if k is PreTrainedConfig or k is object or not k.__module__.startswith("transformers"):
            continue
        src = module_classes(k.__module__).get(k.__name__)
        if src:
            out.append(src)
    return out


def accepted_keys(cfg) -> dict[str, str]:
    """Every key ``type(cfg)`` accepts, with where it was found: ``field`` (dataclass
    field), ``attribute`` (a default instance's public attribute), ``legacy`` (read from
    ``kwargs`` in the class's source), ``modeling`` (read by the modeling module)."""
    cls = type(cfg)
    found: dict[str, str] = {}
    if dataclasses.is_dataclass(cls):
        for f in dataclasses.fields(cls):
            found.setdefault(f.name, "field")
    for k in vars(cfg):
        found.setdefault(k, "attribute")
    for src in _sources(cls):
        for pattern in _KWARG_READS:
            for k in pattern.findall(src):
                found.setdefault(k, "legacy")
    module = hf_sweep._modeling(cfg.model_type)
    if module is not None:
        src = _module_source(module.__name__)
        for pattern in _CONFIG_READS:
            for k in pattern.findall(src):
                if MODELING_NAMES.search(k):
                    found.setdefault(k, "modeling")
    return found


_ROPE_DICT_READS = (
    re.compile(r"rope_parameters(?:\[[^\]]+\])?\.get\(\s*[\"'](\w+)[\"']"),
    re.compile(r"rope_parameters(?:\[[^\]]+\])?\[\s*[\"'](\w+)[\"']\s*\]"),
)


def rope_dict_keys(cfg) -> list[str]:
    """RoPE-dict keys of the family's own that its modeling module reads (beyond
    ``transformers``' ``RopeParameters``: Hunyuan's ``alpha``, Phi-MoE's ``short_mscale``,
    Ministral 3's ``llama_4_scaling_beta``)."""
    from transformers.modeling_rope_utils import RopeParameters

    module = hf_sweep._modeling(cfg.model_type)
    if module is None:
        return []
    src = _module_source(module.__name__)
    std = set(RopeParameters.__annotations__) | {"type"}
    return sorted({k for p in _ROPE_DICT_READS for k in p.findall(src)} - std)


def discover(cfg) -> dict[str, str]:
    """The candidate position keys of ``cfg``'s class (see the module docstring), and the
    family's own RoPE-dict keys as ``rope_parameters.<key>``."""
    found = {k: src for k, src in sorted(accepted_keys(cfg).items())
             if POSITION_NAMES.search(k) and not NOT_POSITION_NAMES.search(k)}
    if "rope_parameters" in found:
        for k in rope_dict_keys(cfg):
            found[f"rope_parameters.{k}"] = "RoPE dict (modeling)"
    return found


def _compared_strings(cfg, key: str) -> list[str]:
    """String values the family's config or modeling source compares ``key`` with."""
    module = hf_sweep._modeling(cfg.model_type)
    srcs = _sources(type(cfg)) + ([_module_source(module.__name__)] if module else [])
    pat = re.compile(rf"{key}\s*(?:==|!=|\bin\b|\bnot in\b)\s*[\(\[{{]?\s*[\"'](\w+)[\"']"
                     rf"((?:\s*,\s*[\"']\w+[\"'])*)")
    out: list[str] = []
    for src in srcs:
        for first, rest in pat.findall(src):
            for s in [first, *re.findall(r"[\"'](\w+)[\"']", rest)]:
                if s not in out:
                    out.append(s)
    return out


# --------------------------------------------------------------------------- variants


@dataclass
class Variant:
    """One set of overrides for a family's config class (kwargs as a file carries them)."""

    key: str                 # the key the variant moves ("rope_parameters" for rope types)
    label: str               # the value in words (a rope type, "null", "64" ...)
    overrides: dict          # kwargs for the config class and keys of the file's dict
    rope_only: bool = False  # expected to change only the RoPE dict (tables-only fast path)


@dataclass
class Context:
    """What the value rules need to know about a family's slimmed baseline."""

    cfg: object                          # the baseline config object
    base: dict                           # kwargs that make the baseline (slimming)
    n: int                               # its layer count
    head_dim: int                        # q/k head width
    widths: dict = field(default_factory=dict)  # layer type (or None) -> rotated width
    rotating: bool = False               # some layer of the baseline rotates q and k


def _get(cfg, key: str):
    """``cfg.key`` or None (a heterogeneous config refuses global reads of per-layer keys)."""
    try:
        return getattr(cfg, key, None)
    except Exception:  # noqa: BLE001 - AmbiguousGlobalPerLayerAttributeError
        return None


def _num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _other_base(v) -> float:
    return 500_000.0 if v == 1_000_000.0 else 1_000_000.0


def _values(key: str, default, ctx: Context) -> list[tuple[str, object]]:
    """``[(label, value)]`` for one non-RoPE-dict key, by its name and default value."""
    n, hd = ctx.n, ctx.head_dim
    if isinstance(default, bool) or key.startswith("use_") or "interleave" in key:
        return [(str(not default), not default)]
    if key == "position_embedding_type":
        values = [s for s in _compared_strings(ctx.cfg, key) if s != default]
        values += [None] if default is not None else []
        return [(repr(v), v) for v in values]
    if re.search(r"theta|base_freq|_base$", key):
        if isinstance(default, list):
            return [("each x2", [x * 2 if _num(x) else x for x in default])]
        if isinstance(default, dict):
            return [("each x2", {k: (x * 2 if _num(x) else x) for k, x in default.items()})]
        return [(f"{_other_base(default):g}", _other_base(default))]
    if re.search(r"partial_rotary_factors$", key):
        return [("all 0.5", [0.5] * len(default))] if isinstance(default, list) else [
            ("0.5", 0.5)]
    if re.search(r"partial_rotary_factor|rotary_pct", key):
        v = 0.25 if default == 0.5 else 0.5
        return [(f"{v:g}", v)]
    if re.search(r"rotary_dim|rotary_ndims", key):
        v = hd // 4 if default == hd // 2 else hd // 2
        return [(str(v), v)]
    if "head_dim" in key:
        base = default if _num(default) else hd
        v = base // 2 if base // 2 >= 8 and base % 4 == 0 else base * 2
        return [(str(v), v)]
    if key == "layer_types":
        return _layer_type_values(default, ctx)
    if key == "no_rope_layers":
        return [("flags 1,1,0", [int(i % 3 != 2) for i in range(n)])]
    if key == "max_window_layers":
        return [("2", 2)]
    if re.search(r"_idxs?$|_indices$|_layers$", key):
        return [("[1, 3]", [1, 3])]
    if re.search(r"block_type", key):
        if isinstance(default, (list, tuple)) and len(set(default)) > 1:
            return [("rotated by one", [*default[1:], default[0]])]
        return []
    if re.search(r"interval|pattern|every_n|group_size", key):
        if isinstance(default, str):
            return [("'LG'", "LG")] if set(default) <= set("LG") else []
        v = 3 if default == 2 else 2
        return [(str(v), v)]
    if re.search(r"window|chunk_size|local_attention", key):
        if isinstance(default, list):
            return [("each 64", [64 if _num(x) else x for x in default])]
        v = 64 if default != 64 else 32
        return [(str(v), v)] + ([("null", None)] if default is not None else [])
    return []


def _layer_type_values(default, ctx: Context) -> list[tuple[str, object]]:
    from transformers.configuration_utils import _LEGACY_LAYER_TYPE_REMAP

    types = list(default or [])
    out = []
    if len(set(types)) > 1:
        out.append(("rotated by one", [*types[1:], types[0]]))
    elif types and _get(ctx.cfg, "sliding_window") is not None:
        out.append(("sliding/full", ["sliding_attention" if i % 2 == 0 else "full_attention"
                                     for i in range(ctx.n)]))
    legacy = {new: old for old, new in _LEGACY_LAYER_TYPE_REMAP.items()}
    if any(t in legacy for t in types):
        out.append(("legacy names", [legacy.get(t, t) for t in types]))
    return out


def _rope_dicts(ctx: Context, params: dict) -> object:
    """The baseline's RoPE dict with ``params`` (a rope type and its keys) in every entry."""
    rp = copy.deepcopy(_get(ctx.cfg, "rope_parameters"))
    if not isinstance(rp, dict) or not rp:
        return None
    nested = set(rp) & set(_get(ctx.cfg, "layer_types") or ())

    def one(entry, lt):
        entry = {k: v for k, v in entry.items() if k not in _SCALING_KEYS}
        entry.update(params)
        if params["rope_type"] == "longrope":
            r = ctx.widths.get(lt, ctx.widths.get(None))
            if not r:
                return None
            entry["short_factor"] = [1.0 + 0.1 * i for i in range(r // 2)]
            entry["long_factor"] = [2.0 + 0.2 * i for i in range(r // 2)]
        return entry

    if nested:
        out = {}
        for lt, entry in rp.items():
            if isinstance(entry, dict):
                new = one(entry, lt)
                if new is None:
                    return None
                out[lt] = new
            else:
                out[lt] = entry
        return out
    return one(rp, None)


def variants(ctx: Context, keys: dict[str, str]) -> list[Variant]:
    """Every variant of one family (see the module docstring)."""
    out: list[Variant] = []
    for key in keys:
        if key in ("rope_parameters", "rope_scaling") or key.startswith("rope_parameters."):
            continue
        default = _get(ctx.cfg, key)
        for label, value in _values(key, default, ctx):
            over = {key: value}
            if key == "layer_types" and label == "sliding/full":
                over.setdefault("sliding_window", _get(ctx.cfg, "sliding_window") or 64)
            types = list(_get(ctx.cfg, "layer_types") or ["linear_attention"] * ctx.n)
            if (re.search(r"position_embedding_type|nope|no_rope|use_\w*rope", key)
                    and not ctx.rotating and "layer_types" in keys
                    and set(types) <= _NO_ATTENTION_TYPES):
                # a NoPE switch on a baseline without attention layers (Granite 4's
                # all-Mamba default): move it with every other layer an attention layer
                # (a baseline with attention layers that do not rotate, Zamba 2's hybrid
                # blocks with use_mem_rope false, moves the switch alone)
                over["layer_types"] = ["full_attention" if i % 2 else t
                                       for i, t in enumerate(types)]
                attn = Variant("layer_types", "every other layer attention",
                               {"layer_types": over["layer_types"]})
                if all(v.label != attn.label for v in out):
                    out.append(attn)  # the same layers with the switch at its default
            if "use_sliding_window" in keys and re.search(r"window", key):
                # a window key acts only with the switch on (Qwen 2's use_sliding_window,
                # max_window_layers): move it with the switch on and a sliding layer
                over.setdefault("use_sliding_window", True)
                if "max_window_layers" in keys:
                    over.setdefault("max_window_layers", ctx.n // 2)
            out.append(Variant(key, label, over))
    if "rope_parameters" in keys or "rope_scaling" in keys:
        for label, params in ROPE_TYPE_VARIANTS:
            rp = _rope_dicts(ctx, params)
            if rp is not None:
                out.append(Variant("rope_parameters", label, {"rope_parameters": rp},
                                   rope_only=True))
        types = dict(ROPE_TYPE_VARIANTS)
        extras = [k.split(".", 1)[1] for k in keys if k.startswith("rope_parameters.")]
        for extra in extras:  # 2 for this key, 1 for the family's other own keys
            key = f"rope_parameters.{extra}"
            for label, params in (("2 on the default dict", None),
                                  ("2 with dynamic", types["dynamic"]),
                                  ("2 with longrope", types["longrope"])):
                rp = _rope_dicts(ctx, params or {}) if params else copy.deepcopy(
                    _get(ctx.cfg, "rope_parameters"))
                if isinstance(rp, dict) and rp:
                    for entry in ([v for v in rp.values() if isinstance(v, dict)]
                                  if "rope_type" not in rp else [rp]):
                        entry.update({k: 1.0 for k in extras}, **{extra: 2.0})
                    out.append(Variant(key, label, {"rope_parameters": rp}, rope_only=True))
        if "rope_scaling" in keys:
            # a file of that era keeps the base and rotated fraction at the top level
            # (file_dict writes them): the config object gets them as kwargs too
            rp = _get(ctx.cfg, "rope_parameters")
            top = {k: rp[k] for k in ("rope_theta", "partial_rotary_factor")
                   if isinstance(rp, dict) and "rope_type" in rp and rp.get(k) is not None}
            for name in ("type", "rope_type"):
                out.append(Variant("rope_scaling", f"{{{name!r}: 'linear', 'factor': 4}}",
                                   {"rope_scaling": {name: "linear", "factor": 4.0}, **top}))
    for v in out:
        if re.search(r"rope_scaling|theta|base_freq|_base$", v.key):
            v.rope_only = True
    return out


# --------------------------------------------------------------------------- oracle


class Refused(Exception):
    """transformers refuses the variant itself (its config class or modules raise)."""


def build(cls, kwargs: dict):
    """``cls(**kwargs)``, warnings silenced; :class:`Refused` if transformers raises."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return cls(**copy.deepcopy(kwargs))
    except Exception as err:  # noqa: BLE001 - transformers' own refusal of the value
        raise Refused(f"config: {type(err).__name__}: {err}"[:200]) from None


def _rope_width(tr) -> int:
    w = tr.cos.shape[-1]
    return 2 * w if tr.cos.is_complex() else w


def slim_layers(default) -> int:
    """Layers of the slimmed baseline: the shortest prefix of the default's layer types that
    holds every type it has, and at least :data:`MIN_LAYERS` (every layer runs on meta)."""
    types = list(getattr(default, "layer_types", None) or ())
    first = {t: i for i, t in reversed(list(enumerate(types)))}
    return max(MIN_LAYERS, 1 + max(first.values(), default=0))


def baseline(model_type: str, repair: dict | None = None):
    """``(Context, truths)`` of the family's slimmed default (plus ``repair``), or raises
    :class:`Refused` / :class:`booktools.hf_sweep.Untraceable`."""
    default = hf_sweep.default_text_config(model_type)
    cls = type(default)
    base = dict(repair or {})
    cfg, truths = None, None
    for slim in ({"num_hidden_layers": slim_layers(default)}, {}):
        try:
            cfg = build(cls, {**base, **slim})
            if slim and cfg.num_hidden_layers != slim["num_hidden_layers"]:
                continue
            truths = with_mask_windows(cfg, hf_sweep.observe(cfg))
            base = {**base, **slim}
            break
        except (Refused, hf_sweep.Untraceable):
            if not slim:
                raise
    hd = _get(cfg, "head_dim") or cfg.hidden_size // cfg.num_attention_heads
    ctx = Context(cfg, base, len(truths), hd)
    for tr in truths:
        if tr is not None and tr.calls:
            ctx.rotating = True
            ctx.widths.setdefault(tr.layer_type, _rope_width(tr))
            ctx.widths.setdefault(None, _rope_width(tr))
    return ctx, truths


def same_truths(a, b) -> bool:
    """Whether two observations are the same as far as positions go."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if (x is None) != (y is None):
            return False
        if x is None:
            continue
        if bool(x.calls) != bool(y.calls) or x.window != y.window:
            return False
        if x.calls:
            if x.cos.shape != y.cos.shape or not torch.equal(x.cos, y.cos):
                return False
            if (x.sin is None) != (y.sin is None) or (
                    x.sin is not None and not torch.equal(x.sin, y.sin)):
                return False
            sa = [tuple(t.shape) for t in x.calls[0][1] if isinstance(t, torch.Tensor)]
            sb = [tuple(t.shape) for t in y.calls[0][1] if isinstance(t, torch.Tensor)]
            if sa != sb or x.calls[0][0] is not y.calls[0][0]:
                return False
    return True


def _without(d: dict, keys) -> dict:
    return {k: v for k, v in d.items() if k not in keys}


def _unchanged(before: dict, after: dict, *, rope: bool = False) -> dict:
    """The entries of ``before`` that ``after`` keeps as they were: the RoPE dict entry by
    entry; another dict the override changed (Gemma 4's ``per_layer_config``, which the
    class derives from ``global_head_dim``) is dropped whole, as the class derives it."""
    out = {}
    for k, v in before.items():
        if k in after and after[k] == v:
            out[k] = v
        elif isinstance(v, dict) and isinstance(after.get(k), dict) and (
                rope or k in ("rope_parameters", "rope_scaling")):
            out[k] = _unchanged(v, after[k], rope=True)
    return out


def file_dict(ctx: Context, var: Variant, cfg) -> dict:
    """The ``config.json`` of a checkpoint of the variant's shape: the baseline's saved dict
    without what the override changed (a dict such as the RoPE dict keeps its unchanged
    entries), with the override written as the file writes it. A legacy ``rope_scaling``
    file has no ``rope_parameters`` but keeps the base and rotated fraction at the top
    level, as files of that era do."""
    before, after = ctx.cfg.to_dict(), cfg.to_dict()
    d = _unchanged(before, after)
    for k in var.overrides:
        d.pop(k, None)
    rp = before.get("rope_parameters")
    if var.key == "rope_scaling":
        d.pop("rope_parameters", None)
        if isinstance(rp, dict) and "rope_type" in rp:
            for k in ("rope_theta", "partial_rotary_factor"):
                if rp.get(k) is not None:
                    d[k] = rp[k]
    d.update(copy.deepcopy(var.overrides))
    d["model_type"] = ctx.cfg.model_type
    return d


def observe_variant(ctx: Context, base_truths, var: Variant):
    """``(config object, truths)`` of a variant; :class:`Refused` where transformers
    refuses it."""
    if not var.overrides:
        return ctx.cfg, base_truths
    cfg = build(type(ctx.cfg), {**ctx.base, **var.overrides})
    fast = var.rope_only and _without(cfg.to_dict(), ("rope_parameters",)) == _without(
        ctx.cfg.to_dict(), ("rope_parameters",)) and _partials(cfg) == _partials(ctx.cfg)
    try:
        truths = hf_sweep.retable(cfg, base_truths) if fast else None
        if truths is None or any(
                t is not None and (t.cos.shape != b.cos.shape or t.cos.dtype != b.cos.dtype)
                for t, b in zip(truths, base_truths, strict=True)):
            truths = hf_sweep.observe(cfg)  # new table widths: the attention's calls change
    except hf_sweep.Untraceable as err:
        raise Refused(str(err)) from None
    return cfg, with_mask_windows(cfg, truths)


#: A model that picks one sliding-window mask for every layer from config.sliding_window
#: (Mistral's pattern); some of these attention layers do not receive the window as an
#: argument (Doge, Phi-MoE), so the window is the mask's.
_MASK_WINDOW = re.compile(r"create_causal_mask if (?:self\.)?config\.sliding_window is None "
                          r"else create_sliding_window_causal_mask")


def with_mask_windows(cfg, truths):
    """``truths`` with the window the model's own mask applies where the attention layer
    received none (the model builds a sliding-window mask for every layer from
    ``config.sliding_window``: the window is real though no attention call carries it)."""
    module = hf_sweep._modeling(cfg.model_type)
    w = _get(cfg, "sliding_window")
    if module is None or w is None or not _MASK_WINDOW.search(_module_source(module.__name__)):
        return truths
    return [dataclasses.replace(t, window=w) if t is not None and t.window is None else t
            for t in truths]


def _partials(cfg):
    rp = getattr(cfg, "rope_parameters", None) or {}
    entries = [v for v in rp.values() if isinstance(v, dict)] or [rp]
    return [e.get("partial_rotary_factor") for e in entries]


# --------------------------------------------------------------------------- checking

#: The length the tables are observed at (dynamic NTK and LongRoPE depend on it).
SEQ_LEN = int(hf_sweep.POSITIONS.max()) + 1
#: The key of each family's extra variant: the baseline's config.json without any candidate
#: key (head sizes kept: they are the architecture) or RoPE dict, so every position setting
#: is the family's default.
DEFAULTS = "(no position keys)"
#: The outcome of a family the sweep itself failed on (a failure of the test).
SWEEP_ERROR = "sweep error"
_NAMED = re.compile(r"'[A-Za-z_][\w.]*'|config\[")


@dataclass
class Outcome:
    """How one variant ended."""

    family: str
    key: str
    label: str
    outcome: str  # matched, refused, MISMATCH, untraceable, or "transformers refuses"
    detail: str = ""
    relevant: bool = False  # the variant changed what transformers does with positions


def _read(source, var: Variant, model_type: str) -> tuple[str, str, list | None]:
    from posenc.hf_config import layer_specs

    try:
        return "matched", "", layer_specs(source, seq_len=SEQ_LEN)
    except (ValueError, TypeError) as err:
        msg = str(err)
        named = var.key in msg or repr(model_type) in msg or _NAMED.search(msg)
        return ("refused" if named else "MISMATCH"), (
            msg if named else f"refused without naming a key or family: {msg}"), None


#: Top-level RoPE keys a saved config may carry besides the candidates.
_ROPE_KEYS = {"rope_parameters", "rope_scaling", "rope_theta", "partial_rotary_factor"}


def check(model_type: str, ctx: Context, base_truths, var: Variant,
          keys: dict[str, str]) -> Outcome:
    """Build, observe and read one variant (object and config.json)."""
    out = Outcome(model_type, var.key, var.label, "matched")
    try:
        cfg, truths = observe_variant(ctx, base_truths, var)
    except Refused as err:
        out.outcome, out.detail = "transformers refuses", str(err)
        return out
    out.relevant = not same_truths(truths, base_truths)
    if var.key == DEFAULTS:
        file = _without(ctx.cfg.to_dict(),
                        {k for k in keys if "head_dim" not in k} | _ROPE_KEYS)
        file["model_type"] = ctx.cfg.model_type
    else:
        file = file_dict(ctx, var, cfg)
    results = []
    memo: dict = {}
    for label, source in (("config object", cfg), ("config.json", file)):
        outcome, detail, specs = _read(source, var, model_type)
        if specs is not None:
            problems = hf_sweep.compare(specs, truths, memo)
            if problems and all(hf_sweep.UNTRACEABLE in p for p in problems):
                outcome, detail = "untraceable", problems[0]
            elif problems:
                outcome, detail = "MISMATCH", "; ".join(
                    [p for p in problems if hf_sweep.UNTRACEABLE not in p][:2])
        results.append((outcome, f"{label}: {detail}" if detail else ""))
    rank = {"MISMATCH": 0, "untraceable": 1, "refused": 2, "matched": 3}
    results.sort(key=lambda r: rank[r[0]])
    out.outcome = results[0][0]
    out.detail = " | ".join(d for o, d in results if d and o == out.outcome)
    return out


@contextlib.contextmanager
def _quiet():
    """transformers' logger at errors only while a family's variants are built (the values
    are moved on purpose; its warnings about them would bury the test output)."""
    from transformers.utils import logging

    before = logging.get_verbosity()
    logging.set_verbosity_error()
    try:
        yield
    finally:
        logging.set_verbosity(before)


def sweep_family(model_type: str, repair: dict | None = None) -> tuple[list[Outcome], dict]:
    """Every variant of one family: ``(outcomes, candidate keys)``; a family whose slimmed
    baseline transformers cannot build gives one outcome with the reason."""
    with hf_sweep.one_thread(), _quiet():
        try:
            ctx, truths = baseline(model_type, repair)
        except (Refused, hf_sweep.Untraceable) as err:
            return [Outcome(model_type, "(baseline)", "", "transformers refuses", str(err))], {}
        try:
            keys = discover(ctx.cfg)
            found = [Variant(DEFAULTS, "model_type only", {})] + variants(ctx, keys)
            return [check(model_type, ctx, truths, v, keys) for v in found], keys
        except Exception as err:  # noqa: BLE001 - the sweep's own failure, reported
            return [Outcome(model_type, "(sweep)", "", SWEEP_ERROR,
                            f"{type(err).__name__}: {err}"[:300])], {}
