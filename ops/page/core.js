// What every panel shares: building elements (everything from the log goes in as text, never as markup),
// reading and writing the API (writes carry the token the operator typed, kept for this tab only), and
// times, all shown in the loop's zone.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const TOKEN_KEY = "ouro-api-token";
export const state = { zone: "America/Los_Angeles" };

export function el(tag, attrs = {}, ...children) {
  const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null) node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export async function getJSON(url) {
  const response = await fetch(url, { headers: { Accept: "application/json" } });
  if (response.status === 404) return null;
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.json();
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export function say(text, bad = false) {
  const box = document.getElementById("action-status");
  box.textContent = text;
  box.className = bad ? "bad" : "good";
  box.hidden = false;
}

function detail(body) {
  if (!body || body.detail === undefined) return "";
  if (typeof body.detail === "string") return body.detail;
  return body.detail.map((e) => `${(e.loc || []).join(".")}: ${e.msg}`).join("; ");
}

// An action: POST with the bearer token; says what happened, and returns the answer (null when refused).
export async function act(url, body, what) {
  if (!token()) {
    say(`${what}: enter the API token (OURO_API_TOKEN) above first`, true);
    return null;
  }
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${token()}` },
    body: JSON.stringify(body),
  });
  const answer = await response.json().catch(() => null);
  if (!response.ok) {
    const why = response.status === 401 ? "the token was refused" : detail(answer) || `HTTP ${response.status}`;
    say(`${what}: ${why}`, true);
    return null;
  }
  say(answer.position === null ? `${what}: already recorded` : `${what}: recorded`);
  return answer;
}

const formats = {};
function format(kind) {
  const key = `${kind}@${state.zone}`;
  if (!formats[key]) {
    const date = { year: "numeric", month: "2-digit", day: "2-digit" };
    const time = { hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" };
    const options = kind === "day" ? date : { ...date, ...time, timeZoneName: "short" };
    formats[key] = new Intl.DateTimeFormat("en-CA", { timeZone: state.zone, ...options });
  }
  return formats[key];
}

// An instant (ISO text or epoch ms) as the loop's wall time, with the zone's abbreviation.
export function when(value) {
  if (value === null || value === undefined || value === "") return "—";
  const ms = typeof value === "number" ? value : Date.parse(value);
  return Number.isFinite(ms) ? format("time").format(new Date(ms)).replace(",", "") : String(value);
}

export const day = (ms) => format("day").format(new Date(ms));

function offsetMs(ms) {
  const parts = {};
  for (const p of format("time").formatToParts(new Date(ms))) parts[p.type] = p.value;
  return Date.UTC(+parts.year, +parts.month - 1, +parts.day, +parts.hour % 24, +parts.minute, +parts.second) - ms;
}

// A wall time typed in the loop's zone ("2026-10-04T09:00:00") as an ISO instant with its offset resolved.
export function zonedInstant(local) {
  const [date, clock = "00:00:00"] = local.split("T");
  const [y, m, d] = date.split("-").map(Number);
  const [hh, mm, ss = 0] = clock.split(":").map(Number);
  const wall = Date.UTC(y, m - 1, d, hh, mm, ss);
  let utc = wall;
  for (let i = 0; i < 3; i++) utc = wall - offsetMs(utc);
  return new Date(utc).toISOString();
}

// The loop's wall time now, as a datetime-local input wants it.
export function zonedNow() {
  const parts = {};
  for (const p of format("time").formatToParts(new Date())) parts[p.type] = p.value;
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}`;
}

export const pct = (v) => `${v >= 0 ? "+" : ""}${(v * 100).toFixed(1)}%`;
export const num = (v) => (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2));
export const argText = (a) => ("text" in a && a.text !== undefined ? a.text : String(a.number));

export function fillSelect(select, values, keep = true) {
  const chosen = select.value;
  const first = select.options[0] && select.options[0].value === "" ? [select.options[0]] : [];
  select.replaceChildren(...first, ...values.map((v) => el("option", { value: v }, v)));
  if (keep && [...select.options].some((o) => o.value === chosen)) select.value = chosen;
}

export function emptyRow(body, columns, text) {
  body.append(el("tr", { class: "empty" }, el("td", { colspan: columns, class: "muted" }, text)));
}

export function pager(box, page, onPage) {
  const from = page.total ? page.offset + 1 : 0;
  const to = page.offset + page.rows.length;
  const prev = el("button", { type: "button", class: "prev" }, "‹ previous");
  const next = el("button", { type: "button", class: "next" }, "next ›");
  prev.disabled = page.offset === 0;
  next.disabled = page.next_offset === null;
  prev.addEventListener("click", () => onPage(Math.max(page.offset - page.limit, 0)));
  next.addEventListener("click", () => onPage(page.next_offset));
  box.replaceChildren(prev, el("span", { class: "muted range" }, `${from}–${to} of ${page.total}`), next);
}

export async function guarded(name, load) {
  try {
    await load();
  } catch (error) {
    console.error(name, error);
  }
}
