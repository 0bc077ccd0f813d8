/* Sort and filter the atlas table (book/atlas.md, class "posenc-atlas").
 *
 * Served by the site itself (_ext/posenc_site.py copies it into _static and adds it only
 * to pages that hold such a table). Without this script the table is a plain table.
 * With it:
 *   - each column header becomes a button; pressing it (click, Enter or Space) sorts the
 *     rows by that column, ascending, then descending; the sorted column's header
 *     carries aria-sort;
 *   - a labelled search box above the table keeps the rows whose text contains every
 *     word typed (any case), and a polite live region says how many rows are shown.
 * Numbers sort as numbers ("1e6" after "10000"); empty cells ("—") sort last.
 */
(function () {
  "use strict";

  var EMPTY = "\u2014";
  var ARROWS = { none: "\u2195", ascending: "\u25B2", descending: "\u25BC" };

  function text(cell) {
    return (cell ? cell.textContent : "").replace(/\s+/g, " ").trim();
  }

  function key(value) {
    if (value === "" || value === EMPTY) return { empty: true };
    var num = Number(value);
    if (!isNaN(num)) return { num: num };
    return { str: value };
  }

  function compare(a, b) {
    if (a.empty || b.empty) return (a.empty ? 1 : 0) - (b.empty ? 1 : 0);
    if (a.num !== undefined && b.num !== undefined) return a.num - b.num;
    if (a.num !== undefined) return -1;
    if (b.num !== undefined) return 1;
    return a.str.localeCompare(b.str, undefined, { numeric: true, sensitivity: "base" });
  }

  function setup(table, index) {
    var body = table.tBodies[0];
    var head = table.tHead && table.tHead.rows[0];
    if (!body || !head || table.dataset.atlasReady) return;
    table.dataset.atlasReady = "1";
    if (!table.id) table.id = "posenc-atlas-" + index;
    var rows = Array.prototype.slice.call(body.rows);
    var headers = Array.prototype.slice.call(head.cells);
    var state = { column: -1, direction: "none" };

    var controls = document.createElement("div");
    controls.className = "posenc-atlas-controls";
    var inputId = table.id + "-filter";
    var label = document.createElement("label");
    label.htmlFor = inputId;
    label.textContent = "Filter rows (every word must appear in the row)";
    var input = document.createElement("input");
    input.type = "search";
    input.id = inputId;
    input.setAttribute("aria-controls", table.id);
    input.autocomplete = "off";
    var status = document.createElement("p");
    status.className = "posenc-atlas-status";
    status.setAttribute("role", "status");
    status.setAttribute("aria-live", "polite");
    controls.appendChild(label);
    controls.appendChild(input);
    controls.appendChild(status);
    var anchor = table.closest(".pst-scrollable-table-container") || table;
    anchor.parentNode.insertBefore(controls, anchor);

    function showCount(shown) {
      status.textContent = "Showing " + shown + " of " + rows.length + " rows.";
    }

    function filter() {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = 0;
      rows.forEach(function (row) {
        var content = text(row).toLowerCase();
        var keep = words.every(function (w) { return content.indexOf(w) !== -1; });
        row.hidden = !keep;
        if (keep) shown += 1;
      });
      showCount(shown);
    }

    function sortBy(column) {
      var direction = state.column === column && state.direction === "ascending"
        ? "descending" : "ascending";
      state = { column: column, direction: direction };
      var keyed = rows.map(function (row, i) {
        return { row: row, i: i, k: key(text(row.cells[column])) };
      });
      keyed.sort(function (a, b) {
        var c = compare(a.k, b.k);
        if (a.k.empty || b.k.empty) return c || a.i - b.i;  // empty last either way
        if (direction === "descending") c = -c;
        return c || a.i - b.i;
      });
      keyed.forEach(function (item) { body.appendChild(item.row); });
      headers.forEach(function (th, col) {
        var dir = col === column ? direction : "none";
        if (dir === "none") th.removeAttribute("aria-sort");
        else th.setAttribute("aria-sort", dir);
        th.querySelector(".posenc-atlas-arrow").textContent = ARROWS[dir];
      });
    }

    headers.forEach(function (th, col) {
      var name = text(th);
      var button = document.createElement("button");
      button.type = "button";
      button.className = "posenc-atlas-sort";
      button.title = "Sort by " + name;
      var words = document.createElement("span");
      words.textContent = name;
      var arrow = document.createElement("span");
      arrow.className = "posenc-atlas-arrow";
      arrow.setAttribute("aria-hidden", "true");
      arrow.textContent = ARROWS.none;
      button.appendChild(words);
      button.appendChild(arrow);
      button.addEventListener("click", function () { sortBy(col); });
      while (th.firstChild) th.removeChild(th.firstChild);
      th.appendChild(button);
      th.setAttribute("scope", "col");
    });
    input.addEventListener("input", filter);
    showCount(rows.length);
  }

  function init() {
    var tables = document.querySelectorAll("table.posenc-atlas");
    Array.prototype.forEach.call(tables, setup);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
