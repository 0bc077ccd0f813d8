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
 * applies the theme's own rule (same blocks, same test) each time one changes: for the
 * blocks on the page and those added to its main content later, and again each time the
 * page's fonts finish loading (a font can change the content's width without changing the
 * box's). The theme's own checks still run; at rest the two agree.
 */
(function () {
  "use strict";

  /* The blocks pydata-sphinx-theme's addTabStopsToScrollableElements looks at. */
  var SCROLLERS = "pre, .nboutput > .output_area, .cell_output > .output, "
      + ".jp-RenderedHTMLCommon, .pst-scrollable-table-container";

  function update(el) {
    var tab = el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight ? 0 : -1;
    if (el.tabIndex !== tab) el.tabIndex = tab;
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
      var main = document.getElementById("main-content");
      if (main && "MutationObserver" in window) {
        new MutationObserver(function (records) {
          records.forEach(function (record) {
            Array.prototype.forEach.call(record.addedNodes, function (node) {
              if (node.nodeType !== 1) return;
              if (node.matches(SCROLLERS)) observer.observe(node);
              Array.prototype.forEach.call(node.querySelectorAll(SCROLLERS), function (el) {
                observer.observe(el);
              });
            });
          });
        }).observe(main, {childList: true, subtree: true});
      }
    }
    if (document.fonts) {
      if (document.fonts.addEventListener) {
        document.fonts.addEventListener("loadingdone", function () { each(update); });
      }
      if (document.fonts.ready) document.fonts.ready.then(function () { each(update); });
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
