// An answer's steps, from its stored trace: memory recall (what and why), model calls, tool calls
// with their input and output, knowledge retrieval with its passages, and what each step and the
// whole turn cost. Loaded on first opening: most answers' steps are never looked at.
// Every text of a step (tool output, passages, memory values) is untrusted: textContent only.
import { json } from "/web/api.js";
import { el } from "/web/dom.js";

const TOOL_STEPS = new Set(["agent_action", "dataset_retrieval"]);
const ENDS = { agent_end: "Ended", stop: "Stopped", error: "Failed", timeout: "Timed out" };
const PREVIEW = 160;  // characters of the answer shown in its step: the answer itself is above

const price = (usd) => `$${usd.toFixed(usd >= 0.01 ? 4 : 6)}`;
const duration = (s) => (s < 1 ? `${Math.round(s * 1000)} ms` : `${s.toFixed(2)} s`);

function parsed(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

// What a step cost; a run of agent_message steps (the streamed answer) costs their sum.
function costOf(steps) {
  const sum = (field) => steps.reduce((total, s) => total + (s[field] || 0), 0);
  return { tokens: sum("total_token_count"), input: sum("message_token_count"), output: sum("answer_token_count"),
           price: sum("total_price"), latency: sum("latency") };
}

function figures({ tokens, input, output, price: usd, latency }) {
  const parts = [];
  if (tokens) parts.push(`${tokens} tokens (${input} in, ${output} out)`);
  if (usd) parts.push(price(usd));
  if (latency) parts.push(duration(latency));
  return parts.join(" · ");
}

// The turn's time: the calls of one tool round run together and each records the round's time,
// so a run of tool steps counts once.
function turnLatency(steps) {
  let total = 0;
  let round = 0;
  for (const step of steps) {
    if (TOOL_STEPS.has(step.event)) {
      round = Math.max(round, step.latency);
      continue;
    }
    total += round + step.latency;
    round = 0;
  }
  return total + round;
}

const text = (value, className = "step-text") => el("p", { className, textContent: value });
const title = (value) => text(value, "part-title");
const data = (value) => el("pre", { className: "step-data",
                                     textContent: typeof value === "string" ? value : JSON.stringify(value, null, 2) });
const list = (items) => el("ul", {}, ...items.map((item) => el("li", { textContent: item })));

// A tool's output: pretty-printed when it is JSON, else as the text it is.
function output(observation) {
  const value = parsed(observation);
  return data(value === undefined || typeof value === "string" ? observation : value);
}

function part(heading, items, why) {
  if (!items?.length) return [];
  return [title(heading), list(items), ...(why ? [text(why, "step-why")] : [])];
}

const entity = (e) => `${e.type}: ${e.value} (${e.from}, confidence ${e.confidence}) — ${e.why}`;
const scored = (label, score) => (score === null || score === undefined ? label : `${label} (score ${score})`);

function recallBody(observation) {
  const report = parsed(observation);
  if (!report || typeof report !== "object") return [data(observation)];
  const recent = report.short_term;
  const body = [text(recent ? `Recent turns in the prompt: ${recent.turns} (${recent.why}).`
                            : `Recent messages in the prompt: ${report.short_term_messages ?? 0}.`)];
  const entities = report.entities || [];
  const archive = (report.archive || []).map((a) => scored(a.summary, a.score));
  const earlier = (report.earlier_conversations || []).map((c) => scored(c.text, c.score));
  body.push(
    ...part("Facts recalled", entities.map(entity)),
    ...(report.summary ? [title("Summary"), text(report.summary)] : []),
    ...part("Earlier parts of this conversation", archive, report.archive_ranking),
    ...part("From other conversations", earlier, report.earlier_ranking),
    ...part("Left out", [...(report.entities_left_out || []).map(entity), ...(report.left_out || [])]),
    ...part("Problems", report.problems),
  );
  if (!entities.length && !report.summary && !archive.length && !earlier.length) {
    body.push(text("Nothing recalled beyond the recent turns."));
  }
  if (report.user_memory) body.push(text(`User memory: ${report.user_memory}.`, "step-why"));
  return body;
}

function passagesBody(step) {
  const body = [text(`Query: ${step.tool_input?.query ?? ""}`)];
  const passages = parsed(step.observation);
  if (!Array.isArray(passages)) return [...body, output(step.observation)];  // the retrieval failed
  if (!passages.length) return [...body, text("No passage found.")];
  const items = passages.map((p) => el("li", {},
    text(`${p.document} · chunk ${p.chunk} · score ${p.score}`, "passage-source"),
    el("blockquote", { className: "passage", textContent: p.text })));
  return [...body, el("ol", { className: "passages" }, ...items)];
}

function preview(answer) {
  return answer.length > PREVIEW ? `${answer.slice(0, PREVIEW)}…` : answer;
}

// [label, body elements] of a group of steps (one step, or a run of agent_message steps).
function describe(group) {
  const [step] = group;
  switch (step.event) {
    case "long_term_memory_recall":
      return ["Memory recall", recallBody(step.observation)];
    case "agent_thought": {
      const tools = step.tool ? step.tool.split(";") : [];
      const body = step.thought ? [text(step.thought)] : [];
      if (tools.length) body.push(text(`Calls ${tools.join(", ")}.`, "step-why"));
      return [tools.length ? "Model call" : "Thought", body];
    }
    case "agent_action":
      return [`Tool call: ${step.tool}`, [title("Input"), data(step.tool_input), title("Output"),
                                          output(step.observation)]];
    case "dataset_retrieval":
      return ["Knowledge retrieval", passagesBody(step)];
    case "agent_message": {
      const answer = group.map((s) => s.answer || "").join("");
      const parts = group.length > 1 ? ` (${group.length} parts)` : "";
      return [`Answer${parts}`, answer ? [text(preview(answer))] : []];
    }
    default: {
      const said = step.observation || step.thought;
      return [ENDS[step.event] || step.event, said ? [text(said)] : []];
    }
  }
}

// Consecutive agent_message steps are one answer, streamed: they show as one.
function grouped(steps) {
  const groups = [];
  for (const step of steps) {
    const last = groups.at(-1);
    if (last && step.event === "agent_message" && last[0].event === "agent_message") last.push(step);
    else groups.push([step]);
  }
  return groups;
}

function stepItem(group) {
  const [label, body] = describe(group);
  const kind = group[0].event.replace(/[^a-z_]/g, "");
  const head = el("div", { className: "step-head" }, el("span", { className: "step-name", textContent: label }),
                  el("span", { className: "step-figures", textContent: figures(costOf(group)) }));
  return el("li", { className: `step step-${kind}` }, head, ...body);
}

function stepsContent(steps) {
  if (!steps.length) return [text("No steps were recorded for this answer.", "steps-status")];
  const total = figures({ ...costOf(steps), latency: turnLatency(steps) });
  return [el("ol", { className: "step-list" }, ...grouped(steps).map(stepItem)),
          text(`Total: ${total || "no model call"}`, "steps-total")];
}

export function stepsView(messageId) {
  const details = el("details", { className: "steps" }, el("summary", { textContent: "Steps" }));
  details.dataset.messageId = messageId;
  const body = el("div", { className: "steps-body" });
  details.append(body);
  let loading = null;
  details.addEventListener("toggle", () => {
    if (!details.open || loading) return;
    const status = text("Loading steps…", "steps-status");
    status.setAttribute("role", "status");
    body.replaceChildren(status);
    loading = json(`/api/messages/${encodeURIComponent(messageId)}/thoughts`).then(
      (page) => body.replaceChildren(...stepsContent(page.data)),
      (failure) => {
        loading = null;  // opened again, it tries again
        status.textContent = `Could not load the steps: ${failure.message || failure}`;
      },
    );
  });
  return details;
}
