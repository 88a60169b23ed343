// The agent builder: the account's agents on the left; the open agent's draft, versions, debug chat
// and stats on the right. Needs an account key (or none, in single-user mode): an agent key is
// refused by the agents API (403), and the page says so instead of breaking.
import { ApiError, forgetKey, json } from "/web/api.js";
import { datasetGroups, toolGroups } from "/web/builder_catalog.js";
import { DebugChat } from "/web/builder_debug.js";
import { el } from "/web/dom.js";
import { $ } from "/web/builder_dom.js";
import { DraftEditor } from "/web/builder_editor.js";
import { statsCharts } from "/web/builder_stats.js";
import { Versions } from "/web/builder_versions.js";
import { WorkflowsSection } from "/web/builder_workflows.js";

const OPEN = "memagent.builder.open";  // the agent on screen, reopened after a reload

const state = { agents: [], agent: null };
const editor = new DraftEditor();
const debug = new DebugChat((promise) => guard(promise));
const versions = new Versions(editor, () => refreshAgent());
const workflows = new WorkflowsSection(() => showGate(), () => guard(loadWorkflowChoices()));

// Every failure ends up on the page, never as an unhandled rejection; a refused key opens the gate.
function guard(promise) {
  $("notice").textContent = "";
  return promise.catch((failure) => {
    if (failure instanceof ApiError && failure.status === 403) return showGate();
    $("notice").textContent = failure.message || String(failure);
    return undefined;
  });
}

function showGate() {
  $("gate-text").textContent = "This key is an agent key: it is for one agent's app, through the API, and " +
    "cannot build agents. The builder needs an account key.";
  $("gate").hidden = false;
  for (const id of ["agent-view", "empty", "workflows-section"]) $(id).hidden = true;
  $("agents").replaceChildren();
  $("new-agent").hidden = true;
}

async function loadCatalog() {
  const models = (await json("/api/models")).data;
  editor.setOptions("model", models.map((m) => [m.name, m.name === m.model ? m.name : `${m.name} (${m.model})`]));
}

// What a draft may refer to changes while the page is open (a dataset made, an MCP server up):
// read again each time an agent is opened.
async function loadPickLists() {
  const [tools, datasets] = await Promise.all([toolGroups(), datasetGroups(), loadWorkflowChoices()]);
  editor.setOptions("tools", tools);
  editor.setOptions("datasets", datasets);
}

// The workflows a draft may pin; read again after a publish in the Workflows section.
async function loadWorkflowChoices() {
  editor.setOptions("workflows", (await json("/api/workflows")).data);
}

function describe(agent) {
  if (agent.status === "archived") return "archived";
  if (!agent.active_version) return "not published";
  return `v${agent.active_version} active of ${agent.latest_version}`;
}

function renderList() {
  const shown = state.agents.filter((a) => $("show-archived").checked || a.status !== "archived"
                                           || a.id === state.agent?.id);
  $("agents").replaceChildren(...shown.map((agent) => {
    const open = el("button", { type: "button", className: "open" }, el("span", { textContent: agent.name }),
                    el("span", { className: "meta", textContent: describe(agent) }));
    open.addEventListener("click", () => guard(openAgent(agent.id)));
    const item = el("li", { className: agent.id === state.agent?.id ? "current" : "" }, open);
    item.dataset.id = agent.id;
    if (agent.id === state.agent?.id) open.setAttribute("aria-current", "true");
    return item;
  }));
}

async function loadAgents() {
  state.agents = (await json("/api/agents")).data;
  renderList();
}

const readOnly = (agent) => agent.managed_by_settings || agent.status === "archived";

function showHead(agent) {
  $("agent-name").textContent = agent.name;
  const notes = [describe(agent), `draft revision ${agent.draft_revision}`];
  if (agent.managed_by_settings) notes.push("managed by the server's MEMAGENT_AGENT__* settings: read-only here");
  $("agent-meta").textContent = notes.join(" · ");
  $("archive").hidden = agent.status === "archived" || agent.managed_by_settings;
  $("unarchive").hidden = agent.status !== "archived";
}

