"""FIRE: a learned function of the relative distance, with progressive interpolation.

Li et al. (ICLR 2024), "Functional Interpolation for Relative Positions Improves Long Context
Transformers", add to every attention score the bias

    b(i, j) = f_θ( ψ(i − j) / ψ(max(L, i)) ),        ψ(x) = log(c·x + 1),

where ``i`` is the query's position, ``j`` the key's, ``f_θ`` a small MLP with one output
per head, ``c > 0`` a learned scale and ``L`` a learned threshold (initialised to the
training length). Two ideas are in the formula:

* **ψ** spreads the short distances apart (a log transform, like T5's log buckets but
  continuous), so ``f_θ`` can treat neighbours finely and far keys coarsely;
* **progressive interpolation**: dividing by ``ψ(max(L, i))`` maps every causal distance
  ``0 ≤ i − j ≤ i`` into ``[0, 1]``, at every length. Past the threshold (``i > L``) a
  longer context is *squeezed* into the range the MLP was trained on, instead of asking the
  MLP for inputs it never saw — position interpolation built into the bias.

Below the threshold the denominator is the constant ``ψ(L)``, so ``b`` is a plain function
of ``i − j``: with a suitable ``f`` FIRE is T5's bias or ALiBi there exactly (the paper
proves it can represent both; :func:`fire_bias` takes any ``f`` so a test checks the ALiBi
case).

Shape notation: ``h`` heads, ``q`` queries, ``k`` keys. Queries sit at positions
``query_offset + 0 … q − 1`` (default ``k − q``: the last ``q`` keys, a KV cache's layout),
keys at ``0 … k − 1``, as in :mod:`posenc.relative`.

Source: Li et al.'s formula and PyTorch listing, which this module follows operation by
operation (``|c·(i − j)|`` and ``|c·max(i, |L|)|`` inside the logs, ``eps`` added to the
denominator, ``Linear(1, 32) → ReLU → Linear(32, h)``, ``c`` initialised to 0.1, the
threshold learned as a multiplier of its initial value); ``tests/test_fire.py`` writes that
listing out and matches it exactly. Only the paper's abstract was read first-hand here; the
formula and the listing were read in public copies that agree with each other (the listing
e.g. in ``mcleish7/arithmetic``, ``cramming/architectures/embeddings.py``), not in the
paper's appendix, which this project could not open.
"""

from __future__ import annotations

import torch
from torch import nn

from ._checks import check_int, check_lengths, check_real

__all__ = ["FIREBias", "fire_bias", "fire_inputs"]


def fire_inputs(q_len: int, k_len: int | None = None, *, c, threshold,
                query_offset: int | None = None, eps: float = 1e-6,
                progressive: bool = True, device=None,
                dtype=torch.float32) -> torch.Tensor:
    """FIRE's normalised distances ``ψ(i − j) / (ψ(max(L, i)) + eps)``, shape ``(q, k)``.

    Args:
        q_len, k_len: queries ``q >= 0`` and keys ``k >= 0`` (default ``k = q``; with the
            default offset ``k >= q``).
        c: ψ's scale (float or 0-d tensor, e.g. a learned parameter); its absolute value is
            used, as in the paper's listing.
        threshold: ``L`` (float or 0-d tensor); its absolute value is used.
        query_offset: position of the first query (default ``k − q``).
        eps: added to the denominator (default ``1e-6``, the paper's).
        progressive: ``False`` replaces ``max(L, i)`` by ``L`` (the normaliser frozen at
            its value below the threshold): an ablation of progressive interpolation, under
            which inputs exceed 1 past ``L`` instead of being squeezed into ``[0, 1]``.
        device, dtype: of the result (float32 or float64).

    Returns:
        ``(q, k)``; entries in ``[0, 1]`` for past keys ``j <= i`` (the causal part), the
        same formula with ``|i − j|`` for future keys (masked in a decoder).

    Raises:
        ValueError: negative lengths, ``k < q`` with the default offset, a negative offset,
            ``eps < 0``.
    """
    q_len, k_len = check_lengths(q_len, k_len, queries_last=query_offset is None)
    offset = k_len - q_len if query_offset is None else check_int(
        "query_offset", query_offset, minimum=0)
    eps = check_real("eps", eps, ge=0.0)
    c = torch.as_tensor(c, dtype=dtype, device=device)
    threshold = torch.as_tensor(threshold, dtype=dtype, device=device)
    qpos = torch.arange(q_len, dtype=dtype, device=device) + offset
    kpos = torch.arange(k_len, dtype=dtype, device=device)
    distance = torch.log(torch.abs(c * (qpos[:, None] - kpos[None, :])) + 1)
    normaliser = torch.maximum(qpos, torch.abs(threshold))[:, None] if progressive else \
        torch.abs(threshold).expand(q_len, 1)
    return distance / (torch.log(torch.abs(c * normaliser) + 1) + eps)


