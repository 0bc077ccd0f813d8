"""Relative position biases: Shaw et al. (2018) and T5 (Raffel et al., 2020).

Shape notation: ``h`` heads, ``q`` query length, ``k`` key length, ``d`` per-head width.

Convention (used by every function here, and by Shaw et al. and the T5 code): the *relative
position* of key ``j`` seen from query ``i`` is ``key − query = j − pos_i``, so keys in the
past have negative relative positions and keys in the future positive ones. Queries are the
*last* ``q`` of the ``k`` key positions unless told otherwise (``query_offset``): query ``i``
sits at ``pos_i = query_offset + i`` with ``query_offset = k − q`` by default, the layout of
a KV cache (with ``q = k`` this is simply ``pos_i = i``).

Neither scheme touches ``q``, ``k`` or ``v``; both change the attention *scores*:

* Shaw et al.: a learned vector ``a_ij = w[clip(j − i, −K, K)]`` is added to each key, so the
  score gains the term ``q_i · a_ij`` — it depends on the query's content, it is not one
  scalar per distance (:class:`ShawRelativeKeys`, :func:`relative_key_logits`).
* T5: relative positions are put into ``num_buckets`` log-spaced buckets and each bucket has
  one learned scalar per head, added to the scores (:func:`relative_position_bucket`,
  :class:`RelativePositionBias`).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ._checks import as_positions, check_int, check_lengths, check_real

__all__ = [
    "RelativePositionBias",
    "ShawRelativeKeys",
    "clipped_relative_positions",
    "relative_key_logits",
    "relative_position_bucket",
    "relative_positions",
]


def _toeplitz(values: torch.Tensor, k_len: int) -> torch.Tensor:
    """Lay out ``values`` ``(h, q + k − 1)`` as the ``(h, q, k)`` matrix ``T[h, i, j] =
    values[h, j − i + q − 1]`` — i.e. ``values`` lists one entry per relative position,
    smallest (``−(q − 1)`` steps) first. One contiguous copy; no ``(q, k)`` index tensors.

    With the values reversed, row ``i`` is the window ``rev[h, i : i + k]`` read backwards.
    """
    rev = values.flip(-1).contiguous()
    # flip allocates its result "like" the overlapping unfold view, which for some q < k
    # comes out transposed; .contiguous() is then one more (rare) copy, else a no-op.
    return rev.unfold(-1, k_len, 1).flip(-1).contiguous()


def _query_offset(q_len: int, k_len: int, query_offset) -> int:
    if query_offset is None:
        if k_len < q_len:
            raise ValueError(
                f"k_len must be >= q_len when the queries are the last q_len keys "
                f"(query_offset=None), got q_len={q_len}, k_len={k_len}; pass query_offset "
                "explicitly for another layout"
            )
        return k_len - q_len
    return check_int("query_offset", query_offset, minimum=0)


def relative_positions(
    q_len: int,
    k_len: int | None = None,
    *,
    query_offset: int | None = None,
    device=None,
) -> torch.Tensor:
    """The matrix of relative positions ``key − query``.

    Args:
        q_len: number of queries ``q``; an integer ``>= 0``.
        k_len: number of keys ``k`` (default ``q_len``); an integer ``>= 0``.
        query_offset: absolute position of the first query (T5's ``past_seen_tokens``).
            Default ``k_len − q_len``: the queries are the last ``q_len`` keys, as when
            decoding with a KV cache. Must be ``>= 0``.
        device: torch device of the result.

    Returns:
        ``(q, k)`` int64 tensor ``R`` with ``R[i, j] = j − (query_offset + i)``: negative for
        keys before the query, 0 on the query itself, positive for later keys.

    Raises:
        ValueError: a negative length or offset, or ``k_len < q_len`` with the default offset.
        TypeError: a non-integer length or offset.

    Source: Shaw et al. (2018), section 3.2 (``j − i``); matches ``transformers``'
    ``T5Attention.compute_bias`` (``memory_position − context_position``).
    """
    q_len, k_len = check_lengths(q_len, k_len, queries_last=False)
    offset = _query_offset(q_len, k_len, query_offset)
    query = torch.arange(q_len, device=device)[:, None] + offset
    key = torch.arange(k_len, device=device)[None, :]
    return key - query


def clipped_relative_positions(
    q_len: int,
    k_len: int | None = None,
    max_relative_position: int = 16,
    *,
    query_offset: int | None = None,
    device=None,
) -> torch.Tensor:
    """Shaw et al.'s clipped relative positions ``clip(j − i, −K, K)``.

    Every distance beyond ``K = max_relative_position`` shares the edge value, so a table of
    ``2K + 1`` learned vectors covers any sequence length.

    Args:
        q_len, k_len, query_offset, device: as in :func:`relative_positions`.
        max_relative_position: the clipping distance ``K``; an integer ``>= 0``.

    Returns:
        ``(q, k)`` int64 tensor with values in ``[−K, K]``; add ``K`` to index a table of
        ``2K + 1`` rows.

    Raises:
        ValueError: a negative length, offset or ``max_relative_position``.

    Source: Shaw et al. (2018), eq. (3)–(5) with ``clip(x, k) = max(−k, min(k, x))``.
    """
    max_relative_position = check_int(
        "max_relative_position", max_relative_position, minimum=0
    )
    rel = relative_positions(q_len, k_len, query_offset=query_offset, device=device)
    return rel.clamp(-max_relative_position, max_relative_position)


class ShawRelativeKeys(nn.Module):
    """Shaw et al.'s learned relative key vectors ``a^K_ij = w^K[clip(j − i, −K, K)]``.

    The score of query ``i`` and key ``j`` becomes ``q_i · (k_j + a_ij) / √d``: the extra term
    ``q_i · a_ij`` (see :func:`relative_key_logits`) depends on the query's *content*, so
    it is not a fixed scalar per distance as in T5 or ALiBi. The vectors are shared by all
    heads of a layer, as in the paper.

    Args:
        max_relative_position: clipping distance ``K``; an integer ``>= 0``.
        dim: width ``d`` of each vector (the per-head key width); an integer ``>= 1``.
        init_std: standard deviation of the normal initialisation; ``>= 0``.

    Attributes:
        weight: ``(2K + 1, d)`` parameter; row ``r + K`` holds ``w^K_r`` for ``r ∈ [−K, K]``.

    Raises:
        ValueError: ``max_relative_position < 0``, ``dim < 1`` or ``init_std < 0``.

    Source: Shaw et al. (2018), eq. (4)–(5).
    """

    def __init__(self, max_relative_position: int, dim: int, *, init_std: float = 0.02):
        super().__init__()
        self.max_relative_position = check_int(
            "max_relative_position", max_relative_position, minimum=0
        )
        self.dim = check_int("dim", dim, minimum=1)
        init_std = check_real("init_std", init_std, ge=0.0)
        self.weight = nn.Parameter(torch.empty(2 * self.max_relative_position + 1, self.dim))
        nn.init.normal_(self.weight, mean=0.0, std=init_std)

    def extra_repr(self) -> str:
        return f"max_relative_position={self.max_relative_position}, dim={self.dim}"

    def forward(
        self, q_len: int, k_len: int | None = None, *, query_offset: int | None = None
    ) -> torch.Tensor:
        """The ``(q, k, d)`` tensor of relative key vectors ``a_ij``.

        Args:
            q_len, k_len, query_offset: as in :func:`relative_positions`.

        Returns:
            ``(q, k, d)`` tensor; ``a_ij`` depends on ``j − i`` only (clipped at ``±K``).

        Raises:
            ValueError: as :func:`relative_positions`.
        """
        rel = clipped_relative_positions(
            q_len, k_len, self.max_relative_position,
            query_offset=query_offset, device=self.weight.device,
        )
        return self.weight[rel + self.max_relative_position]


def relative_key_logits(q: torch.Tensor, rel_keys: torch.Tensor) -> torch.Tensor:
    """The score term ``q_i · a_ij`` of Shaw et al. (before the ``1/√d`` scale).

    Shaw et al. split the score ``q_i · (k_j + a_ij)`` into the usual ``q_i · k_j`` plus this
    term, which is computed for all heads at once against the shared ``a``. Multiply it by
    the attention scale and pass it as ``bias`` to :func:`posenc.attention.attention` to get
    their eq. (5).

    Args:
        q: queries ``(..., q, d)``.
        rel_keys: relative key vectors ``(q, k, d)`` from :class:`ShawRelativeKeys`.

    Returns:
        ``(..., q, k)`` tensor ``L[..., i, j] = q_i · a_ij``.

    Raises:
        TypeError: an argument that is not a floating tensor.
        ValueError: ``q`` and ``rel_keys`` disagree on ``q`` or ``d``, or ``rel_keys`` is
            not 3-D.

    Source: Shaw et al. (2018), eq. (5) and section 3.3 (efficient implementation).
    """
    for name, t in (("q", q), ("rel_keys", rel_keys)):
        if not isinstance(t, torch.Tensor) or not t.is_floating_point():
            raise TypeError(f"{name} must be a floating torch.Tensor, got {type(t).__name__}")
    if rel_keys.ndim != 3:
        raise ValueError(f"rel_keys must have shape (q, k, d), got {tuple(rel_keys.shape)}")
    if q.ndim < 2 or q.shape[-2] != rel_keys.shape[0] or q.shape[-1] != rel_keys.shape[-1]:
        raise ValueError(
            f"q must have shape (..., {rel_keys.shape[0]}, {rel_keys.shape[-1]}) to match "
            f"rel_keys {tuple(rel_keys.shape)}, got {tuple(q.shape)}"
        )
    return torch.einsum("...id,ijd->...ij", q, rel_keys.to(q.dtype))


def _check_bucket_args(bidirectional, num_buckets, max_distance) -> tuple[bool, int, int]:
    if not isinstance(bidirectional, bool):
        raise TypeError(f"bidirectional must be a bool, got {bidirectional!r}")
    num_buckets = check_int("num_buckets", num_buckets, minimum=4 if bidirectional else 2)
    if bidirectional and num_buckets % 2:
        raise ValueError(
            f"num_buckets must be even when bidirectional=True (half the buckets per "
            f"direction), got {num_buckets}"
        )
    per_direction = num_buckets // 2 if bidirectional else num_buckets
    max_exact = per_direction // 2
    max_distance = check_int("max_distance", max_distance, minimum=max_exact + 1)
    return bidirectional, num_buckets, max_distance


def relative_position_bucket(
    relative_position,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> torch.Tensor:
    """T5's bucket index of each relative position ``key − query``.

    With ``B`` buckets per direction (``num_buckets/2`` if bidirectional, else
    ``num_buckets``) and ``E = B/2``: distances ``0 … E−1`` get a bucket each; larger distances
    ``n`` share log-spaced buckets ``E + ⌊log(n/E) / log(max_distance/E) · (B − E)⌋``, capped
    at ``B − 1``. Before the cap the formula reaches ``B`` at ``n = max_distance``, so the last
    bucket starts earlier, at ``E · (max_distance/E)^((B−E−1)/(B−E))`` rounded up: distance 91
    (bidirectional) or 113 (causal) with the defaults.

    * ``bidirectional=True`` (encoder): past keys use buckets ``0 … B−1``, future keys
      ``B … 2B−1``. Defaults: 0→0, −1→1, +1→17, −7→7, −8→8, −20→10, +20→26, ≤−127→15,
      ≥+127→31.
    * ``bidirectional=False`` (decoder): future keys (positive positions) all go to bucket
      0, which they share with distance 0 (a causal mask hides them anyway). Defaults:
      −1→1, −8→8, −20→17, ≤−127→31, +5→0.

    Args:
        relative_position: integer relative positions ``key − query``, any shape ``S`` (an
            int, a sequence, an integer tensor, or a float tensor of whole numbers).
        bidirectional: whether keys after the query get their own buckets.
        num_buckets: total number of buckets; ``>= 4`` and even if bidirectional, else
            ``>= 2``.
        max_distance: distance at which the log scale runs out of buckets (the last bucket
            starts before it, see above); an integer larger than ``E`` (the exact range).

    Returns:
        int64 tensor of shape ``S`` with values in ``[0, num_buckets)``.

    Raises:
        ValueError: bad ``num_buckets``/``max_distance`` or non-whole positions.
        TypeError: non-integer arguments or a non-bool ``bidirectional``.

    Example (the defaults listed above):

        >>> relative_position_bucket([0, -1, 1, -7, -8, -20, 20, -127, 127])
        tensor([ 0,  1, 17,  7,  8, 10, 26, 15, 31])
        >>> relative_position_bucket([-1, -8, -20, -127, 5], bidirectional=False)
        tensor([ 1,  8, 17, 31,  0])

    Source: Raffel et al. (2020), section 2.1; matches ``transformers``'
    ``T5Attention._relative_position_bucket`` exactly, including its float32 logarithm.
    """
    bidirectional, num_buckets, max_distance = _check_bucket_args(
        bidirectional, num_buckets, max_distance
    )
    rel = as_positions("relative_position", relative_position, minimum=None)
    buckets = torch.zeros_like(rel)
    if bidirectional:
        num_buckets //= 2
        buckets = buckets + (rel > 0).to(torch.int64) * num_buckets
        n = rel.abs()
    else:
        n = (-rel).clamp(min=0)
    max_exact = num_buckets // 2
    is_small = n < max_exact
    # Same float32 expression, in the same order, as the reference code; clamping to
    # max_exact only avoids log(0) in entries that torch.where discards.
    n_large = n.clamp(min=max_exact).float()
    if_large = max_exact + (
        torch.log(n_large / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.int64)
    if_large = if_large.clamp(max=num_buckets - 1)
    return buckets + torch.where(is_small, n, if_large)


class RelativePositionBias(nn.Module):
    """T5's relative position bias: one learned scalar per (bucket, head).

    ``forward(q_len, k_len)`` returns ``bias[h, i, j] = weight[bucket(j − pos_i), h]``, to be
    added to the attention scores of self-attention (T5 computes it once, in the first
    layer, and reuses it in every layer; cross-attention gets no relative bias). T5 does not
    scale its scores by ``1/√d``; with :func:`posenc.attention.attention` the bias is added
    after whatever ``scale`` is used.

    Args:
        num_heads: number of heads ``h``; an integer ``>= 1``.
        num_buckets: number of buckets (32 in T5); see :func:`relative_position_bucket`.
        max_distance: distance at which the log scale runs out of buckets (128 in T5; the
            last bucket starts earlier, see :func:`relative_position_bucket`).
        bidirectional: ``True`` for an encoder, ``False`` for a decoder (causal).
        init_std: standard deviation of the normal initialisation; ``>= 0``.

    Attributes:
        weight: ``(num_buckets, h)`` parameter, like ``transformers``'
            ``relative_attention_bias.weight``. Parameters: ``num_buckets · h`` (256 for
            T5-small's 32 buckets × 8 heads).

    Raises:
        ValueError: ``num_heads < 1`` or bad bucket arguments.

    Source: Raffel et al. (2020), section 2.1; matches ``transformers``'
    ``T5Attention.compute_bias`` (with ``query_offset`` as its ``past_seen_tokens``).
    """

    def __init__(
        self,
        num_heads: int,
        num_buckets: int = 32,
        max_distance: int = 128,
        bidirectional: bool = True,
        *,
        init_std: float = 0.02,
    ):
        super().__init__()
        self.num_heads = check_int("num_heads", num_heads, minimum=1)
        self.bidirectional, self.num_buckets, self.max_distance = _check_bucket_args(
            bidirectional, num_buckets, max_distance
        )
        init_std = check_real("init_std", init_std, ge=0.0)
        self.weight = nn.Parameter(torch.empty(self.num_buckets, self.num_heads))
        nn.init.normal_(self.weight, mean=0.0, std=init_std)

    def extra_repr(self) -> str:
        return (
            f"num_heads={self.num_heads}, num_buckets={self.num_buckets}, "
            f"max_distance={self.max_distance}, bidirectional={self.bidirectional}"
        )

    def buckets(
        self, q_len: int, k_len: int | None = None, *, query_offset: int | None = None
    ) -> torch.Tensor:
        """The ``(q, k)`` int64 bucket index of every query/key pair.

        Args and raises as :func:`relative_positions`.
        """
        rel = relative_positions(
            q_len, k_len, query_offset=query_offset, device=self.weight.device
        )
        return relative_position_bucket(
            rel, self.bidirectional, self.num_buckets, self.max_distance
        )

    def forward(
        self, q_len: int, k_len: int | None = None, *, query_offset: int | None = None
    ) -> torch.Tensor:
        """The bias ``(h, q, k)`` for ``q_len`` queries and ``k_len`` keys.

        Args:
            q_len: number of queries; an integer ``>= 0``.
            k_len: number of keys (default ``q_len``).
            query_offset: absolute position of the first query; default ``k_len − q_len``
                (the queries are the last ``q_len`` keys, as when decoding with a KV cache:
                one new token after 9 cached ones is ``forward(1, 10)``).

        Returns:
            ``(h, q, k)`` tensor; entry ``[h, i, j]`` depends on ``j − pos_i`` only.

        Raises:
            ValueError: as :func:`relative_positions`.
        """
        q_len, k_len = check_lengths(q_len, k_len, queries_last=False)
        offset = _query_offset(q_len, k_len, query_offset)
        if q_len == 0 or k_len == 0:
            return self.weight[self.buckets(q_len, k_len, query_offset=offset)].permute(2, 0, 1)
        # The bias depends on j − pos_i only: look up the q + k − 1 distinct relative
        # positions (smallest first) once and lay them out as a Toeplitz matrix — one
        # contiguous (h, q, k) copy, no (q, k) index tensors, no (q, k, h) gather.
        rel = torch.arange(-(offset + q_len - 1), k_len - offset, device=self.weight.device)
        buckets = relative_position_bucket(
            rel, self.bidirectional, self.num_buckets, self.max_distance
        )
        return _toeplitz(self.weight[buckets].T, k_len)
