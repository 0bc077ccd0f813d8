"""Readers run code only from the book's own home (booktools.book_home; scripts/book_home.py).

The ``repository`` block of ``_config.yml`` names the home (empty until the book has a
public repository). These tests check that

* no file in the repository names another code source -- an install target, a launch
  link or a repository link -- and, with no home, that nothing fetches code at all;
* the install cell, run where ``posenc`` is absent (a Python without site-packages,
  every process start and network connection trapped by an audit hook), fetches nothing
  and stops saying where the site's source archive is and the install command when there
  is no home, and with a home asks pip for
  exactly ``git+URL@REVISION`` and nothing else;
* what derives from the setting (the cell, the theme's buttons, the API page's text) is
  right for both the empty home and an example home, through Jupyter Book's own config
  translation and the site extension's hook.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from conftest import ROOT, notebooks

from booktools import book_home

HOME = book_home.load_home()
EXAMPLE = book_home.Home(
    "https://github.com/example-org/positional-encoding-executed",
    "0123456789abcdef0123456789abcdef01234567",
)
EXAMPLE_TAG = book_home.Home("https://github.com/example-org/pe-book", "v1.2.0")
Home = book_home.Home

#: What names a code source, each with the group holding the address or command:
#: a pip requirement given as a VCS or URL, any ``git+`` URL, ``git clone``, a Binder or
#: Colab launch link, a Markdown link labelled as a repository, and a YAML ``repository``
#: block's ``url`` (as in _config.yml; an empty one names nothing).
CODE_SOURCES = {
    "git+ URL": re.compile(r"(git\+[a-z+]+://[^\s\"'\\)\]>`]+|git\+git@[^\s\"'\\)\]>`]+)"),
    "pip install from a URL": re.compile(
        r"pip3?[\\\"',\s]*install[^\n;&|`()\[\]]*?((?:https?|file|ssh)://[^\s\"'\\)\]>`]+)"
    ),
    "git clone": re.compile(r"git\s+clone\s+([^\s\"'\\`]+)"),
    "Binder launch": re.compile(r"(mybinder\.org/v2/[^\s\"'\\)\]>`]+)"),
    "Colab launch": re.compile(r"(colab\.research\.google\.com/github/[^\s\"'\\)\]>`]+)"),
    "repository link": re.compile(r"\[[^\]]*[Rr]epositor[^\]]*\]\(([^)\s]+)\)"),
    "repository setting": re.compile(
        r"^repository:[ \t]*\n(?:[ \t]+.*\n)*?[ \t]+url:[ \t]*[\"']?([^\s\"'#]+)", re.M
    ),
}
#: Files that are not text (nothing to scan).
BINARY = {".png", ".jpg", ".jpeg", ".gif", ".ico", ".pdf", ".woff", ".woff2", ".pt"}


def repository_files() -> list[Path]:
    """Every file git tracks or would track (untracked but not ignored)."""
    git = shutil.which("git")
    if git is None:
        pytest.fail("git is needed to list the repository's files", pytrace=False)
    out = subprocess.run(
        [git, "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        capture_output=True, text=True, cwd=ROOT, check=True,
    ).stdout
    return [ROOT / p for p in out.split("\0") if p and (ROOT / p).is_file()]


def code_sources(text: str) -> list[tuple[str, str]]:
    return [(kind, m.group(1)) for kind, rx in CODE_SOURCES.items() for m in rx.finditer(text)]


#: A source whose owner part is a ``{...}`` placeholder is code that derives the address
#: from the setting (an f-string in scripts/ or tests/), not an address.
TEMPLATE = re.compile(
    r"(?:git\+)?(?:[a-z+]+://)?"
    r"(?:github\.com/|mybinder\.org/v2/gh/|colab\.research\.google\.com/github/)?\{"
)


#: Package indexes a reader may be told to install a dependency from, as their maintainers
#: document them (not a source of this book's code): PyTorch's CPU-only wheels.
PACKAGE_INDEXES = ("https://download.pytorch.org/whl/cpu",)


def allowed(kind: str, source: str, home) -> bool:
    """A code source is allowed only when it is the configured home at its revision (or a
    documented package index, :data:`PACKAGE_INDEXES`)."""
    if TEMPLATE.match(source):
        return True
    if kind == "pip install from a URL" and source in PACKAGE_INDEXES:
        return True
    if home is None:
        return False
    if kind == "git+ URL":
        return source == home.pip_target
    org_repo = home.url.removeprefix("https://github.com/")
    if kind in ("Binder launch", "Colab launch"):
        return f"/{org_repo}/" in source and f"/{home.revision}" in source
    return source == home.url or source.startswith(home.url + "/")


def test_only_the_documented_package_index_is_allowed():
    readme = "pip install torch --index-url https://download.pytorch.org/whl/cpu"
    other = "pip install torch --index-url https://packages.example.org/simple"
    assert [allowed(k, s, None) for k, s in code_sources(readme)] == [True]
    assert [allowed(k, s, None) for k, s in code_sources(other)] == [False]


def test_scanner_finds_every_kind_of_code_source():
    """The scanner itself: each form (as written in a cell, a page, a config) is found."""
    samples = {
        "git+ URL": '"git+https://github.com/someone/pkg@main"',
        "pip install from a URL": "pip install https://example.org/pkg.tar.gz",
        "git clone": "git clone https://github.com/someone/pkg",
        "Binder launch": "https://mybinder.org/v2/gh/someone/pkg/main?urlpath=lab",
        "Colab launch": "https://colab.research.google.com/github/someone/pkg/blob/x.ipynb",
        "repository link": "a clone of the [repository](https://github.com/someone/pkg)",
        "repository setting": "repository:\n  branch: x\n  url: https://github.com/a/b\n",
    }
    for kind, text in samples.items():
        assert kind in {k for k, _ in code_sources(text)}, kind
    # In a notebook's JSON the quotes are escaped; the list form of a pip call is found.
    cell = json.dumps('["pip", "install", "https://example.org/x.whl"]')
    assert ("pip install from a URL", "https://example.org/x.whl") in code_sources(cell)
    # What is not a code source: a PyPI install, the requirements file, a cited issue.
    plain = (
        "python -m pip install -r requirements.txt; pip install -e .; "
        "[transformers#25199](https://github.com/huggingface/transformers/issues/25199)"
    )
    assert code_sources(plain) == []
    assert code_sources('repository:\n  url: ""\n  revision: ""\n') == []
    # Code that builds the address from the setting is not an address.
    assert allowed("Binder launch", "mybinder.org/v2/gh/{org_repo}/{rev}", None)
    assert not allowed("Binder launch", "mybinder.org/v2/gh/someone/{rev}", None)
    # The stamped cells themselves name the home only through their constants.
    assert code_sources(book_home.install_cell(None)) == []
    assert code_sources(book_home.install_cell(EXAMPLE)) == []


def test_no_file_names_a_code_source_but_the_home():
    found = []
    for path in repository_files():
        if path.suffix.lower() in BINARY or path == Path(__file__).resolve():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for kind, source in code_sources(text):
            if not allowed(kind, source, HOME):
                found.append(f"{path.relative_to(ROOT)}: {kind}: {source}")
    where = f"the home {HOME.pip_target}" if HOME else "no home (nothing may fetch code)"
    assert not found, f"configured: {where}; other code sources:\n" + "\n".join(found)


def test_every_notebook_carries_the_stamped_install_cell():
    expected = book_home.install_cell(HOME)
    for path in notebooks():
        nb = nbformat.read(path, as_version=4)
        cell = book_home.first_code_cell(nb)
        assert cell.source == expected, (
            f"{path.name}: install cell is not the one derived from _config.yml: "
            "run `python scripts/book_home.py`"
        )
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "book_home.py"), "--check"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


# ------------------------------------------------ running the cell without posenc ----

#: Runs a cell's source (stdin) with every process start and socket connection refused by
#: an audit hook (and recorded), then prints what happened as JSON on the last line.
HARNESS = r"""
import json, sys
events = []
TRAPPED = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
           "os.fork", "socket.connect", "socket.getaddrinfo", "urllib.Request")
