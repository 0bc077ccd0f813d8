"""posenc: positional encodings for Transformers, small and exact.

One module per idea; torch tensors throughout (numpy/matplotlib only at the edges).

* :mod:`posenc.sinusoidal` — Vaswani et al. (2017) sinusoidal table and its shift map.
* :mod:`posenc.learned` — a learned absolute table (BERT/GPT-2/ViT) with an explicit limit.
* :mod:`posenc.attention` — readable scaled dot-product attention (output and weights).
* :mod:`posenc.notebook` / :mod:`posenc.plotting` — the book's setup, printing and figure style.
"""

from .attention import attention, causal_mask
from .learned import LearnedPositionalEmbedding
from .sinusoidal import (
    concat_permutation,
    shift_matrix,
    sinusoidal_encoding,
    sinusoidal_encoding_at,
    sinusoidal_inv_freq,
)

__version__ = "0.1.0"

__all__ = [
    "LearnedPositionalEmbedding",
    "attention",
    "causal_mask",
    "concat_permutation",
    "shift_matrix",
    "sinusoidal_encoding",
    "sinusoidal_encoding_at",
    "sinusoidal_inv_freq",
]
