"""What a translation must carry over unchanged from its English message.

A translated message (``msgstr``) may reword everything a reader reads, but the
machinery inside it must survive byte for byte, or the Chinese site silently loses a
citation, a cross-reference, a formula or a link (some of which Sphinx's ``-W`` build
catches, most of which it does not):

* inline math ``$...$`` and display math ``$$...$$`` (every formula, in order-free
  multiset comparison: a translation may move a formula within the sentence);
* MyST roles ``{name}`content```: the whole content for citations, code objects,
  equations and math; for ``ref``/``numref``/``doc``/``prf:ref``/``term`` only the
  target (an explicit title ``title <target>`` may be translated);
* inline code ````code```` outside roles;
* link targets ``[text](target)`` and footnote references ``[^name]``;
* a message that holds nothing to translate (a display-math block, a bare code span,
  a number) must be copied unchanged.

Usage: ``python tools/booktools/po_tokens.py FILE.po [FILE.po ...]`` prints every
problem, one per line (``file:line: message``), and exits 1 when there is one; it also
reports empty and fuzzy translations with ``--complete``.
"""

from __future__ import annotations

import collections
import re
import sys

ROLE = re.compile(r"\{([\w:.-]+)\}`([^`]*)`")
TITLED_ROLES = {"ref", "numref", "doc", "prf:ref", "term", "download", "any"}
DISPLAY_MATH = re.compile(r"\$\$.+?\$\$", re.S)
INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)(.+?)(?<![\\$])\$(?!\$)", re.S)
CODE = re.compile(r"(?<!`)`([^`]+)`(?!`)")
LINK = re.compile(r"\]\(([^)\s]+)\)")
FOOTNOTE = re.compile(r"\[\^([\w-]+)\]")
# a message with nothing a reader reads in words: math, code, numbers, punctuation
WORD = re.compile(r"[A-Za-z]{2,}")
LATEX = re.compile(r"\\[A-Za-z]+")
PROSE = re.compile(r"[A-Za-z]{2,} [A-Za-z]{2,}")


def _role_key(name: str, content: str) -> str:
    if name in TITLED_ROLES:
        m = re.search(r"<([^<>]+)>\s*$", content)
        return f"{{{name}}}{m.group(1) if m else content}"
    return f"{{{name}}}{content}"


def tokens(text: str) -> collections.Counter:
    """The multiset of tokens that must survive translation unchanged."""
    out: collections.Counter = collections.Counter()
    rest = text
    for m in DISPLAY_MATH.finditer(rest):
        out["$$" + m.group(0)] += 1
    rest = DISPLAY_MATH.sub(" ", rest)
    for m in ROLE.finditer(rest):
        out[_role_key(m.group(1), m.group(2))] += 1
    rest = ROLE.sub(" ", rest)
    for m in CODE.finditer(rest):
        out["`" + m.group(1)] += 1
    rest = CODE.sub(" ", rest)
    for m in INLINE_MATH.finditer(rest):
        out["$" + m.group(1)] += 1
    for m in LINK.finditer(text):
        out["](" + m.group(1)] += 1
    for m in FOOTNOTE.finditer(text):
        out["[^" + m.group(1)] += 1
    return out


def translatable(msgid: str) -> bool:
    """Whether a message holds words a reader reads (else copy it unchanged)."""
    rest = DISPLAY_MATH.sub(" ", msgid)
    rest = ROLE.sub(" ", rest)
    rest = CODE.sub(" ", rest)
    rest = INLINE_MATH.sub(" ", rest)
    if LATEX.search(rest):  # a bare formula (a math block's message): words in a row?
        return bool(PROSE.search(LATEX.sub(" ", rest)))
    return bool(WORD.search(rest))


def problems(msgid: str, msgstr: str) -> list[str]:
    """Why ``msgstr`` is not a faithful carrier of ``msgid``'s machinery ([] if it is)."""
    if not msgstr:
        return []
    out = []
    if not translatable(msgid) and msgstr != msgid:
        out.append("nothing to translate here: copy the English message unchanged")
    want, got = tokens(msgid), tokens(msgstr)
    missing = want - got
    extra = got - want
    if missing:
        out.append("lost: " + " | ".join(sorted(missing)))
    if extra:
        out.append("added or altered: " + " | ".join(sorted(extra)))
    if msgid.startswith("\n") != msgstr.startswith("\n"):
        out.append("the English starts with a newline; keep it (it marks a block)")
    return out


def main(argv: list[str]) -> int:
    from babel.messages.pofile import read_po

    complete = "--complete" in argv
    files = [a for a in argv if not a.startswith("--")]
    bad = 0
    for path in files:
        with open(path, "rb") as f:
            catalog = read_po(f)
        for entry in catalog:
            if not entry.id:
                continue
            msgs = problems(entry.id, entry.string or "")
            if complete and not entry.string:
                msgs.append("untranslated")
            if complete and entry.fuzzy:
                msgs.append("fuzzy (its English changed)")
            for msg in msgs:
                bad += 1
                print(f"{path}:{entry.lineno}: {msg}: {entry.id[:70]!r}")
    print(f"{bad} problem(s) in {len(files)} file(s)", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
