// The chat page: wires the agent picker, the conversation list, the messages and the composer.
import { followUps, parametersOf, questionButtons } from "/web/agent_parameters.js";
import { json } from "/web/api.js";
import { ConversationList } from "/web/conversations.js";
import { ImageAttachments } from "/web/images.js";
import { MemoryPanel } from "/web/memory_panel.js";
import { MessageView, turnsOf } from "/web/messages.js";
import { forget, regenerate, resume, savedTurn, send, stop } from "/web/turns.js";

const OPEN = "memagent.open";  // the conversation on screen, reopened after a reload
const PAGE = 100;  // messages per request: the API's largest page
const $ = (id) => document.getElementById(id);

const state = { agentId: null, conversationId: null, live: null };
const view = new MessageView($("messages"), {
  onRegenerate: (message) => guard(regenerateAnswer(message)),
  report: (promise) => guard(promise),
});
const memory = new MemoryPanel($("memory-panel"));
const images = new ImageAttachments($("images"), (promise) => guard(promise));
const list = new ConversationList($("conversations"), $("search"), {
  onOpen: (c) => guard(openConversation(c.id)),
  onDeleted: () => guard(newChat()),
  report: (promise) => guard(promise),
});

// Every failure ends up on the page, never as an unhandled rejection.
function guard(promise) {
  $("notice").textContent = "";
  return promise.catch((failure) => { $("notice").textContent = failure.message || String(failure); });
}

function setOpen(id) {
  state.conversationId = id;
  if (id) sessionStorage.setItem(OPEN, id); else sessionStorage.removeItem(OPEN);
  list.select(id);
  if (!$("memory-panel").hidden) guard(memory.show(id));
}

function toggleMemory() {
  const panel = $("memory-panel");
  panel.hidden = !panel.hidden;
  $("memory-toggle").setAttribute("aria-expanded", String(!panel.hidden));
  if (!panel.hidden) return memory.show(state.conversationId);
  return Promise.resolve();
}

function setBusy(busy) {
  $("send").disabled = busy;
  $("stop").hidden = !busy;
}

async function setAgent(agentId) {
  state.agentId = agentId;
  images.enable((await parametersOf(agentId)).accepts_images && state.agentId === agentId);
}

// Leaving a streaming turn only stops reading it: the turn runs on, and its saved state resumes it.
function leaveLive() {
  state.live?.controller.abort();
  state.live = null;
  setBusy(false);
}

async function loadAgents() {
  const listed = await json("/api/agents").catch((failure) => {
    // An agent key acts for one end user of one agent, through the API: this page is the account's.
    if (failure.status === 403) throw new Error("This page needs an account key: an agent key is for an app's API.");
    throw failure;
  });
  const agents = listed.data.filter((a) => a.status === "active" && a.active_version);
  $("agent").replaceChildren(...agents.map((a) => new Option(a.name, a.id)));
  await setAgent(agents[0]?.id ?? null);
}

async function showIntro() {
  $("intro").hidden = true;
  if (!state.agentId) return;
  const agentId = state.agentId;
  const params = await parametersOf(agentId);
  if (state.conversationId || agentId !== state.agentId) return;  // the user moved on meanwhile
  $("opening").textContent = params.opening_statement || "";
  $("suggestions").replaceChildren(...questionButtons(params.suggested_questions, (q) => guard(sendMessage(q))));
  $("intro").hidden = !params.opening_statement && !params.suggested_questions.length;
}

async function newChat() {
  leaveLive();
  setOpen(null);
  view.clear();
  await showIntro();
  $("message").focus();
}

async function messagePage(id, offset) {
  return json(`/api/conversations/${encodeURIComponent(id)}/messages?offset=${offset}&limit=${PAGE}`);
}

// Every message, oldest first: the pages the conversation's count says it has, all at once, then
// any that came since.
async function allMessages(id, count) {
  const offsets = Array.from({ length: Math.max(1, Math.ceil(count / PAGE)) }, (_, i) => i * PAGE);
  const pages = await Promise.all(offsets.map((offset) => messagePage(id, offset)));
  const messages = pages.flatMap((page) => page.data);
  for (let page = pages.at(-1); page.has_more && state.conversationId === id;) {
    page = await messagePage(id, messages.length);
    messages.push(...page.data);
  }
  return messages;
}

// The turn to follow live, if the latest message still runs: the saved one (from where this tab
// left it), or one started elsewhere, followed from its start.
function liveTurn(id, latest) {
  const turn = savedTurn(id);
  if (latest?.status !== "running") {
    if (turn) forget(id);
    return null;
  }
  if (turn?.task_id === latest.task_id) return turn;
  return { task_id: latest.task_id, conversation_id: id, message_id: latest.id, last_id: "0", text: "",
           parts: [], query: latest.query, image_urls: latest.image_urls };
}

