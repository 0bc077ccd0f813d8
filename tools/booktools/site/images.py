"""Lighter figures on the site (a hook of ``_ext/posenc_site.py``, after the build).

The chapters' figures are matplotlib PNGs in full 32-bit colour (RGBA), though a plot
uses a handful of colours and their anti-aliased edges: chapter 10's six figures weigh
1.25 MB. :func:`lighter_figures` rewrites each PNG the build copied into ``_images`` as
an indexed-colour PNG, a quarter to a third of the size, **only where a reader cannot
tell**: the image is opaque, and after the conversion no channel of any pixel is off by
more than :data:`MAX_CHANNEL_ERROR` (of 255) on average, and fewer than
:data:`MAX_OFF_PIXELS` of the pixels are off by more than :data:`NOTICEABLE` in any
channel. The palette is the smallest of :data:`PALETTES` that meets that bar (median cut,
refined by :data:`KMEANS` rounds of k-means, no dithering): a line plot needs fewer
colours than a heat map, and a smaller palette packs tighter. Any image that no palette
fits is left as it is. The notebooks keep
their outputs untouched (the site's copies in ``_images`` are converted, not the sources),
and the file names stay the same.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

#: The largest mean difference, per channel and pixel, in 0..255 levels.
MAX_CHANNEL_ERROR = 1.0
#: A pixel differs noticeably when a channel is off by more than this many levels...
NOTICEABLE = 24
#: ...and at most this fraction of the pixels may.
MAX_OFF_PIXELS = 0.002
#: The palette sizes tried, smallest first.
PALETTES = (32, 64, 128, 256)
#: Rounds of k-means that refine median cut's palette (Pillow's ``quantize(kmeans=...)``):
#: without them chapter 10's far-context probe figure (17,719 colours) misses the bar at
#: every size; with them it meets it at 128.
KMEANS = 3


def indexed_png(path: Path) -> bytes | None:
    """The image at ``path`` as an indexed-colour PNG with the smallest palette of
    :data:`PALETTES` that a reader cannot tell from it, or None when none can (or the PNG
    would not be smaller, or the image is not an opaque RGB(A) PNG)."""
    with Image.open(path) as image:
        if image.format != "PNG" or image.mode not in ("RGB", "RGBA"):
            return None
        pixels = np.asarray(image.convert("RGBA"))
    if (pixels[..., 3] != 255).any():
        return None
    rgb = Image.fromarray(pixels[..., :3])
    for colours in PALETTES:
        indexed = rgb.quantize(colours, method=Image.Quantize.MEDIANCUT,
                               kmeans=KMEANS, dither=Image.Dither.NONE)
        if invisible(indexed, pixels[..., :3]):
            break
    else:
        return None
    out = io.BytesIO()
    indexed.save(out, "PNG", optimize=True)
    data = out.getvalue()
    return data if len(data) < path.stat().st_size else None


def invisible(indexed: Image.Image, rgb: np.ndarray) -> bool:
    """Whether ``indexed`` shows ``rgb`` (height x width x 3, uint8) with no difference a
    reader could see (the bar in this module's docstring)."""
    diff = np.abs(np.asarray(indexed.convert("RGB"), dtype=np.int16) - rgb)
    off = (diff.max(axis=-1) > NOTICEABLE).mean()
    return bool(diff.mean() <= MAX_CHANNEL_ERROR and off <= MAX_OFF_PIXELS)


def lighter_figures(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    images = Path(app.outdir) / "_images"
    before = after = converted = 0
    for path in sorted(images.glob("*.png")):
        size = path.stat().st_size
        data = indexed_png(path)
        before += size
        if data is not None:
            path.write_bytes(data)
            converted += 1
        after += path.stat().st_size
    logger.info(
        f"posenc_site: {converted} figures as indexed PNG, {before:,} -> {after:,} bytes"
    )
