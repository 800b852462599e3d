// The loop's measurements (the compounding number and the struggle-rate plots, drawn as inline SVG) and the
// findings with their proofs, filtered, sorted and paged by the API.
import { argText, day, el, emptyRow, fillSelect, getJSON, num, pager, pct, when } from "./core.js";

const P = "ouroboros.";

async function allRows(url, pages = 20) {
  const rows = [];
  let after = 0;
  for (let i = 0; i < pages; i++) {
    const sep = url.includes("?") ? "&" : "?";
    const page = await getJSON(`${url}${sep}limit=1000&after=${after}`);
    if (!page) break;
    rows.push(...page.rows);
    if (page.next === null) break;
    after = page.next;
  }
  return rows;
}

// plot(svg, points, options): points are {x: epoch ms, y, low?, high?}; draws axes, the line (one path with
// a point per value), a dot per point and, with options.band, the interval as a shaded path.
function plot(svg, points, options = {}) {
  const W = 600, H = 200, left = 48, right = 12, top = 10, bottom = 24;
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("preserveAspectRatio", "none");
  const data = points.filter((p) => Number.isFinite(p.y)).sort((a, b) => a.x - b.x);
  if (!data.length) {
    svg.append(el("svg:text", { x: W / 2, y: H / 2, "text-anchor": "middle", class: "empty" }, options.empty || "no points yet"));
    return;
  }
  const ys = data.flatMap((p) => (options.band && Number.isFinite(p.low) ? [p.y, p.low, p.high] : [p.y]));
  if (options.zero) ys.push(0);
  let [y0, y1] = [Math.min(...ys), Math.max(...ys)];
  if (y0 === y1) [y0, y1] = [y0 - 1, y1 + 1];
  const pad = (y1 - y0) * 0.08;
  [y0, y1] = [y0 - pad, y1 + pad];
  const [x0, x1] = [data[0].x, data[data.length - 1].x];
  const sx = (x) => (x1 === x0 ? (left + W - right) / 2 : left + ((x - x0) / (x1 - x0)) * (W - left - right));
  const sy = (y) => top + (1 - (y - y0) / (y1 - y0)) * (H - top - bottom);
  const step = (y1 - y0) / 2;
  const digits = options.percent ? 1 : step >= 10 ? 0 : step >= 1 ? 1 : 2;
  const fmt = options.percent ? (v) => `${v >= 0 ? "+" : ""}${(v * 100).toFixed(digits)}%` : (v) => v.toFixed(digits);
  svg.append(el("svg:line", { x1: left, y1: H - bottom, x2: W - right, y2: H - bottom, class: "axis" }));
  svg.append(el("svg:line", { x1: left, y1: top, x2: left, y2: H - bottom, class: "axis" }));
  for (const y of [y0 + pad, (y0 + y1) / 2, y1 - pad]) {
    svg.append(el("svg:text", { x: left - 4, y: sy(y) + 3, "text-anchor": "end", class: "tick" }, fmt(y)));
  }
  const xticks = x1 === x0 ? [x0] : [x0, (x0 + x1) / 2, x1];
  xticks.forEach((x, i) => {
    const anchor = xticks.length === 1 ? "middle" : ["start", "middle", "end"][i];
    svg.append(el("svg:text", { x: sx(x), y: H - 6, "text-anchor": anchor, class: "tick" }, day(x)));
  });
  if (options.zero && y0 < 0 && y1 > 0) {
    svg.append(el("svg:line", { x1: left, y1: sy(0), x2: W - right, y2: sy(0), class: "zero" }));
  }
  const banded = data.filter((p) => Number.isFinite(p.low) && Number.isFinite(p.high));
  if (options.band && banded.length) {
    const upper = banded.map((p) => `${sx(p.x).toFixed(1)} ${sy(p.high).toFixed(1)}`);
    const lower = banded.map((p) => `${sx(p.x).toFixed(1)} ${sy(p.low).toFixed(1)}`).reverse();
    const d = banded.length === 1
      ? `M ${sx(banded[0].x) - 4} ${sy(banded[0].high)} H ${sx(banded[0].x) + 4} V ${sy(banded[0].low)} H ${sx(banded[0].x) - 4} Z`
      : `M ${[...upper, ...lower].join(" L ")} Z`;
    svg.append(el("svg:path", { d, class: "band" }));
  }
  const line = data.map((p, i) => `${i ? "L" : "M"} ${sx(p.x).toFixed(1)} ${sy(p.y).toFixed(1)}`).join(" ");
  svg.append(el("svg:path", { d: line, class: "line", "data-points": data.length }));
  for (const p of data) {
    const dot = el("svg:circle", { cx: sx(p.x).toFixed(1), cy: sy(p.y).toFixed(1), r: 3 });
    dot.append(el("svg:title", {}, `${day(p.x)}: ${fmt(p.y)}`));
    svg.append(dot);
  }
}

const asPoints = (rows) => rows.filter((r) => r.value !== null).map((r) => ({ x: Date.parse(r.at), y: r.value, low: r.low, high: r.high }));

function headlineCard(title, point) {
  if (!point) return el("div", { class: "card" }, el("div", { class: "muted" }, title), el("div", { class: "value" }, "—"));
  if (point.value === null) {
    return el("div", { class: "card" }, el("div", { class: "muted" }, title), el("div", { class: "value" }, "—"), el("div", { class: "muted" }, point.reason || ""));
  }
  const trend = point.value < 0 ? "down" : point.value > 0 ? "up" : "";
  const interval = point.low !== null && point.low !== undefined ? `95% interval [${pct(point.low)}, ${pct(point.high)}]` : "";
  return el("div", { class: "card" }, el("div", { class: "muted" }, title), el("div", { class: `value ${trend}` }, pct(point.value)), el("div", { class: "muted" }, interval));
}

