// clinjudge label: one note at a time, each text unit labelled from the keyboard and saved at
// once by a POST to the server that served the page (plain JavaScript, no libraries). The
// browser's cookie for that server signs the requests in; the page holds no token. The page
// comes with the list of notes and the progress only: a note (text, units, transcript turns,
// saved labels, verdicts when shown) is fetched from /note/N when it is opened.
// DATA and el come from common.js.
const NOTES = DATA.notes;
const LABEL_CLASS = { supported: "t1", unsupported: "t4", contradicted: "t5" };
const body = document.body;
const loaded = new Map(); // note index -> promise of the note's data
let progress = DATA.progress;
let noteIdx = DATA.start.note;
let unitNo = DATA.start.unit;
let current = null; // the data of note noteIdx, once fetched
let pending = 0; // saves and fetches in flight (body[data-pending])
let saving = 0;
let navigation = 0;
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

function busy(change) {
  pending += change;
  body.dataset.pending = String(pending);
}

function fetchNote(index) {
  if (!loaded.has(index)) {
    const answer = fetch(`/note/${index}`).then(async (reply) => {
      const data = await reply.json();
      if (!reply.ok) throw new Error(data.error || reply.statusText);
      return data;
    });
    answer.catch(() => loaded.delete(index)); // tried again when opened again
    loaded.set(index, answer);
  }
  return loaded.get(index);
}

// ---- progress --------------------------------------------------------------------------
function counts(index) {
  const p = progress.notes[NOTES[index].note_id];
  return [p.labelled, p.units];
}

