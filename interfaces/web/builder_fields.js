// The draft's fields as form controls, grouped by topic, one control per config field (by its path,
// as the API's diff names it). Each control reads and writes its value in the API's own types.
import { el } from "/web/dom.js";
import { pinsControl } from "/web/builder_pins.js";

const LANGUAGES = [["en", "English"], ["zh", "Chinese"]];
const SCOPES = [["account", "Shared across this account's agents"], ["agent", "This agent only"]];

export const GROUPS = [
  ["Prompt", [
    { path: "preset_prompt", label: "Prompt", kind: "textarea", rows: 7 },
    { path: "language", label: "Language", kind: "select", options: LANGUAGES },
  ]],
  ["Model", [
    { path: "model", label: "Model profile", kind: "select", options: [] },
    { path: "model_params.temperature", label: "Temperature (empty: the model's default)", kind: "number",
      min: 0, max: 2, step: 0.05, nullable: true },
    { path: "model_params.max_tokens", label: "Max tokens (empty: no limit)", kind: "number",
      min: 1, max: 1_000_000, step: 1, nullable: true },
    { path: "model_params.top_p", label: "Top p (empty: the model's default)", kind: "number",
      min: 0, max: 1, step: 0.05, nullable: true },
  ]],
  ["Tools", [
    { path: "tools", label: "Tools", kind: "choices", code: true, empty: "No tools on this server.",
      missing: "Not available on this server",
      unknown: "no tool of this name now: it stays in the draft until unticked" },
    { path: "workflows", label: "Workflows, each pinned to a published version", kind: "pins" },
    { path: "max_tool_rounds", label: "Max tool rounds", kind: "number", min: 0, max: 20, step: 1 },
    { path: "stream_thoughts", label: "Stream thoughts", kind: "check" },
  ]],
  ["Knowledge", [
    { path: "datasets", label: "Datasets", kind: "choices", empty: "No datasets of yours yet (POST /api/datasets).",
      missing: "No longer there",
      unknown: "no dataset of yours has this id: it stays in the draft until unticked" },
    { path: "retrieval_top_k", label: "Passages retrieved", kind: "number", min: 1, max: 50, step: 1 },
    { path: "retrieval_min_score", label: "Minimum score", kind: "number", min: -1, max: 1, step: 0.05 },
  ]],
  ["Memory", [
    { path: "memory.dialog_round", label: "Turns of history", kind: "number", min: 0, max: 200, step: 1 },
    { path: "memory.history_max_tokens", label: "History token budget (0: none)", kind: "number",
      min: 0, max: 1_000_000, step: 1 },
    { path: "memory.summary", label: "Summary memory", kind: "check" },
    { path: "memory.entities", label: "Entity memory", kind: "check" },
    { path: "memory.user_memory", label: "User memory", kind: "check" },
    { path: "memory.user_scope", label: "User memory scope", kind: "select", options: SCOPES },
  ]],
  ["Review", [
    { path: "review.input_keywords", label: "Blocked words in questions (one a line)", kind: "lines" },
    { path: "review.output_keywords", label: "Blocked words in answers (one a line)", kind: "lines" },
    { path: "review.response", label: "Answer given instead", kind: "textarea", rows: 2 },
  ]],
  ["Limits", [
    { path: "limits.rpm", label: "Turns a minute (empty: the server's default, 0: no limit)", kind: "number",
      min: 0, max: 1_000_000_000_000, step: 1, nullable: true },
    { path: "limits.concurrent_turns", label: "Turns at once (empty: the server's default, 0: no limit)",
      kind: "number", min: 0, max: 1_000_000_000_000, step: 1, nullable: true },
    { path: "limits.tokens_per_day", label: "Tokens a day (empty: the server's default, 0: no limit)",
      kind: "number", min: 0, max: 1_000_000_000_000, step: 1, nullable: true },
  ]],
  ["Budget", [
    { path: "budget.daily_usd", label: "USD a day (empty: no limit)", kind: "number", min: 0, step: 0.01,
      nullable: true },
    { path: "budget.monthly_usd", label: "USD a month (empty: no limit)", kind: "number", min: 0, step: 0.01,
      nullable: true },
  ]],
  ["Opening", [
    { path: "opening_statement", label: "Opening statement", kind: "textarea", rows: 3 },
    { path: "suggested_questions", label: "Suggested questions (one a line)", kind: "lines" },
    { path: "suggested_questions_after_answer", label: "Suggest follow-up questions after answers", kind: "check" },
  ]],
];

const idOf = (path) => `f-${path.replace(/\./g, "-")}`;

function labelled(spec, control) {
  if (spec.kind === "check") return el("label", { className: "check" }, control, ` ${spec.label}`);
  return el("label", { className: "field", htmlFor: control.id }, spec.label, control);
}

