// Publishing and the versions: the list (newest first), a diff between any two, restoring one into
// the draft and activating one (a rollback without a new version). Notes are text, never HTML.
import { json } from "/web/api.js";
import { button, el } from "/web/dom.js";
import { $, shown } from "/web/builder_dom.js";

const base = (id) => `/api/agents/${encodeURIComponent(id)}`;

export class Versions {
  // `editor`: the DraftEditor; `onAgent(agent)`: the agent changed (published, activated).
  constructor(editor, onAgent) {
    this.editor = editor;
    this.onAgent = onAgent;
    this.agent = null;
    this.readOnly = false;
  }

  async show(agent, readOnly) {
    this.agent = agent;
    this.readOnly = readOnly;
    $("diff").hidden = true;
    const versions = (await json(`${base(agent.id)}/versions`)).data;
    if (this.agent !== agent) return;
    $("versions").replaceChildren(...versions.map((v) => this.row(v)));
    if (!versions.length) $("versions").append(el("li", { className: "meta", textContent: "Not published yet." }));
    for (const [id, pick] of [["compare-a", 1], ["compare-b", 0]]) {
      $(id).replaceChildren(...versions.map((v) => new Option(`v${v.version}`, v.version)));
      if (versions.length) $(id).value = versions[Math.min(pick, versions.length - 1)].version;
    }
    $("compare").hidden = versions.length < 2;
    $("publish").querySelector("button").disabled = readOnly;
  }

  row(version) {
    const active = version.version === this.agent.active_version;
    const label = `v${version.version}`;
    const actions = [
      button("Restore", () => this.run(this.restore(version.version)),
             { ariaLabel: `Restore ${label} into the draft`, disabled: this.readOnly }),
      button("Activate", () => this.run(this.activate(version.version)),
             { ariaLabel: `Activate ${label}`, disabled: this.readOnly || active }),
    ];
    return el("li", { className: active ? "version active" : "version" },
      el("strong", { textContent: label }),
      active ? el("span", { className: "badge", textContent: "active" }) : null,
      el("span", { className: "note", textContent: version.note || "(no note)" }),
      el("time", { className: "meta", dateTime: version.created_at,
                   textContent: new Date(version.created_at).toLocaleString() }),
      el("span", { className: "actions" }, ...actions));
  }

  // Failures of a row's buttons go where every other failure goes: the page's notice.
  run(promise) {
    promise.catch((failure) => { $("notice").textContent = failure.message || String(failure); });
  }

  // Publishes what the form shows: unsaved changes are saved first (a conflict stops it).
  async publish(note) {
    if (this.editor.dirty() && !(await this.editor.save())) return;
    const made = await json(`${base(this.agent.id)}/publish`, { method: "POST", body: { note } });
    $("publish-note").value = "";
    $("notice").textContent = `Published v${made.version}.`;
    await this.onAgent();
  }

  async compare(a, b) {
    const changes = (await json(`${base(this.agent.id)}/versions/${a}/diff/${b}`)).data;
    $("diff-title").textContent = changes.length ? `v${a} → v${b}` : `v${a} and v${b} are the same.`;
    $("diff-a").textContent = `v${a}`;
    $("diff-b").textContent = `v${b}`;
    $("diff-rows").replaceChildren(...changes.map((c) => el("tr", {},
      el("th", { scope: "row" }, el("code", { textContent: c.field })),
      el("td", { textContent: shown(c.a) }), el("td", { textContent: shown(c.b) }))));
    $("diff").hidden = false;
  }

  // Restoring replaces the draft: unsaved changes must be saved or discarded first, not lost.
  async restore(version) {
    if (this.editor.dirty()) {
      $("notice").textContent = "Save or discard your changes to the draft before restoring a version.";
      return;
    }
    const draft = await json(`${base(this.agent.id)}/versions/${version}/restore`, { method: "POST" });
    this.editor.show(draft);
    $("notice").textContent = `v${version} is now in the draft (revision ${draft.revision}).`;
    await this.onAgent();  // the header's draft revision
  }

  async activate(version) {
    await json(`${base(this.agent.id)}/versions/${version}/activate`, { method: "POST" });
    $("notice").textContent = `v${version} is now the active version.`;
    await this.onAgent();
  }
}
