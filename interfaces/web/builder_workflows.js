// The builder's Workflows section: the account's workflows, one open at a time with its draft graph
// as JSON (saved over the revision it read; the API's problems listed by JSON path), publishing with
// a note, the versions, the drawn graph and the run panel. Failures go to the section's own notice.
import { ApiError } from "/web/api.js";
import { el } from "/web/dom.js";
import { $ } from "/web/builder_dom.js";
import { call, showProblems } from "/web/builder_workflows_api.js";
import { drawGraph } from "/web/builder_workflows_graph.js";
import { inputForm, readInputs, runWorkflow } from "/web/builder_workflows_run.js";

const base = (id) => `/api/workflows/${encodeURIComponent(id)}`;

export class WorkflowsSection {
  // `onRefused()`: the key may not build (403); the page shows its gate. `onPublished()`: a new
  // version exists, which an agent's draft may now pin.
  constructor(onRefused, onPublished) {
    this.onRefused = onRefused;
    this.onPublished = onPublished;
    this.workflow = null;  // as last read or saved: {id, name, revision, graph, …}
    this.versions = [];
    this.statuses = {};  // node id → status in the run shown
  }

  // Every action's failure ends on the page, never as an unhandled rejection.
  guard(promise) {
    $("workflow-notice").textContent = "";
    return promise.catch((failure) => {
      if (failure instanceof ApiError && failure.status === 403) return this.onRefused();
      $("workflow-notice").textContent = failure.message || String(failure);
      return undefined;
    });
  }

  wire() {
    const forms = {
      "new-workflow": () => this.create($("new-workflow-name").value.trim()),
      "workflow-editor": () => this.save(),
      "workflow-publish": () => this.publish($("workflow-publish-note").value.trim()),
      "workflow-run-form": () => this.run(),
    };
    for (const [id, action] of Object.entries(forms)) {
      $(id).addEventListener("submit", (event) => {
        event.preventDefault();
        this.guard(Promise.resolve().then(action));
      });
    }
    $("workflow-graph").addEventListener("input", () => this.edited());
    $("workflow-run-target").addEventListener("change", () => this.guard(this.showRunForm()));
  }

  async load() {
    const workflows = (await call("/api/workflows")).data;
    $("workflows").replaceChildren(...workflows.map((w) => this.item(w)));
    if (!workflows.length) $("workflows").append(el("li", { className: "meta", textContent: "No workflows yet." }));
  }

  item(workflow) {
    const open = el("button", { type: "button", className: "open" }, el("span", { textContent: workflow.name }),
      el("span", { className: "meta", textContent: workflow.archived ? "archived"
        : workflow.latest_version ? `v${workflow.latest_version}` : "not published" }));
    open.addEventListener("click", () => this.guard(this.open(workflow.id)));
    const item = el("li", { className: workflow.id === this.workflow?.id ? "current" : "" }, open);
    item.dataset.id = workflow.id;
    return item;
  }

  async create(name) {
    const made = await call("/api/workflows", { method: "POST", body: { name } });
    if (made.problems) {
      $("workflow-notice").textContent = made.problems.map((p) => `${p.path}: ${p.message}`).join("; ");
      return undefined;
    }
    $("new-workflow-name").value = "";
    await this.load();
    return this.open(made.id);
  }

  // Each await checks that this workflow is still the one asked for (as the agents' view does).
  async open(id) {
    this.opening = id;
    const [workflow, versions] = await Promise.all([call(base(id)), call(`${base(id)}/versions`)]);
    if (this.opening !== id) return;
    this.workflow = workflow;
    this.versions = versions.data;
    this.statuses = {};
    $("workflow-view").hidden = false;
    $("workflow-name").textContent = workflow.name;
    $("workflow-graph").value = JSON.stringify(workflow.graph, null, 2);
    $("workflow-problems").replaceChildren();
    for (const id of ["workflow-trace", "workflow-run-outputs", "workflow-run-problems"]) $(id).replaceChildren();
    $("workflow-run-status").textContent = "";
    this.showHead();
    this.showVersions();
    this.draw();
    await this.showRunForm();
    for (const li of $("workflows").children) li.classList.toggle("current", li.dataset.id === id);
  }

