"""What booktools.site.pages changes in the pages Sphinx writes, on the markup itself."""

from __future__ import annotations

import pytest

from booktools.site.pages import nest_lists

#: The module index as sphinx.ext.viewcode 7.4 writes it when a subpackage's modules have
#: source pages too (posenc.hf_config.families and its _record).
VIEWCODE = ('<h1>All modules for which code is available</h1>\n'
            '<ul><li><a href="a.html">posenc.alibi</a></li>\n'
            '<li><a href="f.html">posenc.hf_config.families</a></li>\n'
            '<ul><li><a href="r.html">posenc.hf_config.families._record</a></li>\n'
            '</ul><li><a href="s.html">posenc.scaling</a></li>\n'
            '<ul><li><a href="y.html">posenc.scaling._yarn</a></li>\n'
            '</ul></ul>\n')


def test_a_sublist_moves_inside_its_packages_item():
    nested = nest_lists(VIEWCODE)
    assert "</li>\n<ul>" not in nested and "</ul><li>" not in nested
    assert ('<li><a href="f.html">posenc.hf_config.families</a><ul><li>'
            '<a href="r.html">posenc.hf_config.families._record</a></li>\n</ul></li>') in nested
    assert nested.startswith("<h1>All modules") and nested.endswith("</ul>\n")
    for name in ("alibi", "hf_config.families._record", "scaling._yarn"):  # no item lost
        assert f"posenc.{name}</a>" in nested


def test_self_test_the_unfixed_index_has_a_list_inside_a_list():
    """What axe-core's rule ``list`` reported on _modules/index.html, which the fix removes
    (the browser check runs that rule on the built page)."""
    assert "</li>\n<ul>" in VIEWCODE
    unclosed = VIEWCODE.replace("</ul><li><a href=\"s", "<li><a href=\"s")
    assert nest_lists("<p>no list</p>") == "<p>no list</p>"
    for odd in (unclosed, nest_lists(VIEWCODE), VIEWCODE.replace("</ul></ul>", "</ul>")):
        with pytest.raises(ValueError, match="unbalanced"):  # refused, never guessed
            nest_lists(odd)
