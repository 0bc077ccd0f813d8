"""Llama 3.1's scaling: three wavelength bands, kept, interpolated, and a smooth middle.

:func:`llama3` keeps the high frequencies, divides the low ones by ``s`` and mixes the two
linearly in the turn count ``L/λ_i`` between them: the paper-YaRN ramp with
``α = low_freq_factor``, ``β = high_freq_factor`` and no attention factor.
"""

from __future__ import annotations

import math

import torch

from .._checks import check_real
from ._checks import _dtype, _factor, _length, _rotary_dim, _theta


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
