// Fleet health: what `ouro status` shows (queues, dead letters, outbox, projection lag), the workers that answer
// the broker and the tasks they run, and the dead letters with their retry.
import { act, el, emptyRow, getJSON, when } from "./core.js";

function card(title, value, note, bad = false) {
  return el("div", { class: `card${bad ? " alarm" : ""}`, "data-card": title },
    el("div", { class: "muted" }, title), el("div", { class: "value" }, value), note ? el("div", { class: "muted" }, note) : null);
}

function cards(status, workers) {
  const lag = status.projections.reduce((sum, p) => sum + p.lag, 0);
  const dlq = status.queues.dead_letter;
  const waiting = Object.entries(status.queues).filter(([q]) => q !== "dead_letter").reduce((s, [, n]) => s + (n || 0), 0);
  const count = workers.available ? String(workers.workers.length) : "?";
  return [
    card("workers", count, workers.available ? workers.workers.join(", ") || "none answered" : workers.reason, workers.available && !workers.workers.length),
    card("running tasks", workers.available ? String(workers.running.length) : "?", null),
    card("waiting", status.broker_error ? "?" : String(waiting), status.broker_error || "messages on the queues", Boolean(status.broker_error)),
    card("dead-lettered", String(status.dead_letters_recorded), `${dlq ?? "?"} parked on the dead-letter queue`, status.dead_letters_recorded > 0),
    card("rejected", String(status.rejected), "refused at the door"),
    card("outbox backlog", String(status.outbox_pending), "committed, not yet published", status.outbox_pending > 0),
    card("projection lag", String(lag), `events behind the log head ${status.head}`, lag > 0),
  ];
}

function tables(status, workers) {
  const queues = document.querySelector("#queues tbody");
  queues.replaceChildren(...Object.entries(status.queues).map(([name, depth]) =>
    el("tr", { "data-queue": name }, el("td", {}, name), el("td", { class: "number" }, depth === null ? "?" : String(depth)))));
  const running = document.querySelector("#running tbody");
  running.replaceChildren(...workers.running.map((t) =>
    el("tr", {}, el("td", {}, t.worker), el("td", {}, t.name), el("td", {}, el("code", {}, t.id.slice(0, 12))), el("td", {}, when(t.started)))));
  if (!workers.running.length) emptyRow(running, 4, workers.available ? "no task running" : workers.reason);
  const lag = document.querySelector("#projections tbody");
  lag.replaceChildren(...status.projections.map((p) =>
    el("tr", { class: p.lag ? "behind" : "" }, el("td", {}, p.name), el("td", { class: "number" }, String(p.position)),
      el("td", { class: "number" }, String(p.lag)), el("td", { class: "number" }, String(p.rows)))));
}

export async function loadHealth() {
  const [status, workers] = await Promise.all([getJSON("/api/status"), getJSON("/api/workers")]);
  document.getElementById("health").replaceChildren(...cards(status, workers));
  tables(status, workers);
  const pills = [el("span", {}, `log head ${status.head}`)];
  pills.push(el("span", { class: status.broker_error ? "bad" : "" }, status.broker_error ? "broker down" : "broker up"));
  document.getElementById("fleet").replaceChildren(...pills);
}

function retryButton(row) {
  const button = el("button", { type: "button", class: "retry" }, "retry");
  button.disabled = !row.retryable;
  button.title = row.retryable ? "send this message again, as a new message" : "its message was not kept: it cannot be sent again";
  button.addEventListener("click", async () => {
    const note = document.getElementById("retry-note").value;
    const done = await act(`/api/actions/dead_letters/${encodeURIComponent(row.message_id)}/retry`, { note }, `retry ${row.message_id}`);
    if (done) await Promise.all([loadDeadLetters(), loadHealth()]);
  });
  return button;
}

export async function loadDeadLetters() {
  const page = await getJSON("/api/dead_letters?limit=50");
  const body = document.querySelector("#dead-letters tbody");
  body.replaceChildren();
  for (const row of page.rows) {
    const retry = row.retry ? `retry ${row.retry.attempt} sent ${when(row.retry.at)}` : "—";
    body.append(el("tr", { "data-message": row.message_id }, el("td", {}, row.task), el("td", {}, el("code", {}, row.message_id)),
      el("td", { class: "number" }, String(row.attempts)), el("td", {}, `${row.error_type}: ${row.error}`),
      el("td", { class: "retried" }, retry), el("td", {}, retryButton(row))));
  }
  if (!page.rows.length) emptyRow(body, 6, "no dead letter");
}