function renderProgress() {
  const select = document.getElementById("note-select");
  NOTES.forEach((note, i) => {
    const [d, t] = counts(i);
    select.options[i].textContent = `${i + 1}. ${note.note_id} — ${d}/${t}${d === t ? " ✓" : ""}`;
  });
  const [d, t] = counts(noteIdx);
  document.getElementById("progress").textContent =
    `note ${noteIdx + 1} of ${NOTES.length}: ${d}/${t} units labelled · all notes: ${progress.labelled}/${progress.units}`;
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

function unitSpan(note, u, flagged) {
  // the unit's text, its marked span (if any) in a <mark>: the text stays the note's characters
  const span = el("span", { class: unitClass(note, u, flagged), "data-unit": String(u.unit) });
  const label = u.kind === "text" ? labelOf(note, u.unit) : null;
  const marked = label && label.span;
  if (marked && marked.start >= u.start && marked.end <= u.end) {
    span.append(note.note.slice(u.start, marked.start),
      el("mark", { class: "span", text: note.note.slice(marked.start, marked.end) }),
      note.note.slice(marked.end, u.end));
  } else span.append(note.note.slice(u.start, u.end));
  if (u.kind === "text") span.addEventListener("click", () => { unitNo = u.unit; showUnit(true); });
  return span;
}

function renderTranscript(note) {
  // one block per turn, numbered from 1 as claims.csv numbers them; a click cites the turn
  const box = document.getElementById("transcript");
  box.replaceChildren();
  if (!note.transcript || !note.turns.length) {
    box.textContent = note.transcript || "(the dataset has no transcript for this note)";
    return;
  }
  let at = 0;
  note.turns.forEach(([, end], i) => {
    const upTo = i === note.turns.length - 1 ? note.transcript.length : end;
    const turn = el("div", { class: "turn", "data-turn": String(i + 1) },
      el("span", { class: "turn-no", text: String(i + 1) }),
      note.transcript.slice(at, upTo).replace(/^\n+/, ""));
    turn.addEventListener("click", () => { if (!window.getSelection().toString()) toggleTurn(i + 1); });
    box.append(turn);
    at = end;
  });
}

function renderNote() {
  const note = current;
  const flagged = judgeFlags(note);
  const box = document.getElementById("note-text");
  box.replaceChildren();
  let at = 0;
  for (const u of note.units) {
    if (u.start < at) continue;
    box.append(note.note.slice(at, u.start), unitSpan(note, u, flagged));
    at = u.end;
  }
  box.append(note.note.slice(at));
  document.getElementById("note-title").textContent = `${note.note_id} (item ${note.id})`;
  renderTranscript(note);
  document.getElementById("note-select").value = String(noteIdx);
}

function refreshUnits() {
  const note = current;
  const flagged = judgeFlags(note);
  for (const span of document.querySelectorAll("#note-text .unit")) {
    span.className = unitClass(note, unitOf(note, Number(span.dataset.unit)), flagged);
  }
  const label = labelOf(note, unitNo);
  const cited = new Set(label ? label.evidence : []);
  for (const turn of document.querySelectorAll("#transcript .turn")) {
    turn.classList.toggle("cited", cited.has(Number(turn.dataset.turn)));
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

const turnsText = (turns) => turns.join(", ");

function showUnit(scroll) {
  if (!current) return;
  refreshUnits();
  renderProgress();
  const note = current;
  const units = textUnits(note);
  const unit = unitOf(note, unitNo);
  const comment = document.getElementById("comment");
  const extras = document.getElementById("u-extras");
  if (!unit) {
    document.getElementById("u-title").textContent = `${note.note_id}: no text unit to label`;
    document.getElementById("u-text").textContent = "";
    extras.textContent = "";
    comment.value = "";
    return;
  }
  const label = labelOf(note, unitNo);
  const position = units.indexOf(unit) + 1;
  document.getElementById("u-title").textContent = `${note.note_id} · unit ${unit.unit} ` +
    `(${position} of ${units.length} to label) · ${label ? label.label + (label.severity ? `, ${label.severity}` : "") : "not labelled"}`;
  document.getElementById("u-text").textContent = note.note.slice(unit.start, unit.end);
  const cited = label && label.evidence.length ? `turns ${turnsText(label.evidence)}` : "none";
  const span = label && label.span ? `“${note.note.slice(label.span.start, label.span.end)}”` : "none";
  extras.textContent = `evidence (e): ${cited} · span (s): ${span}`;
  for (const b of document.querySelectorAll(".choices button[data-label]")) {
    b.classList.toggle("on", Boolean(label) && label.label === b.dataset.label);
  }
  document.getElementById("major").classList.toggle("on", Boolean(label) && label.severity === "major");
  comment.value = drafts.get(draftKey(note, unitNo)) ?? (label ? label.reason || "" : "");
  showVerdicts(note, unit);
  const shown = document.querySelector(`#note-text .unit[data-unit="${unitNo}"]`);
  if (scroll && shown) shown.scrollIntoView({ block: "nearest" });
  const firstCited = document.querySelector("#transcript .turn.cited");
  if (scroll && firstCited) firstCited.scrollIntoView({ block: "nearest" });
}

// ---- saving: applied at once, posted in order, undone when the server refuses ------------
function apply(label) {
  // label: {label, severity, reason, evidence, span}, or null to remove the unit's label
  const note = current;
  const unit = unitNo;
  const key = String(unit);
  const before = note.labels[key] ? { ...note.labels[key] } : null;
  const spanChanged = (before && before.span) !== (label && label.span);
  if (label === null) delete note.labels[key];
  else note.labels[key] = label;
  drafts.delete(draftKey(note, unit));
  if (spanChanged) renderNote();
  showUnit(false);
  busy(1);
  saving += 1;
  status(`saving unit ${unit}…`);
  const sent = label || { label: null, severity: null, reason: null, evidence: null, span: null };
  queue = queue.then(() => post(note, unit, sent, before));
}

async function post(note, unit, label, before) {
  const key = String(unit);
  try {
    const answer = await fetch("/label", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ encounter: note.encounter, system: note.system, unit, ...label }),
    });
    const reply = await answer.json();
    if (!answer.ok) throw new Error(reply.error || answer.statusText);
    if (reply.label) note.labels[key] = reply.label;
    progress = reply.progress;
    status(reply.row ? `saved: unit ${unit} ${reply.row.label}${reply.row.severity ? ", " + reply.row.severity : ""}` : `removed the label of unit ${unit}`);
  } catch (e) {
    if (before) note.labels[key] = before;
    else delete note.labels[key];
    status(`NOT SAVED (unit ${unit}): ${e.message}`, true);
  } finally {
    busy(-1);
    saving -= 1;
    if (note === current) {
      renderNote();
      showUnit(false);
    } else renderProgress();
  }
}

function change(fields) {
  // the current unit's label with some fields changed (it must be labelled)
  const label = labelOf(current, unitNo);
  apply({ ...label, ...fields });
}

