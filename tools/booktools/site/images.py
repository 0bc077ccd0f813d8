"""Lighter figures on the site (a hook of ``_ext/posenc_site.py``, after the build).

The chapters' figures are matplotlib PNGs in full 32-bit colour (RGBA), though a plot
uses a handful of colours and their anti-aliased edges: chapter 10's six figures weigh
1.25 MB. :func:`lighter_figures` rewrites each PNG the build copied into ``_images`` as
an indexed-colour PNG (at most 256 colours, median cut, no dithering), which is about a
third of the size, **only where a reader cannot tell**: the image is opaque, and after the
conversion no channel of any pixel is off by more than :data:`MAX_CHANNEL_ERROR` (of 255)
on average, and fewer than :data:`MAX_OFF_PIXELS` of the pixels are off by more than
:data:`NOTICEABLE` in any channel. Any other image is left as it is. The notebooks keep
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


def indexed_png(path: Path) -> bytes | None:
    """The image at ``path`` as an indexed-colour PNG, or None when that would be
    noticeably different (or not smaller, or the image is not an opaque RGB(A) PNG)."""
    with Image.open(path) as image:
        if image.format != "PNG" or image.mode not in ("RGB", "RGBA"):
            return None
        pixels = np.asarray(image.convert("RGBA"))
    if (pixels[..., 3] != 255).any():
        return None
    rgb = Image.fromarray(pixels[..., :3])
    indexed = rgb.quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    diff = np.abs(np.asarray(indexed.convert("RGB"), dtype=np.int16) - pixels[..., :3])
    off = (diff.max(axis=-1) > NOTICEABLE).mean()
    if diff.mean() > MAX_CHANNEL_ERROR or off > MAX_OFF_PIXELS:
        return None
    out = io.BytesIO()
    indexed.save(out, "PNG", optimize=True)
    data = out.getvalue()
    return data if len(data) < path.stat().st_size else None


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
