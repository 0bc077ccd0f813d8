"""Scaled dot-product attention, written to be read.

Shape notation: ``...`` any leading batch/head dims, ``q`` query length, ``k`` key length,
``d`` query/key width, ``d_v`` value width.

    scores  = (Q Kᵀ) · scale + bias           (..., q, k)
    scores  = −inf where mask is False
    weights = softmax(scores, dim=−1)         (..., q, k)
    output  = weights V                        (..., q, d_v)

with ``scale = 1/√d`` by default (Vaswani et al., 2017, eq. 1). Every positional scheme in
the book plugs in here: absolute encodings change the inputs, RoPE rotates ``Q`` and ``K``
before the call, and relative biases (T5, ALiBi) arrive as ``bias``. Masks are boolean,
``True`` = may attend: :func:`causal_mask` and :func:`sliding_window_mask` (the local
layers of Mistral, Gemma 2/3 and gpt-oss). :func:`llama4_attn_scale` is the query temperature
of Llama 4's layers without RoPE.
"""

from __future__ import annotations

import math

import torch

from ._checks import (
    as_positions,
    broadcast_shape,
    check_float_tensor,
    check_int,
    check_lengths,
    check_real,
)

__all__ = ["KVCache", "attention", "causal_mask", "llama4_attn_scale", "sliding_window_mask"]


def causal_mask(q_len: int, k_len: int | None = None, *, device=None) -> torch.Tensor:
    """Boolean ``(q_len, k_len)`` mask, ``True`` where query ``i`` may attend to key ``j``.

    The queries are the *last* ``q_len`` positions of the ``k_len`` keys (the usual layout
    when decoding with a KV cache): query ``i`` sits at absolute position
    ``k_len − q_len + i`` and sees keys ``j <= k_len − q_len + i``. With ``k_len = q_len``
    this is the ordinary lower-triangular mask.

    Raises:
        ValueError: ``q_len < 0``, or ``k_len < q_len``.
    """
    q_len, k_len = check_lengths(q_len, k_len)
    i = torch.arange(q_len, device=device)[:, None] + (k_len - q_len)
    j = torch.arange(k_len, device=device)[None, :]
    return j <= i


def sliding_window_mask(
    q_len: int, k_len: int | None, window: int, *, device=None
) -> torch.Tensor:
    """Boolean ``(q_len, k_len)`` causal sliding-window mask, ``True`` = may attend.

    As in :func:`causal_mask`, the queries are the *last* ``q_len`` of the ``k_len``
    positions: query ``i`` sits at absolute position ``p = k_len − q_len + i`` and sees key
    ``j`` iff ``0 <= p − j < window``, i.e. the ``window`` most recent positions *including
    itself*. ``window >= k_len`` gives the plain causal mask; ``window = 1`` lets each
    query see only itself.

    Args:
        q_len: number of queries, ``>= 0``.
        k_len: number of keys, ``>= q_len``; ``None`` means ``q_len``.
        window: number of positions each query sees (itself included), ``>= 1``; this is
            ``config.sliding_window`` of Mistral, Gemma 2/3 and gpt-oss in ``transformers``.
        device: device of the returned mask (default: torch's default device).

    Returns:
        ``(q_len, k_len)`` bool tensor.

    Raises:
        TypeError: a length or ``window`` that is not an integer.
        ValueError: ``q_len < 0``, ``k_len < q_len``, or ``window < 1``.

    Source: matches ``transformers`` 5.24 ``masking_utils.sliding_window_causal_mask_function``
    (``kv_idx > q_idx − sliding_window`` and ``kv_idx <= q_idx``) with ``q_offset =
    k_len − q_len`` (tested): the window counts the query itself.
    """
    q_len, k_len = check_lengths(q_len, k_len)
    window = check_int("window", window, minimum=1)
    i = torch.arange(q_len, device=device)[:, None] + (k_len - q_len)
    j = torch.arange(k_len, device=device)[None, :]
    distance = i - j
    return (distance >= 0) & (distance < window)


