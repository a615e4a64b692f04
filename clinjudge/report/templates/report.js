// clinjudge report.html: renders the embedded run data (plain JavaScript, no libraries).
// DATA, el and pct come from common.js.
const JUDGES = DATA.soap_judges;
const byNote = new Map(DATA.notes.map((n) => [n.id, n]));

function renderRates() {
  // each judge's headline numbers, then (several systems) each system's, as "judge · system"
  const body = document.querySelector("#rates tbody");
  const rows = Object.entries(DATA.judges).map(([name, judge]) => [name, judge.headline]);
  for (const [name, per] of Object.entries(DATA.systems || {})) {
    for (const [system, headline] of Object.entries(per)) rows.push([`${name} · ${system}`, headline]);
  }
  for (const [name, headline] of rows) {
    for (const [metric, h] of Object.entries(headline)) {
      if (!h || typeof h !== "object") continue;
      const isRate = typeof h.value === "number" && h.value <= 1 && !/score|mean/.test(metric);
      const show = isRate ? pct : num;
      const ci = h.ci95 ? `${show(h.ci95[0])}–${show(h.ci95[1])}` : "n/a";
      body.append(el("tr", {}, el("td", { text: name }), el("td", { text: metric }),
        el("td", { text: show(h.value) }), el("td", { text: ci }),
        el("td", { text: String(h.n ?? "") })));
    }
  }
}

// ---- flagged claims table --------------------------------------------------------------
const FLAGGED = [];
for (const note of DATA.notes) {
  for (const claim of note.claims) {
    for (const [judge, v] of Object.entries(claim.verdicts)) {
      if (v.tier >= 4) {
        FLAGGED.push({ note: note.id, system: note.system, judge, tier: v.tier,
          severity: v.severity || "",
          section: claim.section, subtype: v.subtype, text: claim.text, claim: claim.id });
      }
    }
  }
}
let sortKey = null;
let sortUp = true;

function filtered() {
  const system = document.getElementById("f-system").value;
  const judge = document.getElementById("f-judge").value;
  const tier = document.getElementById("f-tier").value;
  const section = document.getElementById("f-section").value;
  const words = document.getElementById("f-text").value.trim().toLowerCase();
  let rows = FLAGGED.filter((r) => (!system || r.system === system) &&
    (!judge || r.judge === judge) &&
    (!tier || String(r.tier) === tier) && (!section || r.section === section) &&
    (!words || r.text.toLowerCase().includes(words) || r.note.toLowerCase().includes(words)));
  if (sortKey) {
    rows = rows.slice().sort((a, b) => {
      const x = a[sortKey], y = b[sortKey];
      const order = typeof x === "number" ? x - y : String(x).localeCompare(String(y));
      return sortUp ? order : -order;
    });
  }
  return rows;
}

function renderTable() {
  const body = document.querySelector("#flagged tbody");
  body.replaceChildren();
  const rows = filtered();
  for (const r of rows) {
    const tr = el("tr", { "data-note": r.note, "data-claim": r.claim, "data-judge": r.judge },
      el("td", { text: r.note }), el("td", { text: r.judge }), el("td", { text: String(r.tier) }),
      el("td", { text: r.severity }), el("td", { text: r.section }), el("td", { text: r.subtype }),
      el("td", { text: r.text }));
    tr.addEventListener("click", () => openClaim(r.note, r.claim, true));
    body.append(tr);
  }
  document.getElementById("f-count").textContent = `${rows.length} of ${FLAGGED.length} flags`;
}

