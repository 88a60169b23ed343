// The draft editor: shows an agent's draft, saves it over the revision it read, and on a 409 shows
// what the newer draft changed and lets the person choose; typed changes are never dropped silently.
// Unsaved edits are kept in sessionStorage per agent, so switching agents or reloading keeps them.
import { ApiError, json } from "/web/api.js";
import { buildFields, readConfig, writeConfig } from "/web/builder_fields.js";
import { el } from "/web/dom.js";
import { $, flatten } from "/web/builder_dom.js";

const EDITS = "memagent.builder.edits";
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const draftPath = (id) => `/api/agents/${encodeURIComponent(id)}/draft`;

function edits() {
  try {
    return JSON.parse(sessionStorage.getItem(EDITS)) || {};
  } catch {
    return {};
  }
}

function keepEdits(agentId, value) {
  const all = edits();
  if (value) all[agentId] = value; else delete all[agentId];
  sessionStorage.setItem(EDITS, JSON.stringify(all));
}

export class DraftEditor {
  constructor() {
    const { controls, groups } = buildFields($("fields"));
    this.controls = controls;
    this.groups = groups;
    this.agentId = null;
    this.base = null;  // {revision, config}: the draft as last read or saved
    this.newer = null;  // the draft another save made, while a conflict is shown
    $("editor").addEventListener("input", () => this.changed());
    $("editor").addEventListener("change", () => this.changed());
  }

  setOptions(path, options) {
    this.controls[path].setOptions(options);
  }

  // False when another agent was opened meanwhile: this one's draft must not fill the form.
  async open(agentId, readOnly) {
    this.agentId = null;
    this.opening = agentId;
    const draft = await json(draftPath(agentId));
    if (this.opening !== agentId) return false;
    this.agentId = agentId;
    const kept = edits()[agentId];
    this.show(kept ? { revision: kept.revision, config: kept.base } : draft, kept?.config);
    for (const group of this.groups) group.disabled = readOnly;
    $("save").disabled = readOnly;
    $("discard").disabled = readOnly;
    return true;
  }

  // `draft` is what the server holds (or held when the edits began); `config` what the controls show.
  show(draft, config = draft.config) {
    this.base = { revision: draft.revision, config: draft.config };
    this.hideConflict();
    this.write(config);
    this.changed();
  }

  // The pins' diffs are against the saved draft's pins: what saving would change.
  write(config) {
    this.controls.workflows.setSaved(this.base.config.workflows);
    writeConfig(this.controls, config);
  }

  current() {
    return readConfig(this.controls, this.base.config);
  }

  dirty() {
    return this.base !== null && !same(this.current(), this.base.config);
  }

  changed() {
    if (!this.agentId) return;
    const dirty = this.dirty();
    const kept = { revision: this.base.revision, base: this.base.config, config: this.current() };
    keepEdits(this.agentId, dirty ? kept : null);
    $("save-state").textContent = dirty ? "Unsaved changes" : `Saved · revision ${this.base.revision}`;
    $("discard").hidden = !dirty;
  }

  discard() {
    this.show(this.base);
  }

  // Saves what the controls show; true once saved, false when a conflict is shown instead.
  async save() {
    if (!$("editor").reportValidity()) return false;
    const agentId = this.agentId;
    const config = this.current();
    $("save-state").textContent = "Saving…";
    try {
      const saved = await json(draftPath(agentId), { method: "PUT", body: { revision: this.base.revision, config } });
      if (agentId === this.agentId) this.show(saved);
      return true;
    } catch (failure) {
      this.changed();
      if (!(failure instanceof ApiError && failure.code === "conflict")) throw failure;
      const latest = await json(draftPath(agentId));
      if (latest.revision === this.base.revision) throw failure;  // not a newer draft: archived, say
      this.showConflict(latest);
      return false;
    }
  }

  showConflict(latest) {
    this.newer = latest;
    const theirs = flatten(latest.config);
    const before = flatten(this.base.config);
    const changed = Object.keys(theirs).filter((path) => !same(theirs[path], before[path]));
    $("conflict-text").textContent =
      `This draft was saved elsewhere (now revision ${latest.revision}) after you opened revision ` +
      `${this.base.revision}. Your changes are not saved yet and are still in the form.` +
      (changed.length ? " The newer draft changed:" : "");
    $("conflict-fields").replaceChildren(...changed.map((path) => el("li", {}, el("code", { textContent: path }))));
    $("conflict").hidden = false;
    $("conflict").scrollIntoView({ block: "start" });
  }

  hideConflict() {
    this.newer = null;
    $("conflict").hidden = true;
  }

  takeTheirs() {
    this.show(this.newer);
  }

  // Saves the form over the newer revision: chosen by the person, who has seen what it changed.
  async keepMine() {
    const config = this.current();
    this.base = { revision: this.newer.revision, config: this.newer.config };
    this.hideConflict();
    this.write(config);
    return this.save();
  }
}
