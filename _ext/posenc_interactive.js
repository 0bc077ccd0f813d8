/* Draws the book's interactive figures (posenc.interactive.SliderFigure) as inline SVG.
 *
 * Each figure's HTML block calls posencInteractive.mount(id, spec) with the values that
 * posenc computed in advance: one step per value of the slider's parameter. The figures
 * are line plots (linear or log axes, lines and/or markers, a legend), so this file draws
 * them itself, in about 10 kB, rather than with a plotting library (Plotly.js, which the
 * site served before, is a 4.8 MB bundle: a page with a slider weighed 7.5 MB). It is
 * served by the site (_ext/posenc_site.py copies it into _static), so the figures work
 * offline. The spec keeps the names Plotly uses for the same things (mode "lines+markers",
 * layout.xaxis.type "log", a log axis' range in log10 units). Once a plot is drawn, the
 * controls are shown and the static PNG fallback in the same notebook output is hidden.
 *
 * What is drawn, per step: axes with grid lines and tick labels (decades on a log axis),
 * axis titles, one curve per trace (an SVG path of class "js-line") and its markers (paths
 * of class "point", each with a <title>, so hovering a point shows its values), and a
 * legend above the plot when there are several traces. The x axis spans the step's data;
 * the y axis the spec's fixed range, so moving the slider does not rescale it. The plot
 * follows its box's width (redrawn when the box is resized); plot.data holds the curves
 * drawn, [{name, x, y}, ...], for scripts and tests.
 *
 * Accessibility (WCAG 2.1 AA; tests/test_browser.py checks it): the slider is a native
 * <input type="range">, so Tab reaches it and the arrow keys, Home/End and Page Up/Down
 * move it. Its accessible name is its <label>; aria-valuetext makes a screen reader say
 * the parameter's value ("base = 10,000") rather than the step index. The <output>
 * next to it is a polite live region, so the new value is announced when it changes, and
 * the plot is one image (role="img") whose label names the axes and the current value;
 * the SVG inside it is hidden from assistive technology. All of this is set here, not in
 * the notebook's HTML, because the controls exist only once this script runs (without
 * JavaScript the static PNG, with its alt text, is the figure).
 */
