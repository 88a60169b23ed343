// The debug chat: turns of the agent's saved *draft* (POST /api/agents/{id}/debug/chat), streamed as
// SSE like the chat page's, in a debug conversation of its own that Restart leaves for a new one.
// The query is text; the answer markdown made inert by render.js, as on the chat page.
import { json, request } from "/web/api.js";
import { LiveAnswer } from "/web/render.js";
import { readEvents } from "/web/sse.js";
import { el } from "/web/dom.js";
import { $ } from "/web/builder_dom.js";

const TERMINAL = { agent_end: null, stop: "Stopped", error: "Failed", timeout: "Timed out" };

// The elements of one turn: its LiveAnswer, and end(label, error) to close it.
function startTurn(root, query) {
  const answer = el("div", { className: "answer" });
  const agent = el("li", { className: "message agent" }, answer);
  agent.setAttribute("aria-busy", "true");
  root.append(el("li", { className: "message user" }, el("p", { className: "query", textContent: query })), agent);
  agent.scrollIntoView({ block: "nearest" });
  const live = new LiveAnswer(answer);
  const end = (label, error) => {
    live.flush();
    agent.removeAttribute("aria-busy");
    if (label) agent.append(el("p", { className: "ending", textContent: error ? `${label}: ${error}` : label }));
  };
  return { live, end };
}

export class DebugChat {
  constructor() {
    this.agentId = null;
    this.conversationId = null;
    this.live = null;  // {controller, taskId} of the turn streaming now
  }

  setAgent(agentId) {
    this.restart();
    this.agentId = agentId;
  }

  // Leaving a turn only stops reading it; it ends on the server as any turn does.
  restart() {
    this.live?.controller.abort();
    this.setBusy(null);
    this.conversationId = null;
    $("debug-messages").replaceChildren();
  }

  setBusy(live) {
    this.live = live;
    $("debug-send").disabled = Boolean(live);
    $("debug-stop").hidden = !live;
  }

  async send(text) {
    const query = text.trim();
    if (!query || this.live || !this.agentId) return;
    $("debug-message").value = "";
    const live = { controller: new AbortController(), taskId: null };
    this.setBusy(live);
    const { live: answer, end } = startTurn($("debug-messages"), query);
    try {
      const ending = await this.follow(query, live, answer);
      end(ending.label, ending.error);
    } catch (failure) {
      if (live.controller.signal.aborted) return;
      end("Failed", failure.message);
    } finally {
      if (this.live === live) this.setBusy(null);
    }
  }

  async follow(query, live, answer) {
    const agentId = this.agentId;
    const body = { query, stream: true };
    if (this.conversationId) body.conversation_id = this.conversationId;
    const response = await request(`/api/agents/${encodeURIComponent(agentId)}/debug/chat`, {
      method: "POST", signal: live.controller.signal, headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) {
      const data = await response.json().catch(() => null);
      throw new Error(data?.message || `HTTP ${response.status}`);
    }
    for await (const frame of readEvents(response)) {
      const data = frame.data;
      if (data.task_id) live.taskId = data.task_id;
      if (data.conversation_id && this.agentId === agentId) this.conversationId = data.conversation_id;
      if (frame.event === "agent_message" && data.answer) answer.append(data.answer);
      if (Object.hasOwn(TERMINAL, frame.event)) {
        return { label: TERMINAL[frame.event], error: data.observation || data.error };
      }
    }
    return { label: "Failed", error: "the stream ended before the answer did" };
  }

  async stop() {
    if (this.live?.taskId) await json(`/api/tasks/${encodeURIComponent(this.live.taskId)}/stop`, { method: "POST" });
  }
}
