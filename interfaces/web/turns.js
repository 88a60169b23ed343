// A streamed turn, and how it survives a reload or a switch to another conversation.
// While a turn streams, {task_id, conversation_id, message_id, last event id, text so far} is kept
// in sessionStorage, written with each frame: whoever picks the turn up again asks the server for
// the events after that id only, so no text is shown twice and none is lost.
import { request, json } from "/web/api.js";
import { readEvents } from "/web/sse.js";

const STORE = "memagent.turns";
const TERMINAL = new Set(["agent_end", "stop", "error", "timeout"]);

function saved() {
  try {
    return JSON.parse(sessionStorage.getItem(STORE)) || {};
  } catch {
    return {};
  }
}

export function savedTurn(conversationId) {
  return saved()[conversationId] || null;
}

export function savedTurns() {
  return Object.values(saved());
}

function keep(turn) {
  const all = saved();
  all[turn.conversation_id] = turn;
  sessionStorage.setItem(STORE, JSON.stringify(all));
}

export function forget(conversationId) {
  const all = saved();
  delete all[conversationId];
  sessionStorage.setItem(STORE, JSON.stringify(all));
}

// Reads one turn's stream to its end (or until `signal` aborts it: the turn goes on on the
// server, and its saved state lets a later `resume` continue where this left off).
// `view` gets onStart(turn), onDelta(text), onEnd(event, data).
async function follow(response, turn, view, signal) {
  if (!response.ok) {
    const body = await response.json().catch(() => null);
    throw new Error(body?.message || `HTTP ${response.status}`);
  }
  try {
    for await (const frame of readEvents(response)) {
      const data = frame.data;
      if (frame.event === "done") return gone(turn, view);  // ended with no terminal event: odd
      if (!turn.task_id && data.task_id) {
        Object.assign(turn, { task_id: data.task_id, conversation_id: data.conversation_id,
                              message_id: data.message_id });
        view.onStart(turn);
      }
      if (frame.id) turn.last_id = frame.id;
      if (frame.event === "agent_message" && data.answer) {
        turn.text += data.answer;
        view.onDelta(turn.text);
      }
      if (TERMINAL.has(frame.event)) {
        forget(turn.conversation_id);
        view.onEnd(frame.event, data);
        return "ended";
      }
      if (turn.conversation_id) keep(turn);
    }
  } catch (failure) {
    if (signal?.aborted) return "left";  // on purpose: the saved state stays for the resume
    if (!turn.task_id) throw failure;
  }
  return "cut";  // the connection ended before the turn did
}

// A stream cut short (a proxy, a network change) is picked up again from its last event.
async function followToTheEnd(response, turn, view, signal) {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    if (await follow(response, turn, view, signal) !== "cut") return;
    response = await events(turn, signal);
    if (response.status === 404) return gone(turn, view);
  }
  throw new Error("the answer's stream keeps breaking off: reload the page to see it");
}

function events(turn, signal) {
  return request(`/api/tasks/${encodeURIComponent(turn.task_id)}/events`, {
    signal, headers: { "Last-Event-ID": turn.last_id || "0" },
  });
}

// No longer in the event log (it outlived its retention): the record has the answer.
function gone(turn, view) {
  forget(turn.conversation_id);
  view.onEnd("gone", {});
}

// Opens a turn with a POST that answers its stream, and follows it.
async function open(path, body, turn, view, signal) {
  const response = await request(path, {
    method: "POST", signal, headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ ...body, stream: true }),
  });
  await followToTheEnd(response, turn, view, signal);
}

function newTurn(conversationId, query, imageUrls = []) {
  return { task_id: null, conversation_id: conversationId || null, message_id: null, last_id: "0", text: "",
           query, image_urls: imageUrls };
}

export function send(body, view, signal) {
  return open("/api/chat", body, newTurn(body.conversation_id, body.query, body.image_urls), view, signal);
}

// The latest answer given again: a new message, the sibling of `message`.
export function regenerate(message, view, signal) {
  const turn = newTurn(message.conversation_id, message.query, message.image_urls);
  return open(`/api/messages/${encodeURIComponent(message.id)}/regenerate`, {}, turn, view, signal);
}

export async function resume(turn, view, signal) {
  view.onStart(turn);
  view.onDelta(turn.text);
  const response = await events(turn, signal);
  if (response.status === 404) return gone(turn, view);
  await followToTheEnd(response, turn, view, signal);
}

export function stop(taskId) {
  return json(`/api/tasks/${encodeURIComponent(taskId)}/stop`, { method: "POST" });
}
