// clinjudge arena report.html: the leaderboard, the matrices and the pair view (plain
// JavaScript, no libraries). DATA, el, pct and num come from common.js.
const CRITERIA = DATA.criteria;
const SHOWN = { ab: ["a", "b"], ba: ["b", "a"] }; // which note was "first" and "second"

function interval(r, key) {
  const ci = r[key + "_ci95"];
  return ci ? `${ci[0].toFixed(0)}–${ci[1].toFixed(0)}` : (r.ci_note || "n/a");
}

function rating(v) {
  return v === null || v === undefined ? "n/a" : v.toFixed(0);
}

function renderLeaderboard() {
  const body = document.querySelector("#leaderboard tbody");
  for (const e of DATA.leaderboard) {
    body.append(el("tr", {}, el("td", { text: String(e.rank) }), el("td", { text: e.system }),
      el("td", { class: "num", text: rating(e.elo) }), el("td", { class: "num", text: interval(e, "elo") }),
      el("td", { class: "num", text: rating(e.bt) }), el("td", { class: "num", text: interval(e, "bt") }),
      el("td", { class: "num", text: String(e.n_matches) })));
  }
}

function renderCriteria() {
  const systems = DATA.leaderboard.map((e) => e.system);
  const head = el("tr", {}, el("th", { text: "criterion" }));
  for (const s of systems) head.append(el("th", { text: s }));
  head.append(el("th", { text: "position bias" }), el("th", { text: "95% CI" }), el("th", { text: "n" }));
  document.querySelector("#criteria thead").append(head);
  const body = document.querySelector("#criteria tbody");
  for (const c of CRITERIA) {
    const entry = DATA.per_criterion[c];
    const row = el("tr", {}, el("td", { text: c }));
    for (const s of systems) {
      const r = entry.ratings[s];
      row.append(el("td", { class: "num", text: r ? `${rating(r.elo)} (${interval(r, "elo")})` : "n/a" }));
    }
    const b = entry.position_bias || {};
    const ci = b.ci95 ? `${pct(b.ci95[0])}–${pct(b.ci95[1])}` : "n/a";
    row.append(el("td", { class: "num", text: pct(b.rate) }), el("td", { class: "num", text: ci }),
      el("td", { class: "num", text: String(b.n ?? "") }));
    body.append(row);
  }
}

function renderMatrix() {
  const c = document.getElementById("m-criterion").value;
  const matrix = DATA.per_criterion[c].win_matrix;
  const names = Object.keys(matrix);
  const head = document.querySelector("#matrix thead");
  const body = document.querySelector("#matrix tbody");
  head.replaceChildren(el("tr", {}, el("th"), ...names.map((n) => el("th", { text: n }))));
  body.replaceChildren(...names.map((a) => el("tr", {}, el("th", { text: a }),
    ...names.map((b) => el("td", { class: "num",
      text: a === b ? "—" : `${matrix[a][b].win}/${matrix[a][b].tie}/${matrix[a][b].loss}` })))));
}

// ---- pairs ---------------------------------------------------------------------------------
function outcomeText(pair, c) {
  const o = (pair.outcomes || {})[c];
  if (o === "a") return pair.system_a;
  if (o === "b") return pair.system_b;
  return o || "failed";
}

function outcomeClass(o) {
  return o === "a" ? "win" : o === "b" ? "loss" : "draw";
}

let shown = [];
let current = -1;

function filtered() {
  const system = document.getElementById("f-system").value;
  const c = document.getElementById("f-criterion").value;
  const outcome = document.getElementById("f-outcome").value;
  const words = document.getElementById("f-text").value.trim().toLowerCase();
  return DATA.pairs.filter((p) => {
    if (system && p.system_a !== system && p.system_b !== system) return false;
    if (words && !`${p.encounter} ${p.system_a} ${p.system_b}`.toLowerCase().includes(words)) return false;
    const o = (p.outcomes || {})[c];
    if (outcome === "win") return o === "a" || o === "b";
    if (outcome === "draw") return o === "draw";
    if (outcome === "position") return Boolean((p.follows_position || {})[c]);
    if (outcome === "failed") return Boolean(p.failure) || !p.outcomes;
    return true;
  });
}

function renderPairs() {
  shown = filtered();
  const c = document.getElementById("f-criterion").value;
  const body = document.querySelector("#pairs tbody");
  body.replaceChildren(...shown.map((p, i) => {
    const per = CRITERIA.filter((k) => k !== "overall").map((k) => {
      const o = (p.outcomes || {})[k];
      return `${k} ${o === "a" ? "A" : o === "b" ? "B" : o === "draw" ? "=" : "?"}`;
    }).join(" · ");
    const o = (p.outcomes || {})[c];
    const row = el("tr", { "data-index": String(i) }, el("td", { text: p.encounter }),
      el("td", { text: p.system_a }), el("td", { text: p.system_b }),
      el("td", { class: outcomeClass(o), text: outcomeText(p, c) }), el("td", { text: per }));
    row.addEventListener("click", () => showPair(i));
    return row;
  }));
  document.getElementById("f-count").textContent = `${shown.length} of ${DATA.pairs.length} pairs`;
}