function textControl(spec) {
  const input = spec.kind === "number"
    ? el("input", { type: "number", id: idOf(spec.path), min: spec.min, max: spec.max, step: spec.step,
                    required: !spec.nullable })
    : el("textarea", { id: idOf(spec.path), rows: spec.rows || 3 });
  const read = {
    number: () => (input.value === "" ? null : input.valueAsNumber),
    lines: () => input.value.split("\n").map((line) => line.trim()).filter(Boolean),
    textarea: () => input.value,
  }[spec.kind];
  const write = (value) => {
    if (spec.kind === "lines") input.value = value.join("\n");
    else input.value = value ?? "";
  };
  return { element: labelled(spec, input), read, write };
}

function checkControl(spec) {
  const input = el("input", { type: "checkbox", id: idOf(spec.path) });
  return { element: labelled(spec, input), read: () => input.checked, write: (v) => { input.checked = v; } };
}

// A select whose options may change (the model profiles come from the API): a value it does not
// list is kept, marked as unknown, so that showing a draft never changes it.
function selectControl(spec) {
  const select = el("select", { id: idOf(spec.path) });
  let options = spec.options;
  const render = (value) => {
    const known = options.some(([v]) => v === value);
    const all = known || value === undefined ? options : [...options, [value, `${value} (unknown)`]];
    select.replaceChildren(...all.map(([v, text]) => new Option(text, v)));
    if (value !== undefined) select.value = value;
  };
  render();
  return {
    element: labelled(spec, select), read: () => select.value, write: render,
    setOptions(next) { const value = select.value; options = next; render(value || undefined); },
  };
}

// Checkboxes in groups, from the API: [{title, items: [{value, aliases, label, about}]}]. An item is
// ticked when the draft holds its value or one of its aliases (another name of the same thing).
// A chosen value no group lists stays listed (and chosen), flagged, until it is unticked, so
// nothing in the draft is dropped without a hand doing it.
function choicesControl(spec) {
  const list = el("div", { className: "choices", id: idOf(spec.path) });
  let groups = [];
  let chosen = [];
  const names = (item) => [item.value, ...(item.aliases || [])];
  const box = (item) => {
    const checked = names(item).some((name) => chosen.includes(name));
    const input = el("input", { type: "checkbox", value: item.value, checked });
    input.addEventListener("change", () => {
      const others = chosen.filter((n) => !names(item).includes(n));
      chosen = input.checked ? [...others, item.value] : others;
    });
    const label = el(spec.code || item.missing ? "code" : "span", { textContent: item.label });
    return el("label", { className: item.missing ? "check missing" : "check" }, input, " ", label,
              el("span", { className: "meta", textContent: ` ${item.about}` }));
  };
  const render = () => {
    const listed = groups.flatMap((group) => group.items.flatMap(names));
    const missing = chosen.filter((n) => !listed.includes(n))
      .map((n) => ({ value: n, label: n, about: spec.unknown, missing: true }));
    const shown = missing.length ? [...groups, { title: spec.missing, items: missing }] : groups;
    list.replaceChildren(...shown.filter((group) => group.items.length).map((group) => el(
      "fieldset", { className: "choice-group" }, group.title ? el("legend", { textContent: group.title }) : null,
      ...group.items.map(box))));
    if (!listed.length && !missing.length) list.append(el("p", { className: "meta", textContent: spec.empty }));
  };
  const element = el("fieldset", { className: "choice-group" }, el("legend", { textContent: spec.label }), list);
  return {
    element, read: () => [...chosen],
    write(value) { chosen = [...value]; render(); },
    setOptions(next) { groups = next; render(); },
  };
}

const MAKERS = { textarea: textControl, lines: textControl, number: textControl, check: checkControl,
                 select: selectControl, choices: choicesControl, pins: pinsControl };

// Builds every group into `root`; returns {path: control} and the group fieldsets.
export function buildFields(root) {
  const controls = {};
  const groups = GROUPS.map(([legend, specs]) => {
    const fieldset = el("fieldset", { className: "group" }, el("legend", { textContent: legend }));
    for (const spec of specs) {
      controls[spec.path] = MAKERS[spec.kind](spec);
      fieldset.append(controls[spec.path].element);
    }
    return fieldset;
  });
  root.replaceChildren(...groups);
  return { controls, groups };
}

// The config the controls show, nested as the API takes it.
export function readConfig(controls, base) {
  const config = structuredClone(base);
  for (const [path, control] of Object.entries(controls)) {
    const keys = path.split(".");
    const last = keys.pop();
    keys.reduce((node, key) => node[key], config)[last] = control.read();
  }
  return config;
}

export function writeConfig(controls, config) {
  for (const [path, control] of Object.entries(controls)) {
    control.write(path.split(".").reduce((node, key) => node?.[key], config));
  }
}
