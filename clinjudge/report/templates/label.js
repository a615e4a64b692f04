// clinjudge label: one note at a time, each text unit labelled from the keyboard and saved at
// once by a POST to the server that served the page (plain JavaScript, no libraries). The
// browser's cookie for that server signs the POST in; the page holds no token.
// DATA and el come from common.js.
const NOTES = DATA.notes;
const LABEL_CLASS = { supported: "t1", unsupported: "t4", contradicted: "t5" };
const body = document.body;
let noteIdx = DATA.start.note;
let unitNo = DATA.start.unit;
let pending = 0;
let queue = Promise.resolve();
const drafts = new Map(); // comments typed on a unit not labelled yet

const textUnits = (note) => note.units.filter((u) => u.kind === "text");
const labelOf = (note, unit) => note.labels[String(unit)] || null;
const unitOf = (note, unit) => note.units.find((u) => u.unit === unit);
const draftKey = (note, unit) => `${note.note_id}#${unit}`;
const overlaps = (a, b) => a.start < b.end && b.start < a.end;

function status(text, error = false) {
  const box = document.getElementById("status");
  box.textContent = text;
  box.classList.toggle("error", error);
}

// ---- progress --------------------------------------------------------------------------
function counts(note) {
  const units = textUnits(note);
  return [units.filter((u) => labelOf(note, u.unit)).length, units.length];
}

function renderProgress() {
  let done = 0;
  let total = 0;
  const select = document.getElementById("note-select");
  NOTES.forEach((note, i) => {
    const [d, t] = counts(note);
    done += d;
    total += t;
    select.options[i].textContent = `${i + 1}. ${note.note_id} — ${d}/${t}${d === t ? " ✓" : ""}`;
  });
  const [d, t] = counts(NOTES[noteIdx]);
  document.getElementById("progress").textContent =
    `note ${noteIdx + 1} of ${NOTES.length}: ${d}/${t} units labelled · all notes: ${done}/${total}`;
}

// ---- the note ----------------------------------------------------------------------------
function judgeFlags(note) {
  // units a SOAP judge flags (a tier 4-5 claim overlapping them): shown only when not blind
  const flagged = new Set();
  for (const claims of Object.values(note.claims || {})) {
    for (const c of claims) {
      if (c.tier === null || c.tier < 4) continue;
      for (const u of textUnits(note)) if (overlaps(c, u)) flagged.add(u.unit);
    }
  }
  return flagged;
}

function unitClass(note, u, flagged) {
  if (u.kind !== "text") return "unit u-header";
  const label = labelOf(note, u.unit);
  const cls = ["unit", "u-text", label ? LABEL_CLASS[label.label] : "t0"];
  if (label && label.severity === "major") cls.push("major");
  if (flagged.has(u.unit)) cls.push("judge-flag");
  if (u.unit === unitNo) cls.push("current");
  return cls.join(" ");
}

function renderNote() {
  const note = NOTES[noteIdx];
  const flagged = judgeFlags(note);
  const box = document.getElementById("note-text");
  box.replaceChildren();
  let at = 0;
  for (const u of note.units) {
    if (u.start < at) continue;
    box.append(note.note.slice(at, u.start));
    const span = el("span", { class: unitClass(note, u, flagged), "data-unit": String(u.unit) },
      note.note.slice(u.start, u.end));
    if (u.kind === "text") span.addEventListener("click", () => { unitNo = u.unit; showUnit(true); });
    box.append(span);
    at = u.end;
  }
  box.append(note.note.slice(at));
  document.getElementById("note-title").textContent = `${note.note_id} (item ${note.id})`;
  document.getElementById("transcript").textContent =
    note.transcript || "(the dataset has no transcript for this note)";
  document.getElementById("note-select").value = String(noteIdx);
}

function refreshUnits() {
  const note = NOTES[noteIdx];
  const flagged = judgeFlags(note);
  for (const span of document.querySelectorAll("#note-text .unit")) {
    span.className = unitClass(note, unitOf(note, Number(span.dataset.unit)), flagged);
  }
}

