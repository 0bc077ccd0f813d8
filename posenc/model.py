"""A tiny decoder-only Transformer whose positional scheme is one argument.

Shape notation: ``b`` batch, ``s`` sequence length, ``d`` = ``d_model``, ``h`` heads,
``d_h = d / h`` per-head width, ``V`` vocabulary size, ``C`` output classes.

The same pre-LayerNorm block (causal multi-head attention, then a GELU MLP, each wrapped
in a residual connection; Radford et al., 2019) serves every scheme. The scheme decides
*where* position enters — the three paths the book walks through:

========================  ==================================================  ==========
``position``              where position enters                               parameters
========================  ==================================================  ==========
``"none"`` (NoPE)         nowhere; only the causal mask breaks the symmetry   0
``"sinusoidal"``          added to the token embeddings (Vaswani et al.)      0
``"learned"``             a trainable table added to the token embeddings     ``L · d``
``"rope"``                Q and K rotated in every layer (Su et al.)          0
``"alibi"``               a fixed linear bias on the scores (Press et al.)    0
``"t5"``                  a learned bias per log-bucket of distance (Raffel)  buckets·h
``"fire"``                a learned MLP of the normalised log distance (Li)   ``2w+(w+1)h+2``
========================  ==================================================  ==========

A RoPE model can also leave chosen layers without positions (``nope_layers``), the
interleaving of Llama 4 (every fourth layer, with an optional query temperature there),
Command A and SmolLM3, restrict its RoPE layers to a sliding window (``rope_window``: Command
A's and Cohere's RNoPE-SWA pairing of local RoPE layers with global NoPE layers), and rotate
only the fastest fraction of its pairs (``rope_fraction``: p-RoPE, Barbero et al. 2025, the
``proportional`` frequencies of Gemma 4's global layers).

Evaluation-time variants do not change the weights: RoPE can run with any other
``(inv_freq, attention_factor)`` pair (PI, NTK-aware, YaRN, … from :mod:`posenc.scaling`),
and a learned table can be stretched with
:meth:`posenc.learned.LearnedPositionalEmbedding.interpolate`.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ._checks import check_choice, check_int, check_real
from .alibi import alibi_bias
from .attention import llama4_attn_scale, sliding_window_mask
from .fire import FIREBias
from .learned import LearnedPositionalEmbedding
from .relative import RelativePositionBias
from .rope import apply_rope, rope_cos_sin, rope_inv_freq
from .scaling import proportional
from .sinusoidal import sinusoidal_encoding_at

__all__ = ["POSITIONS", "CausalSelfAttention", "TinyDecoder", "TransformerBlock"]

#: The positional schemes :class:`TinyDecoder` accepts as its ``position`` argument.
POSITIONS = ("none", "sinusoidal", "learned", "rope", "alibi", "t5", "fire")


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention: :func:`posenc.attention.attention`'s formula, run by
    torch's fused ``scaled_dot_product_attention`` (the same scores, scale ``1/√d_h``, bias
    and masks; a test checks the two agree to float32 rounding). The fused kernel is 5–13×
    faster at the comparison study's longest windows, and the module never needs the
    attention weights.

    Args:
        d_model: width ``d``; an integer ``>= 1`` divisible by ``num_heads``.
        num_heads: heads ``h >= 1``.

    Raises:
        ValueError: ``d_model`` not divisible by ``num_heads``, or a size ``< 1``.
    """

    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        d_model = check_int("d_model", d_model, minimum=1)
        num_heads = check_int("num_heads", num_heads, minimum=1)
        if d_model % num_heads:
            raise ValueError(
                f"d_model must be divisible by num_heads, got d_model={d_model}, "
                f"num_heads={num_heads}"
            )
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(
        self,
        x: torch.Tensor,
        *,
        rope: tuple[torch.Tensor, torch.Tensor] | None = None,
        bias: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
        q_scale: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Attend causally over ``x: (b, s, d)`` and return ``(b, s, d)``.

        Args:
            x: hidden states ``(b, s, d)``.
            rope: optional ``(cos, sin)`` tables ``(s, d_h)`` (half layout) that rotate Q
                and K before the dot product; V is never rotated.
            bias: optional additive score bias ``(h, s, s)`` (ALiBi, T5).
            mask: optional boolean ``(s, s)`` mask (``True`` = may attend) applied on top
                of the causal mask, e.g. :func:`posenc.attention.sliding_window_mask`.
            q_scale: optional ``(s,)`` factor per query position multiplying Q (Llama 4's
                temperature on its NoPE layers, :func:`posenc.attention.llama4_attn_scale`).
        """
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.num_heads, self.head_dim).permute(
            2, 0, 3, 1, 4
        )  # each (b, h, s, d_h)
        if q_scale is not None:
            q = q * q_scale.to(q.dtype)[:, None]
        if rope is not None:
            cos, sin = rope
            q = apply_rope(q, cos=cos, sin=sin)
            k = apply_rope(k, cos=cos, sin=sin)
        if bias is None and mask is None:
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            keep = torch.ones(s, s, dtype=torch.bool, device=x.device).tril()
            if mask is not None:
                keep = keep & mask
            # One float mask: the bias where a key is visible, −inf elsewhere (the same
            # scores as posenc.attention.attention, which tests check).
            attn_mask = keep if bias is None else bias.masked_fill(~keep, float("-inf"))
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
        return self.out(out.transpose(1, 2).reshape(b, s, d))


class TransformerBlock(nn.Module):
    """One pre-LayerNorm decoder block: ``x + Attn(LN(x))``, then ``x + MLP(LN(x))``.

    Args:
        d_model: width ``d``.
        num_heads: heads ``h`` (``d`` divisible by ``h``).
        d_ff: hidden width of the GELU MLP (``>= 1``).
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int):
        super().__init__()
        d_ff = check_int("d_ff", d_ff, minimum=1)
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, num_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x, *, rope=None, bias=None, mask=None, q_scale=None):
        """``x: (b, s, d)`` → ``(b, s, d)``; ``rope``, ``bias``, ``mask``, ``q_scale`` as in
        :class:`CausalSelfAttention`."""
        x = x + self.attn(self.ln1(x), rope=rope, bias=bias, mask=mask, q_scale=q_scale)
        return x + self.mlp(self.ln2(x))


