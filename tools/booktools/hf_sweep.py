"""The oracle of the family sweep: what each ``transformers`` family does, layer by layer.

For every ``model_type`` in the pinned ``transformers`` whose modeling module defines a text
rotary-embedding class, :func:`text_families` finds the text config it reads (a multimodal
config's ``text_config``); :func:`observe` builds that family's default config, its rotary
module (on the CPU) and its base model (on the meta device: no weights, no memory), then
runs every decoder layer's attention ``forward`` on meta tensors (a repeated op answered
from memory, :mod:`booktools.meta_memo`) with the module's real
cos/sin (none where the base model opts out of its rotary module) while recording each
call of the family's own ``apply_*rotary*`` functions and the window its attention
interface receives. :func:`compare` replays every recorded call on
the CPU with random q/k and the real tables and checks it against
:func:`posenc.hf_config.apply_layer_rope` with the spec :func:`posenc.hf_config.layer_specs`
gives for that layer: whether the layer uses positions, its window, and the rotation itself
(frequencies, attention factor, rotated width, which channels, how they pair).

Nothing here is a hand-kept list of families: the list comes from ``transformers``.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib
import inspect
import types
import warnings
from dataclasses import dataclass, field

import torch

#: Positions the tables are compared at (float32 angles: tolerance below scales with them).
POSITIONS = torch.tensor([[0, 1, 2, 5, 17, 100, 1000, 2047]])
#: Class-name words of rotary modules that do not belong to a text model.
NON_TEXT = ("Vision", "Audio", "ViT", "DiT", "SaProt", "Encoder", "Speech")
#: transformers' task mappings whose models read text (a family is a text family if its
#: model_type, or its text config's, is in one of them).
TEXT_MAPPINGS = (
    "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES", "MODEL_FOR_MASKED_LM_MAPPING_NAMES",
    "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES", "MODEL_FOR_MULTIMODAL_LM_MAPPING_NAMES",
    "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES", "MODEL_FOR_TEXT_ENCODING_MAPPING_NAMES",
    "MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES",
)

#: Families whose layers the meta-device sweep cannot run, checked instead against the
#: family's own modules on a published config (the test that does it is named).
#: tests/test_hf_sweep.py reports them as checked elsewhere and the atlas page lists them.
#: Granite-SWA and Muse: their *model* decides per layer (a base per layer_rope_theta, none
#: for theta 0), which running each attention with one rotary module cannot see; the named
#: test runs the base model and rebuilds the rotary module it hands each layer.
_MODEL_DECIDES = "test_hf_config.py::test_layer_rope_theta_families_match_the_model"
CHECKED_ELSEWHERE: dict[str, str] = {
    "granite_swa": _MODEL_DECIDES, "granitemoe_swa": _MODEL_DECIDES,
    "muse_glimmer_text": _MODEL_DECIDES, "muse_spark_text": _MODEL_DECIDES,
}


def _modeling(model_type: str):
    from transformers.models.auto import configuration_auto as ca

    mod = ca.model_type_to_module_name(model_type)
    try:
        return importlib.import_module(f"transformers.models.{mod}.modeling_{mod}")
    except Exception:  # a family whose optional dependency is missing
        return None


def rotary_classes(module) -> list[type]:
    """The text rotary-embedding classes a modeling module defines."""
    return [c for n, c in vars(module).items()
            if inspect.isclass(c) and n.endswith("RotaryEmbedding")
            and c.__module__ == module.__name__ and not any(w in n for w in NON_TEXT)]


def _text_types() -> set[str]:
    from transformers.models.auto import modeling_auto as ma

    out: set[str] = set()
    for name in TEXT_MAPPINGS:
        out |= set(getattr(ma, name, {}))
    return out


@dataclass
class TextFamily:
    """One text model a sweep checks: its config's ``model_type`` and where it came from."""

    model_type: str                      # the text config's model_type (read by posenc)
    outer: list[str] = field(default_factory=list)  # model_types that lead to it
    is_text: bool = True
    build_error: str | None = None       # transformers cannot build its default config


