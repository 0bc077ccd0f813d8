/* Draws the book's interactive figures (posenc.interactive.SliderFigure).
 *
 * Each figure's HTML block calls posencInteractive.mount(id, spec) with the values that
 * posenc computed in advance: one step per value of the slider's parameter. This file and
 * Plotly.js are served by the site itself (_ext/posenc_site.py copies them into _static),
 * so the figures work offline. Once a plot is drawn, the controls are shown and the static
 * PNG fallback in the same notebook output is hidden.
 *
 * Accessibility (WCAG 2.1 AA; tests/test_browser.py checks it): the slider is a native
 * <input type="range">, so Tab reaches it and the arrow keys, Home/End and Page Up/Down
 * move it. Its accessible name is its <label>; aria-valuetext makes a screen reader say
 * the parameter's value ("base = 10,000") rather than the step index. The <output>
 * next to it is a polite live region, so the new value is announced when it changes, and
 * the plot is one image (role="img") whose label names the axes and the current value;
 * Plotly's SVG inside it is hidden from assistive technology. All of this is set here,
 * not in the notebook's HTML, because the controls exist only once this script runs
 * (without JavaScript the static PNG, with its alt text, is the figure).
 */
(function () {
  "use strict";

  function traces(spec, index) {
    var step = spec.steps[index];
    return spec.traces.map(function (name, t) {
      return {
        type: "scatter",
        mode: spec.mode,
        name: name,
        x: step.x[t],
        y: step.y[t],
        marker: { size: 5 },
        hovertemplate: "%{x}, %{y}<extra>" + name + "</extra>"
      };
    });
  }

  function axisTitle(axis) {
    var title = (axis && axis.title) || "";
    return typeof title === "string" ? title : (title.text || "");
  }

  function mount(id, spec) {
    var root = document.getElementById(id);
    if (!root || !window.Plotly || root.dataset.mounted) return;
    var plot = document.getElementById(id + "-plot");
    var input = document.getElementById(id + "-input");
    var value = document.getElementById(id + "-value");
    var layout = Object.assign({ autosize: true, showlegend: spec.traces.length > 1 },
                               spec.layout);
    var config = { responsive: true, displaylogo: false, displayModeBar: false };

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
      value.textContent = label;
      input.setAttribute("aria-valuetext", said);
      plot.setAttribute("aria-label", axes + curves + ", at " + said);
      root.dataset.step = String(index);
      return window.Plotly.react(plot, traces(spec, index), layout, config).then(function () {
        plot.querySelectorAll("svg").forEach(function (svg) {
          svg.setAttribute("aria-hidden", "true");
        });
      });
    }

    draw(spec.start).then(function () {
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
    });
    input.addEventListener("input", function () { draw(Number(input.value)); });
  }

  window.posencInteractive = { mount: mount };
})();
