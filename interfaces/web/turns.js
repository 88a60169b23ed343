// A streamed turn, and how it survives a reload or a switch to another conversation.
// While a turn streams, {task_id, conversation_id, message_id, last event id, text so far} is kept
// in sessionStorage, at most once a frame and always as a pair: whoever picks the turn up again asks
// the server for the events after that id only, so no text is shown twice and none is lost.
import { request, json } from "/web/api.js";
import { readEvents } from "/web/sse.js";

const STORE = "memagent.turns";
// A turn's ending event → the stored status of its message.
const ENDED = { agent_end: "normal", stop: "stop", error: "error", timeout: "timeout" };
const RETRIES = 3;  // cuts in a row, with no event between them, before giving up
const RETRY_DELAY_MS = 500;  // doubled after each cut in a row, so a struggling server is not pressed

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

function store(all) {
  sessionStorage.setItem(STORE, JSON.stringify(all));
}

// Writing the whole map per frame would cost time growing with the answer: once a frame is enough.
function keep(turn) {
  turn.keeping ||= requestAnimationFrame(() => {
    turn.keeping = 0;
    if (turn.ended) return;
    const { keeping, ended, ...state } = turn;
    store({ ...saved(), [turn.conversation_id]: state });
  });
}

export function forget(conversationId) {
  const all = saved();
  delete all[conversationId];
  store(all);
}

function end(turn, view, status, data) {
  turn.ended = true;
  forget(turn.conversation_id);
  view.onEnd(status, data);
  return "ended";
}

// Reads one turn's stream to its end (or until `signal` aborts it: the turn goes on on the
// server, and its saved state lets a later `resume` continue where this left off).
// `view` gets onStart(turn), onDelta(text), onEnd(status, data): the status is the message's
// ("normal", "stop", "error", "timeout"), or "gone" when the events expired.
async function follow(response, turn, view, signal) {
  if (!response.ok) {
    const body = await response.json().catch(() => null);
    throw new Error(body?.message || `HTTP ${response.status}`);
  }
  try {
    for await (const frame of readEvents(response)) {
      const data = frame.data;
      if (frame.event === "done") return end(turn, view, "gone", {});  // ended with no terminal event: odd
      // The stream failed (not the turn: its own events have ids): follow again.
      if (frame.event === "error" && !frame.id) return cut(turn, data.message);
      if (!turn.task_id && data.task_id) {
        Object.assign(turn, { task_id: data.task_id, conversation_id: data.conversation_id,
                              message_id: data.message_id });
        view.onStart(turn);
      }
      if (frame.id) Object.assign(turn, { last_id: frame.id, cuts: 0 });
      if (frame.event === "agent_message" && data.answer) shown(turn, view, add(turn.parts, data.id, data.answer));
      // A step's text went out as it came; its `agent_thought` (the same id) says it was the step's
      // reasoning, not the answer: it leaves the answer (the trace keeps it as the step's thought).
      if (frame.event === "agent_thought") shown(turn, view, turn.parts.filter(([id]) => id !== data.id));
      // The answer as stored: the output review's preset response when it replaced the text.
      if (frame.event === "agent_end" && data.answer) shown(turn, view, [[data.id, data.answer]]);
      if (Object.hasOwn(ENDED, frame.event)) return end(turn, view, ENDED[frame.event], data);
      if (turn.conversation_id) keep(turn);
    }
  } catch (failure) {
    if (signal?.aborted) return "left";  // on purpose: the saved state stays for the resume
    if (!turn.task_id) throw failure;
  }
  return cut(turn);  // the connection ended before the turn did
}

// The answer's text by step, [id, text] in order.
function add(parts, id, text) {
  const last = parts[parts.length - 1];
  return last?.[0] === id ? [...parts.slice(0, -1), [id, last[1] + text]] : [...parts, [id, text]];
}

function shown(turn, view, parts) {
  turn.parts = parts;
  turn.text = parts.map(([, text]) => text).join("\n\n");
  view.onDelta(turn.text);
}

function cut(turn, reason) {
  turn.cuts = (turn.cuts || 0) + 1;
  turn.reason = reason;
  return "cut";
}

// A stream cut short (a proxy, a network change) is picked up again from its last event.
async function followToTheEnd(response, turn, view, signal) {
  while (await follow(response, turn, view, signal) === "cut") {
    if (turn.cuts > RETRIES) {
      throw new Error(`the connection keeps breaking off (${turn.reason || "no answer"}): the turn goes on `
                      + "on the server; reload the page to follow it");
    }
    await new Promise((done) => setTimeout(done, RETRY_DELAY_MS * 2 ** (turn.cuts - 1)));
    response = await events(turn, signal);
    if (over(response)) return end(turn, view, "gone", {});
  }
}

// 404: the events expired; 204: the end was seen already, nothing more will come.
function over(response) {
  return response.status === 404 || response.status === 204;
}

function events(turn, signal) {
  return request(`/api/tasks/${encodeURIComponent(turn.task_id)}/events`, {
    signal, headers: { "Last-Event-ID": turn.last_id || "0" },
  });
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
           parts: [], query, image_urls: imageUrls };
}

export function send(body, view, signal) {
  return open("/api/chat", body, newTurn(body.conversation_id, body.query, body.image_urls), view, signal);
}

// A turn of an agent's saved draft, in its debug conversation.
export function debugChat(agentId, body, view, signal) {
  const path = `/api/agents/${encodeURIComponent(agentId)}/debug/chat`;
  return open(path, body, newTurn(body.conversation_id, body.query), view, signal);
}

// The latest answer given again: a new message, the sibling of `message`.
export function regenerate(message, view, signal) {
  const turn = newTurn(message.conversation_id, message.query, message.image_urls);
  return open(`/api/messages/${encodeURIComponent(message.id)}/regenerate`, {}, turn, view, signal);
}

export async function resume(turn, view, signal) {
  turn.parts ||= turn.text ? [["", turn.text]] : [];  // saved before answers were kept by step
  view.onStart(turn);
  view.onDelta(turn.text);
  const response = await events(turn, signal);
  if (over(response)) return end(turn, view, "gone", {});
  await followToTheEnd(response, turn, view, signal);
}

export function stop(taskId) {
  return json(`/api/tasks/${encodeURIComponent(taskId)}/stop`, { method: "POST" });
}
