// The run panel: a form made from the start node's inputs, a run of the draft or of a version, and
// the run's trace node by node (status, inputs, outputs, latency, tokens). Everything a run returns
// is untrusted text: it is shown as text, JSON in <pre>, never as HTML.
import { el } from "/web/dom.js";
import { $ } from "/web/builder_dom.js";
import { call, showProblems } from "/web/builder_workflows_api.js";

const startInputs = (graph) => {
  const start = (Array.isArray(graph?.nodes) ? graph.nodes : []).find((n) => n?.type === "start");
  return Array.isArray(start?.inputs) ? start.inputs.filter((i) => i && typeof i.name === "string") : [];
};
const required = (input) => input.required ?? !("default" in input);

function control(input) {
  const label = `Input ${input.name}`;
  if (Array.isArray(input.enum)) {
    const select = el("select", { ariaLabel: label }, new Option("(not given)", ""),
      ...input.enum.map((value) => new Option(String(value), JSON.stringify(value))));
    select.dataset.kind = "enum";
    return select;
  }
  if (input.type === "boolean") {
    return el("select", { ariaLabel: label }, new Option("(not given)", ""),
      new Option("true", "true"), new Option("false", "false"));
  }
  if (input.type === "array" || input.type === "object") {
    return el("textarea", { ariaLabel: label, rows: 2, placeholder: `JSON ${input.type}` });
  }
  const numeric = input.type === "number" || input.type === "integer";
  return el("input", { ariaLabel: label, type: numeric ? "number" : "text", step: input.type === "integer" ? "1" : "any" });
}

// One row per input; `data-type` says how its text becomes a value.
export function inputForm(graph) {
  const rows = startInputs(graph).map((input) => {
    const field = control(input);
    field.dataset.name = input.name;
    field.dataset.type = input.type ?? "string";
    if ("default" in input) field.placeholder = `default: ${JSON.stringify(input.default)}`;
    return el("label", { className: "field" },
      el("span", {}, el("code", { textContent: input.name }), required(input) ? " *" : ""),
      input.description ? el("span", { className: "meta", textContent: String(input.description) }) : null, field);
  });
  return rows.length ? rows : [el("p", { className: "meta", textContent: "The start node takes no inputs." })];
}

// The form's values; an empty field is left out, so the server fills its default or names it missing.
// Text that does not parse as the input's type is sent as typed: the server's 422 says what is wrong.
export function readInputs(container) {
  const inputs = {};
  for (const field of container.querySelectorAll("[data-name]")) {
    const text = field.value;
    if (text === "") continue;
    const type = field.dataset.type;
    if (field.dataset.kind === "enum" || type === "boolean") inputs[field.dataset.name] = JSON.parse(text);
    else if (type === "string") inputs[field.dataset.name] = text;
    else inputs[field.dataset.name] = parsed(text);
  }
  return inputs;
}

function parsed(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const block = (title, value) => el("details", {}, el("summary", { textContent: title }),
  el("pre", { textContent: JSON.stringify(value ?? null, null, 2) }));
const seconds = (value) => (typeof value === "number" ? `${(value * 1000).toFixed(0)} ms` : "—");

function nodeRow(node) {
  const id = String(node.node_id ?? node.id ?? "?");
  const tokens = node.tokens ?? node.spent?.tokens ?? 0;
  const item = el("li", { className: `trace-node status-${String(node.status)}` },
    el("div", { className: "trace-head" }, el("code", { textContent: id }),
      el("span", { className: "meta", textContent: String(node.node_type ?? node.type ?? "") }),
      el("strong", { className: "trace-status", textContent: String(node.status) }),
      el("span", { className: "meta", textContent: `${seconds(node.latency)} · ${tokens} tokens` })),
    node.error ? el("p", { className: "trace-error", textContent: String(node.error) }) : null,
    block("Inputs", node.inputs), block("Outputs", node.outputs));
  item.dataset.id = id;
  return item;
}

// Runs the workflow and shows the trace; answers the run (with its nodes) for the graph's colours.
export async function runWorkflow(workflowId, target, inputs) {
  $("workflow-run-problems").replaceChildren();
  const body = target === "draft" ? { inputs, draft: true } : { inputs, version: Number(target) };
  const answer = await call(`/api/workflows/${encodeURIComponent(workflowId)}/run`, { method: "POST", body });
  if (answer.problems) {
    showProblems($("workflow-run-problems"), answer.problems);
    return null;
  }
  const run = await call(`/api/workflow-runs/${encodeURIComponent(answer.run_id)}`);
  $("workflow-run-status").textContent = `Run ${run.status}` + (run.error ? `: ${run.error}` : "");
  $("workflow-run-outputs").replaceChildren(block("Outputs", run.outputs));
  $("workflow-run-outputs").firstChild.open = true;
  $("workflow-trace").replaceChildren(...(run.nodes || []).map(nodeRow));
  return run;
}