// ---- the current unit ------------------------------------------------------------------
function showVerdicts(note, unit) {
  const box = document.getElementById("verdicts");
  if (!box) return; // blind: the page holds no verdict
  box.replaceChildren();
  for (const judge of DATA.judges) {
    const claims = (note.claims[judge] || []).filter((c) => overlaps(c, unit));
    if (!claims.length) box.append(el("div", { text: `${judge}: no claim over this unit` }));
    for (const c of claims) {
      const tier = c.tier === null ? "not judged" : `tier ${c.tier}`;
      const severity = c.severity && c.tier >= 4 ? `, ${c.severity}` : "";
      box.append(el("div", { class: "verdict" },
        el("strong", { text: `${judge}: ` }),
        el("span", { class: c.tier === null ? "t0" : `t${c.tier}`, text: `${tier}${severity}` }),
        ` “${c.text}” — ${c.rationale}`));
    }
  }
}

function showUnit(scroll) {
  refreshUnits();
  renderProgress();
  const note = NOTES[noteIdx];
  const units = textUnits(note);
  const unit = unitOf(note, unitNo);
  const comment = document.getElementById("comment");
  if (!unit) {
    document.getElementById("u-title").textContent = `${note.note_id}: no text unit to label`;
    document.getElementById("u-text").textContent = "";
    comment.value = "";
    return;
  }
  const label = labelOf(note, unitNo);
  const position = units.indexOf(unit) + 1;
  document.getElementById("u-title").textContent = `${note.note_id} · unit ${unit.unit} ` +
    `(${position} of ${units.length} to label) · ${label ? label.label + (label.severity ? `, ${label.severity}` : "") : "not labelled"}`;
  document.getElementById("u-text").textContent = note.note.slice(unit.start, unit.end);
  for (const b of document.querySelectorAll(".choices button[data-label]")) {
    b.classList.toggle("on", Boolean(label) && label.label === b.dataset.label);
  }
  document.getElementById("major").classList.toggle("on", Boolean(label) && label.severity === "major");
  comment.value = drafts.get(draftKey(note, unitNo)) ?? (label ? label.reason || "" : "");
  showVerdicts(note, unit);
  const span = document.querySelector(`#note-text .unit[data-unit="${unitNo}"]`);
  if (scroll && span) span.scrollIntoView({ block: "nearest" });
}

// ---- saving: applied at once, posted in order, undone when the server refuses ------------
function apply(label, severity, reason) {
  const note = NOTES[noteIdx];
  const unit = unitNo;
  const key = String(unit);
  const before = note.labels[key] ? { ...note.labels[key] } : null;
  if (label === null) delete note.labels[key];
  else note.labels[key] = { label, severity, reason };
  drafts.delete(draftKey(note, unit));
  showUnit(false);
  pending += 1;
  body.dataset.pending = String(pending);
  status(`saving unit ${unit}…`);
  queue = queue.then(() => post(note, unit, { label, severity, reason }, before));
}

async function post(note, unit, label, before) {
  try {
    const answer = await fetch("/label", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ encounter: note.encounter, system: note.system, unit, ...label }),
    });
    const reply = await answer.json();
    if (!answer.ok) throw new Error(reply.error || answer.statusText);
    if (reply.row) {
      note.labels[String(unit)] = { label: reply.row.label, severity: reply.row.severity, reason: reply.row.reason };
    }
    status(reply.row ? `saved: unit ${unit} ${reply.row.label}${reply.row.severity ? ", " + reply.row.severity : ""}` : `removed the label of unit ${unit}`);
  } catch (e) {
    if (before) note.labels[String(unit)] = before;
    else delete note.labels[String(unit)];
    status(`NOT SAVED (unit ${unit}): ${e.message}`, true);
  } finally {
    pending -= 1;
    body.dataset.pending = String(pending);
    if (note === NOTES[noteIdx]) showUnit(false);
  }
}

function setLabel(label) {
  const note = NOTES[noteIdx];
  if (!unitOf(note, unitNo)) return;
  const now = labelOf(note, unitNo);
  const severity = label === "supported" ? null
    : now && now.label !== "supported" && now.severity ? now.severity : "minor";
  apply(label, severity, document.getElementById("comment").value.trim());
}