@functools.cache
def text_families() -> dict[str, TextFamily]:
    """Every family with a text rotary module, keyed by the text config's ``model_type``
    (computed once per process: the family and key sweeps share it)."""
    from transformers import CONFIG_MAPPING
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    text_types = _text_types()
    out: dict[str, TextFamily] = {}
    for mt in CONFIG_MAPPING_NAMES:
        module = _modeling(mt)
        if module is None or not rotary_classes(module):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                text = CONFIG_MAPPING[mt]().get_text_config(decoder=True)
            key, err = text.model_type, None
        except Exception as e:  # noqa: BLE001 - reported, not hidden
            key, err = mt, f"{type(e).__name__}: {e}"[:200]
        fam = out.setdefault(key, TextFamily(key))
        fam.outer.append(mt)
        fam.build_error = fam.build_error or err
    for fam in out.values():
        fam.is_text = bool(text_types & {fam.model_type, *fam.outer})
    return out


def default_text_config(model_type: str):
    """The default config object of ``model_type`` (a text config class)."""
    from transformers import CONFIG_MAPPING

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CONFIG_MAPPING[model_type]().get_text_config(decoder=True)


def _base_model_class(cfg, module):
    import transformers
    from transformers import PreTrainedModel
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

    name = MODEL_MAPPING_NAMES.get(cfg.model_type)
    if isinstance(name, (tuple, list)):
        name = name[0]
    cls = getattr(transformers, name, None) if name else None
    if cls is not None:
        return cls
    found = [c for n, c in vars(module).items()
             if inspect.isclass(c) and issubclass(c, PreTrainedModel) and "For" not in n
             and c.__module__ == module.__name__ and getattr(c, "config_class", None) is type(cfg)]
    found.sort(key=lambda c: (not c.__name__.endswith("Model"), len(c.__name__)))
    return found[0] if found else None


def _accepts_positions(mod) -> bool:
    try:
        params = inspect.signature(mod.forward).parameters
    except (TypeError, ValueError):
        return False
    return "position_embeddings" in params or "position_ids" in params


def _takes_tables(mod) -> bool:
    try:
        return "position_embeddings" in inspect.signature(mod.forward).parameters
    except (TypeError, ValueError):
        return False


@contextlib.contextmanager
def _recording(module, calls: list, windows: list):
    saved = {}
    for name, fn in list(vars(module).items()):
        if not isinstance(fn, types.FunctionType) or fn.__module__ != module.__name__:
            continue
        low = name.lower()
        if name.startswith("apply") and ("rotary" in low or "rope" in low or "pos_emb" in low):
            def wrap(*a, __fn=fn, **k):
                calls.append((__fn, a, k))
                return __fn(*a, **k)
            saved[name] = fn
            setattr(module, name, wrap)
        elif name == "eager_attention_forward":
            def wrap_attn(mod, *a, __fn=fn, **kw):
                windows.append(kw.get("sliding_window", getattr(mod, "sliding_window", None)))
                return __fn(mod, *a, **kw)
            saved[name] = fn
            setattr(module, name, wrap_attn)
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(module, name, fn)


class Untraceable(Exception):
    """The sweep could not run a family's layers on the meta device (says why)."""


class NotBuildable(Untraceable):
    """transformers itself fails to build the family's rotary module or model from its own
    default config (a default that needs a checkpoint's values)."""


@dataclass
class LayerTruth:
    """What one layer of a ``transformers`` model did: its rope calls, window and tables."""

    calls: list            # (function, args, kwargs) of each apply_*rotary* call
    window: int | None
    cos: torch.Tensor
    sin: torch.Tensor
    layer_type: str | None = None  # the layer type the tables were built for


def _slim(cfg):
    """A copy with at most two experts (positions never depend on them; meta is faster)."""
    slim = copy.deepcopy(cfg)
    for k, v in vars(cfg).items():
        if (isinstance(v, int) and not isinstance(v, bool) and v > 2 and "expert" in k
                and "per_tok" not in k and "top" not in k):
            setattr(slim, k, 2)
    return slim


