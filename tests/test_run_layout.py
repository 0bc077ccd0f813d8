"""The run's layout (:mod:`booktools.run_layout`, whose hooks the root ``conftest.py``
calls): which unit of work each test belongs to, and
what the fast loop (``-m "not slow"``) leaves out. Test ids of each kind are classified as
the scheduler and the marker see them."""

from __future__ import annotations

import pytest

from booktools import run_layout as layout


@pytest.mark.parametrize(("nodeid", "unit", "slow"), [
    ("tests/test_browser.py::test_pages[index]", "site", True),
    ("tests/test_browser.py::test_axe_finds_no_wcag_violations[pages2]", "site-pages2", True),
    ("tests/test_browser.py::test_page_does_not_scroll_sideways_on_a_phone[pages1-04_rope]",
     "site-pages1", True),
    ("tests/test_browser.py::test_the_crawl_catches_broken_pages", "site", True),
    ("tests/test_pdf.py::test_pages", "site-pdf", True),
    ("tests/test_book_build.py::test_build_has_zero_warnings", "site", True),
    ("tests/test_browser_styles.py::test_an_unwrapped_token_looks_as_it_did[x]", "site",
     True),
    ("tests/test_hf_keys.py::test_key_sweep", "hf-sweeps", True),
    ("tests/test_atlas.py::test_atlas_page_is_not_stale", "hf-sweeps", True),
    ("tests/test_hf_published.py::test_x", "hf-sweeps", True),
    ("book/04_rope.ipynb::Cell 3", "nb-04_rope", True),
    ("tests/test_figures.py::test_committed_figures_match_a_fresh_run[04_rope.ipynb]",
     "nb-04_rope", True),
    ("tests/test_experiments.py::test_quick_study", "tests/test_experiments.py", True),
    ("tests/test_wheel.py::test_wheel", "tests/test_wheel.py", True),
    ("tests/test_rope.py::test_llama_parity_half_layout[16-10000.0]", "tests/test_rope.py",
     False),
    ("tests/test_lock.py::test_lock_is_closed", "tests/test_lock.py", False),
])
def test_units_and_the_fast_loop(nodeid, unit, slow):
    assert layout.unit_of(nodeid) == unit
    assert layout.is_slow(nodeid) is slow
