// The debug chat: turns of the agent's saved *draft* (POST /api/agents/{id}/debug/chat) in a debug
// conversation of its own, which Restart leaves for a new one. Streamed, cut streams resumed and
// answers shown as on the chat page (turns.js, messages.js): each answer unfolds its steps.
import { $ } from "/web/builder_dom.js";
import { MessageView } from "/web/messages.js";
import { debugChat, stop } from "/web/turns.js";

export class DebugChat {
  // `report(promise)`: a failure goes to the page's notice.
  constructor(report) {
    this.agentId = null;
    this.conversationId = null;
    this.live = null;  // {controller, taskId} of the turn streaming now
    this.view = new MessageView($("debug-messages"), { onRegenerate() {}, report });
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
    this.view.clear();
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
    const live = { controller: new AbortController(), taskId: null, messageId: null };
    this.setBusy(live);
    const { live: answer, end } = this.view.startTurn(query);
    const agentId = this.agentId;
    const body = { query };
    if (this.conversationId) body.conversation_id = this.conversationId;
    const turnView = {
      onStart: (turn) => {
        Object.assign(live, { taskId: turn.task_id, messageId: turn.message_id });
        if (this.agentId === agentId) this.conversationId = turn.conversation_id;
      },
      onDelta: (shown) => answer.set(shown),
      onEnd: (status, data) => end({ id: live.messageId, status, feedback: null,
                                     error: status === "normal" ? null : data.observation || data.error }, false),
    };
    try {
      await debugChat(agentId, body, turnView, live.controller.signal);
    } catch (failure) {
      if (!live.controller.signal.aborted) end({ status: "error", error: failure.message }, false);
    } finally {
      if (this.live === live) this.setBusy(null);
    }
  }

  async stop() {
    if (this.live?.taskId) await stop(this.live.taskId);
  }
}
