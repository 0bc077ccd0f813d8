"""YaRN, as checkpoints run it and as the paper writes it.

:func:`yarn` is the authors' code (what ``transformers`` and vLLM run): a ramp linear in the
pair *index* between :func:`yarn_correction_range`'s bounds (:func:`yarn_ramp`) and the
attention factor of :func:`yarn_attention_factor`. :func:`yarn_paper` is the paper's form,
its ramp linear in the turn count ``r_i = L/λ_i`` (:func:`yarn_paper_ramp`); the
long-context chapter compares the two.
"""

from __future__ import annotations

import math

import torch

from .._checks import check_even, check_real
from ._checks import _dtype, _factor, _length, _rotary_dim, _theta


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