  showHead() {
    const w = this.workflow;
    const notes = [w.latest_version ? `latest v${w.latest_version}` : "not published", `draft revision ${w.revision}`];
    if (w.archived) notes.push("archived: read-only");
    $("workflow-meta").textContent = notes.join(" · ");
    $("workflow-description").textContent = w.description || "";
    for (const id of ["workflow-save", "workflow-publish-button"]) $(id).disabled = w.archived;
    $("workflow-save-state").textContent = `Saved · revision ${w.revision}`;
  }

  showVersions() {
    $("workflow-versions").replaceChildren(...this.versions.map((v) => el("li", { className: "version" },
      el("strong", { textContent: `v${v.version}` }),
      el("span", { className: "note", textContent: v.note || "(no note)" }),
      el("time", { className: "meta", dateTime: v.published_at, textContent: new Date(v.published_at).toLocaleString() }))));
    if (!this.versions.length) {
      $("workflow-versions").append(el("li", { className: "meta", textContent: "Not published yet." }));
    }
    const target = $("workflow-run-target");
    const picked = target.value;
    target.replaceChildren(new Option("the draft (as saved)", "draft"),
      ...this.versions.map((v) => new Option(`v${v.version}`, String(v.version))));
    if ([...target.options].some((o) => o.value === picked)) target.value = picked;
  }

  // The graph the editor holds, or null while its text is not JSON.
  typed() {
    try {
      return JSON.parse($("workflow-graph").value);
    } catch {
      return null;
    }
  }

  edited() {
    const graph = this.typed();
    $("workflow-save-state").textContent = graph ? "Unsaved changes" : "Unsaved changes: not JSON yet";
    if (graph) this.draw(graph);
  }

  draw(graph = this.typed() ?? this.workflow.graph) {
    $("workflow-drawing").replaceChildren(drawGraph(graph, this.statuses));
  }

  dirty() {
    return JSON.stringify(this.typed()) !== JSON.stringify(this.workflow.graph);
  }

  // True once saved; false when the text is not JSON or the API lists problems (shown by path).
  async save() {
    const graph = this.typed();
    if (!graph) {
      showProblems($("workflow-problems"), [{ path: "(graph)", message: "The draft is not valid JSON." }]);
      return false;
    }
    const w = this.workflow;
    const saved = await call(`${base(w.id)}/draft`, { method: "PUT", body: { revision: w.revision, graph } });
    if (saved.problems) {
      showProblems($("workflow-problems"), saved.problems);
      $("workflow-save-state").textContent = "Not saved: see the problems below";
      return false;
    }
    $("workflow-problems").replaceChildren();
    this.workflow = saved;
    this.showHead();
    await this.showRunForm();
    return true;
  }

  async publish(note) {
    if (this.dirty() && !(await this.save())) return;
    const made = await call(`${base(this.workflow.id)}/publish`, { method: "POST", body: { note } });
    if (made.problems) {
      showProblems($("workflow-problems"), made.problems);
      return;
    }
    $("workflow-publish-note").value = "";
    $("workflow-notice").textContent = `Published v${made.version}.`;
    await Promise.all([this.open(this.workflow.id), this.load(), this.onPublished()]);
  }

  // The form follows the start inputs of what would run: the saved draft, or the version picked.
  async showRunForm() {
    const target = $("workflow-run-target").value || "draft";
    const id = this.workflow.id;
    const graph = target === "draft" ? this.workflow.graph : (await call(`${base(id)}/versions/${target}`)).graph;
    if (this.workflow.id !== id) return;
    // What was typed stays, for the inputs the new form has too.
    const typed = new Map([...$("workflow-inputs").querySelectorAll("[data-name]")].map((f) => [f.dataset.name, f.value]));
    $("workflow-inputs").replaceChildren(...inputForm(graph));
    for (const field of $("workflow-inputs").querySelectorAll("[data-name]")) {
      if (typed.has(field.dataset.name)) field.value = typed.get(field.dataset.name);
    }
  }

  async run() {
    if (this.dirty()) $("workflow-notice").textContent = "Runs the saved draft: save to run your changes.";
    const run = await runWorkflow(this.workflow.id, $("workflow-run-target").value, readInputs($("workflow-inputs")));
    if (!run) return;
    this.statuses = Object.fromEntries((run.nodes || []).map((n) => [n.node_id ?? n.id, n.status]));
    this.draw();
  }
}