// the system a verdict of one order names: "first"/"second" are positions in that order
function winnerOf(pair, order, verdict) {
  if (verdict === "first" || verdict === "second") {
    const side = SHOWN[order][verdict === "first" ? 0 : 1];
    return side === "a" ? pair.system_a : pair.system_b;
  }
  return verdict || "—";
}

// a model's reason is asked to begin with the note it chose: one that begins with the other
// note contradicts its verdict (or was written about the loser), and the pair view says so
function namesTheOtherNote(reason, verdict) {
  const m = /\bnote\s*([12])\b/i.exec(reason || "");
  if (!m) return false;
  return (verdict === "first" && m[1] === "2") || (verdict === "second" && m[1] === "1");
}

function decided(pair, order, c) {
  const d = ((pair.decided_by || {})[order] || {})[c];
  if (!d) return "";
  if (d.reason !== undefined) {
    const verdict = ((pair.orders || {})[order] || {})[c];
    const other = namesTheOtherNote(d.reason, verdict) ? " (the reason begins with the other note)" : "";
    return `${order === "ab" ? "A" : "B"} first: ${d.reason}${other}`;
  }
  if (d.measure !== undefined) {
    const [first, second] = d.values || [];
    const [x, y] = order === "ab" ? [first, second] : [second, first];
    return `${d.measure}: ${pair.system_a} ${num(x, 2)}, ${pair.system_b} ${num(y, 2)}`;
  }
  return JSON.stringify(d);
}

function showPair(i) {
  if (i < 0 || i >= shown.length) return;
  current = i;
  document.querySelectorAll("#pairs tbody tr").forEach((r) =>
    r.classList.toggle("current", r.dataset.index === String(i)));
  const p = shown[i];
  document.getElementById("pair").hidden = false;
  document.getElementById("p-title").textContent = `${p.encounter}: A = ${p.system_a}, B = ${p.system_b}`;
  const body = document.querySelector("#p-verdicts tbody");
  body.replaceChildren(...CRITERIA.map((c) => {
    const ab = ((p.orders || {}).ab || {})[c];
    const ba = ((p.orders || {}).ba || {})[c];
    const biased = Boolean((p.follows_position || {})[c]);
    const why = [decided(p, "ab", c), decided(p, "ba", c)].filter(Boolean);
    const seen = [...new Set(why)];
    return el("tr", { class: biased ? "biased" : "" }, el("td", { text: c }),
      el("td", { text: winnerOf(p, "ab", ab) }), el("td", { text: winnerOf(p, "ba", ba) }),
      el("td", { class: outcomeClass((p.outcomes || {})[c]), text: outcomeText(p, c) }),
      el("td", { text: biased ? "followed the position" : "" }),
      el("td", {}, ...seen.map((w) => el("div", { text: w }))));
  }));
  document.getElementById("p-failure").textContent = p.failure ? `failed: ${JSON.stringify(p.failure)}` : "";
  document.getElementById("p-a").textContent = `A: ${p.system_a} (${p.a})`;
  document.getElementById("p-b").textContent = `B: ${p.system_b} (${p.b})`;
  const [a, b] = [DATA.notes[p.a], DATA.notes[p.b]];
  showNote("p-note-a", a, b);
  showNote("p-note-b", b, a);
  document.getElementById("p-transcript").textContent = DATA.transcripts[DATA.transcript_of[p.encounter]] ?? "";
  document.getElementById("pair").scrollIntoView({ block: "start" });
}

// A note's lines, those the other note lacks marked when the two share most lines (an edited
// note beside its original); notes of two systems are shown plain.
function showNote(id, text, other) {
  const box = document.getElementById(id);
  if (text === undefined) {
    box.textContent = "(note not in the dataset)";
    return;
  }
  const lines = text.split("\n");
  const theirs = new Set((other ?? "").split("\n"));
  const shared = lines.filter((l) => l.trim() && theirs.has(l)).length;
  const mark = shared * 2 >= lines.filter((l) => l.trim()).length;
  box.replaceChildren(...lines.map((l) => mark && l.trim() && !theirs.has(l)
    ? el("mark", { class: "changed", text: l + "\n" }) : document.createTextNode(l + "\n")));
}

function closePair() {
  document.getElementById("pair").hidden = true;
  current = -1;
  document.querySelectorAll("#pairs tbody tr.current").forEach((r) => r.classList.remove("current"));
}

function setup() {
  for (const select of [document.getElementById("m-criterion"), document.getElementById("f-criterion")]) {
    for (const c of CRITERIA) select.append(el("option", { value: c, text: c }));
    select.value = "overall";
  }
  for (const s of DATA.systems) document.getElementById("f-system").append(el("option", { value: s, text: s }));
  document.getElementById("m-criterion").addEventListener("change", renderMatrix);
  for (const id of ["f-system", "f-criterion", "f-outcome", "f-text"]) {
    document.getElementById(id).addEventListener("input", () => { closePair(); renderPairs(); });
  }
  document.addEventListener("keydown", (e) => {
    if (e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
    if (e.key === "n") showPair(current + 1);
    else if (e.key === "p") showPair(current - 1);
    else if (e.key === "Escape") closePair();
  });
}

renderLeaderboard();
renderCriteria();
setup();
renderMatrix();
renderPairs();
document.body.dataset.ready = "1";
