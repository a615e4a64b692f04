// clinjudge meta-eval report.html: pairs with their change marked and each judge's verdict.
// DATA, el and pct come from common.js.

function outcome(pair, judge) {
  const v = pair.judges[judge];
  if (!v || v.flagged === null) return "unjudged";
  if (pair.kind === "error") return v.flagged ? "ok" : "missed";
  return v.flagged ? "false" : "ok";
}

function renderSummary() {
  const body = document.querySelector("#summary tbody");
  for (const r of DATA.summary) {
    const ci = r.ci95 ? `${pct(r.ci95[0])}–${pct(r.ci95[1])}` : "n/a";
    const auroc = r.auroc === null || r.auroc === undefined ? "n/a" : r.auroc.toFixed(3);
    body.append(el("tr", {}, el("td", { text: r.judge }), el("td", { text: r.type }),
      el("td", { text: r.kind }), el("td", { text: pct(r.rate) }), el("td", { text: ci }),
      el("td", { text: String(r.n ?? "") }), el("td", { text: auroc })));
  }
}

function renderPair(section) {
  const pair = DATA.pairs[Number(section.dataset.index)];
  section.replaceChildren(el("h3", { text: `${pair.id} · ${pair.kind} · ${pair.type}` }));
  if (pair.rationale) section.append(el("p", { class: "meta", text: pair.rationale }));
  section.append(el("div", { class: "change" }, "…" + pair.before_text,
    el("del", { class: "removed", text: pair.removed }),
    el("ins", { class: "inserted", text: pair.inserted }), pair.after_text + "…"));
  const list = el("ul");
  for (const judge of DATA.judges) {
    const v = pair.judges[judge];
    const o = outcome(pair, judge);
    const label = { ok: pair.kind === "error" ? "detected" : "not flagged", missed: "MISSED",
      false: "FALSE FLAG", unjudged: "not judged" }[o];
    const scores = v ? ` · score ${v.score_original ?? "n/a"} → ${v.score_edited ?? "n/a"}` : "";
    const item = el("li", { "data-judge": judge },
      el("span", { class: `outcome-${o}`, text: `${judge}: ${label}` }), scores);
    if (v && v.flags.length) item.append(el("div", { class: "meta", text: `flagged: ${v.flags.join(" | ")}` }));
    if (v && Object.keys(v.missing).length) {
      item.append(el("div", { class: "meta", text: `not judged: ${JSON.stringify(v.missing)}` }));
    }
    list.append(item);
  }
  section.append(list);
  section.dataset.rendered = "1";
}

const observer = new IntersectionObserver((entries) => {
  for (const e of entries) if (e.isIntersecting && !e.target.dataset.rendered) renderPair(e.target);
}, { rootMargin: "600px" });

function renderPairs() {
  const judge = document.getElementById("f-judge").value;
  const kind = document.getElementById("f-kind").value;
  const type = document.getElementById("f-type").value;
  const wanted = document.getElementById("f-outcome").value;
  const container = document.getElementById("pairs");
  container.replaceChildren();
  let shown = 0;
  DATA.pairs.forEach((pair, index) => {
    if ((kind && pair.kind !== kind) || (type && pair.type !== type)) return;
    if (wanted && outcome(pair, judge) !== wanted) return;
    const section = el("section", { class: "pair", id: `pair-${pair.id}`, "data-index": String(index) },
      el("h3", { text: pair.id }));
    container.append(section);
    observer.observe(section);
    shown += 1;
  });
  document.getElementById("f-count").textContent = `${shown} of ${DATA.pairs.length} pairs`;
}

function setup() {
  const judgeSel = document.getElementById("f-judge");
  for (const j of DATA.judges) judgeSel.append(el("option", { text: j }));
  const typeSel = document.getElementById("f-type");
  for (const t of [...new Set(DATA.pairs.map((p) => p.type))].sort()) typeSel.append(el("option", { text: t }));
  for (const id of ["f-judge", "f-kind", "f-type", "f-outcome"]) {
    document.getElementById(id).addEventListener("input", renderPairs);
  }
}

renderSummary();
setup();
renderPairs();
document.body.dataset.ready = "1";
