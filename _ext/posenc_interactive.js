/* Draws the book's interactive figures (posenc.interactive.SliderFigure).
 *
 * Each figure's HTML block calls posencInteractive.mount(id, spec) with the values that
 * posenc computed in advance: one step per value of the slider's parameter. This file and
 * Plotly.js are served by the site itself (_ext/posenc_site.py copies them into _static),
 * so the figures work offline. Once a plot is drawn, the controls are shown and the static
 * PNG fallback in the same notebook output is hidden.
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

  function mount(id, spec) {
    var root = document.getElementById(id);
    if (!root || !window.Plotly || root.dataset.mounted) return;
    var plot = document.getElementById(id + "-plot");
    var input = document.getElementById(id + "-input");
    var value = document.getElementById(id + "-value");
    var layout = Object.assign({ autosize: true, showlegend: spec.traces.length > 1 },
                               spec.layout);
    var config = { responsive: true, displaylogo: false, displayModeBar: false };

    function draw(index) {
      value.textContent = spec.steps[index].label;
      root.dataset.step = String(index);
      return window.Plotly.react(plot, traces(spec, index), layout, config);
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
