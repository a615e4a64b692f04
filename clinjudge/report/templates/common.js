// clinjudge report pages: what every page script shares (plain JavaScript, no libraries).
// Inlined before the page's own script (report/html_report.render_page).
"use strict";
const DATA = JSON.parse(document.getElementById("data").textContent);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

function pct(v, digits = 1) {
  return v === null || v === undefined ? "n/a" : (100 * v).toFixed(digits) + "%";
}

// A score (CEF's 0-100, a mean): whole numbers as they are, others to one decimal.
function num(v, digits = 1) {
  if (v === null || v === undefined) return "n/a";
  return Number.isInteger(v) ? String(v) : v.toFixed(digits);
}
