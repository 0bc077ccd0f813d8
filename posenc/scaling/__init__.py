"""RoPE context-length scaling: PI, NTK-aware, dynamic NTK, YaRN, Llama 3, LongRoPE, proportional.

Every method answers the same question — which frequencies should a model trained on
``L`` positions use to read ``s·L`` positions? — and returns the same pair::

    inv_freq, attention_factor = method(head_dim, factor, original_max_position_embeddings, ...)

* ``inv_freq``: ``(r/2,)`` tensor of frequencies ``θ'_i`` (radians per position), a drop-in
  replacement for :func:`posenc.rope.rope_inv_freq`;
* ``attention_factor``: a float that multiplies RoPE's cos **and** sin tables (pass it to
  :func:`posenc.rope.rope_cos_sin`), so every ``q·k`` logit is multiplied by its *square*.
  It is 1.0 for every method except YaRN and LongRoPE.

Notation: ``d`` = ``head_dim``, ``r`` = ``rotary_dim`` (``r <= d``, even; default ``d``),
``i = 0 … r/2 − 1`` the pair index, ``θ_i = base^(−2i/r)`` the original frequencies,
``λ_i = 2π/θ_i`` their wavelengths (positions per full turn), ``s`` = ``factor`` (the
context-extension ratio, ``>= 1``), ``L`` = ``original_max_position_embeddings`` (the
training context). The *per-pair scale* ``θ_i / θ'_i`` (:func:`per_pair_scale`) says how
much slower pair ``i`` turns: 1 = untouched, ``s`` = fully interpolated.

Design follows Hugging Face ``transformers``' ``modeling_rope_utils.py`` (one function per
method, one result shape, one registry :data:`ROPE_SCALING`) with plain-number arguments in
place of config objects. Frequencies are computed in float64 and cast to ``dtype`` at the end.

Two registries: :data:`ROPE_SCALING` holds the methods that need nothing beyond
``(head_dim, factor, L)`` (the long-context chapter loops over it); :data:`ROPE_TYPES`
maps every ``rope_type`` of ``transformers``' ``ROPE_INIT_FUNCTIONS`` (plus ``"default"``)
to its function here, including :func:`longrope` (which also needs its per-pair factor
lists) and :func:`proportional`. :func:`posenc.hf_config.rope_from_config` reads a model
config through it.

Layout: the methods sit in private modules, one per idea — ``_interpolation`` (PI,
NTK-aware, dynamic NTK, :func:`per_pair_scale`), ``_yarn`` (both forms of YaRN),
``_llama3``, ``_longrope``, ``_plain`` (:func:`default`, :func:`proportional`) and
``_checks`` (the argument checks they share) — and are imported from here,
``posenc.scaling``, which also defines the two registries.
"""

from __future__ import annotations

from ._interpolation import (
    dynamic_ntk,
    dynamic_ntk_base,
    linear,
    ntk_aware,
    ntk_aware_base,
    per_pair_scale,
)
from ._llama3 import llama3
from ._longrope import longrope, longrope_attention_factor
from ._plain import default, proportional
from ._yarn import (
    yarn,
    yarn_attention_factor,
    yarn_correction_range,
    yarn_paper,
    yarn_paper_ramp,
    yarn_ramp,
)

__all__ = [
    "ROPE_SCALING",
    "ROPE_TYPES",
    "default",
    "dynamic_ntk",
    "dynamic_ntk_base",
    "linear",
    "llama3",
    "longrope",
    "longrope_attention_factor",
    "ntk_aware",
    "ntk_aware_base",
    "per_pair_scale",
    "proportional",
    "yarn",
    "yarn_attention_factor",
    "yarn_correction_range",
    "yarn_paper",
    "yarn_paper_ramp",
    "yarn_ramp",
]


#: Every method by its standard name; each is called as
#: ``fn(head_dim, factor, original_max_position_embeddings, base=..., rotary_dim=...)``
#: and returns ``(inv_freq, attention_factor)``.
ROPE_SCALING = {
    "linear": linear,
    "ntk_aware": ntk_aware,
    "dynamic_ntk": dynamic_ntk,
    "yarn": yarn,
    "yarn_paper": yarn_paper,
    "llama3": llama3,
}


#: Every ``rope_type`` of ``transformers`` 5.24 (``ROPE_INIT_FUNCTIONS`` plus ``"default"``)
#: mapped to the function here that computes it: ``"dynamic"`` is :func:`dynamic_ntk`.
#: Arguments differ by method (LongRoPE needs its factor lists); read a model config with
#: :func:`posenc.hf_config.rope_from_config`.
ROPE_TYPES = {
    "default": default,
    "linear": linear,
    "dynamic": dynamic_ntk,
    "yarn": yarn,
    "longrope": longrope,
    "llama3": llama3,
    "proportional": proportional,
}