export async function loadSeries(snapshot) {
  const latest = (name) => (snapshot && snapshot.series[P + name] ? snapshot.series[P + name][0] : null);
  const cards = [headlineCard("compounding per week", latest("compounding_per_week")), headlineCard("compounding per day", latest("compounding_per_day"))];
  const weeklyRate = latest("struggle_rate_per_1k_tool_calls_weekly");
  if (weeklyRate && weeklyRate.value !== null) {
    cards.push(el("div", { class: "card" }, el("div", { class: "muted" }, "struggles / 1k tool calls, latest week"), el("div", { class: "value" }, num(weeklyRate.value))));
  }
  cards.push(el("div", { class: "card" }, el("div", { class: "muted" }, "measured"), el("div", {}, snapshot ? when(snapshot.generated_at) : "none yet (ouro measure)")));
  document.getElementById("headline").replaceChildren(...cards);
  const fleet = latest("h_fleet");
  const runs = fleet && fleet.labels ? Number(fleet.labels.runs) : NaN;
  const empty = document.getElementById("empty");
  empty.hidden = !(snapshot === null || runs === 0);
  empty.querySelector(".what").textContent = snapshot === null ? "No measurement yet." : "No run recorded yet: nothing to measure.";
  const series = (name) => allRows(`/api/ledger/series_points?series=${encodeURIComponent(P + name)}`);
  const [weekly, daily, cweek, cday] = await Promise.all(["struggle_rate_per_1k_tool_calls_weekly", "struggle_rate_per_1k_tool_calls", "compounding_per_week", "compounding_per_day"].map(series));
  plot(document.getElementById("plot-weekly"), asPoints(weekly));
  plot(document.getElementById("plot-daily"), asPoints(daily));
  plot(document.getElementById("plot-compounding-week"), asPoints(cweek), { band: true, percent: true, zero: true, empty: "needs 3 usable weeks" });
  plot(document.getElementById("plot-compounding-day"), asPoints(cday), { band: true, percent: true, zero: true, empty: "needs 3 usable days" });
}

function proofRow(finding) {
  const facts = el("ol", { class: "facts" });
  for (const fact of finding.proof) {
    const item = el("li", { class: "fact" }, el("code", {}, fact.text));
    if (fact.where) item.append(el("span", { class: "where" }, fact.where));
    if (fact.source !== null && fact.source !== undefined) item.append(el("pre", { class: "source" }, fact.source));
    facts.append(item);
  }
  return el("tr", { class: "proof" }, el("td", { colspan: 6 }, el("strong", {}, "proof"), facts));
}

const view = { sort: "position", order: "asc", offset: 0 };
let asked = 0; // the latest request: an earlier one that answers late is dropped, never drawn over it

function findingRow(f, open) {
  const key = `${f.miner}/${f.rule}/${f.run}/${JSON.stringify(f.subject)}`;
  const row = el("tr", { class: "finding", "data-key": key, tabindex: 0 },
    el("td", {}, f.miner), el("td", {}, f.rule), el("td", {}, f.subject.map(argText).join(", ")),
    el("td", {}, f.run), el("td", {}, f.severity.replace("SEVERITY_", "")), el("td", {}, f.scope));
  const toggle = () => {
    const next = row.nextElementSibling;
    if (row.classList.toggle("open")) row.after(proofRow(f));
    else if (next && next.classList.contains("proof")) next.remove();
  };
  row.addEventListener("click", toggle);
  row.addEventListener("keydown", (e) => { if (e.key === "Enter") toggle(); });
  return [row, open.has(key) ? toggle : null];
}

export async function loadFindings() {
  const params = new URLSearchParams({ sort: view.sort, order: view.order, offset: view.offset, limit: document.getElementById("finding-limit").value });
  for (const select of document.querySelectorAll("#findings-panel select[data-facet]")) {
    if (select.value) params.set(select.dataset.facet, select.value);
  }
  const q = document.getElementById("finding-q").value.trim();
  if (q) params.set("q", q);
  const mine = ++asked;
  const page = await getJSON(`/api/findings?${params}`);
  if (mine !== asked) return;
  for (const select of document.querySelectorAll("#findings-panel select[data-facet]")) fillSelect(select, page.facets[select.dataset.facet]);
  document.getElementById("findings-count").textContent = `(${page.total})`;
  const body = document.querySelector("#findings tbody");
  const open = new Set([...body.querySelectorAll("tr.finding.open")].map((tr) => tr.dataset.key));
  body.replaceChildren();
  for (const f of page.rows) {
    const [row, reopen] = findingRow(f, open);
    body.append(row);
    if (reopen) reopen();
  }
  if (!page.rows.length) emptyRow(body, 6, page.total === 0 && !params.has("miner") ? "no findings yet" : "no finding matches");
  for (const th of document.querySelectorAll("#findings th[data-sort]")) {
    th.classList.toggle("sorted", th.dataset.sort === view.sort);
    th.dataset.order = th.dataset.sort === view.sort ? view.order : "";
  }
  pager(document.getElementById("findings-pager"), page, (offset) => { view.offset = offset; loadFindings(); });
}

export function wireFindings() {
  for (const th of document.querySelectorAll("#findings th[data-sort]")) {
    th.addEventListener("click", () => {
      view.order = view.sort === th.dataset.sort && view.order === "asc" ? "desc" : "asc";
      view.sort = th.dataset.sort;
      view.offset = 0;
      loadFindings();
    });
  }
  for (const control of document.querySelectorAll("#findings-panel select, #finding-q")) {
    control.addEventListener("change", () => { view.offset = 0; loadFindings(); });
  }
}