def _rotary(text, module):
    """The family's text rotary module built from ``text`` (the first class that builds)."""
    err = "no text rotary class"
    for c in rotary_classes(module):
        try:
            return c(config=text)
        except Exception as e:  # noqa: BLE001
            err = e
    raise NotBuildable(f"rotary module: {err!r}"[:200])


#: Whether :func:`observe` builds the model without initialising its weights (meta
#: weights hold no values; :func:`_no_init`).
SKIP_INIT = True


def _no_init():
    """transformers' own ``no_init_weights`` (what ``from_pretrained`` builds under): the
    torch init functions and ``init_weights`` do nothing. On the meta device they compute
    nothing anyway, only their Python overhead, about a seventh of building a model."""
    if not SKIP_INIT:
        return contextlib.nullcontext()
    from transformers.initialization import no_init_weights

    return no_init_weights()


def retable(text, truths: list[LayerTruth | None]) -> list[LayerTruth | None]:
    """The observation of ``text`` when it differs from the config ``truths`` were observed
    on only in its RoPE tables (a rope type, a base): the same attention calls and windows,
    with the tables ``text``'s rotary module builds (the key sweep's fast path)."""
    module = _modeling(text.model_type)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rotary = _rotary(text, module)
        tables: dict = {}
        out: list[LayerTruth | None] = []
        for tr in truths:
            if tr is None:
                out.append(None)
                continue
            if tr.layer_type not in tables:
                try:
                    tables[tr.layer_type] = _tables(rotary, tr.layer_type)
                except Exception as e:  # noqa: BLE001
                    raise NotBuildable(f"rotary forward for {tr.layer_type!r}: {e!r}"[:200]) \
                        from None
            got = tables[tr.layer_type]
            cos, sin = (got, None) if isinstance(got, torch.Tensor) else got
            out.append(LayerTruth(tr.calls, tr.window, cos, sin, tr.layer_type))
    return out


