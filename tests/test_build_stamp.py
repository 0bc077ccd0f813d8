"""The test run reuses README command 1's site only when that build is clean and current.

``_ext/posenc_stamp.py`` (with :mod:`booktools.stamp`) stamps a build that read every page
and finished with no warning under ``-n -W``; ``book_build`` (tests/conftest.py) reuses it
only when the stamp names the digest of the current inputs. Each way a reused site could be
wrong is broken on purpose here: a warning, no ``-W``, an incremental build, an exception,
another builder, a changed input, a stale or missing stamp.
"""

from __future__ import annotations

import json
import subprocess
from types import SimpleNamespace

import pytest
from conftest import current_site

from booktools import stamp


def _app(**change):
    app = SimpleNamespace(builder=SimpleNamespace(name="html"),
                          config=SimpleNamespace(nitpicky=True), warningiserror=False,
                          keep_going=True, _warncount=0, posenc_read_all=True)
    for key, value in change.items():
        setattr(app, key, value)
    return app


def test_a_clean_full_build_is_stamped():
    assert stamp.clean_build(_app(), None)
    assert stamp.clean_build(_app(warningiserror=True, keep_going=False), None)


@pytest.mark.parametrize("change", [
    {"_warncount": 1}, {"warningiserror": False, "keep_going": False},
    {"posenc_read_all": False}, {"builder": SimpleNamespace(name="singlehtml")},
    {"config": SimpleNamespace(nitpicky=False)},
], ids=["a warning", "no -W", "incremental", "other builder", "not nitpicky"])
def test_self_test_other_builds_are_not_stamped(change):
    assert not stamp.clean_build(_app(**change), None)
    assert not stamp.clean_build(_app(), RuntimeError("build failed"))


def _repo(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "book").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "book" / "intro.md").write_text("# Intro\n")
    (tmp_path / "tests" / "test_x.py").write_text("x = 1\n")
    (tmp_path / ".gitignore").write_text("_build/\n")
    return tmp_path


def test_digest_follows_the_inputs_and_only_them(tmp_path):
    repo = _repo(tmp_path)
    before = stamp.inputs_digest(repo)
    assert before is not None and stamp.inputs_digest(repo) == before
    (repo / "tests" / "test_x.py").write_text("x = 2\n")       # not an input
    (repo / "_build").mkdir()
    (repo / "_build" / "junk").write_text("ignored\n")          # ignored by git
    assert stamp.inputs_digest(repo) == before
    (repo / "book" / "intro.md").write_text("# Intro, changed\n")
    assert stamp.inputs_digest(repo) != before
    assert stamp.inputs_digest(tmp_path / "not-a-repo" / "x") is None


def test_reuse_only_a_current_stamp(tmp_path):
    build = tmp_path / "_build"
    (build / "html").mkdir(parents=True)
    (build / "html" / "index.html").write_text("<html></html>")
    assert not current_site(build, "abc")                      # no stamp
    (build / stamp.STAMP).write_text(json.dumps({"inputs": "abc"}))
    assert current_site(build, "abc")
    assert not current_site(build, "abd")                      # stale stamp
    assert not current_site(build, None)                       # no digest (no git)
    (build / stamp.STAMP).write_text("not json")
    assert not current_site(build, "abc")
    (build / stamp.STAMP).write_text(json.dumps({"inputs": "abc"}))
    (build / "html" / "index.html").unlink()
    assert not current_site(build, "abc")                      # no site beside it


#: What a build of either edition imports: the Sphinx extensions (which import
#: booktools.site and what it uses), the Chinese build and its search, the atlas page.
BUILD_SIDE = """
import importlib, sys
from pathlib import Path
root = Path(sys.argv[1])
sys.path[:0] = [str(root / "_ext"), str(root / "tools")]
for ext in sorted(p.stem for p in (root / "_ext").glob("*.py")):
    importlib.import_module(ext)
for module in ["booktools.zh_build", "booktools.zh_search", "booktools.atlas",
               "booktools.book_home", "booktools.site"] + sys.argv[2:]:
    importlib.import_module(module)
print(" ".join(sorted(m for m in sys.modules if m.startswith("booktools"))))
"""


def left_out_but_imported(*also: str) -> list[str]:
    """The modules of NOT_INPUTS that importing every build-side module (and ``also``) in
    a fresh interpreter brings in."""
    import sys

    from conftest import ROOT

    loaded = set(subprocess.run([sys.executable, "-c", BUILD_SIDE, str(ROOT), *also],
                                check=True, capture_output=True, text=True,
                                timeout=300).stdout.split())
    assert {"booktools.site", "booktools.zh_build", "booktools.atlas"} <= loaded
    left_out = {name[len("tools/"):-len(".py")].replace("/", ".")
                for name in stamp.NOT_INPUTS if name.startswith("tools/")}
    assert left_out
    return sorted(left_out & loaded)


def test_files_left_out_of_the_digest_are_never_imported_by_a_build():
    """A module in NOT_INPUTS that a build imported could change the site without changing
    the digest, and a stale site would be reused."""
    assert not left_out_but_imported()


def test_self_test_a_build_side_import_of_a_left_out_module_is_caught():
    assert left_out_but_imported("booktools.pdf") == ["booktools.chromium", "booktools.pdf"]


def test_a_pdf_is_reused_only_with_a_current_stamp(tmp_path):
    """scripts/build_pdf.py stamps the PDF it built; tests/test_pdf.py reuses it only when
    the stamp names the current digest (the site's inputs, the PDF's tools, the browser)."""
    pdf = tmp_path / "book.pdf"
    assert not stamp.current_pdf(pdf, "abc")                   # no PDF
    pdf.write_bytes(b"%PDF-1.7")
    assert not stamp.current_pdf(pdf, "abc")                   # no stamp
    stamp.pdf_stamp_path(pdf).write_text(json.dumps({"inputs": "abc"}))
    assert stamp.current_pdf(pdf, "abc")
    assert not stamp.current_pdf(pdf, "abd")                   # stale
    assert not stamp.current_pdf(pdf, None)                    # no digest (no git)
    stamp.pdf_stamp_path(pdf).write_text("[1]")
    assert not stamp.current_pdf(pdf, "abc")


def test_the_pdf_digest_follows_its_tools_and_the_browser(tmp_path):
    repo = _repo(tmp_path)
    for name in stamp.PDF_TOOLS:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text("# tool\n")
    before = stamp.pdf_digest(repo, "Chromium 140")
    assert before is not None and before != stamp.inputs_digest(repo)
    assert stamp.pdf_digest(repo, "Chromium 141") != before   # another browser
    (repo / stamp.PDF_TOOLS[0]).write_text("# tool, changed\n")
    assert stamp.pdf_digest(repo, "Chromium 140") != before   # a changed tool
    (repo / stamp.PDF_TOOLS[0]).write_text("# tool\n")
    (repo / "book" / "intro.md").write_text("# Intro, changed\n")
    assert stamp.pdf_digest(repo, "Chromium 140") != before   # a changed input
