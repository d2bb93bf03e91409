#include "reports/html/html_assets.h"

namespace qprof::reports::html {

const char kStyleSheet[] = R"CSS(
:root { --ink:#1b1f24; --muted:#5b6470; --line:#d9dde3; --panel:#ffffff; --bg:#f4f5f7;
  --tensor:#009E73; --simt:#E69F00; --comm:#0072B2; --memory:#CC79A7; --other:#8C8C8C; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin:0; background:var(--bg); color:var(--ink);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", "DejaVu Sans", Arial, sans-serif; }
main { max-width:1240px; margin:0 auto; padding:18px 22px 30px; }
header.top { display:flex; flex-wrap:wrap; align-items:baseline; gap:6px 16px; margin-bottom:10px; }
h1 { font-size:21px; margin:0; }
h1 .sub { color:var(--muted); font-weight:normal; }
h2 { font-size:16px; margin:0 0 8px; }
h3 { font-size:14px; margin:14px 0 6px; }
p { margin:6px 0; }
.muted { color:var(--muted); }
.small { font-size:12px; }
section { background:var(--panel); border:1px solid var(--line); border-radius:8px;
  padding:14px 18px; margin-top:14px; }
.banner { border-radius:8px; padding:10px 14px; margin:10px 0; border:1px solid; }
.banner.host { background:#fff6dd; border-color:#e6b84a; color:#4d3800; }
.banner.modelled { background:#f6eefa; border-color:#b58ac8; color:#3f2150; }
.banner.imported { background:#e9f1fb; border-color:#86a9d6; color:#173a66; }
.banner.failed { background:#fde8e8; border-color:#d46a6a; color:#5c1010; }
.banner.passed { background:#e8f6ea; border-color:#6ab47a; color:#143d1d; }
.cards { display:grid; grid-template-columns:repeat(auto-fit, minmax(150px, 1fr)); gap:10px; }
.card { background:var(--panel); border:1px solid var(--line); border-radius:8px; padding:8px 12px; min-width:0; }
.card.wide { grid-column: span 2; }
@media (max-width: 700px) { .card.wide { grid-column: auto; } }
.card .k { font-size:11px; text-transform:uppercase; letter-spacing:.04em; color:var(--muted); }
.card .v { font-size:20px; font-weight:650; overflow-wrap:anywhere; }
.card .v.sm { font-size:15px; }
.card .p { margin-top:2px; }
.hero { font-size:22px; font-weight:700; margin:2px 0 6px; line-height:1.3; }
.hero .arrow { color:var(--muted); font-weight:400; }
.story li { margin:3px 0; font-size:15px; }
.tablewrap { overflow-x:auto; }
table { border-collapse:collapse; width:100%; font-size:13px; }
th, td { padding:4px 8px; border-bottom:1px solid #e8ebef; vertical-align:top; }
th { text-align:left; background:#eef1f4; font-weight:600; white-space:nowrap; position:sticky; top:0; }
table.sortable th { cursor:pointer; user-select:none; }
table.sortable th:focus { outline:2px solid var(--comm); outline-offset:-2px; }
th[aria-sort="ascending"]::after { content:" \25B2"; font-size:10px; }
th[aria-sort="descending"]::after { content:" \25BC"; font-size:10px; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
td.kname { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace;
  font-size:12px; overflow-wrap:anywhere; min-width:240px; }
/* Long template names: three lines until hovered or focused; the full name is in the DOM. */
td.kname .kn { display:-webkit-box; -webkit-box-orient:vertical; -webkit-line-clamp:3; line-clamp:3; overflow:hidden; }
td.kname:hover .kn, td.kname:focus-within .kn, td.kname .kn:focus { -webkit-line-clamp:unset; line-clamp:unset; overflow:visible; }
/* The kernels table fits the page at laptop width: the launch sits under the name (a line,
   opening into the rest), roles and evidence details wrap. */
.klaunch { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", Arial, sans-serif;
  font-size:11px; color:var(--muted); margin-top:3px; }
.klaunch summary { cursor:pointer; }
.klaunch div { margin:1px 0 0 12px; }
table.fit td.role { overflow-wrap:break-word; }
td.ev { min-width:11em; }
/* Evidence details: three lines until hovered or focused (the full text is the tooltip too). */
td.ev .evd { max-width:16em; overflow-wrap:anywhere; display:-webkit-box; -webkit-box-orient:vertical;
  -webkit-line-clamp:3; line-clamp:3; overflow:hidden; }
td.ev:hover .evd, td.ev:focus-within .evd { -webkit-line-clamp:unset; line-clamp:unset; overflow:visible; }
tr.gone td { background:#fdf3e3; } tr.new td { background:#e6f5ef; }
.cls { display:inline-block; padding:0 6px; border-radius:4px; font-size:12px; font-weight:600; }
.cls-tensor { background:var(--tensor); color:#fff; } .cls-simt { background:var(--simt); color:#111; }
.cls-comm { background:var(--comm); color:#fff; } .cls-memory { background:var(--memory); color:#111; }
.cls-other { background:var(--other); color:#111; }
.sharebar { display:inline-block; height:9px; border-radius:2px; vertical-align:middle; margin-right:6px; min-width:1px; }
.badge { display:inline-block; font-size:11px; line-height:16px; padding:0 6px; border-radius:9px;
  border:1px solid #c9ced6; background:#f3f4f6; color:#333; max-width:100%; }
.b-measured { background:#e2f3ea; border-color:#8fcfae; color:#0b5535; }
.b-host { background:#fff3cd; border-color:#e0b84c; color:#6b4a00; }
.b-imported { background:#e5eefa; border-color:#93b3de; color:#1a3f6e; }
.b-modelled { background:#f4ecf8; border-color:#b995cc; color:#4b2660; border-style:dashed; }
.b-sass { background:#e8eaf6; border-color:#9fa8da; color:#283593; }
.b-registry { background:#e0f2f1; border-color:#80cbc4; color:#00564e; }
.b-name_rule { background:#f1f1f1; border-color:#c4c4c4; color:#333; }
.b-launch_context { background:#fdf0e6; border-color:#e3ad85; color:#6a3210; }
.b-work_rate { background:#e8f0fe; border-color:#8ab4f8; color:#174ea6; }
details.rolek summary { cursor:pointer; }
details.rolek ol { margin:4px 0 2px; padding-left:18px; font-size:12px; }
details.rolek li { margin:2px 0; overflow-wrap:anywhere; }
.lflag { font-weight:600; color:#8a3b00; }
.b-none { background:#f3f4f6; border-color:#d0d4da; color:#444; }
.b-unknown { background:#fde8e8; border-color:#e5a3a3; color:#7d1d1d; }
.controls { display:flex; flex-wrap:wrap; gap:8px; align-items:center; margin:6px 0 8px; }
.controls input, .controls select { font:inherit; padding:3px 6px; border:1px solid var(--line); border-radius:5px; }
.legend { display:flex; flex-wrap:wrap; gap:4px 14px; font-size:12px; margin:4px 0; }
.legend .sw { display:inline-block; width:11px; height:11px; border-radius:2px; vertical-align:-1px; margin-right:4px; }
svg { display:block; width:100%; height:auto; font-family:inherit; }
svg text { font-size:12px; fill:#1b1f24; }
svg .ax { stroke:#c4c9d0; stroke-width:1; }
svg .tick { font-size:11px; fill:#5b6470; }
svg .rooflabel { font-size:11px; fill:#3b4250; }
ul.warn { margin:4px 0; padding-left:0; list-style:none; }
ul.warn li { border-left:4px solid var(--simt); background:#fffaf0; padding:5px 10px; margin:4px 0; border-radius:0 4px 4px 0; }
ul.warn li code { font-size:12px; }
/* Kernel names in lists (latency, warnings, roles) break rather than widen the page. */
main li { overflow-wrap:anywhere; }
code { font-family: ui-monospace, Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size:12px; }
.grid2 { display:grid; grid-template-columns:1fr 1fr; gap:14px; }
.formula { font-family: ui-monospace, Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size:12px; }
footer { margin-top:18px; color:var(--muted); font-size:12px; }
@media (max-width: 900px) { .grid2 { grid-template-columns:1fr; } main { padding:12px; } .hero { font-size:19px; } }
@media print {
  body { background:#fff; font-size:11px; }
  main { max-width:none; padding:0; }
  section { border-color:#bbb; }
  svg, tr, .cards, .side, .banner, .hero { break-inside:avoid; }
  h2, h3 { break-after:avoid; }
  .tablewrap { overflow:visible; }
  table { font-size:9px; }
  th, td { padding:2px 4px; }
  td.kname { min-width:0; font-size:9px; }
  .sharebar { display:none; }
  .controls { display:none; }
  td.kname .kn, td.ev .evd { -webkit-line-clamp:unset; line-clamp:unset; overflow:visible; }
  th { position:static; }
  .cls, .sharebar, .badge, .banner, tr.gone td, tr.new td { -webkit-print-color-adjust:exact; print-color-adjust:exact; }
}
)CSS";

const char kScript[] = R"JS(
(function () {
  'use strict';
  // Numeric cells carry data-sort with the raw number; everything else sorts as text.
  function sortValue(td) {
    var v = td.getAttribute('data-sort');
    if (v !== null && v !== '' && isFinite(Number(v))) return Number(v);
    return (v !== null ? v : td.textContent).trim().toLowerCase();
  }
  function sortTable(table, col, th) {
    var body = table.tBodies[0];
    if (!body) return;
    var asc = th.getAttribute('aria-sort') === 'descending';
    var heads = table.tHead.rows[0].cells;
    for (var i = 0; i < heads.length; i++) heads[i].removeAttribute('aria-sort');
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = sortValue(a.cells[col]), y = sortValue(b.cells[col]);
      if (typeof x === 'number' && typeof y === 'number') return asc ? x - y : y - x;
      x = String(x); y = String(y);
      return asc ? x.localeCompare(y) : y.localeCompare(x);
    });
    th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
    rows.forEach(function (r) { body.appendChild(r); });
  }
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (table) {
    if (!table.tHead) return;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      th.tabIndex = 0;
      th.title = 'Sort by ' + th.textContent.trim();
      th.addEventListener('click', function () { sortTable(table, col, th); });
      th.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sortTable(table, col, th); }
      });
    });
  });
  function applyFilters(tableId) {
    var table = document.getElementById(tableId);
    if (!table || !table.tBodies[0]) return;
    var text = '', cls = '';
    Array.prototype.forEach.call(document.querySelectorAll('[data-filter-table="' + tableId + '"]'), function (el) {
      if (el.tagName === 'SELECT') cls = el.value; else text = el.value.trim().toLowerCase();
    });
    var shown = 0, rows = table.tBodies[0].rows;
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      var ok = (!text || r.textContent.toLowerCase().indexOf(text) >= 0) &&
               (!cls || r.getAttribute('data-class') === cls);
      r.hidden = !ok;
      if (ok) shown++;
    }
    var counter = document.querySelector('[data-count-for="' + tableId + '"]');
    if (counter) counter.textContent = shown + ' of ' + rows.length + ' shown';
  }
  Array.prototype.forEach.call(document.querySelectorAll('[data-filter-table]'), function (el) {
    var id = el.getAttribute('data-filter-table');
    el.addEventListener('input', function () { applyFilters(id); });
    el.addEventListener('change', function () { applyFilters(id); });
  });
})();
)JS";

}  // namespace qprof::reports::html