def hook(event, args):
    if event.startswith(TRAPPED):
        events.append([event, [str(a) for a in (args[1] if event ==
                       "subprocess.Popen" else args)]])
        raise PermissionError(f"trapped {event}")
source = sys.stdin.read()
import importlib.util
found = importlib.util.find_spec("posenc") is not None
sys.addaudithook(hook)
result = {"posenc_found": found, "error": None, "message": None}
try:
    exec(compile(source, "install_cell", "exec"), {"__name__": "__main__"})
except BaseException as err:
    result["error"] = type(err).__name__
    result["message"] = str(err)
result["events"] = events
print(json.dumps(result))
"""


def run_cell(source: str, *, posenc_present: bool, tmp_path: Path) -> dict:
    """Run ``source`` in a fresh interpreter: without site-packages and outside the
    repository (posenc absent), or in the project environment (posenc present)."""
    script = tmp_path / "harness.py"
    script.write_text(HARNESS, encoding="utf-8")
    if posenc_present:
        args, cwd = [sys.executable, str(script)], ROOT
    else:
        # -I: no PYTHONPATH, no user site, no script directory on the path; -S: no
        # site-packages (where the editable posenc install lives).
        args, cwd = [sys.executable, "-I", "-S", str(script)], tmp_path
    proc = subprocess.run(
        args, input=source, capture_output=True, text=True, cwd=cwd, timeout=60,
        env=None if posenc_present else {"PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["stdout"] = "\n".join(proc.stdout.strip().splitlines()[:-1])
    result["stderr"] = proc.stderr
    assert result["posenc_found"] is posenc_present
    return result


def test_install_cell_without_home_fetches_nothing_and_says_how(tmp_path):
    result = run_cell(book_home.install_cell(None), posenc_present=False, tmp_path=tmp_path)
    assert result["events"] == [], f"the cell tried to fetch: {result['events']}"
    assert result["error"] == "ModuleNotFoundError"
    assert book_home.CLONE_INSTALL in result["message"]
    assert "posenc" in result["message"]
    assert Path(book_home.SOURCE_ARCHIVE).name in result["message"]
    # The command it gives is the README's set-up command.
    assert book_home.CLONE_INSTALL in (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("home", [EXAMPLE, EXAMPLE_TAG], ids=["commit", "tag"])
def test_install_cell_with_home_asks_pip_for_the_exact_revision_only(home, tmp_path):
    result = run_cell(book_home.install_cell(home), posenc_present=False, tmp_path=tmp_path)
    # The one process it starts (refused here) is pip with the exact revision.
    assert len(result["events"]) == 1, result["events"]
    event, argv = result["events"][0]
    assert event == "subprocess.Popen"
    assert argv[1:] == ["-m", "pip", "install", "--quiet", f"git+{home.url}@{home.revision}"]
    assert result["error"] == "PermissionError"  # the trap, not an obscure failure


@pytest.mark.parametrize("home", [None, EXAMPLE], ids=["no-home", "home"])
def test_install_cell_is_silent_where_posenc_is_installed(home, tmp_path):
    result = run_cell(book_home.install_cell(home), posenc_present=True, tmp_path=tmp_path)
    assert result["error"] is None and result["events"] == []
    assert result["stdout"] == "" and result["stderr"] == ""


# --------------------------------------------- what derives, for both kinds of home ----

def test_home_setting_is_checked():
    assert book_home.parse_home({"url": "", "revision": ""}) is None
    assert book_home.parse_home(None) is None
    assert book_home.parse_home({"url": EXAMPLE.url, "revision": " v1.2.0 "}) == Home(
        EXAMPLE.url, "v1.2.0"
    )
    bad = [
        ({"url": "", "revision": "v1"}, "repository.url is\\s+empty"),
        ({"url": EXAMPLE.url}, "revision is empty"),
        ({"url": EXAMPLE.url, "revision": "main"}, "moving"),
        ({"url": EXAMPLE.url, "revision": "HEAD"}, "moving"),
        ({"url": EXAMPLE.url, "revision": "v1 --index-url x"}, "tag or commit"),
        ({"url": EXAMPLE.url + "/", "revision": "v1"}, "OWNER/REPO"),
        ({"url": EXAMPLE.url + ".git", "revision": "v1"}, "OWNER/REPO"),
        ({"url": "http://github.com/a/b", "revision": "v1"}, "OWNER/REPO"),
        ({"url": "https://gitlab.com/a/b", "revision": "v1"}, "OWNER/REPO"),
    ]
    for repository, message in bad:
        with pytest.raises(ValueError, match=message):
            book_home.parse_home(repository)



@pytest.mark.parametrize("home", [None, EXAMPLE, EXAMPLE_TAG], ids=["no-home", "commit", "tag"])
def test_install_cell_text(home, tmp_path):
    source = book_home.install_cell(home)
    compile(source, "install_cell", "exec")
    assert max(len(line) for line in source.splitlines()) <= book_home.MAX_LINE
    if home is None:
        assert "subprocess" not in source and "pip" not in source.replace(
            book_home.CLONE_INSTALL, ""
        )
    else:
        assert f'HOME = "{home.url}"' in source
        assert f'REVISION = "{home.revision}"' in source
        assert 'f"git+{HOME}@{REVISION}"' in source
    # `ruff format` (CONTRIBUTING.md) leaves the cell as it is, so it never needs restoring.
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    cell = tmp_path / "cell.py"
    cell.write_text(source + "\n", encoding="utf-8")
    proc = subprocess.run(
        [ruff, "format", "--no-cache", "--line-length", "88", "--check", str(cell)],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_install_cell_refuses_lines_wider_than_the_page():
    long = book_home.Home("https://github.com/example-org/" + "x" * 80, "v1")
    with pytest.raises(ValueError, match="over 88 characters"):
        book_home.install_cell(long)


def test_stamp_changes_only_the_install_cell_source(tmp_path):
    original = notebooks()[0]
    path = tmp_path / original.name
    shutil.copy(original, path)
    before = nbformat.read(path, as_version=4)
    assert book_home.stamp(path, EXAMPLE) is (HOME != EXAMPLE)
    after = nbformat.read(path, as_version=4)
    assert book_home.first_code_cell(after).source == book_home.install_cell(EXAMPLE)
    for old, new in zip(before.cells, after.cells, strict=True):
        if old is not book_home.first_code_cell(before):
            assert old == new
        else:
            assert (old.id, old.execution_count, old.metadata, old.outputs) == (
                new.id, new.execution_count, new.metadata, new.outputs,
            )
    assert book_home.stamp(path, HOME)
    assert path.read_bytes() == original.read_bytes()


def sphinx_config(tmp_path: Path, home) -> SimpleNamespace:
    """The Sphinx settings Jupyter Book derives from _config.yml with ``home`` written into
    its repository block, after the site extension's hook has run."""
    import yaml
    from jupyter_book.config import get_final_config

    data = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    data["repository"]["url"] = home.url if home else ""
    data["repository"]["revision"] = home.revision if home else ""
    config_path = tmp_path / "_config.yml"
    config_path.write_text(yaml.safe_dump(data), encoding="utf-8")
    final, _ = get_final_config(
        user_yaml=config_path,
        cli_config={"latex_individualpages": False},  # as `jupyter-book build` passes
        sourcedir=tmp_path,
        raise_on_invalid=True,
    )
    assert book_home.load_home(config_path) == home
    config = SimpleNamespace(
        html_theme_options=final["html_theme_options"],
        myst_substitutions=final.get("myst_substitutions", {}),
    )
    book_home.apply_home(config, home)
    return config


