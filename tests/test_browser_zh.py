"""The Chinese site in a real browser (Debian's Chromium driven by Playwright, as
tests/test_browser.py): typing the book's Chinese terms into the Chinese search page lists
the chapters that explain them, and the language switch leads from a page to its
counterpart and back. The full crawl of the Chinese pages (axe-core, phone width, links,
math) is test_browser.py's, over both editions.

Without Chromium or Playwright the tests are skipped with a message, except under
``CI=true``, where they fail. The site is the session's (the ``zh_site`` fixture of
tests/conftest.py: README command 1's when its stamp is current, else built once per run).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest

from booktools import zh_build
from booktools.browser import serve

pytestmark = pytest.mark.slow

#: What typing each term into the Chinese search box must list.
SEARCHES = {"外推": "book/07_long_context.html", "旋转位置编码": "book/04_rope.html"}
#: Runs in the search page: waits until Sphinx's search has finished (its summary is
#: written, in the page's language), then returns the result links.
RESULTS = """
async () => {
  const start = Date.now();
  const summary = () => (document.querySelector('#search-results .search-summary') || {}).innerText;
  while (!summary() && Date.now() - start < 20000) await new Promise((r) => setTimeout(r, 100));
  return Array.from(document.querySelectorAll('#search-results ul.search li a'))
      .map((a) => a.href);
}
"""


@pytest.fixture(scope="module")
def served(zh_site):
    """The folder holding both editions (the English site, when it is there), served:
    ``(base URL of that folder, the Chinese site's path under it)``."""
    with serve(zh_site.parent) as base:
        yield base, zh_build.FOLDER + "/"


def search(browser, base: str, folder: str, query: str) -> list[str]:
    """Type ``query`` into the Chinese site's search box (the search page's own form) and
    return the paths of the pages it lists."""
    page = browser.new_page()
    try:
        page.goto(f"{base}{folder}search.html", wait_until="load")
        box = page.locator(".bd-search-container input[name=q]").first
        box.fill(query)
        box.press("Enter")
        page.wait_for_url(f"**/search.html?q={quote(query)}*")
        hits = page.evaluate(RESULTS)
    finally:
        page.close()
    return [urlsplit(h).path.split(folder, 1)[-1] for h in hits]


@pytest.mark.parametrize("query", sorted(SEARCHES))
def test_chinese_search_lists_the_chapter(served, browser, query):
    base, folder = served
    hits = search(browser, base, folder, query)
    assert SEARCHES[query] in hits, f"searching {query!r} lists {hits}, not {SEARCHES[query]}"


def test_self_test_search_check_fails_for_a_page_without_the_term(served, browser):
    base, folder = served
    hits = search(browser, base, folder, "旋转位置编码")
    assert hits and "book/references.html" not in hits
    assert "book/07_long_context.html" not in search(browser, base, folder, "不存在的词语甲乙")


def test_language_switch_goes_to_the_same_page_and_back(served, browser, zh_site):
    base, folder = served
    page = browser.new_page()
    try:
        page.goto(f"{base}{folder}book/04_rope.html", wait_until="load")
        switch = page.locator("a.posenc-language-switch")
        assert switch.count() == 1 and switch.get_attribute("hreflang") == "en"
        target = urlsplit(switch.evaluate("a => a.href")).path
        assert target == urlsplit(base).path + "book/04_rope.html", target
        if (Path(zh_site).parent / "book" / "04_rope.html").is_file():  # the English site
            switch.click()
            page.wait_for_load_state("load")
            assert page.url.endswith("/book/04_rope.html") and folder not in page.url
            back = page.locator("a.posenc-language-switch")
            assert back.get_attribute("hreflang") == "zh-CN"
            back.click()
            page.wait_for_load_state("load")
            assert page.url.endswith(f"/{folder}book/04_rope.html")
    finally:
        page.close()
