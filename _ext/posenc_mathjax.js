/* MathJax's menu, loaded when a reader asks for it (booktools.site.mathjax adds this file,
 * not deferred, to every page with a formula, after Sphinx's MathJax configuration and
 * before MathJax itself runs).
 *
 * The page loads MathJax's components one by one (startup.js, then the TeX input, the
 * CommonHTML output and the assistive MathML, as the configuration lists them) rather
 * than the combined tex-mml-chtml.js: the same typesetting and the same hidden MathML for
 * screen readers, without the menu, which is 0.43 MB of the combined file's 1.17 MB. The
 * menu is the way to MathJax's accessibility explorer (walking through a formula from the
 * keyboard), its zoom and "Show Math As", so it stays one action away: each formula is
 * focusable, and a right click on a formula, or Space, Enter, Shift+F10 or the context-menu
 * key on a focused one, loads ui/menu from the site, typesets the page again with the
 * menu attached (each formula's TeX is put back first) and opens the menu on the same
 * formula. From then on everything is as with the combined component.
 */
(function () {
  "use strict";

  var config = window.MathJax = window.MathJax || {};
  var startup = config.startup = config.startup || {};
  var loading = null;

  function containers() {
    return Array.prototype.slice.call(document.querySelectorAll("mjx-container"));
  }

  /* Load the menu, then typeset the page again with the menu's handler. */
  function withMenu() {
    if (!loading) {
      loading = MathJax.loader.load("ui/menu").then(function () {
        var doc = MathJax.startup.document;
        Array.from(doc.math).forEach(function (item) { item.removeFromDocument(true); });
        doc.clear();
        MathJax.startup.getComponents();  // a new document, whose handler has the menu
        return MathJax.typesetPromise();
      });
    }
    return loading;
  }

  function open(container, event) {
    var index = containers().indexOf(container);
    event.preventDefault();
    event.stopImmediatePropagation();
    withMenu().then(function () {
      var target = containers()[index];
      if (!target) return;
      if (event.type === "contextmenu") {
        target.dispatchEvent(new MouseEvent("contextmenu", {
          bubbles: true, cancelable: true, clientX: event.clientX, clientY: event.clientY
        }));
      } else {
        target.focus();
        target.dispatchEvent(new KeyboardEvent("keydown", {
          bubbles: true, cancelable: true, key: " ", code: "Space", keyCode: 32
        }));
      }
    }).catch(function (err) { console.warn("MathJax menu not loaded:", err); });
  }

  function formula(event) {
    var el = event.target && event.target.closest && event.target.closest("mjx-container");
    return el && !loading ? el : null;
  }

  function offerMenu() {
    containers().forEach(function (c) { c.setAttribute("tabindex", "0"); });
    document.addEventListener("contextmenu", function (event) {
      var el = formula(event);
      if (el) open(el, event);
    }, true);
    document.addEventListener("keydown", function (event) {
      var el = formula(event);
      var asks = event.key === " " || event.key === "Enter" || event.key === "ContextMenu"
          || (event.key === "F10" && event.shiftKey);
      if (el && asks && event.target === el) open(el, event);
    }, true);
  }

  var pageReady = startup.pageReady;
  startup.pageReady = function () {
    var ready = pageReady ? pageReady() : MathJax.startup.defaultPageReady();
    return Promise.resolve(ready).then(offerMenu);
  };
})();
