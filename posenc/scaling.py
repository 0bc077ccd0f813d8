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
"""

from __future__ import annotations

import math

import torch

from ._checks import check_even, check_int, check_real
from .rope import rope_inv_freq

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


# --------------------------------------------------------------------------- checks


def _rotary_dim(head_dim, rotary_dim) -> int:
    head_dim = check_even("head_dim", head_dim)
    rotary_dim = head_dim if rotary_dim is None else check_even("rotary_dim", rotary_dim)
    if rotary_dim > head_dim:
        raise ValueError(f"rotary_dim must be <= head_dim ({head_dim}), got {rotary_dim}")
    return rotary_dim


def _factor(factor) -> float:
    return check_real("factor", factor, ge=1.0)


def _length(name: str, value) -> int:
    return check_int(name, value, minimum=1)


def _dtype(dtype):
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype}")
    return dtype


def _theta(head_dim, base, rotary_dim, device=None) -> torch.Tensor:
    """Original frequencies in float64 (the formula lives in :func:`rope_inv_freq`)."""
    return rope_inv_freq(head_dim, base, rotary_dim, dtype=torch.float64, device=device)


# --------------------------------------------------------------------------- helpers


def per_pair_scale(inv_freq: torch.Tensor, head_dim: int, base: float = 10000.0,
                   rotary_dim: int | None = None) -> torch.Tensor:
    """How much slower each pair turns after scaling: ``θ_i / θ'_i``.

    Args:
        inv_freq: ``(r/2,)`` scaled frequencies ``θ'_i`` from any method here.
        head_dim, base, rotary_dim: the *original* RoPE settings (``θ_i = base^(−2i/r)``).

    Returns:
        ``(r/2,)`` float64 tensor; 1 where a pair is untouched, ``s`` where it is fully
        interpolated (PI divides every frequency by ``s``).

    Raises:
        ValueError: ``inv_freq`` not of length ``r/2`` or not positive; bad RoPE settings.
        TypeError: ``inv_freq`` not a tensor.
    """
    if not isinstance(inv_freq, torch.Tensor):
        raise TypeError(f"inv_freq must be a torch.Tensor, got {type(inv_freq).__name__}")
    theta = _theta(head_dim, base, rotary_dim, device=inv_freq.device)
    if inv_freq.shape != theta.shape:
        raise ValueError(
            f"inv_freq must have shape (r/2,) = {tuple(theta.shape)}, got {tuple(inv_freq.shape)}"
        )
    if not bool((inv_freq > 0).all()):
        raise ValueError("inv_freq must be > 0 everywhere")
    return theta / inv_freq.to(torch.float64)


def ntk_aware_base(base: float, factor: float, rotary_dim: int) -> float:
    """NTK-aware base ``base' = base · s^(r/(r−2))``.

    The exponent is chosen so that the *lowest* frequency ``θ_{r/2−1} = base^(−(r−2)/r)`` is
    divided by exactly ``s`` while ``θ_0 = 1`` is unchanged; pair ``i`` is slowed by
    ``s^(2i/(r−2))``.

    Args:
        base: original ``rope_theta``; ``> 0``.
        factor: ``s >= 1``.
        rotary_dim: ``r``; an even integer ``>= 4`` (``r = 2`` has no exponent).

    Returns:
        The new base as a Python float.

    Raises:
        ValueError: ``base <= 0``; ``factor < 1``; ``rotary_dim`` odd or ``< 4``; a new base
            too large for a float.

    Source: bloc97 (2023), "NTK-Aware Scaled RoPE"; Peng et al. (2023), YaRN, section 3.1.
    """
    base = check_real("base", base, gt=0.0)
    factor = _factor(factor)
    r = check_even("rotary_dim", rotary_dim, minimum=4)
    return _finite_base(base, factor, r)


def _finite_base(base: float, bracket: float, r: int) -> float:
    """``base · bracket^(r/(r−2))``, or a ValueError when that leaves the float range."""
    try:
        new = base * bracket ** (r / (r - 2))
    except OverflowError:
        new = math.inf
    if not math.isfinite(new):
        raise ValueError(
            f"factor {bracket:g} is too large: the scaled base {base:g}·{bracket:g}^"
            f"({r}/{r - 2}) overflows a float"
        )
    return new


def dynamic_ntk_base(base: float, factor: float, original_max_position_embeddings: int,
                     seq_len: int, rotary_dim: int) -> float:
    """The base dynamic NTK uses for a sequence of ``seq_len`` tokens.

    ``base · (s·ℓ/L − (s − 1))^(r/(r−2))`` with ``ℓ = max(seq_len, L)``: equal to ``base``
    *exactly* for every ``seq_len <= L``, and growing with the current length beyond it.
    The bracket is 1 at ``ℓ = L``, equals ``s`` at ``ℓ = (2 − 1/s)·L`` and keeps growing
    (the YaRN paper's dynamic rule uses ``s = ℓ/L`` instead; the chapter compares them).

    Args:
        base: original ``rope_theta``; ``> 0``.
        factor: ``s >= 1`` (the configured ``rope_scaling.factor``).
        original_max_position_embeddings: ``L``, an integer ``>= 1``.
        seq_len: current sequence length ``ℓ`` (tokens so far, cache included), ``>= 1``.
        rotary_dim: ``r``; even, ``>= 4``.

    Returns:
        The base as a Python float.

    Raises:
        ValueError: ``base <= 0``, ``factor < 1``, ``L`` or ``seq_len < 1``, odd ``r`` or
            ``r < 4``; a base too large for a float.
        TypeError: ``L``, ``seq_len`` or ``rotary_dim`` not an integer.

    Source: emozilla (2023), "Dynamically Scaled RoPE"; matches ``transformers``'
    ``_compute_dynamic_ntk_parameters``.
    """
    base = check_real("base", base, gt=0.0)
    factor = _factor(factor)
    L = _length("original_max_position_embeddings", original_max_position_embeddings)
    seq_len = _length("seq_len", seq_len)
    r = check_even("rotary_dim", rotary_dim, minimum=4)
    if seq_len <= L:
        return base
    return _finite_base(base, (factor * seq_len / L) - (factor - 1), r)


# --------------------------------------------------------------------------- methods


def linear(head_dim: int, factor: float, original_max_position_embeddings: int | None = None,
           *, base: float = 10000.0, rotary_dim: int | None = None,
           dtype=torch.float32) -> tuple[torch.Tensor, float]:
    """Position Interpolation (PI): ``θ'_i = θ_i / s`` for every pair.

    Rotating position ``m`` by ``m·θ_i/s`` is rotating position ``m/s`` by ``m/s·θ_i``: the
    ``s·L`` new positions are squeezed into the ``L`` the model was trained on.

    Args:
        head_dim: ``d``, even ``>= 2``.
        factor: ``s >= 1``.
        original_max_position_embeddings: ``L`` (unused by the formula; accepted and checked
            so every method in :data:`ROPE_SCALING` takes the same arguments).
        base: ``rope_theta``; ``> 0``.
        rotary_dim: ``r`` (default ``d``).
        dtype: float32 or float64.

    Returns:
        ``(inv_freq (r/2,), 1.0)``.

    Raises:
        ValueError: odd/too small dims, ``factor < 1``, ``L < 1``, ``base <= 0``, bad dtype.

    Source: Chen et al. (2023), the interpolation ``f'(x, m) = f(x, mL/L')``; matches
    ``transformers``'
    ``_compute_linear_scaling_rope_parameters``.
    """
    r = _rotary_dim(head_dim, rotary_dim)
    factor = _factor(factor)
    if original_max_position_embeddings is not None:
        _length("original_max_position_embeddings", original_max_position_embeddings)
    dtype = _dtype(dtype)
    return (_theta(head_dim, base, r) / factor).to(dtype), 1.0


def ntk_aware(head_dim: int, factor: float, original_max_position_embeddings: int | None = None,
              *, base: float = 10000.0, rotary_dim: int | None = None,
              dtype=torch.float32) -> tuple[torch.Tensor, float]:
    """NTK-aware scaling: plain RoPE with the enlarged base ``base · s^(r/(r−2))``.

    High frequencies are almost untouched (``θ_0 = 1`` exactly), the lowest is divided by
    exactly ``s``, pair ``i`` by ``s^(2i/(r−2))``.

    Args:
        head_dim: ``d``, even ``>= 4``.
        factor: ``s >= 1``.
        original_max_position_embeddings: ``L`` (unused; checked for a uniform signature).
        base: original ``rope_theta``; ``> 0``.
        rotary_dim: ``r`` (default ``d``), even ``>= 4``.
        dtype: float32 or float64.

    Returns:
        ``(inv_freq (r/2,), 1.0)``.

    Raises:
        ValueError: odd dims or ``r < 4``, ``factor < 1``, ``L < 1``, ``base <= 0``, bad dtype.

    Source: bloc97 (2023); Peng et al. (2023), YaRN, section 3.1. ``transformers`` has no
    static NTK type; its dynamic function at ``factor = 1`` and ``seq_len = s·L`` gives this
    exactly (tested).
    """
    r = _rotary_dim(head_dim, rotary_dim)
    if original_max_position_embeddings is not None:
        _length("original_max_position_embeddings", original_max_position_embeddings)
    dtype = _dtype(dtype)
    new_base = ntk_aware_base(base, factor, r)
    return rope_inv_freq(head_dim, new_base, r, dtype=torch.float64).to(dtype), 1.0


def dynamic_ntk(head_dim: int, factor: float, original_max_position_embeddings: int,
                *, seq_len: int | None = None, base: float = 10000.0,
                rotary_dim: int | None = None, dtype=torch.float32) -> tuple[torch.Tensor, float]:
    """Dynamic NTK: NTK-aware frequencies with the base recomputed from the current length.

    For ``seq_len <= L`` (or ``None``) this returns :func:`posenc.rope.rope_inv_freq`'s
    frequencies for the original base *exactly* — a short request after a long one gets the
    model's own RoPE back. Beyond ``L`` the base is :func:`dynamic_ntk_base`.

    Args:
        head_dim: ``d``, even ``>= 4``.
        factor: ``s >= 1``.
        original_max_position_embeddings: ``L``, ``>= 1``.
        seq_len: current length ``ℓ >= 1`` (default ``L``: the unscaled frequencies, as
            ``transformers`` does at init).
        base: original ``rope_theta``; ``> 0``.
        rotary_dim: ``r`` (default ``d``), even ``>= 4``.
        dtype: float32 or float64.

    Returns:
        ``(inv_freq (r/2,), 1.0)``.

    Raises:
        ValueError: as :func:`dynamic_ntk_base`; bad dims or dtype.

    Source: emozilla (2023); matches ``transformers``' ``_compute_dynamic_ntk_parameters``
    (which reads ``L`` from ``max_position_embeddings``).
    """
    r = _rotary_dim(head_dim, rotary_dim)
    L = _length("original_max_position_embeddings", original_max_position_embeddings)
    seq_len = L if seq_len is None else _length("seq_len", seq_len)
    dtype = _dtype(dtype)
    new_base = dynamic_ntk_base(base, factor, L, seq_len, r)
    return rope_inv_freq(head_dim, new_base, r, dtype=torch.float64).to(dtype), 1.0


def yarn_attention_factor(factor: float, mscale: float | None = None,
                          mscale_all_dim: float | None = None) -> float:
    """YaRN's cos/sin multiplier ``√(1/t) = 0.1·ln s + 1`` (1.0 for ``s <= 1``).

    With both ``mscale`` and ``mscale_all_dim`` (DeepSeek-V2/V3 configs) the factor is the
    ratio ``(0.1·mscale·ln s + 1) / (0.1·mscale_all_dim·ln s + 1)``.

    Args:
        factor: ``s``, finite and ``> 0`` (values ``<= 1`` give 1.0).
        mscale, mscale_all_dim: both ``None`` or both finite and ``> 0``.

    Returns:
        A float; logits are multiplied by its square because it scales both ``q`` and ``k``.

    Raises:
        ValueError: ``factor <= 0``; only one of ``mscale``/``mscale_all_dim`` given (the
            reference code would silently ignore it); a non-positive ``mscale*``.

    Source: Peng et al. (2023), YaRN, section 3.4 (``√(1/t) = 0.1 ln s + 1``); matches the
    ``get_mscale`` rule in ``transformers``' ``_compute_yarn_parameters``.
    """
    factor = check_real("factor", factor, gt=0.0)

    def get_mscale(scale: float, m: float = 1.0) -> float:
        return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

    if (mscale is None) != (mscale_all_dim is None):
        raise ValueError(
            "pass both mscale and mscale_all_dim (their ratio is the attention factor) or "
            f"neither; got mscale={mscale!r}, mscale_all_dim={mscale_all_dim!r}"
        )
    if mscale is None:
        return get_mscale(factor)
    mscale = check_real("mscale", mscale, gt=0.0)
    mscale_all_dim = check_real("mscale_all_dim", mscale_all_dim, gt=0.0)
    return float(get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim))


def yarn_correction_range(rotary_dim: int, base: float, original_max_position_embeddings: int,
                          beta_fast: float = 32.0, beta_slow: float = 1.0,
                          *, truncate: bool = True) -> tuple[float, float]:
    """Pair indices where the reference YaRN ramp starts and ends: ``(low, high)``.

    Pair ``i`` completes ``r_i = L/λ_i`` turns within ``L`` tokens; solving
    ``r_i = β`` for ``i`` gives ``i(β) = r·ln(L/(2πβ)) / (2·ln base)``. Then
    ``low = i(beta_fast)`` (pairs below it are kept as they are), ``high = i(beta_slow)``
    (pairs above it are fully interpolated); with ``truncate`` they are rounded outwards
    (``floor``/``ceil``); finally clipped to ``[0, r − 1]`` as in the reference code.

    Args:
        rotary_dim: ``r``, even ``>= 2``.
        base: ``rope_theta``, ``> 0`` and ``!= 1``.
        original_max_position_embeddings: ``L >= 1``.
        beta_fast, beta_slow: turn counts, ``beta_fast >= beta_slow > 0`` (default 32, 1;
            an equal pair gives a one-pair step, as ``transformers`` computes it).
        truncate: round to whole pair indices (default ``True``, as ``transformers``).

    Returns:
        ``(low, high)`` as floats (whole numbers when ``truncate``).

    Raises:
        ValueError: ``beta_fast < beta_slow``, ``beta_slow <= 0``, ``base`` equal to 1,
            bad ``r``/``L``.
        TypeError: ``truncate`` not a bool.

    Source: the YaRN authors' code (``find_correction_range``); matches ``transformers``.
    """
    r = check_even("rotary_dim", rotary_dim)
    base = check_real("base", base, gt=0.0)
    if base == 1.0:
        raise ValueError("base must be != 1 (every pair would have the same frequency)")
    L = _length("original_max_position_embeddings", original_max_position_embeddings)
    beta_fast, beta_slow = _betas(beta_fast, beta_slow)
    if not isinstance(truncate, bool):
        raise TypeError(f"truncate must be a bool, got {truncate!r}")

    def dim_for(turns: float) -> float:
        return (r * math.log(L / (turns * 2 * math.pi))) / (2 * math.log(base))

    low, high = dim_for(beta_fast), dim_for(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    return float(max(low, 0)), float(min(high, r - 1))


def _betas(beta_fast, beta_slow) -> tuple[float, float]:
    beta_slow = check_real("beta_slow", beta_slow, gt=0.0)
    beta_fast = check_real("beta_fast", beta_fast, gt=0.0)
    if beta_fast < beta_slow:
        raise ValueError(
            f"beta_fast must be >= beta_slow (turns that mark the fast end of the ramp), got "
            f"beta_fast={beta_fast:g}, beta_slow={beta_slow:g}"
        )
    return beta_fast, beta_slow


def yarn_ramp(head_dim: int, original_max_position_embeddings: int, *, base: float = 10000.0,
              beta_fast: float = 32.0, beta_slow: float = 1.0, truncate: bool = True,
              rotary_dim: int | None = None) -> torch.Tensor:
    """Reference YaRN's per-pair mix ``γ_i`` (1 = keep ``θ_i``, 0 = use ``θ_i/s``).

    ``γ_i = 1 − clamp((i − low)/(high − low), 0, 1)`` with ``(low, high)`` from
    :func:`yarn_correction_range`: a ramp that is linear in the pair *index*, i.e. linear in
    ``ln r_i`` — not in ``r_i`` as in the paper (:func:`yarn_paper_ramp`).

    Returns:
        ``(r/2,)`` float64 tensor in ``[0, 1]``.

    Raises:
        As :func:`yarn_correction_range`.

    Source: matches ``transformers``' ``linear_ramp_factor`` (``low == high`` is widened by
    0.001 there, and here).
    """
    r = _rotary_dim(head_dim, rotary_dim)
    low, high = yarn_correction_range(r, base, original_max_position_embeddings, beta_fast,
                                      beta_slow, truncate=truncate)
    if low == high:
        high += 0.001
    i = torch.arange(r // 2, dtype=torch.float64)
    return 1.0 - torch.clamp((i - low) / (high - low), 0.0, 1.0)


def yarn(head_dim: int, factor: float, original_max_position_embeddings: int, *,
         base: float = 10000.0, beta_fast: float = 32.0, beta_slow: float = 1.0,
         truncate: bool = True, attention_factor: float | None = None,
         mscale: float | None = None, mscale_all_dim: float | None = None,
         rotary_dim: int | None = None, dtype=torch.float32) -> tuple[torch.Tensor, float]:
    """YaRN as models run it (the authors' code, ``transformers``, vLLM).

    ``θ'_i = γ_i·θ_i + (1 − γ_i)·θ_i/s`` with the index ramp ``γ`` of :func:`yarn_ramp`,
    and an attention factor chosen in this order: the explicit ``attention_factor``; else
    the ``mscale``/``mscale_all_dim`` ratio; else ``0.1·ln s + 1``; 1.0 when ``s <= 1``
    (:func:`yarn_attention_factor`).

    Args:
        head_dim: ``d``, even.
        factor: ``s >= 1``.
        original_max_position_embeddings: ``L >= 1``.
        base: ``rope_theta``, ``> 0``, ``!= 1``.
        beta_fast, beta_slow: ramp bounds in turns within ``L`` (default 32 and 1; the
            paper calls them β and α), ``beta_fast >= beta_slow > 0`` (equal: the ramp is
            one pair wide, as in ``transformers``).
        truncate: round the ramp bounds to whole pairs (default ``True``).
        attention_factor: explicit cos/sin multiplier, ``> 0`` (overrides the rest).
        mscale, mscale_all_dim: DeepSeek-style pair (both or neither), each ``> 0``.
        rotary_dim: ``r`` (default ``d``).
        dtype: float32 or float64.

    Returns:
        ``(inv_freq (r/2,), attention_factor)``.

    Raises:
        ValueError: ``factor < 1``, ``beta_fast < beta_slow``, non-positive betas or
            factors, odd dims, ``L < 1``, only one of the mscale pair, bad dtype.

    Source: Peng et al. (2023), section 3.2–3.4 as implemented in their repository;
    matches ``transformers``' ``_compute_yarn_parameters``.
    """
    r = _rotary_dim(head_dim, rotary_dim)
    factor = _factor(factor)
    dtype = _dtype(dtype)
    gamma = yarn_ramp(head_dim, original_max_position_embeddings, base=base,
                      beta_fast=beta_fast, beta_slow=beta_slow, truncate=truncate, rotary_dim=r)
    if attention_factor is not None:
        attention_factor = check_real("attention_factor", attention_factor, gt=0.0)
        if mscale is not None or mscale_all_dim is not None:
            yarn_attention_factor(factor, mscale, mscale_all_dim)  # still validate them
    else:
        attention_factor = yarn_attention_factor(factor, mscale, mscale_all_dim)
    theta = _theta(head_dim, base, r)
    inv_freq = gamma * theta + (1.0 - gamma) * theta / factor
    return inv_freq.to(dtype), attention_factor


def yarn_paper_ramp(head_dim: int, original_max_position_embeddings: int, *,
                    base: float = 10000.0, alpha: float = 1.0, beta: float = 32.0,
                    rotary_dim: int | None = None) -> torch.Tensor:
    """The paper's ramp ``γ(r_i)`` with ``r_i = L/λ_i`` (turns completed within ``L`` tokens).

    ``γ = 0`` for ``r_i < α``, ``1`` for ``r_i > β``, ``(r_i − α)/(β − α)`` between:
    linear in ``r_i`` itself.

    Args:
        head_dim, rotary_dim, base: RoPE settings.
        original_max_position_embeddings: ``L >= 1``.
        alpha, beta: turn thresholds, ``0 <= alpha < beta`` (paper: 1 and 32 for Llama).

    Returns:
        ``(r/2,)`` float64 tensor in ``[0, 1]``.

    Raises:
        ValueError: ``alpha < 0``, ``beta <= alpha``, bad dims/``L``/base.

    Source: Peng et al. (2023), YaRN, section 3.2 ("NTK-by-parts"), definitions of ``r(d)``
    and ``γ(r)``.
    """
    r = _rotary_dim(head_dim, rotary_dim)
    L = _length("original_max_position_embeddings", original_max_position_embeddings)
    alpha = check_real("alpha", alpha, ge=0.0)
    beta = check_real("beta", beta, gt=0.0)
    if not beta > alpha:
        raise ValueError(f"beta must be > alpha, got alpha={alpha:g}, beta={beta:g}")
    theta = _theta(head_dim, base, r)
    turns = L * theta / (2 * math.pi)  # r_i = L / λ_i
    return torch.clamp((turns - alpha) / (beta - alpha), 0.0, 1.0)


def yarn_paper(head_dim: int, factor: float, original_max_position_embeddings: int, *,
               base: float = 10000.0, alpha: float = 1.0, beta: float = 32.0,
               rotary_dim: int | None = None, dtype=torch.float32) -> tuple[torch.Tensor, float]:
    """YaRN as written in the paper: ramp in ``r_i = L/λ_i``, temperature ``0.1·ln s + 1``.

    ``θ'_i = (1 − γ(r_i))·θ_i/s + γ(r_i)·θ_i`` (:func:`yarn_paper_ramp`) and
    ``√(1/t) = 0.1·ln s + 1`` returned as the cos/sin multiplier. Differs from :func:`yarn`
    (what checkpoints run) only in the ramp: linear in ``r_i`` rather than in ``ln r_i`` with
    rounded bounds. Kept so the chapter can compare the two.

    Args:
        head_dim: ``d``, even.
        factor: ``s >= 1``.
        original_max_position_embeddings: ``L >= 1``.
        base: ``rope_theta``.
        alpha, beta: the paper's α and β (default 1 and 32), ``0 <= α < β``.
        rotary_dim: ``r`` (default ``d``).
        dtype: float32 or float64.

    Returns:
        ``(inv_freq (r/2,), 0.1·ln s + 1)``.

    Raises:
        ValueError: as :func:`yarn_paper_ramp`; ``factor < 1``; bad dtype.

    Source: Peng et al. (2023), YaRN, sections 3.2 (``h(θ_d)``) and 3.4 (``√(1/t)``).
    """
    r = _rotary_dim(head_dim, rotary_dim)
    factor = _factor(factor)
    dtype = _dtype(dtype)
    gamma = yarn_paper_ramp(head_dim, original_max_position_embeddings, base=base,
                            alpha=alpha, beta=beta, rotary_dim=r)
    theta = _theta(head_dim, base, r)
    inv_freq = (1.0 - gamma) * theta / factor + gamma * theta
    return inv_freq.to(dtype), 0.1 * math.log(factor) + 1.0


def llama3(head_dim: int, factor: float, original_max_position_embeddings: int, *,
           base: float = 10000.0, low_freq_factor: float = 1.0, high_freq_factor: float = 4.0,
           rotary_dim: int | None = None, dtype=torch.float32) -> tuple[torch.Tensor, float]:
    """Llama 3.1 scaling: three wavelength bands with a smooth middle.

    With ``λ_i = 2π/θ_i``:

    * ``λ_i < L/high_freq_factor`` (high frequencies): ``θ'_i = θ_i``;
    * ``λ_i > L/low_freq_factor`` (low frequencies): ``θ'_i = θ_i/s``;
    * otherwise ``θ'_i = (1 − μ)·θ_i/s + μ·θ_i`` with
      ``μ = (L/λ_i − low_freq_factor)/(high_freq_factor − low_freq_factor)``.

    ``L/λ_i`` is the paper-YaRN turn count ``r_i``, so this is the paper's YaRN ramp with
    ``α = low_freq_factor``, ``β = high_freq_factor`` and no temperature.

    Args:
        head_dim: ``d``, even.
        factor: ``s >= 1`` (8 for Llama 3.1, 32 for Llama 3.2 1B/3B).
        original_max_position_embeddings: ``L >= 1`` (8192 for Llama 3).
        base: ``rope_theta`` (default 10000 like every method here; Llama 3 uses 500000).
        low_freq_factor, high_freq_factor: ``0 < low <= high`` (defaults 1 and 4). Equal
            factors (Llama 4 Scout ships 1 and 1) leave the middle band empty: every pair is
            either kept or divided by ``s``, split at ``λ_i = L/low_freq_factor``.
        rotary_dim: ``r`` (default ``d``).
        dtype: float32 or float64.

    Returns:
        ``(inv_freq (r/2,), 1.0)``.

    Raises:
        ValueError: ``factor < 1``, ``low_freq_factor <= 0``, ``high_freq_factor <
            low_freq_factor``, odd dims, ``L < 1``, bad dtype.

    Source: the ``apply_scaling`` function of Meta's Llama 3.1 reference code (the models are
    described by Grattafiori et al., 2024); matches ``transformers``'
    ``_compute_llama3_parameters``.
    """
    r = _rotary_dim(head_dim, rotary_dim)
    factor = _factor(factor)
    L = _length("original_max_position_embeddings", original_max_position_embeddings)
    low = check_real("low_freq_factor", low_freq_factor, gt=0.0)
    high = check_real("high_freq_factor", high_freq_factor, gt=0.0)
    if not high >= low:
        raise ValueError(
            f"high_freq_factor must be >= low_freq_factor, got low_freq_factor={low:g}, "
            f"high_freq_factor={high:g}"
        )
    dtype = _dtype(dtype)
    theta = _theta(head_dim, base, r)
    wavelen = 2 * math.pi / theta
    if high == low:  # no middle band: a step at λ = L/low
        mu = (wavelen <= L / low).to(theta.dtype)
    else:
        mu = torch.clamp((L / wavelen - low) / (high - low), 0.0, 1.0)
    inv_freq = (1.0 - mu) * theta / factor + mu * theta
    return inv_freq.to(dtype), 1.0


def _factor_list(name: str, values, pairs: int) -> torch.Tensor:
    """``values`` as a float64 ``(pairs,)`` tensor of finite numbers ``> 0``; raise otherwise."""
    if isinstance(values, (str, bytes)) or values is None:
        raise TypeError(f"{name} must be a sequence of {pairs} numbers, got {values!r}")
    try:
        t = torch.as_tensor(values, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError) as err:
        raise TypeError(
            f"{name} must be a sequence of {pairs} numbers, got {type(values).__name__}"
        ) from err
    if t.shape != (pairs,):
        raise ValueError(
            f"{name} must hold rotary_dim/2 = {pairs} numbers (one per pair), got shape "
            f"{tuple(t.shape)}"
        )
    if not bool(torch.isfinite(t).all()) or not bool((t > 0).all()):
        raise ValueError(f"{name} must hold finite numbers > 0")
    return t


def longrope_attention_factor(factor: float, original_max_position_embeddings: int) -> float:
    """LongRoPE's default cos/sin multiplier ``√(1 + ln s / ln L)`` (1.0 for ``s <= 1``).

    Args:
        factor: ``s``, finite and ``> 0`` (Phi-3 configs leave it out and use
            ``max_position_embeddings / original_max_position_embeddings``).
        original_max_position_embeddings: ``L``, an integer ``>= 2`` (``ln L`` divides).

    Returns:
        A float; logits are multiplied by its square.

    Raises:
        ValueError: ``factor <= 0``; ``L < 2``.
        TypeError: ``L`` not an integer.

    Source: matches the default in ``transformers``' ``_compute_longrope_parameters``
    (Microsoft's Phi-3 modelling code, ``scaling_factor``).
    """
    factor = check_real("factor", factor, gt=0.0)
    L = check_int("original_max_position_embeddings", original_max_position_embeddings,
                  minimum=2)
    if factor <= 1.0:
        return 1.0
    return math.sqrt(1.0 + math.log(factor) / math.log(L))


def longrope(head_dim: int, factor: float, original_max_position_embeddings: int, *,
             short_factor, long_factor, seq_len: int | None = None, base: float = 10000.0,
             attention_factor: float | None = None, rotary_dim: int | None = None,
             dtype=torch.float32) -> tuple[torch.Tensor, float]:
    """LongRoPE (Phi-3/Phi-4 long-context models): one searched rescale factor per pair.

    ``θ'_i = θ_i / λ_i`` where ``λ`` is ``long_factor`` when ``seq_len > L`` and
    ``short_factor`` otherwise (``seq_len = None`` counts as short, as at model init), and
    the attention factor is the explicit ``attention_factor`` or else
    :func:`longrope_attention_factor` ``√(1 + ln s / ln L)``. The factor lists come from an
    evolutionary search (Ding et al., 2024); they are data, not a formula.

    Args:
        head_dim: ``d``, even.
        factor: ``s >= 1``, the context-extension ratio (only the attention factor uses it).
        original_max_position_embeddings: ``L >= 2`` (4096 for Phi-3-mini-128k).
        short_factor, long_factor: sequences of ``r/2`` finite numbers ``> 0``.
        seq_len: current length (tokens so far, cache included); ``None`` = short.
        base: ``rope_theta``, ``> 0``.
        attention_factor: explicit cos/sin multiplier, ``> 0``.
        rotary_dim: ``r`` (default ``d``; Phi-3 configs may set ``partial_rotary_factor``).
        dtype: float32 or float64.

    Returns:
        ``(inv_freq (r/2,), attention_factor)``.

    Raises:
        ValueError: factor lists of the wrong length or with values ``<= 0``; ``factor <
            1``; ``L < 2``; ``seq_len < 1``; odd dims; ``attention_factor <= 0``; bad dtype.
        TypeError: factor lists that are not sequences of numbers.

    Source: Ding et al. (2024), LongRoPE (one rescale factor ``λ_i`` per dimension); matches
    ``transformers``' ``_compute_longrope_parameters`` (tested on a grid and on
    Phi-3-mini-128k's published factors).
    """
    r = _rotary_dim(head_dim, rotary_dim)
    factor = _factor(factor)
    L = check_int("original_max_position_embeddings", original_max_position_embeddings,
                  minimum=2)
    if seq_len is not None:
        seq_len = _length("seq_len", seq_len)
    short = _factor_list("short_factor", short_factor, r // 2)
    long = _factor_list("long_factor", long_factor, r // 2)
    dtype = _dtype(dtype)
    if attention_factor is None:
        attention_factor = longrope_attention_factor(factor, L)
    else:
        attention_factor = check_real("attention_factor", attention_factor, gt=0.0)
    ext = long if seq_len is not None and seq_len > L else short
    return (_theta(head_dim, base, r) / ext).to(dtype), attention_factor


def proportional(head_dim: int, factor: float = 1.0,
                 original_max_position_embeddings: int | None = None, *,
                 base: float = 10000.0, rotary_dim: int | None = None,
                 dtype=torch.float32) -> tuple[torch.Tensor, float]:
    """Proportional RoPE (Gemma 4's global layers): partial rotation *spread over the head*.

    Unlike partial rotary (``rotary_dim = r``: frequencies ``base^(−2i/r)`` on the first
    ``r`` channels, pairs ``(i, i + r/2)``), proportional RoPE keeps the full head's pairs
    ``(i, i + d/2)`` and the full head's frequencies ``θ_i = base^(−2i/d)``, and sets
    ``θ_i = 0`` (no rotation) for the pairs ``i >= r/2``::

        θ'_i = base^(−2i/d) / s   for i < r/2,      θ'_i = 0   for r/2 <= i < d/2

    So it returns ``d/2`` frequencies (use it with ``rotary_dim = d`` in
    :func:`posenc.rope.apply_rope`), and the rotated pairs are the *fastest* ``r/2`` of the
    full-head schedule rather than a compressed schedule over ``r`` channels.

    Args:
        head_dim: ``d``, even.
        factor: ``s >= 1`` dividing the frequencies (default 1).
        original_max_position_embeddings: unused; checked for a uniform signature.
        base: ``rope_theta``, ``> 0``.
        rotary_dim: ``r = 2·⌊p·d/2⌋`` for ``partial_rotary_factor`` ``p`` (default ``d``),
            even, ``<= d``; may be 0 (no pair rotates).
        dtype: float32 or float64.

    Returns:
        ``(inv_freq (d/2,), 1.0)``.

    Raises:
        ValueError: odd dims, ``rotary_dim > head_dim`` or ``< 0``, ``factor < 1``,
            ``base <= 0``, bad dtype.

    Source: matches ``transformers``' ``_compute_proportional_rope_parameters`` (tested).
    """
    d = check_even("head_dim", head_dim)
    r = d if rotary_dim is None else check_even("rotary_dim", rotary_dim, minimum=0)
    if r > d:
        raise ValueError(f"rotary_dim must be <= head_dim ({d}), got {r}")
    factor = _factor(factor)
    if original_max_position_embeddings is not None:
        _length("original_max_position_embeddings", original_max_position_embeddings)
    dtype = _dtype(dtype)
    inv_freq = _theta(d, base, d) / factor
    inv_freq[r // 2:] = 0.0
    return inv_freq.to(dtype), 1.0


def default(head_dim: int, factor: float = 1.0,
            original_max_position_embeddings: int | None = None, *,
            base: float = 10000.0, rotary_dim: int | None = None,
            dtype=torch.float32) -> tuple[torch.Tensor, float]:
    """Unscaled RoPE in the registry's form: ``(rope_inv_freq(d, base, r), 1.0)``.

    Args:
        head_dim, base, rotary_dim, dtype: as :func:`posenc.rope.rope_inv_freq`.
        factor: must be 1 (there is nothing to scale); accepted for a uniform signature.
        original_max_position_embeddings: unused; checked for a uniform signature.

    Raises:
        ValueError: ``factor != 1`` and the errors of :func:`posenc.rope.rope_inv_freq`.

    Source: Su et al., RoFormer, eq. (15); ``transformers``' ``"default"`` rope type.
    """
    r = _rotary_dim(head_dim, rotary_dim)
    if check_real("factor", factor) != 1.0:
        raise ValueError(f"factor must be 1 for unscaled RoPE, got {factor:g}")
    if original_max_position_embeddings is not None:
        _length("original_max_position_embeddings", original_max_position_embeddings)
    dtype = _dtype(dtype)
    return _theta(head_dim, base, r).to(dtype), 1.0


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