function setLabel(label) {
  const note = current;
  if (!note || !unitOf(note, unitNo)) return;
  const now = labelOf(note, unitNo);
  const severity = label === "supported" ? null
    : now && now.label !== "supported" && now.severity ? now.severity : "minor";
  apply({ label, severity, reason: document.getElementById("comment").value.trim(),
    evidence: now ? now.evidence : [], span: label === "supported" || !now ? null : now.span });
}

function toggleMajor() {
  const label = current && labelOf(current, unitNo);
  if (!label) status("m sets the severity of an unsupported or contradicted unit: label it first (2 or 3)");
  else if (label.label === "supported") status("a supported unit has no severity");
  else change({ severity: label.severity === "major" ? "minor" : "major" });
}

function clearLabel() {
  if (current && labelOf(current, unitNo)) apply(null);
}

function commitComment() {
  const note = current;
  if (!note || !unitOf(note, unitNo)) return;
  const text = document.getElementById("comment").value.trim();
  const label = labelOf(note, unitNo);
  if (label && text !== (label.reason || "")) change({ reason: text });
  else if (!label && text) {
    drafts.set(draftKey(note, unitNo), text);
    status("the comment is saved with the unit's label: press 1, 2 or 3");
  }
}

// ---- evidence turns and the span ---------------------------------------------------------
function parseTurns(text) {
  // "12, 14" or "12-14" (a "T" before a number is allowed): the turn numbers, or null
  const turns = new Set();
  for (const part of text.split(/[,\s]+/).filter(Boolean)) {
    const m = /^T?(\d+)(?:-T?(\d+))?$/i.exec(part);
    if (!m) return null;
    const [a, b] = [Number(m[1]), Number(m[2] || m[1])];
    if (b < a || b - a > 1000) return null;
    for (let t = a; t <= b; t++) turns.add(t);
  }
  return [...turns].sort((x, y) => x - y);
}

function labelledFirst(what) {
  if (current && labelOf(current, unitNo)) return true;
  status(`${what} is saved with the unit's label: label it first (1, 2 or 3)`);
  return false;
}

function openEvidence() {
  if (!labelledFirst("evidence")) return;
  const box = document.getElementById("evidence");
  box.hidden = false;
  box.value = turnsText(labelOf(current, unitNo).evidence);
  box.focus();
  box.select();
}

function commitEvidence() {
  const box = document.getElementById("evidence");
  const turns = parseTurns(box.value);
  if (turns === null) {
    status(`not turn numbers: ${box.value} (write e.g. 12, 14 or 12-14)`, true);
    return;
  }
  const outside = turns.find((t) => t < 1 || t > current.turns.length);
  if (outside !== undefined) {
    status(`turn ${outside} is not a turn of this transcript (1-${current.turns.length})`, true);
    return;
  }
  box.hidden = true;
  change({ evidence: turns });
}

function toggleTurn(turn) {
  if (!labelledFirst("a cited turn")) return;
  const cited = new Set(labelOf(current, unitNo).evidence);
  if (cited.has(turn)) cited.delete(turn);
  else cited.add(turn);
  change({ evidence: [...cited].sort((x, y) => x - y) });
}

function noteOffset(node, offset) {
  // the note offset of a point in #note-text (its text is the note's characters, in order)
  const range = document.createRange();
  range.setStart(document.getElementById("note-text"), 0);
  range.setEnd(node, offset);
  return range.toString().length;
}

function markSpan() {
  if (!labelledFirst("a span")) return;
  const label = labelOf(current, unitNo);
  const selection = window.getSelection();
  const box = document.getElementById("note-text");
  if (!selection.rangeCount || selection.isCollapsed) {
    if (label.span) change({ span: null });
    else status("select the offending words of the unit with the mouse, then press s");
    return;
  }
  const range = selection.getRangeAt(0);
  if (!box.contains(range.startContainer) || !box.contains(range.endContainer)) {
    status("select words of the note's unit, then press s", true);
    return;
  }
  const unit = unitOf(current, unitNo);
  const start = noteOffset(range.startContainer, range.startOffset);
  const end = noteOffset(range.endContainer, range.endOffset);
  if (start < unit.start || end > unit.end) {
    status(`the selection is not inside unit ${unitNo}: select words of the highlighted unit`, true);
    return;
  }
  if (label.label === "supported") {
    status("a supported unit has no span (it marks the unsupported words)");
    return;
  }
  selection.removeAllRanges();
  change({ span: { start, end } });
}