def test_no_home_means_no_repository_or_launch_buttons(tmp_path):
    config = sphinx_config(tmp_path, None)
    options = config.html_theme_options
    assert options["repository_url"] == ""
    for button in book_home.REPOSITORY_BUTTONS:
        assert options[button] is False, button
    launch = options["launch_buttons"]
    assert not any(launch.get(p) for p in book_home.LAUNCH_PROVIDERS), launch
    assert launch["thebe"] is False
    link = config.myst_substitutions["book_repository"]
    assert link == "the book's repository" and "http" not in link


@pytest.mark.parametrize("home", [EXAMPLE, EXAMPLE_TAG], ids=["commit", "tag"])
def test_a_home_means_buttons_at_its_revision(home, tmp_path):
    options = sphinx_config(tmp_path, home).html_theme_options
    assert options["repository_url"] == home.url
    assert options["repository_branch"] == home.revision  # Binder's and Colab's ref
    assert options["use_repository_button"] is True
    launch = options["launch_buttons"]
    assert launch["binderhub_url"] == "https://mybinder.org"
    assert launch["colab_url"] == "https://colab.research.google.com"
    link = sphinx_config(tmp_path, home).myst_substitutions["book_repository"]
    assert f"]({home.url})" in link and home.revision in link


def test_a_repository_url_from_elsewhere_is_refused():
    """Deleting ``url: ""`` lets Jupyter Book's default repository in: the hook refuses."""
    config = SimpleNamespace(
        html_theme_options={"repository_url": "https://github.com/executablebooks/jupyter-book"},
        myst_substitutions={},
    )
    with pytest.raises(Exception, match="not the book's home"):
        book_home.apply_home(config, None)


def test_api_page_names_the_repository_through_the_setting():
    text = (ROOT / "book" / "api.md").read_text(encoding="utf-8")
    assert "{{ book_repository }}" in text
    assert "github.com" not in text
