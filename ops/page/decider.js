// The decider's decisions (filtered by repository and operating point, each with its flow and rationale, and
// dismissed from here), the accepted gates with their backtest replays, and h_fleet's offenders.
import { act, el, emptyRow, fillSelect, getJSON, pager, when, zonedInstant, zonedNow } from "./core.js";

const decisionsView = { offset: 0 };

function flowAndRationale(d) {
  const box = el("div", { class: "why" });
  if (d.flows.length) box.append(el("ul", { class: "flows" }, ...d.flows.map((f) => el("li", {}, el("code", {}, f)))));
  else box.append(el("div", { class: "muted" }, "no taint flow"));
  box.append(el("div", { class: "rationale" }, d.rationale || "—"));
  return box;
}

function dismissCell(d) {
  if (d.dismissed) {
    const note = d.dismissed.note ? `: ${d.dismissed.note}` : "";
    return el("td", { class: "dismissed" }, `dismissed ${when(d.dismissed.at)}${note}`);
  }
  const button = el("button", { type: "button", class: "dismiss" }, "dismiss");
  button.addEventListener("click", async () => {
    const candidate = { repo: d.repo, pin: d.pin, path: d.path, function: d.function, family: d.family };
    const note = document.getElementById("dismiss-note").value;
    if (await act("/api/actions/decisions/dismiss", { candidate, note }, `dismiss ${d.function}`)) await loadDecisions();
  });
  return el("td", {}, button);
}

export async function loadDecisions() {
  const repo = document.getElementById("decision-repo");
  const point = document.getElementById("decision-point");
  const params = new URLSearchParams({ offset: decisionsView.offset, limit: 25 });
  if (repo.value) params.set("repo", repo.value);
  if (point.value) params.set("operating_point", point.value);
  const page = await getJSON(`/api/decisions?${params}`);
  fillSelect(repo, page.repos);
  document.getElementById("decisions-count").textContent = `(${page.total})`;
  document.getElementById("decision-counts").textContent =
    `block ${page.counts.block} · advisory ${page.counts.advisory} · drop ${page.counts.drop}`;
  const body = document.querySelector("#decisions tbody");
  body.replaceChildren();
  for (const d of page.rows) {
    const p = d.p === null ? `unscored (${d.undecided})` : d.p.toFixed(2);
    body.append(el("tr", { class: `decision point-${d.operating_point}`, "data-function": d.function },
      el("td", {}, d.repo), el("td", {}, el("code", {}, `${d.path}::${d.function}`), el("div", { class: "muted" }, d.pin.slice(0, 12))),
      el("td", {}, d.family), el("td", { class: "point" }, d.operating_point), el("td", { class: "number" }, p),
      el("td", {}, flowAndRationale(d)), dismissCell(d)));
  }
  if (!page.rows.length) emptyRow(body, 7, page.total === 0 && !params.has("repo") ? "no decision yet (ouro pre-push, ouro scan)" : "no decision matches");
  pager(document.getElementById("decisions-pager"), page, (offset) => { decisionsView.offset = offset; loadDecisions(); });
}

export function wireDecisions() {
  for (const id of ["decision-repo", "decision-point"]) {
    document.getElementById(id).addEventListener("change", () => { decisionsView.offset = 0; loadDecisions(); });
  }
}

function backtestText(b) {
  const kappa = b.kappa_star === null || b.kappa_star === undefined ? "no knee" : `κ* ${b.kappa_star}`;
  const count = (v) => (Array.isArray(v) ? v.length : v);
  return `${kappa} · TP ${count(b.tp)} FP ${count(b.fp)} FN ${count(b.fn)} · ${b.families} families · PBO ${b.pbo_status}`;
}

export async function loadGates() {
  const page = await getJSON("/api/backtests?limit=1000");
  const body = document.querySelector("#gates tbody");
  body.replaceChildren();
  for (const g of [...page.rows].reverse()) {
    const mutation = `${g.mutation_score.toFixed(2)} (floor ${g.mutation_floor.toFixed(2)})`;
    body.append(el("tr", { "data-miner": g.miner }, el("td", {}, g.miner), el("td", {}, g.scope),
      el("td", {}, backtestText(g.backtest)), el("td", { class: "number" }, mutation), el("td", {}, when(g.recorded_at))));
  }
  if (!page.rows.length) emptyRow(body, 5, "no miner accepted yet");
  fillSelect(document.getElementById("replay-miner"), [...new Set(page.rows.map((g) => g.miner))]);
  await loadReplays();
}

async function loadReplays() {
  const page = await getJSON("/api/ledger/backtest_replays?order=desc&limit=10");
  const body = document.querySelector("#replays tbody");
  body.replaceChildren();
  for (const r of page.rows) {
    const result = r.error ? el("span", { class: "bad" }, r.error) : backtestText({ ...r.backtest, tp: r.tp, fp: r.fp, fn: r.fn });
    body.append(el("tr", {}, el("td", {}, r.miner), el("td", {}, when(r.as_of)), el("td", { class: "number" }, String(r.labels)), el("td", {}, result)));
  }
  if (!page.rows.length) emptyRow(body, 4, "no backtest replayed yet");
}

export function wireReplay() {
  const at = document.getElementById("replay-at");
  if (!at.value) at.value = zonedNow();
  document.getElementById("replay-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const miner = document.getElementById("replay-miner").value;
    const asOf = zonedInstant(at.value);
    if (await act(`/api/actions/miners/${encodeURIComponent(miner)}/replay`, { as_of: asOf }, `replay ${miner}`)) await loadReplays();
  });
}

export function loadOffenders(snapshot) {
  const fleet = snapshot ? snapshot.h_fleet : null;
  const value = fleet && fleet.value !== null ? fleet.value.toFixed(4) : "—";
  const cards = [el("div", { class: "card" }, el("div", { class: "muted" }, "h_fleet"), el("div", { class: "value" }, value),
    el("div", { class: "muted" }, fleet ? `floor ${fleet.floor}; cache reads over prompt tokens` : "not measured yet"))];
  const accepted = snapshot ? snapshot.accepted_miners : {};
  for (const [scope, found] of Object.entries(accepted)) {
    cards.push(el("div", { class: "card" }, el("div", { class: "muted" }, `${scope} gates`), el("div", { class: "value" }, String(found.count))));
  }
  document.getElementById("hfleet").replaceChildren(...cards);
  const body = document.querySelector("#offenders tbody");
  body.replaceChildren();
  for (const o of fleet ? fleet.offenders : []) {
    body.append(el("tr", {}, el("td", { class: "number" }, String(o.rank)), el("td", {}, o.run), el("td", { class: "number" }, o.h_r === null ? "—" : o.h_r.toFixed(4))));
  }
  if (!body.children.length) emptyRow(body, 3, "no run below the floor");
}