async function showStats(id) {
  const charts = await statsCharts(id);
  if (state.agent?.id === id) $("stats").replaceChildren(...charts);
}

// Each await checks that this agent is still the one asked for: a slow answer for an agent left
// meanwhile must not fill the page of the next one.
async function openAgent(id) {
  state.opening = id;
  const agent = await json(`/api/agents/${encodeURIComponent(id)}`);
  if (state.opening !== id) return;
  state.agent = agent;
  sessionStorage.setItem(OPEN, id);
  renderList();
  showHead(agent);
  $("empty").hidden = true;
  $("agent-view").hidden = false;
  debug.setAgent(id);
  $("debug-note").textContent = agent.status === "archived" ? "An archived agent takes no turns." : "";
  const [opened] = await Promise.all([editor.open(id, readOnly(agent)), loadPickLists()]);
  if (!opened || state.opening !== id) return;
  await Promise.all([versions.show(agent, readOnly(agent)), showStats(id)]);
}

// After a publish, an activation, an archive: the agent's figures and the list change.
async function refreshAgent() {
  const agent = await json(`/api/agents/${encodeURIComponent(state.agent.id)}`);
  state.agent = agent;
  showHead(agent);
  await Promise.all([loadAgents(), versions.show(agent, readOnly(agent))]);
}

async function createAgent(name) {
  const made = await json("/api/agents", { method: "POST", body: { name } });
  $("new-agent-name").value = "";
  await loadAgents();
  await openAgent(made.id);
}

async function setArchived(archived) {
  const id = state.agent.id;
  if (archived) await json(`/api/agents/${encodeURIComponent(id)}`, { method: "DELETE" });
  else await json(`/api/agents/${encodeURIComponent(id)}`, { method: "PATCH", body: { status: "active" } });
  await loadAgents();
  await openAgent(id);
  $("notice").textContent = archived ? "Archived: it takes no turns; its conversations stay readable." : "Unarchived.";
}

function submit(id, action) {
  $(id).addEventListener("submit", (event) => {
    event.preventDefault();
    guard(action());
  });
}

function wire() {
  submit("new-agent", () => createAgent($("new-agent-name").value.trim()));
  submit("editor", () => editor.save().then((saved) => { if (saved) return refreshAgent(); return undefined; }));
  submit("publish", () => versions.publish($("publish-note").value.trim()));
  submit("compare", () => versions.compare($("compare-a").value, $("compare-b").value));
  submit("debug-form", () => debug.send($("debug-message").value));
  $("debug-message").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      guard(debug.send($("debug-message").value));
    }
  });
  const clicks = {
    "discard": () => editor.discard(), "take-theirs": () => editor.takeTheirs(),
    "keep-mine": () => editor.keepMine().then((saved) => (saved ? refreshAgent() : undefined)),
    "archive": () => setArchived(true), "unarchive": () => setArchived(false),
    "debug-restart": () => debug.restart(), "debug-stop": () => debug.stop(),
    "stats-refresh": () => showStats(state.agent.id), "other-key": () => otherKey(),
  };
  for (const [id, action] of Object.entries(clicks)) {
    $(id).addEventListener("click", () => guard(Promise.resolve().then(action)));
  }
  $("show-archived").addEventListener("change", renderList);
  workflows.wire();
}

// Forgets the refused key: the next request is a 401, and api.js asks for a key.
function otherKey() {
  forgetKey();
  $("gate").hidden = true;
  $("new-agent").hidden = false;
  $("empty").hidden = false;
  $("workflows-section").hidden = false;
  return start();
}

async function start() {
  await loadCatalog();
  await Promise.all([loadAgents(), workflows.guard(workflows.load())]);
  const open = sessionStorage.getItem(OPEN);
  if (open && state.agents.some((a) => a.id === open)) await openAgent(open);
}

wire();
guard(start());
