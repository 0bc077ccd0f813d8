"""ALiBi: attention with linear biases (Press et al., 2022).

Shape notation: ``h`` heads, ``q`` query length, ``k`` key length. Query ``i`` sits at
absolute position ``pos_i = k − q + i``: the queries are the *last* ``q`` of the ``k`` keys,
as when decoding with a KV cache (with ``q = k``, ``pos_i = i``).

No position vector is added and nothing is rotated; each head ``h`` adds a fixed penalty
proportional to the distance to its scores:

    scores[h, i, j] = q_i · k_j / √d  −  m_h · (pos_i − j)        (j <= pos_i)

with slopes ``m_h`` from :func:`alibi_slopes`. Three equivalent or related layouts of the
bias are produced by :func:`alibi_bias`:

* ``form="distance", causal=True`` — the paper's form ``−m·(pos_i − j)`` for past keys and
  ``−inf`` for future keys, so the bias also *is* the causal mask.
* ``form="distance", causal=False`` — the symmetric ``−m·|pos_i − j|`` (an encoder-style
  variant; the paper only defines the causal one).
* ``form="row", causal=True`` — the reference code's shortcut ``+m·j``: it differs from the
  causal form by ``m·pos_i``, a constant in each row, which softmax ignores.
"""

from __future__ import annotations

import math

import torch

from ._checks import check_choice, check_int, check_lengths
from .relative import _toeplitz, relative_positions

FORMS = ("distance", "row")

__all__ = ["FORMS", "alibi_bias", "alibi_slopes"]


def _power_of_two_slopes(n: int) -> list[float]:
    # 2^(-8/n), 2^(-16/n), ..., 2^(-8): a geometric sequence with ratio 2^(-8/n).
    return [2.0 ** (-8.0 * (h + 1) / n) for h in range(n)]


def alibi_slopes(num_heads: int, *, dtype=torch.float32) -> torch.Tensor:
    """The ALiBi slope ``m_h`` of each head, for any number of heads.

    * ``num_heads = n`` a power of two: the geometric sequence ``m_h = 2^(−8(h+1)/n)``,
      ``h = 0 … n−1`` (start and ratio ``2^(−8/n)``; 8 heads → 1/2, 1/4, …, 1/256).
    * otherwise, with ``P`` the largest power of two below ``n``: the ``P`` slopes of ``P``
      heads, then every other slope of ``2P`` heads (the 1st, 3rd, 5th, …), ``n − P`` of them.
      The added slopes interleave with the first ones, so the list is not sorted:
      ``n = 12`` → ``[0.5, 0.25, …, 0.00390625, 0.7071068, 0.3535534, 0.1767767,
      0.0883883]``; ``n = 6`` → ``[0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125]``.

    The naive ``2^(−8(h+1)/n)`` for a non-power of two is *not* this rule.

    Args:
        num_heads: number of heads ``n``; an integer ``>= 1``.
        dtype: float32 (default) or float64; the slopes are computed in float64.

    Returns:
        ``(n,)`` tensor of slopes in ``(0, 1)``.

    Raises:
        ValueError: ``num_heads < 1``; a dtype other than float32/float64.
        TypeError: ``num_heads`` not an integer.

    Example (a power of two: the geometric sequence ``2^(-8/n)``, ``2^(-16/n)``, …; six
    heads take the four of ``n = 4`` and the odd-numbered ones of ``n = 8``):

        >>> alibi_slopes(8)
        tensor([0.5000, 0.2500, 0.1250, 0.0625, 0.0312, 0.0156, 0.0078, 0.0039])
        >>> alibi_slopes(6)
        tensor([0.2500, 0.0625, 0.0156, 0.0039, 0.5000, 0.1250])

    Source: Press et al. (2022), section 3 and the ``get_slopes`` function of their code;
    matches ``transformers``' BLOOM ``_get_alibi_slopes`` (and MPT's slope order).
    """
    n = check_int("num_heads", num_heads, minimum=1)
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype}")
    p = 2 ** math.floor(math.log2(n))
    slopes = _power_of_two_slopes(p)
    if p != n:
        slopes += _power_of_two_slopes(2 * p)[0::2][: n - p]
    return torch.tensor(slopes, dtype=torch.float64).to(dtype)


