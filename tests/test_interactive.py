"""posenc.interactive: the HTML block is deterministic and carries exactly the values given,
the static fallback draws the same curves, and bad input gets a clear error.

That the figures draw and move in a browser is checked on the built site in
tests/test_browser.py (test_interactive_figures_move_with_their_slider).
"""

from __future__ import annotations

import json
import math
import re

import matplotlib.pyplot as plt
import pytest
import torch

from posenc.alibi import alibi_slopes
from posenc.interactive import CSS_CLASS, SliderFigure
from posenc.rope import rope_inv_freq


def wavelengths(bases=(100.0, 10_000.0, 1_000_000.0)) -> SliderFigure:
    fig = SliderFigure(
        "rope-test", param="base", traces=["head_dim 64", "head_dim 128"],
        x_title="pair", y_title="wavelength", y_type="log",
    )
    for b in bases:
        fig.add_step(b, [
            (torch.arange(d // 2), 2 * math.pi / rope_inv_freq(d, b, dtype=torch.float64))
            for d in (64, 128)
        ])
    return fig


def embedded_spec(block: str) -> dict:
    match = re.search(r"var spec = (\{.*?\});\n", block)
    assert match, "no spec in the HTML block"
    return json.loads(match.group(1).replace("<\\/", "</"))


def test_html_is_identical_from_run_to_run():
    assert wavelengths().html(1) == wavelengths().html(1)


def test_html_has_fixed_ids_and_no_random_parts():
    block = wavelengths().html()
    ids = re.findall(r'id="([^"]+)"', block)
    assert ids == ["rope-test", "rope-test-input", "rope-test-value", "rope-test-plot"]
    assert f'class="{CSS_CLASS}"' in block
    assert "<noscript>" in block and " hidden>" in block  # controls hidden until drawn
    assert not re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-", block)  # no uuid


@pytest.mark.parametrize("digits", [3, 6, 12])
def test_spec_carries_the_values_rounded_to_digits(digits):
    fig = SliderFigure("t", param="p", traces=["a"], x_title="x", y_title="y", digits=digits)
    y = torch.tensor([math.pi, -math.e, 0.0, 1e-9])
    fig.add_step(1, [(torch.arange(4), y)])
    got = embedded_spec(fig.html())["steps"][0]["y"][0]
    want = [float(f"{v:.{digits}g}") for v in y.tolist()]
    assert got == want
    assert embedded_spec(fig.html()) == json.loads(json.dumps(fig.spec()))


@pytest.mark.parametrize("num_heads", [1, 6, 12, 64])
def test_step_values_match_posenc(num_heads):
    fig = SliderFigure("s", param="num_heads", traces=["rule"], x_title="h", y_title="m",
                       y_type="log", digits=12)
    fig.add_step(num_heads, [(torch.arange(num_heads), alibi_slopes(num_heads,
                                                                    dtype=torch.float64))])
    step = fig.spec()["steps"][0]
    assert step["label"] == f"{num_heads:,}"
    assert step["y"][0] == pytest.approx(alibi_slopes(num_heads, dtype=torch.float64).tolist(),
                                         rel=1e-11)


def test_labels_and_start():
    fig = wavelengths()
    spec = fig.spec(2)
    assert [s["label"] for s in spec["steps"]] == ["100", "10,000", "1,000,000"]
    assert spec["start"] == 2 and 'value="2"' in fig.html(2)
    assert '>1,000,000</output>' in fig.html(2)
    fig.add_step(0.5, [([1.0], [1.0]), ([2.0], [2.0])])
    assert fig.steps[-1]["label"] == "0.5"


@pytest.mark.parametrize("y_type", ["linear", "log"])
def test_y_range_covers_every_step(y_type):
    fig = SliderFigure("r", param="p", traces=["a"], x_title="x", y_title="y", y_type=y_type)
    fig.add_step(1, [([1, 2], [1.0, 10.0])]).add_step(2, [([1, 2], [5.0, 1000.0])])
    low, high = fig.spec()["layout"]["yaxis"]["range"]
    if y_type == "log":
        low, high = 10**low, 10**high
    assert low < 1.0 and high > 1000.0


def test_script_cannot_be_closed_early_by_a_label():
    fig = SliderFigure("x", param="p", traces=["</script><b>"], x_title="x", y_title="y")
    fig.add_step("</script>", [([1], [1])])
    block = fig.html()
    assert block.count("</script>") == 1


def test_static_fallback_draws_each_trace():
    fig = wavelengths()
    mpl_fig = fig.static(1)
    try:
        lines = mpl_fig.axes[0].get_lines()
        assert [ln.get_label() for ln in lines] == fig.traces
        assert lines[1].get_ydata().tolist() == fig.steps[1]["y"][1]
        assert mpl_fig.axes[0].get_yscale() == "log"
        assert "10,000" in mpl_fig.axes[0].get_title()
    finally:
        plt.close(mpl_fig)


def test_show_displays_html_then_the_static_png(monkeypatch):
    import IPython.display
    from matplotlib.figure import Figure

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj, **kw: shown.append((obj, kw)))
    wavelengths().show(1)
    (bundle, kw), (figure, _) = shown
    assert kw == {"raw": True} and sorted(bundle) == ["text/html", "text/plain"]
    assert bundle["text/html"] == wavelengths().html(1)
    assert bundle["text/plain"] == (
        "interactive figure 'rope-test': base in [100, 10,000, 1,000,000]"
    )
    assert isinstance(figure, Figure)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"name": "Bad Name"}, ValueError, "name must be"),
        ({"name": "1abc"}, ValueError, "name must be"),
        ({"traces": []}, ValueError, "traces must be"),
        ({"traces": ["a", "a"]}, ValueError, "traces must be"),
        ({"y_type": "symlog"}, ValueError, "y_type"),
        ({"mode": "bars"}, ValueError, "mode"),
        ({"digits": 2}, ValueError, "digits"),
        ({"digits": 13}, ValueError, "digits"),
        ({"digits": 6.0}, TypeError, "digits"),
        ({"height": 100}, ValueError, "height"),
        ({"y_range": (2.0, 1.0)}, ValueError, "y_range"),
        ({"y_range": (0.0, 1.0), "y_type": "log"}, ValueError, "y_range"),
    ],
)
def test_bad_arguments(kwargs, error, match):
    args = {"name": "ok", "param": "p", "traces": ["a"], "x_title": "x", "y_title": "y"}
    with pytest.raises(error, match=match):
        SliderFigure(**{**args, **kwargs})


