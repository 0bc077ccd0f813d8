/* Keyboard access to every block that scrolls (WCAG 2.1.1; axe's scrollable-region-focusable),
 * kept right whenever a block's box changes size (booktools.site.assets adds this file,
 * deferred, to every page).
 *
 * pydata-sphinx-theme gives a code block, an output or a wide table a tab stop (tabindex 0)
 * when its content is wider or taller than its box, and none (-1) otherwise; it decides
 * when the page loads, 300 ms after the window is resized and when the page's content
 * changes. When the window widens past the theme's breakpoint, the primary sidebar slides
 * in over 0.25 s (a CSS transition) and the column narrows frame by frame: on a busy
 * machine the 300 ms check can run before the slide's last frame, and a block that scrolls
 * once the column is at rest is left without a tab stop, out of a keyboard user's reach.
 * A ResizeObserver is told every size a block's box takes, the last one included, so this
 * applies the theme's own rule (same blocks, same test) each time one changes, and once
 * the page's fonts are in (a font changes the content's width, not the box's).
 */
(function () {
  "use strict";

  /* The blocks pydata-sphinx-theme's addTabStopsToScrollableElements looks at. */
  var SCROLLERS = "pre, .nboutput > .output_area, .cell_output > .output, "
      + ".jp-RenderedHTMLCommon, .pst-scrollable-table-container";

  function update(el) {
    el.tabIndex = el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight
        ? 0 : -1;
  }

  function each(fn) {
    Array.prototype.forEach.call(document.querySelectorAll(SCROLLERS), fn);
  }

  function start() {
    if ("ResizeObserver" in window) {
      var observer = new ResizeObserver(function (entries) {
        entries.forEach(function (entry) { update(entry.target); });
      });
      each(function (el) { observer.observe(el); });
    }
    if (document.fonts && document.fonts.ready) {
      document.fonts.ready.then(function () { each(update); });
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