def llama4_attn_scale(positions, *, floor_scale: int = 8192, attn_scale: float = 0.1
                      ) -> torch.Tensor:
    """Llama 4's query temperature on its layers without RoPE: ``1 + a·ln(1 + ⌊(m+1)/F⌋)``.

    A NoPE layer cannot tell near from far, so as the context grows its softmax flattens;
    Llama 4 multiplies each query at absolute position ``m`` by this factor (``F`` =
    ``floor_scale``, ``a`` = ``attn_scale``), which is exactly 1 for ``m < F − 1`` and grows
    logarithmically in steps of ``F`` tokens after that. RoPE layers are left alone.

    Args:
        positions: integer absolute positions ``(..., s)`` (cache offset included), ``>= 0``.
        floor_scale: ``F``, an integer ``>= 1`` (8192 in Llama 4).
        attn_scale: ``a``, finite and ``>= 0`` (0.1 in Llama 4).

    Returns:
        float32 tensor shaped like ``positions`` on their device: multiply ``q`` by
        ``scale[..., None]`` (one factor per query token) before the scores.

    Raises:
        TypeError: non-integer positions or ``floor_scale``.
        ValueError: negative positions; ``floor_scale < 1``; ``attn_scale < 0``.

    Source: matches ``transformers`` 5.24 ``Llama4TextAttention.forward`` (the
    ``attn_temperature_tuning`` branch, which cites arXiv:2501.19399); tested.
    """
    pos = as_positions("positions", positions)
    floor_scale = check_int("floor_scale", floor_scale, minimum=1)
    attn_scale = check_real("attn_scale", attn_scale, ge=0.0)
    steps = torch.floor((pos.to(torch.float32) + 1.0) / floor_scale)
    return torch.log1p(steps) * attn_scale + 1.0


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    bias: torch.Tensor | None = None,
    mask: torch.Tensor | None = None,
    scale: float | None = None,
    *,
    causal: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Scaled dot-product attention returning the output *and* the attention weights.

    Args:
        q: queries ``(..., q, d)``.
        k: keys ``(..., k, d)``.
        v: values ``(..., k, d_v)``.
        bias: optional additive score bias broadcastable to ``(..., q, k)`` (T5 buckets,
            ALiBi, …); added *after* scaling, as in those papers.
        mask: optional boolean mask broadcastable to ``(..., q, k)``; ``True`` = may attend.
        scale: multiplier of ``Q Kᵀ``; default ``1/√d``. Must be finite and ``> 0``.
        causal: also apply :func:`causal_mask` (queries are the last ``q`` of ``k`` keys).

    Returns:
        ``(output, weights)``: ``(..., q, d_v)`` and ``(..., q, k)``; each weight row sums to 1.

    Raises:
        ValueError: mismatched widths/lengths, leading (batch/head) dims of ``q``, ``k``,
            ``v`` that do not broadcast, a non-boolean mask, a bias or mask that does not
            broadcast to ``(..., q, k)``, no key at all (``k = 0 < q``), or a mask that
            leaves a query with no key.
        TypeError: ``q``/``k``/``v`` not floating tensors of one dtype; ``bias``/``mask``
            not tensors; a bool ``bias`` (a mask passed as a bias would add 0/1 to the
            scores); a non-bool ``causal``.

    NaN or inf in ``q``, ``k``, ``v`` or ``bias`` are not searched for (that would cost a
    pass over the data); they propagate to the rows they touch (tested).

    Source: Vaswani et al. (2017), eq. 1; bias placement as in Raffel et al. (2020) and
    Press et al. (2022).
    """
    for name, t in (("q", q), ("k", k), ("v", v)):
        check_float_tensor(name, t, "(..., seq, dim)")
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(
            f"q, k and v must share one dtype, got {q.dtype}, {k.dtype} and {v.dtype}"
        )
    try:
        broadcast_shape(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError as err:
        raise ValueError(
            f"the leading (batch/head) dims of q, k and v must broadcast, got q "
            f"{tuple(q.shape)}, k {tuple(k.shape)} and v {tuple(v.shape)}"
        ) from err
    if not isinstance(causal, bool):
        raise TypeError(f"causal must be a bool, got {causal!r}")
    for name, t in (("bias", bias), ("mask", mask)):
        if t is not None and not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor or None, got {type(t).__name__}")
    if bias is not None and (bias.dtype == torch.bool or bias.is_complex()):
        raise TypeError(
            f"bias must be a real numeric tensor, got {bias.dtype} (pass a boolean mask as "
            "mask=, True = may attend)"
        )
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must share their last dim (d), got q {tuple(q.shape)} and k {tuple(k.shape)}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k and v must share their sequence length, got k {tuple(k.shape)} and "
            f"v {tuple(v.shape)}"
        )
    q_len, k_len = q.shape[-2], k.shape[-2]
    if k_len == 0 and q_len > 0:
        raise ValueError(
            f"k must hold at least one key (softmax over no keys is undefined), got k "
            f"{tuple(k.shape)}"
        )
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else check_real("scale", scale, gt=0.0)

    scores = torch.matmul(q, k.transpose(-2, -1)) * scale
    if bias is not None:
        try:
            scores = scores + bias.to(device=scores.device, dtype=scores.dtype)
        except RuntimeError as err:
            raise ValueError(
                f"bias of shape {tuple(bias.shape)} does not broadcast to scores "
                f"{tuple(scores.shape)}"
            ) from err
        if scores.shape[-2:] != (q_len, k_len):
            raise ValueError(
                f"bias of shape {tuple(bias.shape)} changes the score shape; expected "
                f"(..., {q_len}, {k_len})"
            )
    keep = None
    if mask is not None:
        if mask.dtype != torch.bool:
            raise ValueError(f"mask must be a bool tensor (True = may attend), got {mask.dtype}")
        keep = mask.to(scores.device)
    if causal:
        cm = causal_mask(q_len, k_len, device=q.device)
        keep = cm if keep is None else keep & cm
    if keep is not None:
        try:
            keep = torch.broadcast_to(keep, scores.shape)
        except RuntimeError as err:
            raise ValueError(
                f"mask of shape {tuple(keep.shape)} does not broadcast to scores "
                f"{tuple(scores.shape)}"
            ) from err
        if k_len and not keep.any(dim=-1).all():
            raise ValueError("mask leaves at least one query with no key to attend to")
        scores = scores.masked_fill(~keep, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return torch.matmul(weights, v), weights


class KVCache:
    """Keys and values of past tokens, per layer, for incremental (prefill + decode) inference.

    With RoPE the cache stores keys **after** rotation (each at its own position) and values
    **as they are** (values are never rotated). A new query, rotated at its own position
    ``t``, then scores against every cached key with the right relative offset ``t − n``,
    and no cached entry is ever touched again.

    Per layer the cache holds ``k: (..., L, d)`` and ``v: (..., L, d_v)`` where ``L`` is the
    number of tokens seen so far. ``length(layer)`` is ``L``; ``positions(n, layer)`` gives
    the positions ``L … L + n − 1`` of the next ``n`` tokens — read it *before* that layer's
    :meth:`update` in the same step (every layer sees the same positions).

    Args:
        num_layers: number of layers, ``>= 1``.
        max_length: optional capacity ``>= 1`` (e.g. ``max_position_embeddings``); an update
            that would exceed it raises :class:`IndexError`.

    Example:
        >>> cache = KVCache()
        >>> k_all, v_all = cache.update(0, torch.zeros(1, 3, 4), torch.zeros(1, 3, 2))
        >>> cache.length(), cache.positions(1).tolist()
        (3, [3])
    """

    def __init__(self, num_layers: int = 1, max_length: int | None = None) -> None:
        self.num_layers = check_int("num_layers", num_layers, minimum=1)
        self.max_length = None if max_length is None else check_int(
            "max_length", max_length, minimum=1
        )
        self._k: list[torch.Tensor | None] = [None] * self.num_layers
        self._v: list[torch.Tensor | None] = [None] * self.num_layers

    def _layer(self, layer) -> int:
        layer = check_int("layer", layer)
        if not 0 <= layer < self.num_layers:
            raise IndexError(f"layer must be in [0, {self.num_layers - 1}], got {layer}")
        return layer

    def length(self, layer: int = 0) -> int:
        """Number of tokens cached for ``layer`` (the position of the next token)."""
        k = self._k[self._layer(layer)]
        return 0 if k is None else k.shape[-2]

    def positions(self, n: int = 1, layer: int = 0) -> torch.Tensor:
        """``(n,)`` int64 positions ``length … length + n − 1`` for the next ``n`` tokens.

        On the device of the cached keys (the CPU while the layer is empty).
        """
        n = check_int("n", n, minimum=1)
        start = self.length(layer)
        k = self._k[self._layer(layer)]
        return torch.arange(start, start + n, device="cpu" if k is None else k.device)

    def keys(self, layer: int = 0) -> torch.Tensor | None:
        """Cached (rotated) keys ``(..., L, d)`` of ``layer``, or ``None`` if empty."""
        return self._k[self._layer(layer)]

    def values(self, layer: int = 0) -> torch.Tensor | None:
        """Cached (raw) values ``(..., L, d_v)`` of ``layer``, or ``None`` if empty."""
        return self._v[self._layer(layer)]

    def update(
        self, layer: int, k: torch.Tensor, v: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Append ``n`` new tokens' keys and values to ``layer``; return all cached ones.

        Args:
            layer: layer index in ``[0, num_layers)``.
            k: ``(..., n, d)`` keys, already rotated at positions ``positions(n, layer)``.
            v: ``(..., n, d_v)`` values, not rotated.

        Returns:
            ``(k_all, v_all)``: ``(..., L + n, d)`` and ``(..., L + n, d_v)``.

        Raises:
            IndexError: ``layer`` out of range; ``max_length`` exceeded.
            TypeError: ``k``/``v`` not floating tensors.
            ValueError: ``k`` and ``v`` disagree on leading dims or ``n``; shapes or dtypes
                differ from what this layer already holds.
        """
        layer = self._layer(layer)
        for name, t in (("k", k), ("v", v)):
            check_float_tensor(name, t, "(..., n, dim)")
        if k.shape[:-1] != v.shape[:-1]:
            raise ValueError(
                f"k and v must agree on (..., n), got k {tuple(k.shape)} and v {tuple(v.shape)}"
            )
        old_k, old_v = self._k[layer], self._v[layer]
        if old_k is not None:
            for name, new, old in (("k", k, old_k), ("v", v, old_v)):
                if new.shape[:-2] != old.shape[:-2] or new.shape[-1] != old.shape[-1]:
                    raise ValueError(
                        f"{name} of shape {tuple(new.shape)} does not extend the cached "
                        f"{tuple(old.shape)} of layer {layer} (only the token axis may differ)"
                    )
                if new.dtype != old.dtype:
                    raise ValueError(
                        f"{name} has dtype {new.dtype}, the cache of layer {layer} holds "
                        f"{old.dtype}"
                    )
        total = self.length(layer) + k.shape[-2]
        if self.max_length is not None and total > self.max_length:
            raise IndexError(
                f"cache of layer {layer} would hold {total} tokens, max_length is "
                f"{self.max_length}"
            )
        self._k[layer] = k if old_k is None else torch.cat((old_k, k), dim=-2)
        self._v[layer] = v if old_v is None else torch.cat((old_v, v), dim=-2)
        return self._k[layer], self._v[layer]

    def reset(self) -> None:
        """Empty every layer (start a new sequence)."""
        self._k = [None] * self.num_layers
        self._v = [None] * self.num_layers
