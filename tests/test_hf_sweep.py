"""Every RoPE family in the pinned ``transformers``, read by posenc the way it runs.

One pass over every text family with a rotary module (found by :mod:`booktools.hf_sweep` from
``transformers`` itself): each family's default config goes through
:func:`posenc.hf_config.layer_specs` (as the config object and as its ``config.json``
dict, also without the keys its config class derives), and each layer is compared with
what the family's own rotary module and attention ``forward`` do (see :mod:`booktools.hf_sweep`).
Every family must end *matched* or *refused by name*; none may be silently wrong, and at
least 90 % of the text families transformers can build must match. The test prints the
coverage table.
"""

from __future__ import annotations

import copy
import functools
import warnings

import pytest
import torch

from booktools import hf_sweep
from booktools.hf_sweep import CHECKED_ELSEWHERE
from posenc import hf_config as H

#: Families whose default config transformers itself cannot run (or that has an odd rotated
#: width), checked instead on the default config with these keys changed to valid values,
#: so that every record layer_specs uses has been verified at least once.
REPAIRED: dict[str, dict] = {
    "glm4_moe": {"head_dim": 128},          # default head 4096/96 = 42: a 21-channel rotation
    "hunyuan_v1_dense": {"head_dim": 128},  # default head_dim None: attention cannot scale
    "hunyuan_v1_moe": {"head_dim": 128},
    "ministral": {"head_dim": 128},
}

#: Keys a config class derives (or defaults) when a config.json omits them.
DERIVED_KEYS = ("layer_types", "no_rope_layers", "partial_rotary_factor")


def _dict_variants(text):
    """The config as its to_dict(), and without each key the config class derives."""
    full = text.to_dict()
    yield "dict", full
    cls = type(text)
    for key in DERIVED_KEYS:
        if full.get(key) is None:
            continue
        trimmed = {k: v for k, v in copy.deepcopy(full).items() if k != key}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rebuilt = cls(**{k: v for k, v in trimmed.items() if k != "model_type"})
        except Exception:  # noqa: BLE001 - the class needs the key: nothing to derive
            continue
        if getattr(rebuilt, key, None) == full[key]:
            yield f"dict without {key}", trimmed


def _same(a, b) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if x._replace(inv_freq=None) != y._replace(inv_freq=None):
            return False
        if (x.inv_freq is None) != (y.inv_freq is None):
            return False
        if x.inv_freq is not None and not torch.equal(x.inv_freq, y.inv_freq):
            return False
    return True


def classify(fam: hf_sweep.TextFamily) -> tuple[str, str]:
    """``(outcome, detail)``: matched (on the default config, or on the
    :data:`REPAIRED` one), refused, checked elsewhere, not a text model (checked all the
    same when posenc keeps a record for it), not buildable (transformers fails to build its
    own default config, rotary module or model), or MISMATCH."""
    if not fam.is_text and fam.model_type not in H.FAMILIES:
        return "not a text model", ""
    repair = REPAIRED.get(fam.model_type)
    if fam.build_error and repair is None:
        return "not buildable", fam.build_error
    rec = H.FAMILIES.get(fam.model_type)
    if rec is not None and rec.refuse:
        return "refused", f"model_type {fam.model_type!r} is refused: {rec.refuse}"
    text = repaired_text_config(fam.model_type, repair or {})
    truths, untraceable = None, None
    if fam.model_type not in CHECKED_ELSEWHERE:
        try:
            truths = hf_sweep.observe(text)
        except hf_sweep.NotBuildable as err:
            return "not buildable", str(err)
        except hf_sweep.Untraceable as err:
            untraceable = str(err)
    try:
        specs = H.layer_specs(text)
    except ValueError as err:
        return "refused", str(err)
    for label, d in _dict_variants(text):
        try:
            other = H.layer_specs(d)
        except ValueError as err:
            if label == "dict without layer_types" and "layer_types" in str(err):
                continue  # posenc asks for the list it does not derive: a refusal by name
            return "MISMATCH", f"{label}: raises {err}"
        if not _same(specs, other):
            return "MISMATCH", f"the config object and the {label} disagree"
    if fam.model_type in CHECKED_ELSEWHERE:
        return "checked elsewhere", CHECKED_ELSEWHERE[fam.model_type]
    if untraceable:
        return "MISMATCH", f"posenc reads it, but the sweep cannot check it: {untraceable}"
    problems = hf_sweep.compare(specs, truths)
    if problems:
        return "MISMATCH", "; ".join(problems[:3])
    if not fam.is_text:  # a record posenc keeps for a model outside the text mappings
        return "matched (not a text model)", ""
    return ("matched on a repaired config", f"{repair}") if repair else ("matched", "")