class TinyDecoder(nn.Module):
    """A small causal Transformer with one output per position.

    Args:
        vocab_size: input tokens ``V >= 1``.
        num_classes: outputs per position ``C >= 1`` (``V`` for next-token prediction).
        position: one of :data:`POSITIONS`.
        d_model: width ``d`` (default 64).
        num_heads: heads ``h`` (default 4); ``d_h = d/h`` must be even for RoPE.
        num_layers: decoder blocks (default 2).
        d_ff: MLP hidden width (default ``4 d``).
        max_position_embeddings: rows of the learned table (``position="learned"``); the
            training length, so the model has no row for any later position.
        rope_base: RoPE ``base`` (``rope_theta``), default 10000.
        nope_layers: with ``position="rope"``, the indices of the layers that use *no*
            positions (Q and K not rotated): Llama 4's interleaved NoPE layers, every
            fourth layer there (``transformers``' ``no_rope_layers`` marks them with 0).
            Default ``()``: RoPE in every layer.
        nope_attn_temperature: with ``nope_layers``, Llama 4's query temperature on those
            layers as ``(floor_scale, attn_scale)`` (8192 and 0.1 in Llama 4;
            :func:`posenc.attention.llama4_attn_scale`); default ``None``: no temperature.
        rope_window: with ``position="rope"``, the RoPE layers (those not in
            ``nope_layers``) attend only to the last ``rope_window`` keys, in training and
            evaluation (:func:`posenc.attention.sliding_window_mask`); the NoPE layers stay
            global. Default ``None``: every layer global.
        rope_fraction: with ``position="rope"``, the fraction ``p`` of the ``d_h / 2``
            pairs that rotate: the fastest ``⌊p · d_h / 2⌋`` keep their frequencies
            ``base^(−2i/d_h)``, the others get frequency 0 (p-RoPE, Barbero et al. 2025;
            :func:`posenc.scaling.proportional`, Gemma 4's ``partial_rotary_factor`` on its
            ``proportional`` layers). Default 1: every pair rotates.
        fire_mlp_width, fire_init_c: FIRE's MLP width and initial ψ scale
            (``position="fire"``; defaults 32 and 0.1, the paper's); its threshold starts
            at ``max_position_embeddings``, the training length
            (:class:`posenc.fire.FIREBias`). One FIRE module serves every layer, as one T5
            bias does.
        num_buckets, max_distance: T5 bias buckets (causal, one-directional; default 16)
            and the distance at which T5's log-spaced bucket formula reaches
            ``num_buckets`` (``position="t5"``; default 16, a quarter of the default
            training length 64, as T5's 128 is of its 512). Every distance
            ``>= max_distance`` lands in the last bucket, but because the formula rounds
            down the last bucket starts earlier: at distance 15 for these defaults, 59 for
            32 buckets and ``max_distance=64``, 113 for T5's 32 and 128
            (:func:`posenc.relative.relative_position_bucket`). ``max_distance`` must
            exceed ``num_buckets // 2``, the exact range.

    The positional parts are built *after* the shared ones, so two models built with the
    same seed but different ``position`` start from identical token embeddings, blocks and
    head. Scores are scaled by ``1/√d_h`` for every scheme; the T5, ALiBi and FIRE biases
    are added after that scaling (T5 itself does not scale its scores).

    Raises:
        ValueError: an unknown ``position``, a size ``< 1``, ``d`` not divisible by ``h``,
            an odd ``d_h`` with ``position="rope"``, ``nope_layers`` without
            ``position="rope"`` or outside ``[0, num_layers)``, a temperature without
            NoPE layers, ``rope_window`` or ``rope_fraction != 1`` without
            ``position="rope"``, ``rope_fraction`` outside ``(0, 1]``.
    """

    def __init__(
        self,
        vocab_size: int,
        num_classes: int,
        position: str,
        *,
        d_model: int = 64,
        num_heads: int = 4,
        num_layers: int = 2,
        d_ff: int | None = None,
        max_position_embeddings: int = 64,
        rope_base: float = 10000.0,
        num_buckets: int = 16,
        max_distance: int = 16,
        nope_layers: tuple[int, ...] = (),
        nope_attn_temperature: tuple[int, float] | None = None,
        rope_window: int | None = None,
        rope_fraction: float = 1.0,
        fire_mlp_width: int = 32,
        fire_init_c: float = 0.1,
    ):
        super().__init__()
        self.position = check_choice("position", position, POSITIONS)
        vocab_size = check_int("vocab_size", vocab_size, minimum=1)
        num_classes = check_int("num_classes", num_classes, minimum=1)
        d_model = check_int("d_model", d_model, minimum=1)
        num_layers = check_int("num_layers", num_layers, minimum=1)
        d_ff = 4 * d_model if d_ff is None else d_ff
        self.d_model, self.num_heads = d_model, num_heads
        self.embed = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.ModuleList(
            TransformerBlock(d_model, num_heads, d_ff) for _ in range(num_layers)
        )
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, num_classes)
        self.head_dim = d_model // num_heads

        self.learned = None
        self.relative = None
        self.fire = None
        rope_fraction = check_real("rope_fraction", rope_fraction, gt=0.0)
        if rope_fraction > 1.0 or (rope_fraction != 1.0 and position != "rope"):
            raise ValueError(f"rope_fraction must be in (0, 1] with position='rope', got "
                             f"{rope_fraction:g} with position={position!r}")
        self.rope_fraction = rope_fraction
        if position == "learned":
            self.learned = LearnedPositionalEmbedding(max_position_embeddings, d_model)
        elif position == "rope":
            self.rope_base = check_real("rope_base", rope_base, gt=0.0)
            if rope_fraction == 1.0:
                inv_freq = rope_inv_freq(self.head_dim, self.rope_base)
            else:
                rotated = 2 * int(rope_fraction * self.head_dim // 2)
                inv_freq = proportional(self.head_dim, base=self.rope_base,
                                        rotary_dim=rotated)[0]
            self.register_buffer("inv_freq", inv_freq, persistent=False)
        elif position == "t5":
            self.relative = RelativePositionBias(
                num_heads, num_buckets, max_distance, bidirectional=False
            )
        elif position == "fire":
            self.fire = FIREBias(num_heads, mlp_width=fire_mlp_width, init_c=fire_init_c,
                                 init_threshold=max_position_embeddings)
        self.nope_layers = tuple(sorted(
            {check_int("nope_layers", i, minimum=0) for i in nope_layers}))
        if self.nope_layers and (position != "rope" or self.nope_layers[-1] >= num_layers):
            raise ValueError(
                f"nope_layers must be layer indices in [0, {num_layers}) of a model with "
                f"position='rope', got {nope_layers} with position={position!r}"
            )
        if nope_attn_temperature is not None and not self.nope_layers:
            raise ValueError("nope_attn_temperature needs nope_layers (Llama 4 applies it to "
                             "the layers without RoPE only)")
        self.nope_attn_temperature = nope_attn_temperature
        if rope_window is not None and position != "rope":
            raise ValueError(f"rope_window needs position='rope', got {position!r}")
        self.rope_window = None if rope_window is None else check_int(
            "rope_window", rope_window, minimum=1)

    def num_position_parameters(self) -> int:
        """Trainable parameters that exist only because of the positional scheme."""
        mods = [m for m in (self.learned, self.relative, self.fire) if m is not None]
        return sum(p.numel() for m in mods for p in m.parameters())

    def forward(
        self,
        tokens: torch.Tensor,
        *,
        rope_scaling: tuple[torch.Tensor, float] | None = None,
        learned_table: LearnedPositionalEmbedding | None = None,
        attention_window: int | None = None,
        fire_progressive: bool = True,
    ) -> torch.Tensor:
        """Logits ``(b, s, C)`` for ``tokens: (b, s)`` (int64), positions ``0 … s − 1``.

        Args:
            tokens: token ids ``(b, s)``.
            rope_scaling: for ``position="rope"`` only, an ``(inv_freq, attention_factor)``
                pair used instead of the trained frequencies (an evaluation-time scaling
                method from :mod:`posenc.scaling`); ``attention_factor`` multiplies cos and
                sin as in ``transformers``.
            learned_table: for ``position="learned"`` only, a replacement table (e.g. the
                trained one stretched with ``interpolate``).
            attention_window: if given, every query attends only to the last
                ``attention_window`` keys, itself included
                (:func:`posenc.attention.sliding_window_mask`; Mistral's and Gemma's
                ``sliding_window``): the window ablation of the comparison chapter. An
                integer ``>= 1``; any scheme.
            fire_progressive: for ``position="fire"`` only; ``False`` freezes FIRE's
                normaliser at its threshold (no progressive interpolation past it), an
                evaluation-time ablation (:func:`posenc.fire.fire_inputs`).

        Raises:
            IndexError: ``position="learned"`` and ``s`` exceeds the table; a token id
                outside ``[0, vocab_size)``.
            ValueError: a variant argument that does not match ``position``.
            TypeError: ``tokens`` not an integer tensor.
        """
        if not isinstance(tokens, torch.Tensor) or tokens.is_floating_point() \
                or tokens.is_complex() or tokens.dtype == torch.bool:
            got = tokens.dtype if isinstance(tokens, torch.Tensor) else type(tokens).__name__
            raise TypeError(f"tokens must be an integer tensor of token ids, got {got}")
        vocab = self.embed.num_embeddings
        if tokens.numel() and not (0 <= int(tokens.min()) and int(tokens.max()) < vocab):
            raise IndexError(
                f"tokens must be ids in [0, {vocab - 1}] (vocab_size={vocab}), got values "
                f"from {int(tokens.min())} to {int(tokens.max())}"
            )
        if tokens.ndim != 2:
            raise ValueError(f"tokens must have shape (batch, seq), got {tuple(tokens.shape)}")
        if rope_scaling is not None and self.position != "rope":
            raise ValueError(f"rope_scaling needs position='rope', got {self.position!r}")
        if learned_table is not None and self.position != "learned":
            raise ValueError(f"learned_table needs position='learned', got {self.position!r}")
        if not fire_progressive and self.position != "fire":
            raise ValueError(f"fire_progressive=False needs position='fire', got "
                             f"{self.position!r}")
        s = tokens.shape[1]
        device = tokens.device
        mask = None if attention_window is None else sliding_window_mask(
            s, s, check_int("attention_window", attention_window, minimum=1), device=device
        )
        x = self.embed(tokens)
        rope = bias = None
        if self.position == "sinusoidal":
            pe = sinusoidal_encoding_at(torch.arange(s), self.d_model, dtype=x.dtype)
            x = x + pe.to(device)
        elif self.position == "learned":
            table = self.learned if learned_table is None else learned_table
            x = x + table.for_length(s)
        elif self.position == "rope":
            inv_freq, factor = (self.inv_freq, 1.0) if rope_scaling is None else rope_scaling
            positions = torch.arange(s, device=device)
            rope = rope_cos_sin(
                positions, inv_freq.to(device), attention_factor=factor, dtype=x.dtype
            )
        elif self.position == "alibi":
            bias = alibi_bias(self.num_heads, s, s, causal=True, device=device).to(x.dtype)
        elif self.position == "t5":
            bias = self.relative(s, s)
        elif self.position == "fire":
            bias = self.fire(s, s, progressive=fire_progressive)
        rope_mask = mask
        if self.rope_window is not None:
            local = sliding_window_mask(s, s, self.rope_window, device=device)
            rope_mask = local if mask is None else mask & local
        q_scale = None
        if self.nope_attn_temperature is not None:
            floor_scale, attn_scale = self.nope_attn_temperature
            q_scale = llama4_attn_scale(torch.arange(s, device=device),
                                        floor_scale=floor_scale, attn_scale=attn_scale)
        for i, block in enumerate(self.blocks):
            if i in self.nope_layers:
                x = block(x, mask=mask, q_scale=q_scale)
            else:
                x = block(x, rope=rope, bias=bias, mask=rope_mask)
        return self.head(self.ln_f(x))