def observe(text) -> list[LayerTruth | None]:
    """Run every layer of ``text``'s base model on meta; ``None`` for a layer without a
    module that takes positions (an SSM block, a convolution)."""
    module = _modeling(text.model_type)
    text = copy.deepcopy(text)
    text._attn_implementation = "eager"
    cls = _base_model_class(text, module)
    if cls is None:
        raise Untraceable(f"no base model class for {text.model_type}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rotary = _rotary(text, module)
        try:
            with torch.device("meta"), _no_init():
                model = cls(_slim(text))
        except Exception as e:  # noqa: BLE001
            raise NotBuildable(f"model: {e!r}"[:200]) from None
    # a base model that opts out of its rotary module (Granite 4's position_embedding_type
    # other than "rope" sets rotary_emb = None) passes its layers no position embeddings
    rotary_off = any(v is None and "rotary" in k.lower()
                     for k, v in {**model._modules, **vars(model)}.items())

    def has_positions(block):
        return any(_accepts_positions(c) for c in block.children())

    lists = [m for m in model.modules() if isinstance(m, torch.nn.ModuleList)]
    layers = max((m for m in lists if any(has_positions(b) for b in m)), key=len,
                 default=None)
    if layers is None:  # no layer takes positions (an all-SSM default such as Bamba's)
        layers = max(lists, key=len, default=None)
    if layers is None:
        raise Untraceable("no layer list")
    types_ = getattr(text, "layer_types", None)
    takes_type = "layer_type" in inspect.signature(rotary.forward).parameters
    tables: dict = {}
    shared: dict = {}  # one KV-sharing store for the whole stack (Gemma 3n, Gemma 4)
    s = POSITIONS.shape[1]
    out: list[LayerTruth | None] = []
    for i, layer in enumerate(layers):
        children = [c for _, c in layer.named_children() if _accepts_positions(c)]
        # the child that takes the rotary tables (Zamba 2's hybrid layer holds a Mamba block
        # that takes position_ids and the shared attention block that takes the tables)
        att = next((c for c in children if _takes_tables(c)), children[0] if children else None)
        if att is None:
            out.append(None)
            continue
        lt = types_[i] if types_ and takes_type else None
        if lt not in tables:
            try:
                tables[lt] = _tables(rotary, lt)
            except Exception as e:  # noqa: BLE001
                raise NotBuildable(f"rotary forward for {lt!r}: {e!r}"[:200]) from None
        got = tables[lt]
        cos, sin = (got, None) if isinstance(got, torch.Tensor) else got  # Llama 4: freqs_cis
        params = inspect.signature(att.forward).parameters
        kwargs = {}
        for name, p in list(params.items())[1:]:
            if name == "position_embeddings" and rotary_off:
                kwargs[name] = None
            elif name == "position_embeddings":
                kwargs[name] = cos.to("meta") if sin is None else (cos.to("meta"),
                                                                   sin.to("meta"))
            elif name == "position_ids":
                kwargs[name] = POSITIONS.to("meta")
            elif name == "attention_mask":  # an all-visible additive mask
                kwargs[name] = torch.zeros(1, 1, s, s, device="meta")
            elif name == "layer_idx":  # Zamba 2's shared block takes its layer's index
                kwargs[name] = i
            elif name.endswith("hidden_states"):  # Zamba 2's original_hidden_states
                kwargs[name] = torch.empty(1, s, text.hidden_size, device="meta")
            elif name == "shared_kv_states" or (name.endswith("_states")
                                                 and p.default is inspect.Parameter.empty):
                kwargs[name] = shared  # Gemma 3n/4's shared_kv_states: earlier layers fill it
            elif p.default is inspect.Parameter.empty and p.kind in (
                    p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
                kwargs[name] = None
        if any(p.kind is p.VAR_KEYWORD for p in params.values()):
            kwargs.setdefault("position_ids", POSITIONS.to("meta"))
        hidden = torch.empty(1, s, text.hidden_size, device="meta")
        calls, windows = _run(module, att, hidden, kwargs, i)
        window = windows[0] if windows else getattr(att, "sliding_window", None)
        out.append(LayerTruth(calls, window, cos, sin, lt))
    return out


def _run(module, att, hidden, kwargs, i):
    """Call one layer's position module on meta, recording its rotary calls and window;
    retry without the mask, then without position_ids (modules that branch on them)."""
    tries = [kwargs, {**kwargs, "attention_mask": None},
             {**{k: v for k, v in kwargs.items() if k != "position_ids"},
              "attention_mask": None}]
    first = None
    for n, kw in enumerate(tries):
        calls, windows = [], []
        with _recording(module, calls, windows), warnings.catch_warnings(), _memo():
            warnings.simplefilter("ignore")
            try:
                att(hidden, **kw)
                return calls, windows
            except Exception as e:  # noqa: BLE001
                first = first if n else e
                if n == len(tries) - 1:
                    raise Untraceable(f"layer {i} {type(att).__name__}: {first!r}"[:300]) \
                        from None
    raise AssertionError("unreachable")


#: Whether :func:`_run` runs a layer's meta ops under :class:`booktools.meta_memo.MetaMemo`
#: (a repeated op answered from the metadata it gave before: the same observation, a
#: family sweep in about two thirds of the time, 34.7 -> 23.4 s, the key sweep 24.6 ->
#: 17.4 s).
MEMO = True
#: The memory every layer of a process shares (families, variants and layers repeat the
#: same ops on the same shapes).
_MEMORY: dict = {}


def _memo():
    if not MEMO:
        return contextlib.nullcontext()
    from booktools.meta_memo import MetaMemo

    return MetaMemo(_MEMORY)


def _tables(rotary, layer_type):
    """The rotary module's tables at :data:`POSITIONS` (M-RoPE modules get the same
    positions on every axis, which is 1-D RoPE)."""
    x = torch.zeros(1, POSITIONS.shape[1], 1)
    extra = {"layer_type": layer_type} if layer_type else {}
    try:
        out = rotary(x, POSITIONS, **extra)
    except (RuntimeError, IndexError, ValueError):
        out = rotary(x, POSITIONS.expand(3, 1, -1), **extra)
    if isinstance(out, tuple) and len(out) == 2 and not out[0].is_complex():
        a, b = out
        if bool((a[..., 0, :] == 0).all()) and not bool((b[..., 0, :] == 0).all()):
            out = (b, a)  # GPT-J and CodeGen return (sin, cos): sin is 0 at position 0
    return out


def _replay(call, cos, sin):
    """Re-run one recorded call on the CPU: ``([inputs], [outputs], unsqueeze_dim)``."""
    fn, args, kwargs = call
    bound = inspect.signature(fn).bind(*args, **kwargs)
    g = torch.Generator().manual_seed(0)
    inputs = []
    for name, v in list(bound.arguments.items()):
        if not (isinstance(v, torch.Tensor) and v.device.type == "meta"):
            continue
        if name == "freqs_cis":
            bound.arguments[name] = cos
        elif name in ("cos", "sin"):
            real = cos if name == "cos" else sin
            if tuple(real.shape) != tuple(v.shape):
                raise Untraceable(f"the attention reshapes {name} before rotating")
            bound.arguments[name] = real
        elif name == "position_ids":
            bound.arguments[name] = POSITIONS
        else:
            t = torch.randn(v.shape, generator=g)
            bound.arguments[name] = t
            inputs.append(t)
    out = fn(*bound.args, **bound.kwargs)
    out = [out] if isinstance(out, torch.Tensor) else list(out)
    unsq = bound.arguments.get("unsqueeze_dim")
    if unsq is None:  # no argument: (b, s, h, d) inputs (Llama 4) put the sequence at 1
        s = POSITIONS.shape[1]
        unsq = 2 if inputs and inputs[0].shape[1] == s and inputs[0].shape[2] != s else 1
    return inputs, out[: len(inputs)], unsq


def _expected(t, spec, unsqueeze_dim):
    from posenc.hf_config import apply_layer_rope

    if unsqueeze_dim == 2:
        t = t.transpose(1, 2)
    d = t.shape[-1]
    if d == spec.head_dim:
        out = apply_layer_rope(t, POSITIONS[0], spec)
    elif d == spec.rotary_dim and spec.rope_channels in ("leading", "trailing"):
        # the attention passes only the rotated slice (MLA's rope part, a partial rotation's
        # leading channels): rotate it as that slice of a whole head
        pad = torch.zeros(*t.shape[:-1], spec.head_dim - d)
        if spec.rope_channels == "trailing":
            out = apply_layer_rope(torch.cat((pad, t), -1), POSITIONS[0], spec)[..., -d:]
        else:
            out = apply_layer_rope(torch.cat((t, pad), -1), POSITIONS[0], spec)[..., :d]
    else:
        raise AssertionError(f"the family rotates {d} channels; posenc's head_dim is "
                             f"{spec.head_dim}, rotary_dim {spec.rotary_dim}")
    return out.transpose(1, 2) if unsqueeze_dim == 2 else out


def _call_key(call) -> tuple:
    fn, args, kwargs = call

    def one(v):
        return ("t", tuple(v.shape), str(v.dtype)) if isinstance(v, torch.Tensor) else repr(v)

    return fn, tuple(one(a) for a in args), tuple(sorted((k, one(v)) for k, v in kwargs.items()))


def _spec_key(spec) -> tuple:
    inv = spec.inv_freq
    return spec._replace(inv_freq=None), None if inv is None else (str(inv.dtype),
                                                                   tuple(inv.tolist()))


def compare(specs, truths, memo: dict | None = None) -> list[str]:
    """Differences between posenc's specs and the observed layers (empty: they match).

    ``memo`` (optional, for calls on the same ``truths``): layers with the same recorded
    call, the same table objects and equal specs are replayed once.
    """
    problems = []
    memo = {} if memo is None else memo
    if len(specs) != len(truths):
        return [f"posenc lists {len(specs)} layers, the model has {len(truths)}"]
    for i, (spec, tr) in enumerate(zip(specs, truths, strict=True)):
        uses = bool(tr and tr.calls)
        if uses != spec.use_rope:
            problems.append(f"layer {i}: transformers uses RoPE {uses}, posenc {spec.use_rope}")
            continue
        if tr is not None and tr.window != spec.sliding_window:
            problems.append(f"layer {i}: window {tr.window}, posenc {spec.sliding_window}")
        if not uses:
            continue
        key = (id(tr.cos), id(tr.sin), _call_key(tr.calls[0]), _spec_key(spec))
        if key not in memo:
            memo[key] = _rotation_problem(spec, tr)
        if memo[key]:
            problems.append(f"layer {i}: {memo[key]}")
    return problems


#: Prefix of a problem the sweep cannot decide (it cannot replay the layer's call).
UNTRACEABLE = "cannot replay"


def config_object(d: dict):
    """The ``transformers`` config object a ``config.json`` dict builds: the class its
    ``model_type`` names, constructed from the other keys (``d`` is not changed)."""
    from transformers import CONFIG_MAPPING

    d = copy.deepcopy(d)
    return CONFIG_MAPPING[d.pop("model_type")](**d)


def check_published(d: dict) -> list[tuple[str, list, list[str]]]:
    """A published config read by posenc both ways, as a ``config.json`` dict and as the
    config object ``transformers`` builds from it, each compared with the layers the
    family's own modules run: ``[(how, specs, problems)]`` for ``"config.json"`` and
    ``"config object"`` (empty ``problems``: posenc reads it as ``transformers`` runs it)."""
    from posenc.hf_config import layer_specs

    obj = config_object(d)
    truths = observe(obj)
    out = []
    for how, source in (("config.json", d), ("config object", obj)):
        specs = layer_specs(source)
        out.append((how, specs, compare(specs, truths)))
    return out


def _rotation_problem(spec, tr) -> str | None:
    """Why one layer's first recorded rotary call differs from posenc's rotation, or None."""
    try:
        inputs, outputs, unsq = _replay(tr.calls[0], tr.cos, tr.sin)
        expected = [_expected(t, spec, unsq) for t in inputs]
        # Compare what attention sees: q·k scores between all positions (a shared
        # permutation of the output channels, as DeepSeek's interleaved kernel returns
        # the pairs de-interleaved, leaves them unchanged).
        a, b = (outputs * 2)[:2] if len(outputs) == 1 else outputs[:2]
        ea, eb = (expected * 2)[:2] if len(expected) == 1 else expected[:2]
        if ea.shape[-1] != a.shape[-1]:
            raise AssertionError(f"rotated width {a.shape[-1]}, posenc {ea.shape[-1]}")
        if unsq == 2:
            a, b, ea, eb = (t.transpose(1, 2) for t in (a, b, ea, eb))
        got = a @ b.transpose(-1, -2) if a.shape[1] == b.shape[1] else a[:, :1] @ b[
            :, :1].transpose(-1, -2)
        want = ea @ eb.transpose(-1, -2) if ea.shape[1] == eb.shape[1] else ea[:, :1] @ eb[
            :, :1].transpose(-1, -2)
        tol = 3e-3 * a.shape[-1] ** 0.5
        if not torch.allclose(got, want, atol=tol, rtol=1e-3):
            return f"q·k scores differ (max |diff| {(got - want).abs().max().item():.3g})"
    except Untraceable as err:
        return f"{UNTRACEABLE}: {err}"
    except (AssertionError, ValueError) as err:
        return str(err)
    return None


@contextlib.contextmanager
def one_thread():
    """torch on one thread while the sweep runs (its tensors are tiny: a second thread only
    waits for the first, several times slower on a busy machine); restored after."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
