// The conversation on screen: past turns from the record, and the turn that streams now.
// A regenerated answer is a sibling of the one it replaces (its parent_message_id): one turn on
// screen, with its answers to browse.
import { answerActions } from "/web/answer_actions.js";
import { el } from "/web/dom.js";
import { LiveAnswer, markdownInto } from "/web/render.js";
import { stepsView } from "/web/steps.js";

// The latest turns are rendered at once; older answers are shown as their text and rendered as
// markdown when they come near the screen. Parsing and sanitising all of a long conversation
// up front is most of the time it takes to open it, for answers nobody may scroll back to.
const EAGER_TURNS = 20;
const NEAR = "1500px";

const ENDINGS = { stop: "Stopped", error: "Failed", timeout: "Timed out", running: "Still running" };
// Inline images show; one by URL is a link (the page fetches no image from elsewhere: see render.js).
const INLINE_IMAGE = /^data:image\//i;

// Groups messages (oldest first) into turns: each answer given again joins its parent's turn.
export function turnsOf(messages) {
  const turnOf = new Map();
  const turns = [];
  for (const message of messages) {
    const turn = turnOf.get(message.parent_message_id) || [];
    if (!turn.length) turns.push(turn);
    turn.push(message);
    turnOf.set(message.id, turn);
  }
  return turns;
}

function queryBubble(query, imageUrls = []) {
  const li = el("li", { className: "message user" }, el("p", { className: "query", textContent: query }));
  for (const url of imageUrls) {
    li.append(INLINE_IMAGE.test(url) ? el("img", { className: "attached", src: url, alt: "Attached image" })
      : el("a", { className: "attached", href: url, textContent: url, target: "_blank", rel: "noopener noreferrer" }));
  }
  return li;
}

// A line under an answer that did not end normally; the server's message is plain text.
function endingNote(status, error) {
  const label = ENDINGS[status];
  return label ? el("p", { className: "ending", textContent: error ? `${label}: ${error}` : label }) : null;
}

export class MessageView {
  // `hooks`: { onRegenerate(message), report(promise) }.
  constructor(root, hooks) {
    this.root = root;
    this.hooks = hooks;
    this.pending = new IntersectionObserver((entries) => {
      for (const entry of entries) {
        if (entry.isIntersecting) this.render(entry.target);
      }
    }, { root, rootMargin: `${NEAR} 0px` });
  }

  render(answer) {
    this.pending.unobserve(answer);
    markdownInto(answer, answer.textContent);
  }

  clear() {
    this.pending.disconnect();
    this.root.replaceChildren();
  }

  // Appends many turns in one go: one layout for the whole conversation, not one per message.
  showTurns(turns) {
    const fragment = document.createDocumentFragment();
    turns.forEach((turn, i) => {
      fragment.append(...this.turnElements(turn, i === turns.length - 1, i >= turns.length - EAGER_TURNS));
    });
    this.root.append(fragment);
  }

  turnElements(turn, latest, eager) {
    const agent = el("li", { className: "message agent" });
    let lazy = !eager;
    const choose = (index) => {
      const message = turn[index];
      const answer = el("div", { className: "answer" });
      if (lazy) {
        // Until rendered, the answer's plain text keeps its place (and its words findable).
        answer.textContent = message.answer || "";
        this.pending.observe(answer);
        lazy = false;
      } else {
        markdownInto(answer, message.answer || "");
      }
      const regenerate = latest && index === turn.length - 1 ? () => this.hooks.onRegenerate(message) : null;
      agent.replaceChildren(answer, ...this.footer(message, {
        count: turn.length, index, choose, onRegenerate: regenerate, report: this.hooks.report,
      }));
      agent.dataset.messageId = message.id;
    };
    choose(turn.length - 1);
    return [queryBubble(turn[0].query, turn[0].image_urls), agent];
  }

  footer(message, options) {
    const parts = [endingNote(message.status, message.error), ...answerActions(message, options)];
    if (message.status !== "running") parts.push(stepsView(message.id));
    return parts.filter(Boolean);
  }

  // The elements of a turn in progress; returns the LiveAnswer and a function to end it, which
  // takes the finished message ({id, status, error, ...}) to put its controls under the answer.
  startTurn(query, imageUrls) {
    const answer = el("div", { className: "answer" });
    const agent = el("li", { className: "message agent" }, answer);
    agent.setAttribute("aria-busy", "true");
    this.root.append(queryBubble(query, imageUrls), agent);
    agent.scrollIntoView({ block: "end" });
    const live = new LiveAnswer(answer);
    const end = (message, latest) => {
      live.flush();
      agent.removeAttribute("aria-busy");
      if (!message.id) {
        const note = endingNote(message.status, message.error);
        if (note) agent.append(note);
        return agent;
      }
      agent.dataset.messageId = message.id;
      const regenerate = latest ? () => this.hooks.onRegenerate(message) : null;
      agent.append(...this.footer(message, { count: 1, index: 0, choose: () => {},
                                             onRegenerate: regenerate, report: this.hooks.report }));
      return agent;
    };
    return { live, end };
  }

  // Regenerating replaces the turn on screen: the new answer streams where the old one was.
  dropLastTurn() {
    this.root.lastElementChild?.remove();
    this.root.lastElementChild?.remove();
  }
}
