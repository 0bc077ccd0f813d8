"""Learned absolute position embeddings (BERT, GPT-2, ViT).

Shape notation: ``L`` = ``max_position_embeddings`` rows, ``d`` = ``dim`` channels.

The table is an ordinary trainable ``(L, d)`` parameter looked up by position and added to
the token embeddings: ``h_pos = e_pos + P[pos]`` (Devlin et al., 2019, section 3; Radford
et al., 2018, section 4.1, for GPT — GPT-2's report does not mention positions, its code
has the learned table ``wpe``; Dosovitskiy et al., 2021, eq. 1). A position ``>= L`` has
no row: this module refuses it with an :class:`IndexError` that names the limit, *before*
any indexing.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ._checks import as_positions, check_int, check_real

__all__ = ["LearnedPositionalEmbedding"]


class LearnedPositionalEmbedding(nn.Module):
    """A trainable lookup table of position vectors.

    Args:
        max_position_embeddings: number of rows ``L`` (e.g. 512 for BERT-base, 1024 for
            GPT-2, 77 for CLIP's text encoder); an integer ``>= 1``.
        dim: width ``d`` of each vector; an integer ``>= 1``.
        init_std: standard deviation of the (untruncated) normal initialisation; ``>= 0``.
            The default 0.02 is ``transformers``' ``initializer_range`` for BERT and GPT-2.
            Google's original BERT code draws from a normal truncated at two standard
            deviations with ``stddev=0.02``, whose actual standard deviation is ≈ 0.0176;
            OpenAI's original GPT-2 code uses 0.01 for its position table.

    Attributes:
        weight: ``(L, d)`` :class:`torch.nn.Parameter`.

    Raises:
        ValueError: a size ``< 1`` or ``init_std < 0``.
        TypeError: a size that is not an integer.
    """

    def __init__(self, max_position_embeddings: int, dim: int, *, init_std: float = 0.02):
        super().__init__()
        self.max_position_embeddings = check_int(
            "max_position_embeddings", max_position_embeddings, minimum=1
        )
        self.dim = check_int("dim", dim, minimum=1)
        init_std = check_real("init_std", init_std, ge=0.0)
        self.weight = nn.Parameter(torch.empty(self.max_position_embeddings, self.dim))
        nn.init.normal_(self.weight, mean=0.0, std=init_std)

    def extra_repr(self) -> str:
        return f"max_position_embeddings={self.max_position_embeddings}, dim={self.dim}"

    def check_positions(self, positions) -> torch.Tensor:
        """Validate ``positions`` against the table and return them as an int64 tensor.

        Raises:
            IndexError: a position ``>= max_position_embeddings``; the message names the
                limit and the allowed range.
            ValueError: a negative or non-whole position.
        """
        pos = as_positions("positions", positions).to(self.weight.device)
        if pos.numel() and int(pos.max()) >= self.max_position_embeddings:
            raise IndexError(
                f"position {int(pos.max())} is past the end of the learned table: "
                f"max_position_embeddings={self.max_position_embeddings} allows positions "
                f"0..{self.max_position_embeddings - 1} only (a sequence of at most "
                f"{self.max_position_embeddings} tokens). Learned embeddings cannot "
                "extrapolate; see interpolate() for the stretching hack."
            )
        return pos

    def forward(self, positions) -> torch.Tensor:
        """Look up the vectors of ``positions``.

        Args:
            positions: integer positions of any shape ``S``, each in
                ``[0, max_position_embeddings)``; an ``int`` ``n`` is *not* a length here —
                use :meth:`for_length` for ``0 … n−1``.

        Returns:
            ``S + (d,)`` tensor (differentiable with respect to :attr:`weight`).

        Raises:
            IndexError: a position ``>= max_position_embeddings``.
            ValueError: a negative or non-whole position.
        """
        return F.embedding(self.check_positions(positions), self.weight)

    def for_length(self, seq_len: int, offset: int = 0) -> torch.Tensor:
        """The vectors of positions ``offset … offset + seq_len − 1``: ``(seq_len, d)``.

        Raises:
            IndexError: ``offset + seq_len > max_position_embeddings``.
            ValueError: ``seq_len < 0`` or ``offset < 0``.
        """
        seq_len = check_int("seq_len", seq_len, minimum=0)
        offset = check_int("offset", offset, minimum=0)
        return self(torch.arange(offset, offset + seq_len, device=self.weight.device))

    @torch.no_grad()
    def interpolate(self, new_max: int) -> LearnedPositionalEmbedding:
        """A new table of ``new_max`` rows, linearly interpolated along positions.

        Row ``j`` of the new table samples the old table at the fractional position
        ``j · (L − 1)/(new_max − 1)`` (``align_corners=True``: the first and last rows are
        kept exactly, the rows in between are convex mixtures of two neighbours). This is the
        hack used to stretch BERT-style tables and, in 2-D, ViT's patch-position grid.
        ViT's paper (Dosovitskiy et al., 2021, section 3.2) says only "2D interpolation";
        two conventions are in use for it:

        * the official ``vit_jax`` code calls ``scipy.ndimage.zoom(..., order=1)``:
          (bi)linear, and with zoom's default ``grid_mode=False`` output sample ``j`` is
          taken at input ``j · (L − 1)/(L' − 1)`` — corners aligned, the sampling of this
          method;
        * timm and ``transformers`` (``ViTEmbeddings.interpolate_pos_encoding``) use
          ``F.interpolate(..., mode="bicubic", align_corners=False)``: cubic weights, and
          sample centres rather than corners aligned, so even the end rows are not copied.

        The model never saw the mixed rows during training, so they are an approximation.

        Args:
            new_max: rows of the new table; an integer ``>= 2`` (``L`` must be ``>= 2`` too).

        Returns:
            A new :class:`LearnedPositionalEmbedding` (same dtype and device); ``self`` is
            unchanged.

        Raises:
            ValueError: ``new_max < 2`` or a one-row source table.
        """
        new_max = check_int("new_max", new_max, minimum=2)
        if self.max_position_embeddings < 2:
            raise ValueError(
                "interpolate() needs a table with max_position_embeddings >= 2, got "
                f"{self.max_position_embeddings}"
            )
        old = self.weight.detach().T[None]  # (1, d, L): channels as F.interpolate's C axis
        new = F.interpolate(old.double(), size=new_max, mode="linear", align_corners=True)
        out = LearnedPositionalEmbedding(new_max, self.dim)
        out.to(device=self.weight.device, dtype=self.weight.dtype)
        out.weight.copy_(new[0].T.to(self.weight.dtype))
        return out