// ---- moving ------------------------------------------------------------------------------
function firstUnit(note) {
  const units = textUnits(note);
  const open = units.find((u) => !labelOf(note, u.unit));
  return (open || units[0] || { unit: null }).unit;
}

async function gotoNote(index, unit = null) {
  // unit: a unit number, "first" / "last" text unit, or null (the first unlabelled one)
  if (index < 0 || index >= NOTES.length) {
    status(index < 0 ? "this is the first note" : "this is the last note");
    return;
  }
  const mine = ++navigation;
  busy(1);
  try {
    const note = await fetchNote(index);
    if (mine !== navigation) return; // another note was asked for meanwhile
    const units = textUnits(note);
    noteIdx = index;
    current = note;
    if (unit === "first") unit = units[0].unit;
    else if (unit === "last") unit = units[units.length - 1].unit;
    unitNo = unit === null ? firstUnit(note) : unit;
    renderNote();
    showUnit(true);
    if (index + 1 < NOTES.length) fetchNote(index + 1).catch(() => {}); // the next, ahead
  } catch (e) {
    status(`cannot open note ${index + 1}: ${e.message}`, true);
  } finally {
    busy(-1);
  }
}

function move(direction) {
  if (!current) return;
  const units = textUnits(current);
  const i = units.findIndex((u) => u.unit === unitNo) + direction;
  if (i >= 0 && i < units.length) {
    unitNo = units[i].unit;
    showUnit(true);
    return;
  }
  let next = noteIdx + direction;
  while (next >= 0 && next < NOTES.length && !counts(next)[1]) next += direction;
  if (next < 0 || next >= NOTES.length) {
    status(direction > 0 ? "the last unit of the last note" : "the first unit of the first note");
    return;
  }
  gotoNote(next, direction > 0 ? "first" : "last");
}

// ---- keys --------------------------------------------------------------------------------
const help = document.getElementById("help");
const comment = document.getElementById("comment");
const evidence = document.getElementById("evidence");
const ACTIONS = {
  j: () => move(1), ArrowDown: () => move(1), k: () => move(-1), ArrowUp: () => move(-1),
  1: () => setLabel("supported"), 2: () => setLabel("unsupported"), 3: () => setLabel("contradicted"),
  m: toggleMajor, x: clearLabel, n: () => gotoNote(noteIdx + 1), p: () => gotoNote(noteIdx - 1),
  c: () => comment.focus(), e: openEvidence, s: markSpan,
  "?": () => { help.hidden = !help.hidden; },
  Escape: () => { help.hidden = true; },
};

document.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.target === comment) {
    if (e.key === "Escape") {
      // cancels the edit: the comment goes back to what is saved (or the unsaved draft)
      e.preventDefault();
      const label = labelOf(current, unitNo);
      comment.value = drafts.get(draftKey(current, unitNo)) ?? (label ? label.reason || "" : "");
      comment.blur();
    } else if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      comment.blur(); // commits the comment
    }
    return;
  }
  if (e.target === evidence) {
    if (e.key === "Escape" || e.key === "Enter") {
      e.preventDefault();
      if (e.key === "Enter") commitEvidence();
      else evidence.hidden = true;
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
evidence.addEventListener("blur", () => { evidence.hidden = true; });
for (const b of document.querySelectorAll(".choices button[data-label]")) {
  b.addEventListener("click", () => setLabel(b.dataset.label));
}
document.getElementById("major").addEventListener("click", toggleMajor);
document.getElementById("clear").addEventListener("click", clearLabel);
const select = document.getElementById("note-select");
NOTES.forEach((note, i) => select.append(el("option", { value: String(i), text: note.note_id })));
select.addEventListener("change", () => { gotoNote(Number(select.value)); select.blur(); });
window.addEventListener("beforeunload", (e) => { if (saving) e.preventDefault(); });

body.dataset.pending = "0";
renderProgress();
gotoNote(noteIdx, unitNo).then(() => {
  status(progress.labelled ? `resumed: ${progress.labelled} of ${progress.units} units labelled` : "");
  body.dataset.ready = "1";
});
