"""The report's style sheet and script, inlined in every page (no file, no network).

Light and dark follow the reader's ``prefers-color-scheme``; the charts are drawn in the light
theme and, in the dark, inverted with their hues turned back (``invert(1) hue-rotate(180deg)``),
so each chart is in the file once. The script is plain JavaScript: a table sorts by the header
clicked (numbers as numbers, empty cells last), a strategy's checkbox hides and shows its parts
of the charts (the ids ``sim.report.html.svg`` gives them).
"""

CSS = """
:root { color-scheme: light dark; --fg: #1d2228; --bg: #ffffff; --muted: #5b6470;
  --rule: #d5dae0; --head: #eef1f4; --accent: #1f6fb2; --good: #1c7c3c; --bad: #b3261e; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e3e7ec; --bg: #14181d; --muted: #9aa4b0; --rule: #333a43; --head: #1f252c;
    --accent: #6cb0ee; --good: #6fd08c; --bad: #ff8a80; }
  figure.chart svg { filter: invert(1) hue-rotate(180deg); }
}
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
  background: var(--bg); margin: 0 auto; padding: 1.5em 2em 4em; max-width: 1400px; }
h1 { font-size: 1.6em; margin: 0 0 .3em; } h2 { margin-top: 2em; border-bottom: 1px solid var(--rule); }
h3 { margin-bottom: .4em; }
.verdict { font-size: 1.05em; border-left: 4px solid var(--accent); padding: .2em 0 .2em 1em; }
.verdict p { margin: .4em 0; }
.muted, caption, figcaption { color: var(--muted); font-size: .9em; }
ul.words { margin: .3em 0; padding-left: 1.2em; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: .9em; }
pre { background: var(--head); padding: .8em; overflow: auto; border-radius: 4px; }
.table-wrap { overflow: auto; max-height: 34em; margin: .5em 0 1.5em; border: 1px solid var(--rule); }
table { border-collapse: collapse; font-size: .85em; }
caption { text-align: left; padding: .3em .5em; caption-side: top; }
th, td { padding: .25em .6em; border-bottom: 1px solid var(--rule); white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: var(--head); position: sticky; top: 0; cursor: pointer; user-select: none; text-align: left; }
th[aria-sort="ascending"]::after { content: " ▲"; } th[aria-sort="descending"]::after { content: " ▼"; }
figure.chart { margin: 1em 0 2em; } figure.chart svg { max-width: 100%; height: auto; }
.toggles { margin: .6em 0; } .toggles label { margin-right: 1.2em; white-space: nowrap; }
a { color: var(--accent); }
"""

JS = """
(function () {
  function key(text) {
    var t = text.trim();
    if (t === '' || t === 'n/a') return null;
    var n = Number(t.replace(/,/g, ''));
    return isNaN(n) ? t : n;
  }
  function compare(a, b) {
    if (a === null) return b === null ? 0 : 1;
    if (b === null) return -1;
    if (typeof a === typeof b) return a < b ? -1 : a > b ? 1 : 0;
    return typeof a === 'number' ? -1 : 1;
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener('click', function () {
        var down = th.getAttribute('aria-sort') === 'ascending';
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', down ? 'descending' : 'ascending');
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (r, s) {
          var c = compare(key(r.cells[col].textContent), key(s.cells[col].textContent));
          return down ? -c : c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  document.querySelectorAll('input.strategy-toggle').forEach(function (box) {
    box.addEventListener('change', function () {
      var prefix = box.getAttribute('data-prefix');
      document.querySelectorAll('[id^="' + prefix + '"]').forEach(function (el) {
        el.style.display = box.checked ? '' : 'none';
      });
    });
  });
})();
"""