def repaired_text_config(model_type: str, repair: dict):
    """The default text config of ``model_type`` with the ``repair`` keys set."""
    if not repair:
        return hf_sweep.default_text_config(model_type)
    from transformers import CONFIG_MAPPING

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CONFIG_MAPPING[model_type](**repair).get_text_config(decoder=True)


VERIFIED = ("matched", "matched on a repaired config", "matched (not a text model)",
            "checked elsewhere")


@functools.cache
def family_outcomes() -> dict[str, tuple[str, str]]:
    """``{model_type: (outcome, detail)}`` for every family, computed once per process (the
    key sweep, ``tests/test_hf_keys.py``, starts from it: one import of every modeling
    module per test run)."""
    with hf_sweep.one_thread():
        fams = hf_sweep.text_families()
        return {name: classify(fam) for name, fam in sorted(fams.items())}


@pytest.fixture(scope="module")
def families():
    return hf_sweep.text_families()


@pytest.fixture(scope="module")
def outcomes():
    return family_outcomes()


def test_every_family_is_matched_or_refused_by_name(outcomes):
    counts: dict[str, int] = {}
    for outcome, _ in outcomes.values():
        counts[outcome] = counts.get(outcome, 0) + 1
    print("\ncoverage:", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for name, (outcome, detail) in outcomes.items():
        if outcome not in ("matched", "not a text model", "matched (not a text model)"):
            print(f"  {name}: {outcome} {detail[:160]}")
    wrong = {k: v for k, v in outcomes.items() if v[0] == "MISMATCH"}
    assert not wrong, f"{len(wrong)} families read differently from transformers: {wrong}"


def test_coverage_of_text_families(outcomes):
    text = [o for o, _ in outcomes.values()
            if "not a text model" not in o and o != "not buildable"]
    matched = sum(o in VERIFIED for o in text)
    assert matched / len(text) >= 0.90, f"{matched} of {len(text)} text families matched"


def well_named_refusal(name: str, detail: str) -> bool:
    """A refusal names the family (``model_type 'x'``) and says why after a colon, in a
    sentence (not a bare "not supported")."""
    head, _, reason = detail.partition(":")
    return repr(name) in head and len(reason.split()) >= 6


def test_refusals_name_the_family_and_the_reason(outcomes):
    refused = {n: d for n, (o, d) in outcomes.items() if o == "refused"}
    assert refused, "the sweep refuses no family: the check below would check nothing"
    bad = {n: d for n, d in refused.items() if not well_named_refusal(n, d)}
    assert not bad, bad


def test_self_test_a_vague_refusal_is_caught():
    assert well_named_refusal("jetmoe", "model_type 'jetmoe' is refused: its attention "
                              "cannot run on the meta device")
    assert not well_named_refusal("jetmoe", "model_type 'jetmoe' is refused: not supported")
    assert not well_named_refusal("jetmoe", "key rope_theta is refused: not in FAMILIES, "
                                  "see the atlas for the reason")
    assert not well_named_refusal("jetmoe", "not in FAMILIES (see the atlas)")


def test_every_record_layer_specs_uses_is_verified(outcomes):
    """A record no check has verified is not used: every family record that layer_specs
    reads with (not a refusal) was matched by the sweep, on its default config or a
    repaired one, or by the test CHECKED_ELSEWHERE names."""
    unverified = {mt: outcomes.get(mt, ("not in the sweep", ""))[0]
                  for mt, rec in H.FAMILIES.items()
                  if not rec.refuse and outcomes.get(mt, ("",))[0] not in VERIFIED}
    assert not unverified, unverified


def test_unverified_lists_exactly_the_families_transformers_cannot_run(outcomes, families):
    """UNVERIFIED (the refusal reason the atlas prints) names the text families whose
    default config transformers cannot run and no repaired config checks: none more (a
    stale entry), none fewer (a family refused only as "not in FAMILIES")."""
    from posenc.hf_config.families import UNVERIFIED

    cannot = {mt for mt, (o, detail) in outcomes.items()
              if o == "not buildable" and mt not in H.FAMILIES
              and not families[mt].build_error}
    assert cannot == set(UNVERIFIED)


def _observed(truths) -> list:
    """What :func:`booktools.hf_sweep.compare` reads of an observation: per layer, each
    rotary call (function, tensor shapes and other arguments), the window, the tables'
    layer type."""
    def arg(v):
        return tuple(v.shape) if isinstance(v, torch.Tensor) else repr(v)

    return [None if t is None else (
        [(fn.__qualname__, [arg(a) for a in args], sorted((k, arg(v)) for k, v in kw.items()))
         for fn, args, kw in t.calls], t.window, t.layer_type) for t in truths]


@pytest.mark.parametrize("model_type", ["llama", "gemma3n_text", "qwen3_next"])
def test_building_without_weight_init_observes_the_same(model_type, monkeypatch):
    """The sweep builds each model on meta without initialising weights (hf_sweep.SKIP_INIT,
    as from_pretrained does): the layers it then runs make the same rotary calls and see the
    same windows as a model built with them initialised (compared on every family's default
    config when the sweep began to skip it; here on three: plain layers, sliding-window
    layers that share KV, and a hybrid of linear and full attention)."""
    text = hf_sweep.default_text_config(model_type)
    with hf_sweep.one_thread():
        fast = _observed(hf_sweep.observe(text))
        monkeypatch.setattr(hf_sweep, "SKIP_INIT", False)
        full = _observed(hf_sweep.observe(text))
    assert fast == full and any(layer and layer[0] for layer in fast)


def _observed_exactly(truths) -> list:
    """:func:`_observed` with each tensor argument's strides and dtype beside its shape."""
    def arg(v):
        return ((tuple(v.shape), v.stride(), v.dtype) if isinstance(v, torch.Tensor)
                else repr(v))

    return [None if t is None else (
        [(fn.__qualname__, [arg(a) for a in args], sorted((k, arg(v)) for k, v in kw.items()))
         for fn, args, kw in t.calls], t.window, t.layer_type) for t in truths]


def _observe_counting(text, monkeypatch, answer=None) -> tuple[list, int]:
    """The exact observation of ``text`` under the memo with a fresh memory, and how many
    calls the memo answered; ``answer`` replaces :func:`booktools.meta_memo.make`."""
    from booktools import meta_memo

    answered = [0]
    make = answer or meta_memo.make

    def counting(metadata):
        answered[0] += 1
        return make(metadata)

    monkeypatch.setattr(meta_memo, "make", counting)  # monkeypatch restores the real one
    monkeypatch.setattr(hf_sweep, "_MEMORY", {})
    monkeypatch.setattr(hf_sweep, "MEMO", True)
    return _observed_exactly(hf_sweep.observe(text)), answered[0]


#: Plain layers, sliding-window layers sharing KV, a hybrid of linear and full attention,
#: MLA's decoupled rotary key.
MEMO_FAMILIES = ["llama", "gemma3n_text", "qwen3_next", "deepseek_v3"]


@pytest.mark.parametrize("model_type", MEMO_FAMILIES)
def test_the_meta_memo_observes_the_same(model_type, monkeypatch):
    """Layers run under the meta memo (booktools.meta_memo: a repeated meta-device op
    answered from the metadata it gave before) make the same rotary calls, on tensors of
    the same shapes, strides and dtypes, and see the same windows as layers run without it
    (compared on every family's default config and all the key sweep's variants when the
    sweep began to use it; here on four), and the memo did answer some of their calls."""
    text = hf_sweep.default_text_config(model_type)
    with hf_sweep.one_thread():
        monkeypatch.setattr(hf_sweep, "MEMO", False)
        plain = _observed_exactly(hf_sweep.observe(text))
        memo, answered = _observe_counting(text, monkeypatch)
    assert memo == plain and any(layer and layer[0] for layer in plain)
    assert answered > 0, "the memo answered nothing: the comparison tested no answer"


def test_self_test_a_meta_memo_that_answers_a_wrong_dtype_is_caught(monkeypatch):
    """The comparison above sees a memo that answers a repeated op with the right shape
    and strides but another dtype (float64 for a float32 result)."""
    from booktools import meta_memo

    real = meta_memo.make

    def wrong(metadata):
        out = real(metadata)
        if isinstance(out, torch.Tensor) and out.dtype == torch.float32:
            return torch.empty_strided(out.shape, out.stride(), dtype=torch.float64,
                                       device="meta")
        return out

    text = hf_sweep.default_text_config("llama")
    with hf_sweep.one_thread():
        monkeypatch.setattr(hf_sweep, "MEMO", False)
        plain = _observed_exactly(hf_sweep.observe(text))
        broken, answered = _observe_counting(text, monkeypatch, answer=wrong)
    assert answered > 0 and broken != plain
