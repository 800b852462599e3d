// The ops page: plain JavaScript over the API, plots drawn as inline SVG. Everything from the log is put
// in the page as text (textContent), never as markup.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const P = "ouroboros.";
const LABELER_POLL_MS = 3000;
const PAGE_POLL_MS = 30000;
let zone = "America/Los_Angeles";

function el(tag, attrs = {}, ...children) {
  const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

async function getJSON(url) {
  const response = await fetch(url, { headers: { Accept: "application/json" } });
  if (response.status === 404) return null;
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.json();
}

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

const day = (ms) => new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date(ms));
const pct = (v) => `${v >= 0 ? "+" : ""}${(v * 100).toFixed(1)}%`;
const num = (v) => (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2));

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

async function seriesRows(name) {
  return allRows(`/api/ledger/series_points?series=${encodeURIComponent(P + name)}`);
}

function headlineCard(title, point) {
  if (!point) return el("div", { class: "card" }, el("div", { class: "muted" }, title), el("div", { class: "value" }, "—"));
  if (point.value === null) {
    return el("div", { class: "card" }, el("div", { class: "muted" }, title), el("div", { class: "value" }, "—"), el("div", { class: "muted" }, point.reason || ""));
  }
  const trend = point.value < 0 ? "down" : point.value > 0 ? "up" : "";
  const interval = point.low !== null && point.low !== undefined ? `95% interval [${pct(point.low)}, ${pct(point.high)}]` : "";
  return el("div", { class: "card" }, el("div", { class: "muted" }, title), el("div", { class: `value ${trend}` }, pct(point.value)), el("div", { class: "muted" }, interval));
}

async function loadSeries() {
  const snapshot = await getJSON("/api/ouroboros");
  if (snapshot && snapshot.timezone) zone = snapshot.timezone;
  const latest = (name) => (snapshot && snapshot.series[P + name] ? snapshot.series[P + name][0] : null);
  const cards = [headlineCard("compounding per week", latest("compounding_per_week")), headlineCard("compounding per day", latest("compounding_per_day"))];
  const weeklyRate = latest("struggle_rate_per_1k_tool_calls_weekly");
  if (weeklyRate && weeklyRate.value !== null) {
    cards.push(el("div", { class: "card" }, el("div", { class: "muted" }, "struggles / 1k tool calls, latest week"), el("div", { class: "value" }, num(weeklyRate.value))));
  }
  cards.push(el("div", { class: "card" }, el("div", { class: "muted" }, "snapshot"), el("div", {}, snapshot ? snapshot.generated_at : "none yet (ouro measure)")));
  document.getElementById("headline").replaceChildren(...cards);
  const fleet = latest("h_fleet");
  const runs = fleet && fleet.labels ? Number(fleet.labels.runs) : NaN;
  const empty = document.getElementById("empty");
  empty.hidden = !(snapshot === null || runs === 0);
  empty.querySelector(".what").textContent = snapshot === null ? "No measurement yet." : "No run recorded yet: nothing to measure.";
  const [weekly, daily, cweek, cday] = await Promise.all(["struggle_rate_per_1k_tool_calls_weekly", "struggle_rate_per_1k_tool_calls", "compounding_per_week", "compounding_per_day"].map(seriesRows));
  plot(document.getElementById("plot-weekly"), asPoints(weekly));
  plot(document.getElementById("plot-daily"), asPoints(daily));
  plot(document.getElementById("plot-compounding-week"), asPoints(cweek), { band: true, percent: true, zero: true, empty: "needs 3 usable weeks" });
  plot(document.getElementById("plot-compounding-day"), asPoints(cday), { band: true, percent: true, zero: true, empty: "needs 3 usable days" });
}

const argText = (a) => ("text" in a ? a.text : String(a.number));

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

