"""The build steps that keep the site's pages light (booktools.site.icons and .images),
each made to fail on purpose: an icon in use must keep its glyph rule and its glyph, and a
figure that indexed colour would visibly change must stay as it is. (The pages' weights
themselves are measured in a browser: tests/test_browser.py, PAGE_WEIGHT_LIMIT.)"""

from __future__ import annotations

import numpy as np
from PIL import Image

from booktools.site import icons, images

SHEET = (
    '.fa-inverse{color:#fff}.fa-sun:before{content:"\\f185"}'
    '.fa-moon:before,.fa-crescent:before{content:"\\f186"}.fa-gear:before{content:"\\f013"}'
    ':root{--pst-icon-github:"\uf09b"}.admonition:before{content:"\\f304"}'
)


def test_unused_icon_rules_go_and_used_ones_stay():
    css, kept, dropped = icons.prune_glyph_rules(SHEET, {"sun", "moon", "inverse"})
    assert ".fa-sun:before" in css and ".fa-moon:before" in css
    assert ".fa-gear" not in css and ".fa-crescent" not in css  # unused icon, unused alias
    assert ".fa-inverse{color:#fff}" in css  # utility classes are not glyph rules
    assert kept == {0xF185, 0xF186} and dropped == 1
    # glyphs drawn outside the glyph rules: an escape, and a variable holding the character
    assert icons.private_use(icons.GLYPH_RULE.sub("", css)) == {0xF09B, 0xF304}
    # on purpose: an icon no page names loses its rule
    assert ".fa-sun" not in icons.prune_glyph_rules(SHEET, set())[0]


def _plot(path, colours: int) -> None:
    """An opaque 300 x 200 'figure': white, with ``colours`` distinct shades in bands."""
    pixels = np.full((200, 300, 3), 255, dtype=np.uint8)
    band = 300 // (2 * colours)
    for i in range(colours):
        pixels[:, 2 * i * band : (2 * i + 1) * band] = [(i * 37) % 256, (i * 91) % 256, 40]
    Image.fromarray(pixels).convert("RGBA").save(path)


def test_figures_become_indexed_only_where_invisible(tmp_path):
    few, many = tmp_path / "few.png", tmp_path / "many.png"
    _plot(few, 6)
    data = images.indexed_png(few)
    assert data is not None  # six colours: exact in a palette
    few.write_bytes(data)
    assert Image.open(few).mode == "P"
    # on purpose: 4,000 distinct colours cannot fit 256 without visible change
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)).save(many)
    assert images.indexed_png(many) is None
    # a transparent image is left as it is
    clear = tmp_path / "clear.png"
    Image.new("RGBA", (8, 8), (0, 0, 0, 0)).save(clear)
    assert images.indexed_png(clear) is None
