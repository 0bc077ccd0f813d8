"""Interactive figures for the book's HTML pages: curves that follow one slider.

A :class:`SliderFigure` holds a small grid of values computed in advance by ``posenc``
(one *step* per value of the parameter the reader moves, for example ``base`` or
``factor``). :meth:`SliderFigure.show` displays two outputs in a notebook cell:

* an HTML block: a native ``<input type="range">`` slider and a plot that the site's
  script (``_ext/posenc_interactive.js``, served from the site's own ``_static`` folder; no
  CDN, no plotting library) draws as inline SVG, and
* the same figure at the starting step as a static matplotlib PNG, the fallback for a
  reader without JavaScript (and for a notebook front end without the site's script).
  Once the interactive plot is drawn, the script hides that PNG.

For keyboard and screen-reader use the slider is a native range input named by its
``<label>``; the site's script (``_ext/posenc_interactive.js``) adds, once it draws the plot,
``aria-valuetext`` (``"<param> = <value label>"``, so a screen reader says the value, not
the step index), a polite live region for the value, and a text label on the plot. The
static PNG's alt text comes from the cell's metadata (``{"mystnb": {"image": {"alt": ...}}}``,
see CONTRIBUTING.md), as for any figure.

Committed notebook outputs must be identical on every run (strict ``nbval``), so the HTML
carries no random ids: the element ids come from the figure's ``name``, every number is
rounded to ``digits`` significant digits and the JSON is written with sorted keys.

Notation: a figure has ``S`` steps and ``T`` traces (curves); trace ``t`` at step ``s``
is a pair of 1-D sequences ``x``, ``y`` of equal length ``n`` (``n`` may differ between
traces and steps).
"""

from __future__ import annotations

import html
import json
import math
import re

import torch

from ._checks import check_choice, check_int
from .plotting import pyplot

__all__ = ["SliderFigure"]

#: Allowed figure names: they become HTML element ids.
NAME_PATTERN = re.compile(r"[a-z][a-z0-9-]{0,63}")
#: The JavaScript entry point the site serves (``_ext/posenc_interactive.js``).
MOUNT = "posencInteractive.mount"
#: CSS class of the interactive block; the site adds its script to pages that contain it.
CSS_CLASS = "posenc-interactive"
AXIS_TYPES = ("linear", "log")


def _round(value: float, digits: int) -> float:
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"figure values must be finite numbers, got {v}")
    if v == 0.0:
        return 0.0
    return float(f"{v:.{digits}g}")


def _series(name: str, values, digits: int) -> list[float]:
    flat = torch.as_tensor(values, dtype=torch.float64).reshape(-1).tolist()
    try:
        return [_round(v, digits) for v in flat]
    except ValueError as err:
        raise ValueError(f"{name}: {err}") from None