def fire_bias(q_len: int, k_len: int | None = None, *, f, c, threshold,
              query_offset: int | None = None, eps: float = 1e-6, progressive: bool = True,
              device=None, dtype=torch.float32) -> torch.Tensor:
    """FIRE's bias ``b(i, j) = f(ψ(i − j) / ψ(max(L, i)))`` for any function ``f``.

    Args:
        f: maps inputs ``(q, k, 1)`` to ``(q, k, h)`` (the MLP of :class:`FIREBias`, or
            any callable, e.g. one that makes FIRE equal ALiBi below the threshold).
        q_len, k_len, c, threshold, query_offset, eps, progressive, device, dtype: as
            :func:`fire_inputs`.

    Returns:
        ``(h, q, k)``, to add to the scaled attention scores.
    """
    x = fire_inputs(q_len, k_len, c=c, threshold=threshold, query_offset=query_offset,
                    eps=eps, progressive=progressive, device=device, dtype=dtype)
    return f(x.unsqueeze(-1)).permute(2, 0, 1)


class FIREBias(nn.Module):
    """FIRE's learned bias, one value per head and (query, key) pair.

    Args:
        num_heads: ``h >= 1`` outputs of the MLP.
        mlp_width: hidden width of the MLP (default 32, the paper's).
        init_c: initial ψ scale ``c > 0`` (default 0.1, the paper's).
        init_threshold: initial ``L > 0``, the training length (the paper's ``init_L``).
        eps: added to ψ's denominator (default ``1e-6``).

    Parameters: the MLP ``Linear(1, w) → ReLU → Linear(w, h)``, ``c`` and
    ``threshold_multiplier`` (the learned threshold is ``|multiplier · init_threshold|``,
    the initial value a fixed buffer), as in the paper's listing.

    Raises:
        ValueError: a size ``< 1``, ``init_c`` or ``init_threshold`` not ``> 0``,
            ``eps < 0``.
    """

    def __init__(self, num_heads: int, *, mlp_width: int = 32, init_c: float = 0.1,
                 init_threshold: float = 512.0, eps: float = 1e-6):
        super().__init__()
        self.num_heads = check_int("num_heads", num_heads, minimum=1)
        mlp_width = check_int("mlp_width", mlp_width, minimum=1)
        self.mlp = nn.Sequential(nn.Linear(1, mlp_width), nn.ReLU(),
                                 nn.Linear(mlp_width, self.num_heads))
        self.c = nn.Parameter(torch.tensor(check_real("init_c", init_c, gt=0.0)))
        self.register_buffer("init_threshold", torch.tensor(
            check_real("init_threshold", init_threshold, gt=0.0)))
        self.threshold_multiplier = nn.Parameter(torch.tensor(1.0))
        self.eps = check_real("eps", eps, ge=0.0)

    @property
    def threshold(self) -> torch.Tensor:
        """The learned threshold ``L = |multiplier · init_threshold|`` (0-d tensor)."""
        return torch.abs(self.threshold_multiplier * self.init_threshold)

    def extra_repr(self) -> str:
        return f"num_heads={self.num_heads}, eps={self.eps:g}"

    def forward(self, q_len: int, k_len: int | None = None, *,
                query_offset: int | None = None, progressive: bool = True) -> torch.Tensor:
        """The bias ``(h, q, k)`` on the parameters' device and dtype (see
        :func:`fire_bias`; ``progressive=False`` is the ablation described there)."""
        weight = self.mlp[0].weight
        return fire_bias(q_len, k_len, f=self.mlp, c=self.c, threshold=self.threshold,
                         query_offset=query_offset, eps=self.eps, progressive=progressive,
                         device=weight.device, dtype=weight.dtype)
