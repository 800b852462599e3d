// The loop's queue and what it spends: pre-check verdicts, label requests, proposed labels (accepted or
// rejected by the operator from here), the labeler live, fixer spend, and the merge train.
import { act, el, emptyRow, getJSON, when } from "./core.js";

export async function loadVerdicts() {
  const page = await getJSON("/api/ledger/precheck_verdicts?order=desc&limit=50");
  const body = document.querySelector("#verdicts tbody");
  body.replaceChildren();
  for (const v of page.rows) {
    const found = `${v.instances_found.length} of ${v.instances_named.length}${v.instances_found.length ? ": " + v.instances_found.join(", ") : ""}`;
    body.append(el("tr", {}, el("td", {}, `#${v.ticket}`), el("td", {}, v.miner || "—"),
      el("td", { class: `verdict-${v.verdict}` }, v.verdict), el("td", {}, found), el("td", {}, v.reason)));
  }
  if (!page.rows.length) emptyRow(body, 5, "no ticket pre-checked yet (ouro precheck)");
}

export async function loadRequests() {
  const page = await getJSON("/api/ledger/label_requests?order=desc&limit=50");
  const body = document.querySelector("#requests tbody");
  body.replaceChildren();
  for (const r of page.rows) {
    body.append(el("tr", {}, el("td", {}, `#${r.ticket}`), el("td", {}, r.miner || "—"), el("td", {}, r.instances.join(", ") || "—"),
      el("td", {}, r.reason), el("td", {}, when(r.at))));
  }
  if (!page.rows.length) emptyRow(body, 5, "no label request queued");
}

function reviewCell(label) {
  const cell = el("td", { class: "review-actions" });
  for (const review of ["accepted", "rejected"]) {
    const button = el("button", { type: "button", class: review === "accepted" ? "accept" : "reject" }, review === "accepted" ? "accept" : "reject");
    button.disabled = label.review !== null && label.review.review === review;
    button.addEventListener("click", async () => {
      const note = document.getElementById("review-note").value;
      if (await act(`/api/actions/labels/${label.position}/review`, { review, note }, `${review} label on ${label.instance}`)) await loadLabels();
    });
    cell.append(button);
  }
  return cell;
}

export async function loadLabels() {
  const page = await getJSON("/api/labels?limit=200");
  const body = document.querySelector("#labels tbody");
  body.replaceChildren();
  for (const l of [...page.rows].reverse()) {
    const checked = l.acceptance.replace("ACCEPTANCE_", "").toLowerCase();
    const operator = l.review ? `${l.review.review} ${when(l.review.at)}${l.review.note ? ": " + l.review.note : ""}` : "—";
    body.append(el("tr", { "data-label": l.position, class: l.review ? `reviewed-${l.review.review}` : "" },
      el("td", {}, `#${l.ticket}`), el("td", {}, l.instance), el("td", {}, l.positive ? "+" : "−"),
      el("td", {}, el("code", {}, l.quote)), el("td", { class: "where" }, `${l.file.split("/").pop()}:${l.line}`),
      el("td", { title: l.why }, checked), el("td", { class: "operator" }, operator), reviewCell(l)));
  }
  if (!page.rows.length) emptyRow(body, 8, "no label proposed yet");
}

export async function loadLabeler() {
  const found = await getJSON("/api/labeler");
  const box = document.getElementById("labeler");
  if (!found) { box.replaceChildren(el("p", { class: "muted" }, "no labeler run yet")); return; }
  const r = found.run;
  const pairs = [["status", r.status], ["model", r.model], ["tickets", (r.tickets || []).map((t) => `#${t}`).join(" ") || "—"],
    ["batches", `${r.batches} (${r.failed_batches || 0} failed)`], ["candidates", r.candidates],
    ["accepted / rejected", `${r.accepted} / ${r.rejected}`],
    ["keep-alive", `${r.keep_alive_s} s`], ["started", when(r.started)], ["ended", r.ended ? when(r.ended) : "running"],
    ["from", found.source], ["read at", when(Date.now())]];
  const notes = el("ul", { class: "muted", id: "labeler-notes" }, ...(r.notes || []).map((n) => el("li", {}, n)));
  box.replaceChildren(el("dl", { class: "kv", id: "labeler-kv" }, ...pairs.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)])), notes);
}

export async function loadSpend() {
  const s = await getJSON("/api/spend");
  const box = document.getElementById("spend");
  const share = s.cap_usd > 0 ? Math.min(s.spent_usd / s.cap_usd, 1) : 0;
  const bar = el("div", { class: "bar" }, el("div", { class: s.spent_usd >= s.cap_usd && s.cap_usd > 0 ? "over" : "", style: `width: ${(share * 100).toFixed(1)}%` }));
  const note = s.fixers_on ? `$${s.remaining_usd.toFixed(2)} left today` : "fixers are off: OURO_FIXER_DAILY_CAP_USD is 0";
  box.replaceChildren(el("div", { class: "card" }, el("div", { class: "value" }, `$${s.spent_usd.toFixed(2)} of $${s.cap_usd.toFixed(2)}`), bar,
    el("div", { class: "muted" }, `${s.sessions} session(s) on ${s.day} (${s.zone}); ${note}`)));
}

export async function loadMerges() {
  const page = await getJSON("/api/ledger/merges?order=desc&limit=50");
  const body = document.querySelector("#merges tbody");
  body.replaceChildren();
  for (const m of page.rows) {
    const refusal = el("td", {});
    for (const line of m.refusal) refusal.append(el("div", {}, el("code", {}, line)));
    body.append(el("tr", {}, el("td", {}, `#${m.pull_request}`), el("td", {}, el("code", {}, m.head_sha.slice(0, 12))),
      el("td", { class: `outcome-${m.outcome}` }, m.outcome), el("td", {}, when(m.at)), refusal));
  }
  if (!page.rows.length) emptyRow(body, 5, "the train has not run yet");
}