class SliderFigure:
    """A line plot whose curves change with one slider, for the book's HTML pages.

    Build it with the slider's parameter name, then add one step per parameter value with
    :meth:`add_step`, then call :meth:`show` as the last line of a notebook cell.

    Args:
        name: identifier of the figure, unique on its page: lower-case letters, digits and
            ``-``, starting with a letter, at most 64 characters (it becomes the HTML id).
        param: what the slider sets, as the reader reads it (e.g. ``"base"``).
        traces: ``(T,)`` the curves' legend labels; every step gives each one ``x``, ``y``.
        x_title, y_title: axis titles, with units.
        x_type, y_type: ``"linear"`` or ``"log"``.
        mode: how each curve is drawn: ``"lines"``, ``"markers"`` or ``"lines+markers"``
            (Plotly's names for them).
        digits: significant digits kept for every number (3 to 12); keeps the HTML small
            and identical from run to run.
        y_range: optional fixed ``(low, high)`` for the y axis (in data units, also for a
            log axis), so moving the slider does not rescale the axis; default: the range
            of every step together.
        height: height of the plot in CSS pixels (the width follows the page).

    Raises:
        ValueError: ``name`` not of the allowed form, ``traces`` empty or with repeated
            labels, ``x_type``/``y_type``/``mode`` not among the allowed values, ``digits``
            outside 3..12, ``height`` < 150.
        TypeError: ``digits`` or ``height`` not an integer.

    Source: the values come from the ``posenc`` functions the calling cell uses; the
    page's script draws them (the spec keeps Plotly's names for modes, axis types and a
    log axis' range in log10 units).
    """

    def __init__(
        self,
        name: str,
        *,
        param: str,
        traces: list[str] | tuple[str, ...],
        x_title: str,
        y_title: str,
        x_type: str = "linear",
        y_type: str = "linear",
        mode: str = "lines+markers",
        digits: int = 6,
        y_range: tuple[float, float] | None = None,
        height: int = 360,
    ) -> None:
        if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
            raise ValueError(
                "name must be 1-64 characters of a-z, 0-9 and '-', starting with a letter, "
                f"got {name!r}"
            )
        traces = [str(t) for t in traces]
        if not traces or len(set(traces)) != len(traces):
            raise ValueError(f"traces must be one or more distinct labels, got {traces}")
        self.name = name
        self.param = str(param)
        self.traces = traces
        self.x_title, self.y_title = str(x_title), str(y_title)
        self.x_type = check_choice("x_type", x_type, AXIS_TYPES)
        self.y_type = check_choice("y_type", y_type, AXIS_TYPES)
        self.mode = check_choice("mode", mode, ("lines", "markers", "lines+markers"))
        self.digits = check_int("digits", digits, minimum=3)
        if self.digits > 12:
            raise ValueError(f"digits must be an integer in 3..12, got {self.digits}")
        self.height = check_int("height", height, minimum=150)
        if y_range is not None:
            low, high = (_round(v, self.digits) for v in y_range)
            if not low < high or (self.y_type == "log" and low <= 0):
                raise ValueError(
                    f"y_range must be (low, high) with low < high (and low > 0 on a log "
                    f"axis), got {tuple(y_range)}"
                )
            y_range = (low, high)
        self.y_range = y_range
        self.steps: list[dict] = []

    def add_step(self, label, curves: list | tuple) -> SliderFigure:
        """Add the curves for one slider position; returns the figure (calls chain).

        Args:
            label: the parameter value shown next to the slider: text, or a number
                (whole numbers are shown with thousands separators, ``1,000,000``; others
                with ``:g``).
            curves: ``(T,)`` one ``(x, y)`` pair of 1-D sequences or tensors per trace, in
                the order of ``traces``.

        Raises:
            ValueError: a label used before, the wrong number of curves, ``x`` and ``y`` of
                different lengths or empty, a non-finite value, or a value <= 0 on a log
                axis.
        """
        if isinstance(label, int | float) and not isinstance(label, bool):
            as_int = float(label).is_integer() and abs(label) < 1e15
            text = f"{int(label):,}" if as_int else f"{label:g}"
        else:
            text = str(label)
        if any(step["label"] == text for step in self.steps):
            raise ValueError(f"step label {text!r} is already used")
        if len(curves) != len(self.traces):
            raise ValueError(
                f"curves must give one (x, y) per trace ({len(self.traces)}), "
                f"got {len(curves)}"
            )
        xs, ys = [], []
        for trace, (x, y) in zip(self.traces, curves, strict=True):
            x = _series(f"{trace} x", x, self.digits)
            y = _series(f"{trace} y", y, self.digits)
            if not x or len(x) != len(y):
                raise ValueError(
                    f"{trace}: x and y must be non-empty and of equal length, "
                    f"got {len(x)} and {len(y)}"
                )
            for axis, kind, values in (("x", self.x_type, x), ("y", self.y_type, y)):
                if kind == "log" and min(values) <= 0:
                    raise ValueError(f"{trace}: {axis} values must be > 0 on a log axis")
            xs.append(x)
            ys.append(y)
        self.steps.append({"label": text, "x": xs, "y": ys})
        return self

    def _y_range(self) -> list[float]:
        if self.y_range is not None:
            low, high = self.y_range
        else:
            values = [v for step in self.steps for y in step["y"] for v in y]
            low, high = min(values), max(values)
            if low == high:  # one value: a range around it
                low, high = (low / 2, high * 2) if self.y_type == "log" else (low - 1, high + 1)
        if self.y_type == "log":
            pad = 0.05 * (math.log10(high) - math.log10(low))
            return [
                _round(math.log10(low) - pad, self.digits),
                _round(math.log10(high) + pad, self.digits),
            ]
        pad = 0.05 * (high - low)
        return [_round(low - pad, self.digits), _round(high + pad, self.digits)]

    def _check_start(self, start) -> int:
        if not self.steps:
            raise ValueError("add at least one step (add_step) before drawing the figure")
        start = check_int("start", start, minimum=0)
        if start >= len(self.steps):
            raise IndexError(f"start must be a step index in 0..{len(self.steps) - 1}, got {start}")
        return start

    def spec(self, start: int = 0) -> dict:
        """The JSON-ready description the page's script draws.

        Args:
            start: index of the step shown first (``0 <= start < S``).

        Returns:
            ``{"traces", "mode", "steps", "start", "param", "layout"}``: trace labels,
            trace mode, every step's ``label``/``x``/``y``, the start index, the
            parameter name and the layout (axis titles and types, fixed y range, in
            Plotly's terms).

        Raises:
            ValueError: no step added. IndexError: ``start`` outside ``0..S-1``.
        """
        start = self._check_start(start)
        return {
            "traces": self.traces,
            "mode": self.mode,
            "steps": self.steps,
            "start": start,
            "param": self.param,
            "layout": {
                "height": self.height,
                "margin": {"l": 64, "r": 16, "t": 16, "b": 52},
                "xaxis": {"title": {"text": self.x_title}, "type": self.x_type},
                "yaxis": {
                    "title": {"text": self.y_title},
                    "type": self.y_type,
                    "range": self._y_range(),
                },
                "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom"},
                "paper_bgcolor": "white",
                "plot_bgcolor": "white",
                "font": {"family": "sans-serif", "size": 12},
            },
        }

    def html(self, start: int = 0) -> str:
        """The HTML block: slider, value label, plot area and the call that draws it.

        The same arguments give the same text, byte for byte. The controls start hidden
        (``hidden``) and the script reveals them; without JavaScript a ``<noscript>`` note
        points to the static figure.

        Args:
            start: index of the step shown first.

        Raises:
            ValueError: no step added. IndexError: ``start`` outside ``0..S-1``.
        """
        spec = self.spec(start)
        data = json.dumps(spec, sort_keys=True, separators=(",", ":"))
        data = data.replace("</", "<\\/")  # never close the <script> early
        ident, param = self.name, html.escape(self.param)
        first = html.escape(self.steps[spec["start"]]["label"])
        return (
            f'<div class="{CSS_CLASS}" id="{ident}">\n'
            f'<div class="{CSS_CLASS}-controls" hidden>'
            f'<label for="{ident}-input">{param}</label> '
            f'<input type="range" id="{ident}-input" min="0" max="{len(self.steps) - 1}" '
            f'step="1" value="{spec["start"]}"> '
            f'<output for="{ident}-input" id="{ident}-value">{first}</output></div>\n'
            f'<div class="{CSS_CLASS}-plot" id="{ident}-plot"></div>\n'
            f"<noscript><p>The interactive version of this figure needs JavaScript; "
            f"the static figure shows {param} = {first}.</p></noscript>\n"
            f"<script>(function () {{\n"
            f"  var spec = {data};\n"
            f"  function go() {{ if (window.posencInteractive) "
            f'{MOUNT}("{ident}", spec); }}\n'
            f'  if (document.readyState === "loading") '
            f'document.addEventListener("DOMContentLoaded", go); else go();\n'
            f"}})();</script>\n"
            f"</div>"
        )

    def static(self, start: int = 0):
        """The figure at one step, drawn by matplotlib (the no-JavaScript fallback).

        Args:
            start: index of the step drawn.

        Returns:
            The matplotlib ``Figure`` (book style; the caller shows or closes it).

        Raises:
            ValueError: no step added. IndexError: ``start`` outside ``0..S-1``.
        """
        start = self._check_start(start)
        step = self.steps[start]
        fig, ax = pyplot().subplots()
        marker = "o" if "markers" in self.mode else None
        style = "-" if "lines" in self.mode else "none"
        for trace, x, y in zip(self.traces, step["x"], step["y"], strict=True):
            ax.plot(x, y, marker=marker, linestyle=style, markersize=3, label=trace)
        ax.set_xscale(self.x_type)
        ax.set_yscale(self.y_type)
        ax.set_xlabel(self.x_title)
        ax.set_ylabel(self.y_title)
        ax.set_title(f"{self.param} = {step['label']} (static figure)")
        if len(self.traces) > 1:
            ax.legend()
        fig.tight_layout()
        return fig

    def show(self, start: int = 0) -> None:
        """Display the interactive block and the static fallback in a notebook cell.

        The HTML output carries a short ``text/plain`` form (figure name, parameter and its
        values), which ``nbval`` compares along with the HTML.

        Args:
            start: index of the step shown first.

        Raises:
            ValueError: no step added. IndexError: ``start`` outside ``0..S-1``.
        """
        from IPython.display import display

        block = self.html(start)
        labels = ", ".join(step["label"] for step in self.steps)
        plain = f"interactive figure {self.name!r}: {self.param} in [{labels}]"
        display({"text/html": block, "text/plain": plain}, raw=True)
        fig = self.static(start)
        display(fig)
        pyplot().close(fig)

    def __repr__(self) -> str:
        return (
            f"SliderFigure({self.name!r}, param={self.param!r}, traces={len(self.traces)}, "
            f"steps={len(self.steps)})"
        )
