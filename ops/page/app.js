// The ops page: the operator's console over the API. Panels refresh every PAGE_POLL_MS (the labeler and the
// fleet's health more often); actions need the API token, typed once and kept for this tab.
import { getJSON, guarded, setToken, state, token, when } from "./core.js";
import { loadDecisions, loadGates, loadOffenders, wireDecisions, wireReplay } from "./decider.js";
import { loadDeadLetters, loadHealth } from "./fleet.js";
import { loadFindings, loadSeries, wireFindings } from "./loop.js";
import { loadLabeler, loadLabels, loadMerges, loadRequests, loadSpend, loadVerdicts } from "./queue.js";

const LIVE_POLL_MS = 3000;
const PAGE_POLL_MS = 30000;

async function loadZone() {
  const health = await getJSON("/api/health");
  state.zone = health.timezone;
  document.getElementById("zone").textContent = `all times ${state.zone}`;
  for (const node of document.querySelectorAll(".zone-name")) node.textContent = state.zone;
}

async function loadMeasured() {
  const snapshot = await getJSON("/api/ouroboros");
  await loadSeries(snapshot);
  loadOffenders(snapshot);
}

function showToken() {
  document.getElementById("token-state").textContent = token() ? "set for this tab" : "not set: actions are refused";
}

function wireToken() {
  const form = document.getElementById("token-form");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const input = document.getElementById("token");
    setToken(input.value.trim());
    input.value = "";
    showToken();
  });
  showToken();
}

async function refresh() {
  await Promise.all([
    guarded("health", loadHealth), guarded("dead letters", loadDeadLetters), guarded("measured", loadMeasured),
    guarded("decisions", loadDecisions), guarded("gates", loadGates), guarded("findings", loadFindings),
    guarded("verdicts", loadVerdicts), guarded("requests", loadRequests), guarded("labels", loadLabels),
    guarded("spend", loadSpend), guarded("merges", loadMerges), guarded("labeler", loadLabeler),
  ]);
  document.getElementById("updated").textContent = `updated ${when(Date.now())}`;
  document.body.dataset.loaded = "true";
}

async function start() {
  await guarded("zone", loadZone);
  wireToken();
  wireFindings();
  wireDecisions();
  wireReplay();
  await refresh();
  setInterval(refresh, PAGE_POLL_MS);
  setInterval(() => guarded("labeler", loadLabeler), LIVE_POLL_MS);
  setInterval(() => guarded("health", loadHealth), LIVE_POLL_MS * 2);
}

start();
