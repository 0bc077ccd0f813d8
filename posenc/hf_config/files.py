"""Read a ``config.json`` from disk: a file, a checkpoint directory, or standard input.

:func:`read_config` is what :func:`~posenc.hf_config.layer_specs` (and every reader of
:mod:`posenc.hf_config`) calls when it is given a path instead of a dict or config object,
and what ``python -m posenc inspect`` calls on its argument. Every failure is one
exception whose message names the path and what is wrong with it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

__all__ = ["ConfigFileError", "read_config"]


class ConfigFileError(ValueError):
    """A path that does not lead to a readable ``config.json`` object (the message says why)."""


#: JSON's names for what ``json.loads`` can return besides an object.
_JSON_KINDS = {list: "an array", str: "a string", int: "a number", float: "a number",
               bool: "a boolean", type(None): "null"}


def read_config(path, *, stdin: bool = False) -> dict:
    """The JSON object of a ``config.json``.

    Args:
        path: a ``config.json`` file or a directory holding one (a downloaded
            checkpoint), as a ``str`` or ``os.PathLike``.
        stdin: read standard input when ``path`` is ``"-"`` (what the command line
            does); otherwise ``"-"`` is a file name like any other.

    Returns:
        The parsed object, a new ``dict``. A UTF-8 byte-order mark is allowed.

    Raises:
        ConfigFileError: (a ``ValueError``) an empty path; no such file or directory; a
            directory without ``config.json``; a file or folder that cannot be read; text
            that is empty, not UTF-8, not JSON (the message gives line and column) or
            something other than a JSON object.
    """
    name = os.fspath(path)
    if stdin and name == "-":
        where, data = "standard input", sys.stdin.buffer.read()
    else:
        if not name:
            raise ConfigFileError("the path is empty: name a config.json or its folder")
        where = name
        try:
            p = Path(name)
            if p.is_dir():
                p = p / "config.json"
                where = str(p)
                if not p.exists():
                    raise ConfigFileError(f"{name}: directory has no config.json")
            data = p.read_bytes()
        except FileNotFoundError:
            raise ConfigFileError(f"{where}: no such file or directory") from None
        except IsADirectoryError:
            raise ConfigFileError(f"{where}: is a directory, not a file") from None
        except OSError as err:
            raise ConfigFileError(f"{where}: cannot be read ({err.strerror})") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ConfigFileError(f"{where}: not UTF-8 text ({err.reason})") from None
    if not text.strip():
        raise ConfigFileError(f"{where}: is empty, not a JSON object of config keys")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise ConfigFileError(
            f"{where}: not JSON ({err.msg} at line {err.lineno}, column {err.colno})"
        ) from None
    except RecursionError:
        raise ConfigFileError(f"{where}: JSON nested too deeply to be a config") from None
    if not isinstance(value, dict):
        kind = _JSON_KINDS.get(type(value), type(value).__name__)
        raise ConfigFileError(f"{where}: holds {kind}, not a JSON object of config keys")
    return value
