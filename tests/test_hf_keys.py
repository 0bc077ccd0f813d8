"""The key sweep: every position-relevant key a family's config accepts, moved, read by
posenc the way ``transformers`` runs it.

For every family the family sweep (``tests/test_hf_sweep.py``) matches, and for every family
with a posenc record whose default config ``transformers`` cannot build (checked on a
repaired baseline, :data:`REPAIRS`), :mod:`booktools.hf_keys` discovers the candidate keys from the
config class (fields, attributes, legacy ``kwargs`` reads, keys the modeling code reads),
moves each through a few valid values and compares
:func:`posenc.hf_config.layer_specs` — on the config object and on the ``config.json`` of
that shape — with the layers ``transformers`` builds. Every variant must end *matched* or
*refused by name*; a silent misread (MISMATCH) fails, unless it is one of today's known
misreads in :data:`KNOWN_MISMATCHES`, each an ``xfail(strict=True)`` that fails once
fixed (then delete its line). The coverage summary prints at the end of the run (the
full table, with every known misread, with ``-s``).
"""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter

import pytest
import test_hf_sweep
from conftest import SWEEP_REPORT

from booktools import hf_keys
from posenc import hf_config as H

#: Baseline overrides tried, in order, for a family with a posenc record whose default config
#: transformers cannot build (an odd rotated width, a head size left None): the first that
#: builds is the family's baseline. Generic values, not per-family data.
REPAIRS = ({"num_attention_heads": 32}, {"head_dim": 128},
           {"num_attention_heads": 32, "head_dim": 128})

#: Known silent misreads: ``(families, key, value label, reason [reading: what differs])``,
#: reading = the config object, the config.json of that shape, or both; one strict xfail
#: per family (an entry that passes fails the run until its family, or its line, is
#: deleted). Empty: every variant is matched or refused by name (issue 29); a misread found
#: later goes here only while it is being fixed.
KNOWN_MISMATCHES: tuple[tuple[tuple[str, ...], str, str, str], ...] = ()


@functools.cache
def key_sweep() -> tuple[list[hf_keys.Outcome], dict[str, dict[str, str]], dict[str, dict]]:
    """``(outcomes, {family: candidate keys}, {family: repair used})`` over every family the
    family sweep matches, every repaired one, and every family with a posenc record that
    the family sweep counts as no text model (TimesFM 2.5): computed once per process."""
    families = test_hf_sweep.family_outcomes()
    outcomes: list[hf_keys.Outcome] = []
    keys: dict[str, dict[str, str]] = {}
    repaired: dict[str, dict] = {}
    for name, (outcome, _) in families.items():
        if outcome == "matched" or (outcome == "not a text model" and _has_record(name)):
            got, found = hf_keys.sweep_family(name)
            outcomes += got
            if found:
                keys[name] = found
        elif outcome in ("not buildable", "refused") and _has_record(name):
            for repair in REPAIRS:
                got, found = hf_keys.sweep_family(name, repair)
                if found:  # the repaired baseline built and was observed
                    keys[name], repaired[name] = found, repair
                    outcomes += got
                    break
            else:
                outcomes += got  # the last repair's refusal, with transformers' reason
    return outcomes, keys, repaired


def _has_record(name: str) -> bool:
    rec = H.FAMILIES.get(name)
    return rec is not None and not rec.refuse


def _known() -> dict[tuple[str, str, str], str]:
    return {(f, key, label): reason for fams, key, label, reason in KNOWN_MISMATCHES
            for f in fams}


def _find(family: str, key: str, label: str) -> hf_keys.Outcome | None:
    for o in key_sweep()[0]:
        if (o.family, o.key, o.label) == (family, key, label):
            return o
    return None


def coverage_report() -> str:
    """The coverage table: families x keys, variants per outcome, relevant/inert keys."""
    outcomes, keys, repaired = key_sweep()
    counts = Counter(o.outcome for o in outcomes)
    checked = [o for o in outcomes if o.outcome != "transformers refuses"]
    pairs = {(o.family, o.key) for o in checked}
    relevant = {(o.family, o.key) for o in checked if o.relevant}
    lines = [
        f"key sweep: {len(keys)} families ({len(repaired)} on a repaired baseline: "
        + ", ".join(f"{k} {v}" for k, v in sorted(repaired.items())) + ")",
        f"  {len(pairs)} family x key pairs checked ({len(relevant)} position-relevant: a "
        f"variant changed what transformers does; {len(pairs - relevant)} inert), "
        f"{len(outcomes)} variants",
        "  outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())),
    ]
    per_key = Counter(k for _, k in pairs)
    lines.append("  keys (families checked): " + ", ".join(
        f"{k} {n}" for k, n in sorted(per_key.items(), key=lambda x: (-x[1], x[0]))))
    known = _known()
    for o in outcomes:
        if o.outcome == "MISMATCH":
            tag = "known" if (o.family, o.key, o.label) in known else "NEW"
            lines.append(f"  MISMATCH ({tag}) {o.family} {o.key}={o.label}: {o.detail[:200]}")
    for o in outcomes:
        if o.outcome == "untraceable":
            lines.append(f"  untraceable {o.family} {o.key}={o.label}: {o.detail[:160]}")
    return "\n".join(lines)