def alibi_bias(
    num_heads: int,
    q_len: int,
    k_len: int | None = None,
    causal: bool = True,
    *,
    form: str = "distance",
    slopes=None,
    dtype=torch.float32,
    device=None,
) -> torch.Tensor:
    """The ALiBi bias ``(h, q, k)`` to add to the (already scaled) attention scores.

    The queries are the last ``q_len`` of the ``k_len`` key positions (query ``i`` is at
    ``pos_i = k_len − q_len + i``), as when decoding with a KV cache: one new token after 9
    cached ones is ``alibi_bias(h, 1, 10)``, and that row equals the last row of
    ``alibi_bias(h, 10, 10)``.

    Args:
        num_heads: number of heads ``h``; an integer ``>= 1``.
        q_len: number of queries; an integer ``>= 0``.
        k_len: number of keys (default ``q_len``); an integer ``>= q_len``.
        causal: ``True`` (decoder, the paper): ``−inf`` for keys after the query, so
            ``attention(q, k, v, bias=alibi_bias(...))`` is causal on its own (adding
            ``causal=True`` there changes nothing). ``False``: no masking.
        form: ``"distance"`` — ``−m·(pos_i − j)`` if causal, the symmetric ``−m·|pos_i − j|``
            otherwise; ``"row"`` — the reference code's ``+m·j`` (causal only: without the
            mask it is not a distance penalty at all). Both causal forms give identical
            softmax weights.
        slopes: optional ``(h,)`` slopes (finite, ``>= 0``) replacing :func:`alibi_slopes`,
            e.g. the simplified ``[0.5, 0.25, 0.125, 0.0625]`` of the source notes.
        dtype: float32 (default) or float64.
        device: torch device of the result (default: the device of a ``slopes`` tensor,
            else torch's default device).

    Returns:
        ``(h, q, k)`` tensor. Distance-form entries are ``<= 0`` (0 on the query itself).

    Raises:
        ValueError: ``num_heads < 1``, a negative length, ``k_len < q_len``, an unknown
            ``form``, ``form="row"`` with ``causal=False``, or ``slopes`` of the wrong
            shape, negative or not finite.
        TypeError: a non-integer size or a non-bool ``causal``.

    Source: Press et al. (2022), section 3 (causal form); the row form is their reference
    code's and matches ``transformers``' BLOOM ``build_alibi_tensor`` (``m·j`` for an
    unpadded sequence).
    """
    num_heads = check_int("num_heads", num_heads, minimum=1)
    q_len, k_len = check_lengths(q_len, k_len)
    if not isinstance(causal, bool):
        raise TypeError(f"causal must be a bool, got {causal!r}")
    form = check_choice("form", form, FORMS)
    if form == "row" and not causal:
        raise ValueError(
            "form='row' needs causal=True: +m·j equals the distance penalty only up to a "
            "per-row constant *under a causal mask*; use form='distance' for causal=False"
        )
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype}")
    if device is None and isinstance(slopes, torch.Tensor):
        device = slopes.device
    if slopes is None:
        m = alibi_slopes(num_heads, dtype=torch.float64)
    else:
        host = slopes.device if isinstance(slopes, torch.Tensor) else "cpu"
        m = torch.as_tensor(slopes, dtype=torch.float64, device=host).reshape(-1)
        if m.numel() != num_heads or torch.as_tensor(slopes).ndim > 1:
            raise ValueError(
                f"slopes must have shape ({num_heads},) (one per head), got "
                f"{tuple(torch.as_tensor(slopes).shape)}"
            )
        if not torch.isfinite(m).all() or (m < 0).any():
            raise ValueError(f"slopes must be finite and >= 0, got {m.tolist()}")
    m = m.to(device)
    if q_len == 0 or k_len == 0:
        return torch.empty((num_heads, q_len, k_len), dtype=dtype, device=device)
    if form == "distance":
        # The bias depends on j − pos_i only: compute it (in float64, rounded once) for the
        # q + k − 1 distinct relative positions and lay those out as a Toeplitz matrix.
        rel = torch.arange(-(k_len - 1), k_len - (k_len - q_len), device=device)
        dist = rel if causal else -rel.abs()  # −(pos_i − j), or −|pos_i − j|
        values = m[:, None] * dist.to(torch.float64)
        if causal:
            values = values.masked_fill(rel > 0, float("-inf"))
        return _toeplitz(values.to(dtype), k_len)
    # Row form, m·j: not a function of j − pos_i. Products in float64 rounded once, one head
    # at a time through a (q, k) float64 buffer (not a 4 GiB (h, q, k) float64 temporary).
    rel = relative_positions(q_len, k_len, device=device)  # j − pos_i, int64
    j = torch.arange(k_len, device=device, dtype=torch.float64).expand(q_len, k_len)
    bias = torch.empty((num_heads, q_len, k_len), dtype=dtype, device=device)
    buf = torch.empty((q_len, k_len), dtype=torch.float64, device=device)
    for h in range(num_heads):
        bias[h].copy_(torch.mul(j, m[h], out=buf))
    return bias.masked_fill_(rel > 0, float("-inf"))
