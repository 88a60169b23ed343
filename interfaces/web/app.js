// The chat page: wires the agent picker, the conversation list, the messages and the composer.
import { json } from "/web/api.js";
import { ConversationList } from "/web/conversations.js";
import { MessageView } from "/web/messages.js";
import { forget, resume, savedTurn, send, stop } from "/web/turns.js";

const OPEN = "memagent.open";  // the conversation on screen, reopened after a reload
const $ = (id) => document.getElementById(id);

const state = { agentId: null, conversationId: null, live: null };
const view = new MessageView($("messages"));
const list = new ConversationList($("conversations"), $("search"), {
  onOpen: (c) => guard(openConversation(c.id, c.agent_id)),
  onDeleted: () => guard(newChat()),
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
}

function setBusy(busy) {
  $("send").disabled = busy;
  $("stop").hidden = !busy;
}

// Leaving a streaming turn only stops reading it: the turn runs on, and its saved state resumes it.
function leaveLive() {
  state.live?.controller.abort();
  state.live = null;
  setBusy(false);
}

async function loadAgents() {
  const agents = (await json("/api/agents")).data.filter((a) => a.status === "active" && a.active_version);
  $("agent").replaceChildren(...agents.map((a) => new Option(a.name, a.id)));
  state.agentId = agents[0]?.id ?? null;
}

async function showIntro() {
  $("intro").hidden = true;
  if (!state.agentId) return;
  const agentId = state.agentId;
  const params = await json(`/api/agents/${encodeURIComponent(agentId)}/parameters`);
  if (state.conversationId || agentId !== state.agentId) return;  // the user moved on meanwhile
  $("opening").textContent = params.opening_statement || "";
  $("suggestions").replaceChildren(...params.suggested_questions.map((question) => {
    const button = Object.assign(document.createElement("button"), { type: "button", textContent: question });
    button.addEventListener("click", () => guard(sendMessage(question)));
    return button;
  }));
  $("intro").hidden = !params.opening_statement && !params.suggested_questions.length;
}

async function newChat() {
  leaveLive();
  setOpen(null);
  view.clear();
  await showIntro();
  $("message").focus();
}

async function openConversation(id, agentId) {
  leaveLive();
  setOpen(id);
  $("intro").hidden = true;
  agentId ??= (await json(`/api/conversations/${encodeURIComponent(id)}`)).agent_id;
  if (state.conversationId !== id) return;
  if ([...$("agent").options].some((o) => o.value === agentId)) {
    $("agent").value = agentId;
    state.agentId = agentId;
  }
  const page = await json(`/api/conversations/${encodeURIComponent(id)}/messages?limit=100`);
  if (state.conversationId !== id) return;
  let turn = savedTurn(id);
  view.clear();
  for (const message of page.data) {
    const pending = turn && message.task_id === turn.task_id;
    if (pending && message.status !== "running") { forget(id); turn = null; }
    if (message.status === "running" && !turn) {
      // Running, but started elsewhere (or before its first frame came): follow it from the start.
      turn = { task_id: message.task_id, conversation_id: id, message_id: message.id, last_id: "0",
               text: "", query: message.query };
    }
    if (!(turn && message.task_id === turn.task_id)) view.showRecord(message);
  }
  if (turn) runLive(turn.query, (v, signal) => resume(turn, v, signal));
}

const STATUS = { agent_end: "normal", stop: "stop", error: "error", timeout: "timeout", gone: "gone" };

// Shows one turn as it streams; `run(view, signal)` is a send or a resume.
function runLive(query, run) {
  const controller = new AbortController();
  const { live, end } = view.startTurn(query);
  const current = { controller, taskId: null };
  state.live = current;
  setBusy(true);
  const turnView = {
    onStart(turn) {
      current.taskId = turn.task_id;
      if (!state.conversationId) { setOpen(turn.conversation_id); guard(list.refresh()); }
    },
    onDelta: (text) => live.set(text),
    onEnd(event, data) {
      end(STATUS[event], event === "agent_end" ? null : data.observation || data.error);
      if (state.live !== current) return;
      state.live = null;
      setBusy(false);
      guard(list.refresh());  // a new title, a new last message
      // Its events expired: show the turn as recorded instead of the part seen here.
      if (event === "gone" && state.conversationId) guard(openConversation(state.conversationId));
    },
  };
  return guard(run(turnView, controller.signal).catch((failure) => {
    if (controller.signal.aborted) return;
    end("error", failure.message);
    if (state.live === current) { state.live = null; setBusy(false); }
    throw failure;
  }));
}

async function sendMessage(text) {
  const query = text.trim();
  if (!query || state.live) return;
  $("intro").hidden = true;
  $("message").value = "";
  const body = { query, agent_id: state.agentId };
  if (state.conversationId) body.conversation_id = state.conversationId;
  await runLive(query, (v, signal) => send(body, v, signal));
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
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && state.live && !$("key-dialog").open) guard(stopLive());
  });
  $("stop").addEventListener("click", () => guard(stopLive()));
  $("new-chat").addEventListener("click", () => guard(newChat()));
  $("agent").addEventListener("change", () => { state.agentId = $("agent").value; guard(newChat()); });
}

// The composer is enabled only once the page has settled: a message sent earlier would be cut off
// by the first conversation opening.
async function start() {
  wire();
  try {
    await loadAgents();
    await list.refresh();
    const open = sessionStorage.getItem(OPEN);
    if (open) await openConversation(open).catch(() => newChat());
    else await newChat();
  } finally {
    $("message").disabled = false;
    $("message").focus();
  }
}

guard(start());
