// The conversation on screen: past messages from the record, and the turn that streams now.
import { LiveAnswer, markdownInto } from "/web/render.js";

const ENDINGS = { stop: "Stopped", error: "Failed", timeout: "Timed out", running: "Still running" };

function bubble(role, ...children) {
  const li = document.createElement("li");
  li.className = `message ${role}`;
  li.append(...children);
  return li;
}

function plain(text, className) {
  const p = document.createElement("p");
  p.className = className;
  p.textContent = text;
  return p;
}

function answerBlock() {
  const div = document.createElement("div");
  div.className = "answer";
  return div;
}

// A line under an answer that did not end normally; the server's message is plain text.
function endingNote(status, error) {
  const label = ENDINGS[status];
  if (!label) return null;
  return plain(error ? `${label}: ${error}` : label, "ending");
}

export class MessageView {
  constructor(root) {
    this.root = root;
  }

  clear() {
    this.root.replaceChildren();
  }

  showRecord(message) {
    const answer = answerBlock();
    markdownInto(answer, message.answer || "");
    const agent = bubble("agent", answer);
    const note = endingNote(message.status, message.error);
    if (note) agent.append(note);
    this.root.append(bubble("user", plain(message.query, "query")), agent);
  }

  // The elements of a turn in progress; returns the LiveAnswer and a function to end it.
  startTurn(query) {
    const answer = answerBlock();
    const agent = bubble("agent", answer);
    agent.setAttribute("aria-busy", "true");
    this.root.append(bubble("user", plain(query, "query")), agent);
    agent.scrollIntoView({ block: "end" });
    const live = new LiveAnswer(answer);
    const end = (status, error) => {
      live.flush();
      agent.removeAttribute("aria-busy");
      const note = endingNote(status, error);
      if (note) agent.append(note);
    };
    return { live, end };
  }
}
