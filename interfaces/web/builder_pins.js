// The draft's `workflows`: each workflow the agent offers as a tool, pinned to a published version.
// A pin moves only by hand (a version picked here, then the draft saved), and before it is saved the
// tool schema's diff between the saved pin and the chosen version shows what the model will see
// change. Names, descriptions and parameters are the account's text: shown as text, never as HTML.
import { json } from "/web/api.js";
import { button, el } from "/web/dom.js";
import { shown } from "/web/builder_dom.js";
import { toolDiff } from "/web/builder_tool_diff.js";

const schemas = new Map();  // "id/version" → the version's tool_schema: a version never changes

function parametersOf(id, version) {
  const key = `${id}/${version}`;
  if (!schemas.has(key)) {
    const read = json(`/api/workflows/${encodeURIComponent(id)}/versions/${version}`).then((v) => v.tool_schema);
    schemas.set(key, read.catch((failure) => { schemas.delete(key); throw failure; }));
  }
  return schemas.get(key);
}

// The tool as the agent's turn offers it (application/workflows/workflow_tool.py): named after the
// workflow, described by it (or by the same sentence the server uses without one), the version's
// start inputs as its parameters.
async function toolOf(workflow, version) {
  const description = workflow.description || `Runs the workflow ${workflow.name}.`;
  return { name: workflow.name, description, parameters: await parametersOf(workflow.id, version) };
}

const versionsOf = (workflow) => Array.from({ length: workflow?.latest_version ?? 0 }, (_, i) => i + 1);
const cell = (value) => el("td", { textContent: value === undefined ? "—" : shown(value) });

function diffTable(name, rows, caption, [a, b]) {
  const table = el("table", { className: "diff tool-diff" }, el("caption", { textContent: caption }),
    el("thead", {}, el("tr", {}, ...["Change", "Field", a, b].map((text) => el("th", { scope: "col", textContent: text })))),
    el("tbody", {}, ...rows.map((row) => el("tr", { className: row.change },
      el("td", { textContent: row.change }), el("th", { scope: "row" }, el("code", { textContent: row.field })),
      cell(row.before), cell(row.after)))));
  table.setAttribute("aria-label", `Tool schema changes of ${name}`);
  return table;
}

// The diff of one pin against the saved one; null when the pin is as saved.
async function pinDiff(workflow, pin, saved) {
  if (saved?.version === pin.version) return null;
  const [before, after] = await Promise.all([saved ? toolOf(workflow, saved.version) : null,
                                             toolOf(workflow, pin.version)]);
  const rows = toolDiff(before, after);
  const heads = [saved ? `v${saved.version}` : "(not pinned)", `v${pin.version}`];
  let caption = saved ? `Tool schema: v${saved.version} → v${pin.version}` : `Tool schema of v${pin.version} (new pin)`;
  if (!rows.length) caption = `v${saved.version} and v${pin.version} give the model the same tool.`;
  return diffTable(workflow.name, rows, caption, heads);
}

function pinState(pin, saved) {
  if (!saved) return `new pin, v${pin.version} (unsaved)`;
  if (saved.version === pin.version) return `pinned v${pin.version}`;
  return `pinned v${saved.version} · changing to v${pin.version} (unsaved)`;
}

// A control of builder_fields.js (element, read, write, setOptions) for the draft's `workflows`.
class PinsControl {
  constructor(spec) {
    this.workflows = [];  // the account's, from GET /api/workflows
    this.pins = [];  // what the form holds: [{id, version, return_direct}]
    this.saved = new Map();  // id → the pin in the saved draft
    this.list = el("ul", { className: "pins" });
    this.pick = el("select", { ariaLabel: "Workflow to pin" });
    this.pickVersion = el("select", { ariaLabel: "Version to pin" });
    this.add = button("Pin workflow", () => this.pinPicked());
    this.element = el("fieldset", { className: "choice-group", id: `f-${spec.path}` },
      el("legend", { textContent: spec.label }), this.list,
      el("div", { className: "pin-add" }, this.pick, this.pickVersion, this.add));
    this.pick.addEventListener("change", () => this.showVersions());
  }

