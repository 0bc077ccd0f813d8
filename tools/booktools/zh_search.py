"""Chinese words in the Chinese site's search index.

Sphinx's Chinese search (``html_search_language = "zh"``) cuts the text into words with
jieba; left alone, jieba splits the book's own terms (外推 into 外 and 推, for instance),
and a reader who searches for one finds nothing. The Chinese build therefore gives jieba
a user dictionary made from the fixed terminology, ``locale/zh_CN/glossary.yml``
(:func:`user_dictionary`): every Chinese term of it, kept whole. The same dictionary cuts
a query in the tests (:func:`query_words`), which read the written index with
:func:`read_index`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from booktools.site import terminology

#: jieba's frequency for a term of the glossary: high enough to be kept whole.
FREQUENCY = 100_000
CJK = re.compile(r"[\u4e00-\u9fff]+")
ASIDE = re.compile(r"[（(][^）)]*[）)]")


def terms(glossary: Path) -> list[str]:
    """The Chinese words of the terminology file: each ``zh`` rendering split at ``/``
    and ``、``, its parenthesised English dropped, and the Chinese renderings its notes
    give after a colon (长度外推 for "length extrapolation")."""
    data = terminology.load(glossary)
    words: list[str] = []
    for term in data["terms"]:
        parts = re.split(r"[/、；;]", term["zh"])
        for note in re.split(r"[；;]", term.get("note", "")):
            if "：" in note:
                parts.append(note.split("：", 1)[1])
        for part in parts:
            part = ASIDE.sub("", part).strip()
            if CJK.fullmatch(part) and len(part) >= 2 and part not in words:
                words.append(part)
    return words


def user_dictionary(glossary: Path, dest: Path) -> Path:
    """Write jieba's user dictionary for ``glossary`` to ``dest`` and return it."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text("".join(f"{w} {FREQUENCY}\n" for w in terms(glossary)), encoding="utf-8")
    return dest


def query_words(query: str, dictionary: Path) -> list[str]:
    """The index words a query is cut into, as the Chinese build cuts the pages (jieba's
    search mode with the user dictionary), longer than one character as Sphinx keeps
    them."""
    import jieba

    tokenizer = jieba.Tokenizer()
    tokenizer.load_userdict(str(dictionary))
    return [w for w in tokenizer.cut_for_search(query) if len(w) > 1 and CJK.search(w)]


def read_index(html: Path) -> dict:
    """The search index of the site in ``html`` (``searchindex.js``) as a dict."""
    text = (Path(html) / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("(") + 1: text.rindex(")")])


def pages_with(index: dict, word: str) -> set[str]:
    """The documents (``book/07_long_context``) whose text or title holds ``word``."""
    found: set[str] = set()
    for table in ("terms", "titleterms"):
        hits = index[table].get(word, [])
        for i in [hits] if isinstance(hits, int) else hits:
            found.add(index["docnames"][i])
    return found