function setupFilters() {
  const judgeSel = document.getElementById("f-judge");
  for (const j of JUDGES) judgeSel.append(el("option", { text: j }));
  const sectionSel = document.getElementById("f-section");
  for (const s of [...new Set(FLAGGED.map((r) => r.section))].sort()) {
    sectionSel.append(el("option", { text: s }));
  }
  const systems = [...new Set(DATA.notes.map((n) => n.system).filter(Boolean))];
  const systemSel = document.getElementById("f-system");
  for (const s of systems) systemSel.append(el("option", { text: s }));
  document.getElementById("f-system-label").hidden = systems.length < 2;
  systemSel.addEventListener("input", showSystem);
  for (const id of ["f-judge", "f-tier", "f-section", "f-text"]) {
    document.getElementById(id).addEventListener("input", renderTable);
  }
  for (const th of document.querySelectorAll("#flagged th[data-key]")) {
    th.addEventListener("click", () => {
      sortUp = sortKey === th.dataset.key ? !sortUp : true;
      sortKey = th.dataset.key;
      renderTable();
    });
  }
}

function showSystem() {
  // the flagged table and the notes of one system (or all)
  const system = document.getElementById("f-system").value;
  for (const section of document.querySelectorAll("#notes section.note")) {
    section.hidden = Boolean(system) && byNote.get(section.dataset.note).system !== system;
  }
  renderTable();
}

// ---- notes, rendered when they scroll into view ---------------------------------------
function noteText(note, judge) {
  const box = el("div", { class: "text" });
  let at = 0;
  for (const c of note.claims) {
    if (c.start < at) continue; // overlapping claims: the first one wins the span
    box.append(note.note.slice(at, c.start));
    const v = c.verdicts[judge];
    const cls = ["claim", v ? `t${v.tier}` : "t0"];
    if (c.flip) cls.push("flip");
    if (v && v.severity === "major") cls.push("major");
    const span = el("span", { class: cls.join(" "), tabindex: "0", "data-claim": c.id,
      "data-judge": judge, title: v ? `tier ${v.tier}: ${v.rationale}` : "not judged" },
      note.note.slice(c.start, c.end));
    span.addEventListener("click", () => openClaim(note.id, c.id, false));
    box.append(span);
    at = c.end;
  }
  box.append(note.note.slice(at));
  return box;
}

function renderNote(section) {
  const note = byNote.get(section.dataset.note);
  const rates = JUDGES.map((j) => `${j} ${pct(note.rates[j])}`).join(" · ");
  section.replaceChildren(el("h3", { text: `${note.id} — ${rates}` }));
  if (note.cost) section.append(el("p", { class: "meta cost", text: `cost: ${note.cost}` }));
  const cols = el("div", { class: "cols" });
  cols.style.setProperty("--judges", Math.max(JUDGES.length, 1));
  for (const j of JUDGES) cols.append(el("div", { class: "col" }, el("h4", { text: j }), noteText(note, j)));
  section.append(cols);
  if (note.facts.length) {
    const list = el("ul", { class: "facts" });
    for (const f of note.facts) {
      list.append(el("li", { class: f.status, text: `${f.status}: ${f.text} (${f.category}, ` +
        `${f.importance}) — ${f.rationale}` }));
    }
    section.append(el("h4", { text: "What the note leaves out (omission judge)" }), list);
  }
  for (const [judge, criteria] of Object.entries(note.criteria || {})) {
    const list = el("ul", { class: "criteria" });
    for (const c of criteria) {
      const cls = c.passes === true ? "pass" : c.passes === false ? "fail" : "other";
      const turns = c.turns.length ? ` (turns ${c.turns.map((t) => `T${t}`).join(", ")})` : "";
      const item = el("li", { class: cls, text: `${c.verdict}: ${c.text} — ${c.reason}${turns}` });
      const jurors = Object.entries(c.jurors || {});
      if (jurors.length) {
        item.append(el("div", { class: c.split ? "jurors split" : "jurors",
          text: `${c.split ? "jurors split" : "jurors agree"}: ` +
            jurors.map(([n, v]) => `${n} ${v}`).join("; ") }));
      }
      list.append(item);
    }
    section.append(el("h4", { text: `Rubric criteria (${judge})` }), list);
  }
  section.dataset.rendered = "1";
}