async function loadFindings() {
  const rows = await allRows("/api/findings", 5);
  document.getElementById("findings-count").textContent = `(${rows.length})`;
  const body = document.querySelector("#findings tbody");
  const open = new Set([...body.querySelectorAll("tr.finding.open")].map((tr) => tr.dataset.key));
  body.replaceChildren();
  for (const f of rows) {
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
    body.append(row);
    if (open.has(key)) toggle();
  }
  if (!rows.length) body.append(el("tr", {}, el("td", { colspan: 6, class: "muted" }, "no findings yet")));
}

async function loadLabeler() {
  const found = await getJSON("/api/labeler");
  const box = document.getElementById("labeler");
  if (!found) { box.replaceChildren(el("p", { class: "muted" }, "no labeler run yet")); return; }
  const r = found.run;
  const pairs = [["status", r.status], ["model", r.model], ["tickets", (r.tickets || []).map((t) => `#${t}`).join(" ") || "—"],
    ["batches", `${r.batches} (${r.failed_batches || 0} failed)`], ["candidates", r.candidates],
    ["accepted / rejected", `${r.accepted} / ${r.rejected}`],
    ["keep-alive", `${r.keep_alive_s} s`], ["started", r.started], ["ended", r.ended || "running"],
    ["from", found.source], ["read at", new Date().toLocaleTimeString()]];
  const notes = el("ul", { class: "muted", id: "labeler-notes" }, ...(r.notes || []).map((n) => el("li", {}, n)));
  box.replaceChildren(el("dl", { class: "kv", id: "labeler-kv" }, ...pairs.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)])), notes);
}

async function loadSpend() {
  const s = await getJSON("/api/spend");
  const box = document.getElementById("spend");
  const share = s.cap_usd > 0 ? Math.min(s.spent_usd / s.cap_usd, 1) : 0;
  const bar = el("div", { class: "bar" }, el("div", { class: s.spent_usd >= s.cap_usd && s.cap_usd > 0 ? "over" : "", style: `width: ${(share * 100).toFixed(1)}%` }));
  const note = s.fixers_on ? `$${s.remaining_usd.toFixed(2)} left today` : "fixers are off: OURO_FIXER_DAILY_CAP_USD is 0";
  box.replaceChildren(el("div", { class: "card" }, el("div", { class: "value" }, `$${s.spent_usd.toFixed(2)} of $${s.cap_usd.toFixed(2)}`), bar,
    el("div", { class: "muted" }, `${s.sessions} session(s) on ${s.day} (${s.zone}); ${note}`)));
}

async function loadMerges() {
  const page = await getJSON("/api/ledger/merges?order=desc&limit=50");
  const body = document.querySelector("#merges tbody");
  body.replaceChildren();
  for (const m of page.rows) {
    const refusal = el("td", {});
    for (const line of m.refusal) refusal.append(el("div", {}, el("code", {}, line)));
    body.append(el("tr", {}, el("td", {}, `#${m.pull_request}`), el("td", {}, el("code", {}, m.head_sha.slice(0, 12))),
      el("td", { class: `outcome-${m.outcome}` }, m.outcome), el("td", {}, m.at), refusal));
  }
  if (!page.rows.length) body.append(el("tr", {}, el("td", { colspan: 5, class: "muted" }, "the train has not run yet")));
}

async function loadFleet() {
  const health = await getJSON("/api/health");
  document.getElementById("fleet").replaceChildren(el("span", {}, `log head ${health.head}`));
  document.getElementById("updated").textContent = `updated ${new Date().toLocaleTimeString()}`;
}

async function guarded(name, load) {
  try { await load(); } catch (error) { console.error(name, error); }
}

async function refresh() {
  await Promise.all([guarded("fleet", loadFleet), guarded("series", loadSeries), guarded("findings", loadFindings),
    guarded("spend", loadSpend), guarded("merges", loadMerges)]);
  document.body.dataset.loaded = "true";
}

refresh();
guarded("labeler", loadLabeler);
setInterval(refresh, PAGE_POLL_MS);
setInterval(() => guarded("labeler", loadLabeler), LABELER_POLL_MS);