@pytest.mark.parametrize(
    ("curves", "match"),
    [
        ([], "one \\(x, y\\) per trace"),
        ([([1, 2], [1.0])], "equal length"),
        ([([], [])], "non-empty"),
        ([([1], [float("nan")])], "finite"),
        ([([1], [float("inf")])], "finite"),
        ([([1, 2], [1.0, 0.0])], "> 0 on a log axis"),
    ],
)
def test_bad_steps(curves, match):
    fig = SliderFigure("ok", param="p", traces=["a"], x_title="x", y_title="y", y_type="log")
    with pytest.raises(ValueError, match=match):
        fig.add_step(1, curves)


def test_single_value_gets_a_range():
    for y_type in ("linear", "log"):
        fig = SliderFigure("one", param="p", traces=["a"], x_title="x", y_title="y",
                           y_type=y_type)
        low, high = fig.add_step(1, [([1], [0.5])]).spec()["layout"]["yaxis"]["range"]
        assert low < high


def test_repeated_label_and_bad_start():
    fig = SliderFigure("ok", param="p", traces=["a"], x_title="x", y_title="y")
    with pytest.raises(ValueError, match="at least one step"):
        fig.html()
    fig.add_step(1, [([1], [1])])
    with pytest.raises(ValueError, match="already used"):
        fig.add_step(1.0, [([1], [1])])
    with pytest.raises(IndexError, match="0..0"):
        fig.spec(1)
    with pytest.raises(ValueError, match="start"):
        fig.static(-1)