function setupNotes() {
  const container = document.getElementById("notes");
  const observer = new IntersectionObserver((entries) => {
    for (const e of entries) {
      if (e.isIntersecting && !e.target.dataset.rendered) renderNote(e.target);
    }
  }, { rootMargin: "600px" });
  for (const note of DATA.notes) {
    const section = el("section", { class: "note", id: `note-${note.id}`, "data-note": note.id },
      el("h3", { text: note.id }));
    container.append(section);
    observer.observe(section);
  }
}

// ---- the claim panel -------------------------------------------------------------------
function transcriptWith(note, spans) {
  const box = el("div");
  const sorted = spans.slice().sort((a, b) => a[0] - b[0]);
  let at = 0;
  let first = null;
  for (const [s, e] of sorted) {
    if (s < at) continue;
    box.append(note.transcript.slice(at, s));
    const mark = el("mark", { class: "evidence" }, note.transcript.slice(s, e));
    if (!first) first = mark;
    box.append(mark);
    at = e;
  }
  box.append(note.transcript.slice(at));
  return [box, first];
}

let current = null;

function openClaim(noteId, claimId, scroll) {
  const note = byNote.get(noteId);
  const claim = note.claims.find((c) => c.id === claimId);
  const section = document.getElementById(`note-${noteId}`);
  if (!section.dataset.rendered) renderNote(section);
  for (const s of document.querySelectorAll(".claim.current")) s.classList.remove("current");
  const spans = section.querySelectorAll(`.claim[data-claim="${claimId}"]`);
  for (const s of spans) s.classList.add("current");
  if (scroll && spans.length) spans[0].scrollIntoView({ block: "center" });
  current = { note: noteId, claim: claimId };
  const panel = document.getElementById("detail");
  panel.hidden = false;
  document.body.classList.add("panel-open");
  document.getElementById("d-title").textContent = `${noteId} · ${claim.section}: “${claim.text}”`;
  const verdicts = document.getElementById("d-verdicts");
  verdicts.replaceChildren();
  const evidence = [];
  for (const [judge, v] of Object.entries(claim.verdicts)) {
    const severity = v.severity ? `, ${v.severity} (${v.harm_category})` : "";
    const box = el("div", { class: `verdict ${v.tier >= 4 ? "bad" : "good"}`, "data-judge": judge },
      el("strong", { text: `${judge}: tier ${v.tier} ${v.subtype}${severity}` }),
      el("div", { class: "rationale", text: v.rationale }));
    if (v.knowledge.length) box.append(el("div", { text: `knowledge: ${v.knowledge.join("; ")}` }));
    if (v.jurors) box.append(el("div", { class: "jurors", text: `jurors: ${v.jurors}` }));
    verdicts.append(box);
    evidence.push(...v.evidence);
  }
  const [text, first] = transcriptWith(note, evidence);
  document.getElementById("d-transcript").replaceChildren(text);
  if (first) first.scrollIntoView({ block: "center" });
}

function step(direction) {
  if (!FLAGGED.length) return;
  const order = FLAGGED.map((r) => `${r.note}\u0000${r.claim}`);
  const unique = [...new Set(order)];
  let i = current ? unique.indexOf(`${current.note}\u0000${current.claim}`) : -1;
  i = (i + direction + unique.length) % unique.length;
  const [note, claim] = unique[i].split("\u0000");
  openClaim(note, claim, true);
}

document.addEventListener("keydown", (e) => {
  if (e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
  if (e.key === "n") step(1);
  else if (e.key === "p") step(-1);
  else if (e.key === "Escape") closePanel();
});
document.getElementById("close").addEventListener("click", closePanel);

function closePanel() {
  document.getElementById("detail").hidden = true;
  document.body.classList.remove("panel-open");
}

renderRates();
setupFilters();
renderTable();
setupNotes();
document.body.dataset.ready = "1";