  read() {
    return this.pins.map((p) => ({ ...p }));
  }

  write(value) {
    this.pins = (value ?? []).map((p) => ({ ...p }));
    this.render();
  }

  setOptions(workflows) {
    this.workflows = workflows;
    this.render();
  }

  setSaved(value) {
    this.saved = new Map((value ?? []).map((p) => [p.id, p]));
  }

  known(id) {
    return this.workflows.find((w) => w.id === id);
  }

  // The editor hears of a change made by a button as of one typed: by the event.
  edited() {
    this.element.dispatchEvent(new Event("change", { bubbles: true }));
  }

  // Only a published workflow that is not archived nor pinned yet can be pinned.
  render() {
    this.list.replaceChildren(...this.pins.map((pin) => this.row(pin)));
    const free = this.workflows.filter((w) => !w.archived && w.latest_version && !this.pins.some((p) => p.id === w.id));
    this.pick.replaceChildren(...free.map((w) => new Option(w.name, w.id)));
    if (!free.length) this.pick.append(new Option("(no published workflow to pin)", ""));
    this.showVersions();
    this.add.disabled = !free.length;
  }

  showVersions() {
    const numbers = versionsOf(this.known(this.pick.value)).reverse();
    this.pickVersion.replaceChildren(...numbers.map((n, i) => new Option(i ? `v${n}` : `v${n} (latest)`, String(n))));
  }

  pinPicked() {
    if (!this.pick.value) return;
    this.pins = [...this.pins, { id: this.pick.value, version: Number(this.pickVersion.value), return_direct: false }];
    this.render();
    this.edited();
  }

  row(pin) {
    const workflow = this.known(pin.id);
    const name = workflow?.name ?? pin.id;
    const state = el("span", { className: "meta", textContent: pinState(pin, this.saved.get(pin.id)) });
    const numbers = versionsOf(workflow);
    if (!numbers.includes(pin.version)) numbers.push(pin.version);
    const version = el("select", { ariaLabel: `Version of ${name}` }, ...numbers.map((n) => new Option(`v${n}`, String(n))));
    version.value = String(pin.version);
    const unpin = () => { this.pins = this.pins.filter((p) => p.id !== pin.id); this.render(); this.edited(); };
    const item = el("li", { className: "pin" }, el("div", { className: "pin-head" }, el("code", { textContent: name }),
      state, version, button("Unpin", unpin, { ariaLabel: `Unpin ${name}` })), el("div", { className: "pin-diff" }));
    item.dataset.id = pin.id;
    version.addEventListener("change", () => {
      const moved = { ...pin, version: Number(version.value) };
      this.pins = this.pins.map((p) => (p.id === pin.id ? moved : p));
      state.textContent = pinState(moved, this.saved.get(pin.id));
      if (workflow) this.showDiff(item, workflow, moved);
    });
    if (workflow) this.showDiff(item, workflow, pin);
    else item.append(el("p", { className: "meta", textContent: "Not one of your workflows." }));
    return item;
  }

  // Diffs arrive out of order when the version is changed quickly: only the last one asked shows.
  async showDiff(row, workflow, pin) {
    const key = `${pin.id}/${pin.version}`;
    row.dataset.showing = key;
    let shownDiff;
    try {
      shownDiff = await pinDiff(workflow, pin, this.saved.get(pin.id));
    } catch (failure) {
      shownDiff = el("p", { className: "meta", textContent: `The tool schema cannot be read: ${failure.message}` });
    }
    if (row.dataset.showing === key) row.querySelector(".pin-diff").replaceChildren(...(shownDiff ? [shownDiff] : []));
  }
}

export const pinsControl = (spec) => new PinsControl(spec);