def test_key_sweep_coverage():
    """Prints the coverage table; every family the family sweep matches is key-swept."""
    report = coverage_report()
    print("\n" + report)
    known = sum(line.startswith("  MISMATCH (known)") for line in report.splitlines())
    SWEEP_REPORT["transformers key sweep (tests/test_hf_keys.py; details with -s)"] = "\n".join(
        [line for line in report.splitlines() if not line.startswith("  MISMATCH (known)")
         and not line.startswith("  untraceable")]
        + [f"  {known} known misreads (KNOWN_MISMATCHES, strict xfail)"])
    outcomes, keys, _ = key_sweep()
    matched = [n for n, (o, _) in test_hf_sweep.family_outcomes().items() if o == "matched"]
    assert set(matched) <= set(keys), sorted(set(matched) - set(keys))
    checked = Counter(o.family for o in outcomes if o.outcome != "transformers refuses")
    assert all(checked[n] >= 3 for n in keys), {n: checked[n] for n in keys if checked[n] < 3}
    assert len(outcomes) >= 10 * len(keys)


def test_no_silent_mismatch():
    """Every variant is matched or refused by name, or one of today's known misreads."""
    known = _known()
    new = [f"{o.family} {o.key}={o.label}: {o.outcome} {o.detail[:200]}"
           for o in key_sweep()[0] if o.outcome == hf_keys.SWEEP_ERROR
           or o.outcome == "MISMATCH" and (o.family, o.key, o.label) not in known]
    assert not new, f"{len(new)} silent misreads:\n" + "\n".join(new)


@pytest.mark.parametrize("family, key, label", [
    pytest.param(f, key, label, id=f"{f}-{key}={label}",
                 marks=pytest.mark.xfail(strict=True, reason=reason))
    for fams, key, label, reason in KNOWN_MISMATCHES for f in fams])
def test_known_mismatch(family, key, label):
    """A known misread: fails (xfail) while posenc misreads it; passes, so fails strictly,
    once fixed or once the variant is no longer generated (delete its line then)."""
    o = _find(family, key, label)
    assert o is None or o.outcome != "MISMATCH", o.detail


def test_every_record_is_verified():
    """Every posenc record a config can reach passed through the sweeps at least once: its
    family is matched by the family sweep or key-swept (on a repaired baseline)."""
    families = test_hf_sweep.family_outcomes()
    _, keys, _ = key_sweep()
    seen = {n for n, (o, _) in families.items() if o in test_hf_sweep.VERIFIED}
    unverified = sorted(n for n in H.FAMILIES if _has_record(n) and n not in seen | set(keys))
    assert unverified == sorted(KNOWN_UNVERIFIED), unverified


#: posenc records no sweep verifies today, with the reason (posenc should refuse them):
#: none since hunyuan_vl_text is refused (families.UNVERIFIED) and step3p7's unreachable
#: record was removed.
KNOWN_UNVERIFIED: dict[str, str] = {}


def test_the_sweep_sees_a_wrong_record(monkeypatch):
    """Self-test: a family record with the wrong pairing is reported as a MISMATCH."""
    import posenc.hf_config.layers as layers

    real = layers.family

    def wrong(model_type):
        rec = real(model_type)
        return dataclasses.replace(rec, layout="interleaved") if model_type == "llama" else rec

    monkeypatch.setattr(layers, "family", wrong)
    outcomes, _ = hf_keys.sweep_family("llama")
    bad = {(o.key, o.label) for o in outcomes if o.outcome == "MISMATCH"}
    assert ("rope_theta", "1e+06") in bad and ("rope_parameters", "yarn") in bad, outcomes


def test_the_sweep_sees_an_ignored_key(monkeypatch):
    """Self-test: a reader that ignores one key is reported as a MISMATCH on that key's
    variants (the window of Mistral) and on no other."""
    import posenc.hf_config.layers as layers

    real = layers._as_dict

    def forgetful(config):
        d = real(config)
        d.pop("sliding_window", None)
        return d

    monkeypatch.setattr(layers, "_as_dict", forgetful)
    outcomes, _ = hf_keys.sweep_family("mistral")
    bad = {(o.key, o.label) for o in outcomes if o.outcome == "MISMATCH"}
    assert ("sliding_window", "64") in bad, outcomes
    assert ("sliding_window", "null") not in bad, outcomes  # None is what it then reads
