"""The ``posenc`` command line: ``python -m posenc inspect CONFIG`` (or ``posenc inspect``).

``inspect`` reads a Hugging Face ``config.json`` — a file, a checkpoint directory holding
one, or ``-`` for standard input — and prints what each layer of the model does with
positions, as :func:`posenc.hf_config.config_report` finds it: first the layer pattern and
its period, then runs of identical layers (window, RoPE or NoPE, base, rotated channels
and pairing, scaling with its factors and attention factor), then the RoPE keys the family
ignores. ``--json`` prints the same facts as JSON
(:meth:`~posenc.hf_config.ConfigReport.to_dict`), ``--layers`` one unwrapped line per
layer, ``--seq-len N`` the frequencies of the length-dependent types (dynamic NTK,
LongRoPE) at ``N`` tokens.

Exit status: 0 read; 1 refused (``posenc`` cannot represent this config: one line with the
reason on standard error); 2 bad input (no such file, an unreadable folder, not UTF-8, not
JSON, not a JSON object: one line naming it) or bad usage (argparse's usage message);
3 an internal error (one line: input ``posenc`` should have refused by name). Never a
traceback.
"""

from __future__ import annotations

import argparse
import os
import sys

__all__ = ["main"]

#: Exit statuses of ``posenc inspect``.
EXIT_OK, EXIT_REFUSED, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="posenc",
        description="Positional encodings, executed: what a model does with positions.",
    )
    parser.add_argument("--version", action="version", version=f"posenc {__version__}")
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    inspect = verbs.add_parser(
        "inspect",
        help="per layer, what a transformers config.json does with positions",
        description=(
            "Read a transformers config.json and print the layer pattern, then, per run "
            "of identical layers, what the model does with positions: attention type "
            "and window, RoPE or NoPE, base, rotated channels and their pairing, scaling "
            "method with its factors and attention factor; then the RoPE keys the family "
            "ignores. Exit status 1 with the reason on standard error when posenc "
            "refuses the config, 2 for unreadable input."
        ),
    )
    inspect.add_argument("config", metavar="CONFIG",
                         help="a config.json, a checkpoint directory holding one, or - "
                              "for standard input")
    out = inspect.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true",
                     help="print the same facts as JSON (for scripts)")
    out.add_argument("--layers", action="store_true",
                     help="print one unwrapped line per layer (for grep)")
    inspect.add_argument("--seq-len", type=_positive, default=None, metavar="N",
                         help="tokens so far, for the length-dependent RoPE types (dynamic "
                              "NTK, LongRoPE); default: what the model builds at load time")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status.

    Args:
        argv: the arguments after the program name (``sys.argv[1:]`` when ``None``).
    """
    args = _parser().parse_args(argv)
    from .hf_config.files import ConfigFileError, read_config
    from .hf_config.report import config_report

    try:
        config = read_config(args.config, stdin=True)
    except ConfigFileError as err:
        print(f"posenc inspect: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        report = config_report(config, seq_len=args.seq_len)
        text = report.to_json() if args.json else report.text(every_layer=args.layers)
    except (ValueError, TypeError) as err:
        reason = " ".join(str(err).split())
        print(f"posenc inspect: refused {args.config}: {reason}", file=sys.stderr)
        return EXIT_REFUSED
    except Exception as err:  # noqa: BLE001 -- one line, never a traceback
        print(f"posenc inspect: internal error on {args.config}: {type(err).__name__}: "
              f"{err} (posenc should have refused this input by name: please report it)",
              file=sys.stderr)
        return EXIT_INTERNAL
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `posenc inspect ... | head`: the reader left; not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return EXIT_OK