function toggleMajor() {
  const label = labelOf(NOTES[noteIdx], unitNo);
  if (!label) status("m sets the severity of an unsupported or contradicted unit: label it first (2 or 3)");
  else if (label.label === "supported") status("a supported unit has no severity");
  else apply(label.label, label.severity === "major" ? "minor" : "major", label.reason || "");
}

function clearLabel() {
  if (labelOf(NOTES[noteIdx], unitNo)) apply(null, null, null);
}

function commitComment() {
  const note = NOTES[noteIdx];
  if (!unitOf(note, unitNo)) return;
  const text = document.getElementById("comment").value.trim();
  const label = labelOf(note, unitNo);
  if (label && text !== (label.reason || "")) apply(label.label, label.severity, text);
  else if (!label && text) {
    drafts.set(draftKey(note, unitNo), text);
    status("the comment is saved with the unit's label: press 1, 2 or 3");
  }
}

// ---- moving ------------------------------------------------------------------------------
function firstUnit(note) {
  const units = textUnits(note);
  const open = units.find((u) => !labelOf(note, u.unit));
  return (open || units[0] || { unit: null }).unit;
}

function gotoNote(index, unit = null) {
  if (index < 0 || index >= NOTES.length) {
    status(index < 0 ? "this is the first note" : "this is the last note");
    return;
  }
  noteIdx = index;
  unitNo = unit === null ? firstUnit(NOTES[index]) : unit;
  renderNote();
  showUnit(true);
}

function move(direction) {
  const units = textUnits(NOTES[noteIdx]);
  const i = units.findIndex((u) => u.unit === unitNo) + direction;
  if (i >= 0 && i < units.length) {
    unitNo = units[i].unit;
    showUnit(true);
    return;
  }
  let next = noteIdx + direction;
  while (next >= 0 && next < NOTES.length && !textUnits(NOTES[next]).length) next += direction;
  if (next < 0 || next >= NOTES.length) {
    status(direction > 0 ? "the last unit of the last note" : "the first unit of the first note");
    return;
  }
  const target = textUnits(NOTES[next]);
  gotoNote(next, target[direction > 0 ? 0 : target.length - 1].unit);
}

// ---- keys --------------------------------------------------------------------------------
const help = document.getElementById("help");
const comment = document.getElementById("comment");
const ACTIONS = {
  j: () => move(1), ArrowDown: () => move(1), k: () => move(-1), ArrowUp: () => move(-1),
  1: () => setLabel("supported"), 2: () => setLabel("unsupported"), 3: () => setLabel("contradicted"),
  m: toggleMajor, x: clearLabel, n: () => gotoNote(noteIdx + 1), p: () => gotoNote(noteIdx - 1),
  c: () => comment.focus(), "?": () => { help.hidden = !help.hidden; },
  Escape: () => { help.hidden = true; },
};

document.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.target === comment) {
    if (e.key === "Escape") {
      // cancels the edit: the comment goes back to what is saved (or the unsaved draft)
      e.preventDefault();
      const label = labelOf(NOTES[noteIdx], unitNo);
      comment.value = drafts.get(draftKey(NOTES[noteIdx], unitNo)) ?? (label ? label.reason || "" : "");
      comment.blur();
    } else if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      comment.blur(); // commits the comment
    }
    return;
  }
  if (e.target.tagName === "SELECT" || e.target.tagName === "INPUT") return;
  const action = ACTIONS[e.key];
  if (action) {
    e.preventDefault();
    action();
  }
});
comment.addEventListener("blur", commitComment);
for (const b of document.querySelectorAll(".choices button[data-label]")) {
  b.addEventListener("click", () => setLabel(b.dataset.label));
}
document.getElementById("major").addEventListener("click", toggleMajor);
document.getElementById("clear").addEventListener("click", clearLabel);
const select = document.getElementById("note-select");
NOTES.forEach((note, i) => select.append(el("option", { value: String(i), text: note.note_id })));
select.addEventListener("change", () => { gotoNote(Number(select.value)); select.blur(); });
window.addEventListener("beforeunload", (e) => { if (pending) e.preventDefault(); });

body.dataset.pending = "0";
gotoNote(noteIdx, unitNo);
status(DATA.progress.labelled ? `resumed: ${DATA.progress.labelled} of ${DATA.progress.units} units labelled` : "");
body.dataset.ready = "1";