(function () {
  "use strict";

  var NS = "http://www.w3.org/2000/svg";
  /* Plotly's default colour sequence, so the curves keep the colours they had. */
  var COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  var INK = "#444", GRID = "#e5e5e5", FONT = 12, MARKER = 2.5, LEGEND_ROW = 18;
  var figures = [];

  function node(name, attrs, parent, text) {
    var el = document.createElementNS(NS, name);
    Object.keys(attrs || {}).forEach(function (k) { el.setAttribute(k, attrs[k]); });
    if (text !== undefined) el.textContent = text;
    if (parent) parent.appendChild(el);
    return el;
  }

  function axisTitle(axis) {
    var title = (axis && axis.title) || "";
    return typeof title === "string" ? title : (title.text || "");
  }

  /* Tick labels: plain numbers up to 9999, then k/M/G/T; tiny ones in e-notation. */
  function label(v) {
    if (v === 0) return "0";
    var a = Math.abs(v), units = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
    if (a >= 1e4) {
      for (var i = 0; i < units.length; i++) {
        if (a >= units[i][0]) return String(Number((v / units[i][0]).toPrecision(4))) + units[i][1];
      }
    }
    if (a < 1e-3) return v.toExponential().replace(/\.?0+e/, "e");
    return String(Number(v.toPrecision(6)));
  }

  /* Evenly spaced "nice" ticks (1, 2 or 5 times a power of ten) inside [lo, hi]. */
  function linearTicks(lo, hi, count) {
    var raw = (hi - lo) / Math.max(count, 1);
    var mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var f = raw / mag;
    var step = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
    var ticks = [];
    for (var k = Math.ceil(lo / step); k * step <= hi + step * 1e-9; k++) {
      ticks.push(Number((k * step).toPrecision(12)));
    }
    return ticks;
  }

  /* Ticks of a log axis whose range [lo, hi] is in log10 units: powers of ten (every
   * second or third one when there are many), or 1-2-5 steps inside a short range. */
  function logTicks(lo, hi, count) {
    var first = Math.ceil(lo - 1e-9), last = Math.floor(hi + 1e-9), ticks = [], e, m;
    var every = Math.max(1, Math.ceil((last - first + 1) / Math.max(count, 2)));
    for (e = first; e <= last; e += every) ticks.push(Math.pow(10, e));
    if (ticks.length < 3) {
      ticks = [];
      for (e = Math.floor(lo); e <= Math.ceil(hi); e++) {
        [1, 2, 5].forEach(function (mult) {
          m = Math.log10(mult) + e;
          if (m >= lo - 1e-9 && m <= hi + 1e-9) ticks.push(Number((mult * Math.pow(10, e)).toPrecision(12)));
        });
      }
    }
    return ticks;
  }

  function Axis(type, lo, hi) {  // lo, hi in axis units (log10 of the value on a log axis)
    this.type = type; this.lo = lo; this.hi = hi;
  }
  Axis.prototype.unit = function (v) { return this.type === "log" ? Math.log10(v) : v; };
  Axis.prototype.frac = function (v) { return (this.unit(v) - this.lo) / (this.hi - this.lo); };
  Axis.prototype.ticks = function (count) {
    return this.type === "log" ? logTicks(this.lo, this.hi, count)
                               : linearTicks(this.lo, this.hi, count);
  };

  /* The range of some values in axis units, with 5 % padding (one value: a unit around it). */
  function autorange(type, values) {
    var u = values.map(function (v) { return type === "log" ? Math.log10(v) : v; });
    var lo = Math.min.apply(null, u), hi = Math.max.apply(null, u);
    if (lo === hi) { lo -= type === "log" ? 0.5 : 1; hi += type === "log" ? 0.5 : 1; }
    var pad = 0.05 * (hi - lo);
    return [lo - pad, hi + pad];
  }

  function textWidth(el) {
    var w = 0;
    try { w = el.getComputedTextLength(); } catch (e) { /* not laid out */ }
    return w || 0.6 * FONT * el.textContent.length;
  }

  /* Draw one step of a figure into its plot box; returns the curves drawn. */
  function render(fig, index) {
    var spec = fig.spec, plot = fig.plot, layout = spec.layout || {}, margin = layout.margin || {};
    var step = spec.steps[index];
    var width = Math.max(plot.clientWidth || 0, 240), height = layout.height || 360;
    var xaxisSpec = layout.xaxis || {}, yaxisSpec = layout.yaxis || {};
    var xtype = xaxisSpec.type || "linear", ytype = yaxisSpec.type || "linear";
    var xr = autorange(xtype, [].concat.apply([], step.x));
    var yr = yaxisSpec.range || autorange(ytype, [].concat.apply([], step.y));
    var xa = new Axis(xtype, xr[0], xr[1]), ya = new Axis(ytype, yr[0], yr[1]);
    var lines = spec.mode.indexOf("lines") >= 0, markers = spec.mode.indexOf("markers") >= 0;

    var svg = node("svg", {width: width, height: height, viewBox: "0 0 " + width + " " + height,
                           "aria-hidden": "true", focusable: "false",
                           "font-family": (layout.font && layout.font.family) || "sans-serif",
                           "font-size": FONT, style: "display:block"});
    node("rect", {width: width, height: height, fill: "white"}, svg);
    plot.replaceChildren(svg);  // attached now, so that text can be measured

    // Legend (several traces): entries left to right, wrapping into rows above the plot.
    var top = margin.t || 16, left0 = margin.l || 64, right = margin.r || 16;
    var bottom = margin.b || 52;
    if (spec.traces.length > 1) {
      var legend = node("g", {"class": "legend"}, svg), x = left0, row = 0;
      spec.traces.forEach(function (name, t) {
        var g = node("g", {}, legend), color = COLORS[t % COLORS.length];
        var text = node("text", {x: 26, y: 4, fill: INK}, g, name);
        var w = 26 + textWidth(text) + 16;
        if (x + w > width - right && x > left0) { x = left0; row += 1; }
        g.setAttribute("transform", "translate(" + x + "," + (top + row * LEGEND_ROW + 8) + ")");
        if (lines) node("path", {d: "M2,0H22", stroke: color, "stroke-width": 2}, g);
        if (markers) node("circle", {cx: 12, cy: 0, r: MARKER + 0.5, fill: color}, g);
        x += w;
      });
      top += (row + 1) * LEGEND_ROW + 4;
    }

    // Tick labels first: the widest y label sets the left margin.
    var ph = height - top - bottom;
    var yticks = ya.ticks(Math.max(2, Math.floor(ph / 50)));
    var ylabels = yticks.map(function (v) {
      return node("text", {"text-anchor": "end", fill: INK, dy: "0.35em"}, svg, label(v));
    });
    var widest = Math.max.apply(null, [0].concat(ylabels.map(textWidth)));
    var left = Math.max(left0, widest + 32);
    var pw = width - left - right;
    function px(v) { return left + xa.frac(v) * pw; }
    function py(v) { return top + (1 - ya.frac(v)) * ph; }

    var grid = node("g", {stroke: GRID, "stroke-width": 1}, svg);
    yticks.forEach(function (v, i) {
      var y = py(v);
      node("path", {d: "M" + left + "," + y + "H" + (left + pw)}, grid);
      ylabels[i].setAttribute("x", left - 6);
      ylabels[i].setAttribute("y", y);
    });
    xa.ticks(Math.max(2, Math.floor(pw / 90))).forEach(function (v) {
      var x = px(v);
      node("path", {d: "M" + x + "," + top + "V" + (top + ph)}, grid);
      node("text", {x: x, y: top + ph + 16, "text-anchor": "middle", fill: INK}, svg, label(v));
    });
    node("path", {d: "M" + left + "," + top + "V" + (top + ph) + "H" + (left + pw),
                  stroke: INK, fill: "none"}, svg);
    node("text", {x: left + pw / 2, y: height - 10, "text-anchor": "middle", fill: INK},
         svg, axisTitle(xaxisSpec));
    node("text", {transform: "translate(14," + (top + ph / 2) + ") rotate(-90)",
                  "text-anchor": "middle", fill: INK}, svg, axisTitle(yaxisSpec));

    // The curves, clipped to the plot area.
    var clip = fig.id + "-clip";
    node("rect", {x: left, y: top, width: pw, height: ph},
         node("clipPath", {id: clip}, node("defs", {}, svg)));
    var area = node("g", {"clip-path": "url(#" + clip + ")"}, svg);
    var drawn = spec.traces.map(function (name, t) {
      var xs = step.x[t], ys = step.y[t], color = COLORS[t % COLORS.length];
      var g = node("g", {"class": "trace"}, area);
      if (lines) {
        var d = xs.map(function (v, i) {
          return (i ? "L" : "M") + px(v).toFixed(2) + "," + py(ys[i]).toFixed(2);
        }).join("");
        node("path", {"class": "js-line", d: d, fill: "none", stroke: color,
                      "stroke-width": 2, "stroke-linejoin": "round"}, g);
      }
      if (markers) {
        xs.forEach(function (v, i) {
          var x = px(v), y = py(ys[i]), r = MARKER;
          var dot = node("path", {"class": "point", fill: color,
                                  d: "M" + (x - r).toFixed(2) + "," + y.toFixed(2) +
                                     "a" + r + "," + r + " 0 1,0 " + 2 * r + ",0" +
                                     "a" + r + "," + r + " 0 1,0 " + -2 * r + ",0"}, g);
          node("title", {}, dot, name + ": " + v + ", " + ys[i]);
        });
      }
      return {name: name, x: xs, y: ys};
    });
    plot.data = drawn;
    fig.width = plot.clientWidth;
    return drawn;
  }

  function mount(id, spec) {
    var root = document.getElementById(id);
    if (!root || root.dataset.mounted) return;
    var plot = document.getElementById(id + "-plot");
    var input = document.getElementById(id + "-input");
    var value = document.getElementById(id + "-value");
    var fig = {id: id, spec: spec, plot: plot, index: spec.start, width: 0};

    var axes = axisTitle(spec.layout.yaxis) + " against " + axisTitle(spec.layout.xaxis);
    var curves = spec.traces.length > 1 ? " (" + spec.traces.join("; ") + ")" : "";
    root.setAttribute("role", "group");
    root.setAttribute("aria-label", "Interactive figure: " + axes + ", one slider: "
                      + spec.param);
    value.setAttribute("aria-live", "polite");
    plot.setAttribute("role", "img");

    function draw(index) {
      var label = spec.steps[index].label;
      var said = spec.param + " = " + label;
      fig.index = index;
      value.textContent = label;
      input.setAttribute("aria-valuetext", said);
      plot.setAttribute("aria-label", axes + curves + ", at " + said);
      render(fig, index);
      root.dataset.step = String(index);
    }

    draw(spec.start);
    figures.push(fig);
    root.dataset.mounted = "true";
    root.querySelector(".posenc-interactive-controls").hidden = false;
    var cell = root.closest(".cell_output");
    if (cell) {
      cell.querySelectorAll("img").forEach(function (img) {
        var box = img.closest(".output") || img;
        box.classList.add("posenc-static-fallback");
        box.hidden = true;
      });
    }
    input.addEventListener("input", function () { draw(Number(input.value)); });
    if (window.ResizeObserver) {
      new ResizeObserver(function () {
        if (plot.clientWidth && plot.clientWidth !== fig.width) render(fig, fig.index);
      }).observe(plot);
    }
  }

  /* Redraw every figure at its box's current width (e.g. once a page is laid out for
   * print: booktools.pdf calls it). */
  function redraw() {
    figures.forEach(function (fig) { render(fig, fig.index); });
  }

  window.posencInteractive = { mount: mount, redraw: redraw };
})();