async function openConversation(id) {
  leaveLive();
  setOpen(id);
  $("intro").hidden = true;
  const conversation = list.shown.get(id) ?? await json(`/api/conversations/${encodeURIComponent(id)}`);
  if (state.conversationId !== id) return;
  if ([...$("agent").options].some((o) => o.value === conversation.agent_id)) {
    $("agent").value = conversation.agent_id;
    await setAgent(conversation.agent_id);
  }
  const messages = await allMessages(id, conversation.message_count);
  if (state.conversationId !== id) return;
  const turn = liveTurn(id, messages.at(-1));
  const turns = turnsOf(messages);
  if (turn) turns.pop();  // the running answer (and the ones it answers again) streams below
  view.clear();
  view.showTurns(turns);
  view.root.lastElementChild?.scrollIntoView({ block: "end" });
  const again = Boolean(messages.at(-1)?.parent_message_id);
  if (turn) runLive(turn, (v, signal) => resume(turn, v, signal), { again });
  else if (messages.at(-1)?.status === "normal") guard(showFollowUps(messages.at(-1).id));
}

async function showFollowUps(messageId) {
  const group = await followUps(state.agentId, messageId, (q) => guard(sendMessage(q)));
  const agent = $("messages").lastElementChild;
  if (group && !state.live && agent?.dataset.messageId === messageId) agent.append(group);
}

// Shows one turn as it streams; `run(view, signal)` is a send, a regenerate or a resume.
function runLive(turn, run, { again = false } = {}) {
  const controller = new AbortController();
  // Asked past them: earlier answers keep neither their follow-ups nor Regenerate (latest only).
  for (const old of $("messages").querySelectorAll(".follow-ups, .regenerate")) old.remove();
  const { live, end } = view.startTurn(turn.query, turn.image_urls);
  const current = { controller, taskId: null, messageId: null };
  state.live = current;
  setBusy(true);
  const turnView = {
    onStart(started) {
      Object.assign(current, { taskId: started.task_id, messageId: started.message_id });
      if (!state.conversationId) { setOpen(started.conversation_id); guard(list.refresh()); }
    },
    onDelta: (text) => live.set(text),
    onEnd(status, data) {
      const ended = { id: current.messageId, conversation_id: state.conversationId, query: turn.query,
                      image_urls: turn.image_urls, status, feedback: null,
                      error: status === "normal" ? null : data.observation || data.error || data.message };
      end(ended, state.live === current);
      if (state.live !== current) return;
      state.live = null;
      setBusy(false);
      $("message").focus();  // the Stop button it had is gone
      guard(list.refresh());  // a new title, a new last message
      if (!$("memory-panel").hidden) guard(memory.show(state.conversationId));  // what the turn taught
      // Its events expired, or it answered again: show the turn as recorded (with its siblings).
      if ((status === "gone" || again) && state.conversationId) guard(openConversation(state.conversationId));
      else if (status === "normal" && ended.id) guard(showFollowUps(ended.id));
    },
  };
  return guard(run(turnView, controller.signal).catch((failure) => {
    if (controller.signal.aborted) return;
    end({ status: "error", error: failure.message }, false);
    if (state.live === current) { state.live = null; setBusy(false); }
    throw failure;
  }));
}

async function sendMessage(text) {
  const query = text.trim();
  if (!query || state.live) return;
  $("intro").hidden = true;
  $("message").value = "";
  // A conversation keeps its agent: only a new one names it.
  const body = { query, image_urls: images.take() };
  if (state.conversationId) body.conversation_id = state.conversationId;
  else body.agent_id = state.agentId;
  await runLive({ query, image_urls: body.image_urls }, (v, signal) => send(body, v, signal));
}

async function regenerateAnswer(message) {
  if (state.live || $("messages").lastElementChild?.dataset.messageId !== message.id) return;
  view.dropLastTurn();
  await runLive(message, (v, signal) => regenerate(message, v, signal), { again: true });
}

async function stopLive() {
  if (state.live?.taskId) await stop(state.live.taskId);
}

function wire() {
  $("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    guard(sendMessage($("message").value));
  });
  $("message").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      guard(sendMessage($("message").value));
    }
  });
  // Esc stops the turn, unless it is for a field of its own (a rename, a correction, a search).
  document.addEventListener("keydown", (event) => {
    const field = event.target.closest?.("input, textarea, select");
    if (event.key !== "Escape" || !state.live || $("key-dialog").open || event.defaultPrevented) return;
    if (!field || field.id === "message") guard(stopLive());
  });
  $("stop").addEventListener("click", () => guard(stopLive()));
  $("new-chat").addEventListener("click", () => guard(newChat()));
  $("memory-toggle").addEventListener("click", () => guard(toggleMemory()));
  $("agent").addEventListener("change", () => {
    guard(setAgent($("agent").value));  // the id at once, the images switch when its parameters come
    guard(newChat());
  });
}

// The composer is enabled only once the page has settled: a message sent earlier would be cut off
// by the first conversation opening.
async function start() {
  wire();
  try {
    await Promise.all([loadAgents(), list.refresh()]);
    const open = sessionStorage.getItem(OPEN);
    if (open) await openConversation(open).catch(() => newChat());
    else await newChat();
  } finally {
    $("message").disabled = false;
    $("message").focus();
  }
}

guard(start());
