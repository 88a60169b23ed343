// The memory panel: what memagent remembers of the user (their facts, shared by their conversations)
// and of the open conversation (its entities), each with its history and where it came from. A value
// can be corrected or deleted, and everything forgotten, after a confirmation inside the panel (a
// browser dialog would block the page's streams). Values come from what people typed and from
// models: textContent only.
import { json } from "/web/api.js";
import { button, el } from "/web/dom.js";

const USER = "/api/users/me/memory";
const QUOTE = 80;  // characters of the message a value came from
const enc = encodeURIComponent;

const when = (iso) => (iso ? new Date(iso).toLocaleString([], { dateStyle: "medium", timeStyle: "short" }) : "");
const text = (value, className) => el("p", { className, textContent: value });
const percent = (confidence) => `${Math.round(confidence * 100)}%`;

// A value of either kind, as the panel shows it: a fact's `valid_from` is an entity's `updated_at`.
function version(item) {
  return { value: item.value, at: item.valid_from || item.updated_at, until: item.superseded_at,
           conversationId: item.source_conversation_id, messageId: item.source_message_id };
}

// A fact with the URLs that change it; an entity of the open conversation likewise.
function factOf(fact) {
  return { ...fact, url: `${USER}/facts/${enc(fact.type)}` };
}

function entityOf(conversationId) {
  const here = (value) => ({ ...value, source_conversation_id: conversationId });
  return (entity) => ({ ...here(entity), history: entity.history.map(here),
                        url: `/api/conversations/${enc(conversationId)}/memory/entities/${enc(entity.type)}` });
}

export class MemoryPanel {
  constructor(root) {
    this.root = root;
    this.conversationId = null;
    this.ticket = 0;  // the latest load: an earlier one finishing late must not show
    this.queries = new Map();  // message id → its query, to say which message a value came from
    this.heading = el("h2", { textContent: "Memory", tabIndex: -1 });
    this.status = text("", "memory-status");
    this.status.setAttribute("role", "status");
    this.error = text("", "memory-error");
    this.error.setAttribute("role", "alert");
    this.content = el("div", { className: "memory-content" });
    // Memory upkeep runs after each turn, on its own time: what it learns shows on a refresh.
    const head = el("div", { className: "memory-head" }, this.heading,
                    button("Refresh", () => this.refresh(), { ariaLabel: "Refresh memory" }));
    root.replaceChildren(head, this.status, this.error, this.content);
  }

  async show(conversationId) {
    this.conversationId = conversationId || null;
    await this.refresh();
  }

  async refresh() {
    const ticket = ++this.ticket;
    const conversationId = this.conversationId;
    if (!this.content.childElementCount) this.status.textContent = "Loading memory…";
    try {
      const [user, conversation] = await Promise.all([
        json(USER), conversationId ? json(`/api/conversations/${enc(conversationId)}/memory`) : null,
      ]);
      const facts = user.facts.map(factOf);
      const entities = conversation ? conversation.entities.map(entityOf(conversationId)) : [];
      await this.learnQueries([...facts, ...entities]);
      if (ticket !== this.ticket) return;
      this.error.textContent = "";
      this.status.textContent = "";
      this.content.replaceChildren(this.factsSection(facts), this.conversationSection(conversation, entities));
    } catch (failure) {
      if (ticket !== this.ticket) return;
      this.status.textContent = "";
      this.error.textContent = `Could not load the memory: ${failure.message || failure}`;
      this.content.replaceChildren(button("Retry", () => this.refresh()));
    }
  }

  // The queries of the messages values came from, fetched only for conversations with one not known yet.
  async learnQueries(items) {
    const versions = items.flatMap((item) => [item, ...item.history].map(version));
    const wanted = new Set(versions.filter((v) => v.messageId && !this.queries.has(v.messageId))
      .map((v) => v.conversationId).filter(Boolean));
    await Promise.all([...wanted].map(async (id) => {
      const page = await json(`/api/conversations/${enc(id)}/messages?limit=100`).catch(() => null);
      for (const message of page?.data || []) this.queries.set(message.id, message.query);
    }));
  }

  source(v) {
    if (!v.messageId) return "set by hand";
    const query = this.queries.get(v.messageId);
    if (query === undefined) return "from a message";
    return `from “${query.length > QUOTE ? `${query.slice(0, QUOTE)}…` : query}”`;
  }

  factsSection(facts) {
    const section = el("section", { className: "memory-section" }, el("h3", { textContent: "About you" }));
    section.append(facts.length ? this.itemList(facts, "fact") : text("Nothing remembered about you yet.", "memory-empty"));
    section.append(this.forgetControl());
    return section;
  }

  conversationSection(conversation, entities) {
    const section = el("section", { className: "memory-section" }, el("h3", { textContent: "This conversation" }));
    if (!conversation) {
      section.append(text("Open a conversation to see what it remembers.", "memory-empty"));
      return section;
    }
    if (conversation.summary) section.append(text(`Summary: ${conversation.summary}`, "memory-summary"));
    section.append(entities.length ? this.itemList(entities, "entity")
                                   : text("Nothing remembered from this conversation yet.", "memory-empty"));
    return section;
  }

  itemList(items, kind) {
    return el("ul", { className: "memory-list" }, ...items.map((item) => this.itemView(item, kind)));
  }

  itemView(item, kind) {
    const current = version(item);
    const confidence = `confidence ${percent(item.confidence)}${item.in_prompt ? "" : " · not in the prompt"}`;
    const li = el("li", { className: `memory-item ${kind}` },
      el("div", { className: "memory-row" },
        el("span", { className: "memory-type", textContent: item.type }),
        el("span", { className: "memory-value", textContent: item.value }),
        el("span", { className: "memory-confidence", textContent: confidence })),
      text(`since ${when(current.at)} · ${this.source(current)}`, "memory-provenance"));
    const history = this.historyView(item);
    if (history) li.append(history);
    const actions = el("div", { className: "memory-actions" },
      button("Correct", () => this.correctForm(li, item), { ariaLabel: `Correct ${item.type}` }),
      button("Delete", () => this.change(item.url, { method: "DELETE" }, `Deleted ${item.type}.`),
             { ariaLabel: `Delete ${item.type}` }));
    li.append(actions);
    return li;
  }

  // The first value, then each change: old value → new value, when, and the message that brought the new one.
  historyView(item) {
    const versions = [...item.history, item].map(version).sort((a, b) => a.at.localeCompare(b.at));
    if (versions.length < 2) return null;
    const [first] = versions;
    const changes = versions.slice(1).map((next, i) => {
      const old = versions[i];
      return el("li", { textContent: `${old.value} → ${next.value} · ${when(old.until || next.at)} · ${this.source(next)}` });
    });
    const start = el("li", { textContent: `${first.value} · ${when(first.at)} · ${this.source(first)}` });
    const list = el("ol", { className: "memory-history" }, start, ...changes);
    list.setAttribute("aria-label", `History of ${item.type}`);
    return list;
  }

  correctForm(li, item) {
    const actions = li.querySelector(".memory-actions");
    const input = el("input", { type: "text", value: item.value, required: true, maxLength: 2048 });
    input.setAttribute("aria-label", `New value for ${item.type}`);
    const form = el("form", { className: "memory-correct" }, input,
      el("button", { type: "submit", textContent: "Save" }), button("Cancel", () => cancel()));
    const cancel = () => { form.replaceWith(actions); actions.firstElementChild.focus(); };
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const value = input.value.trim();
      if (value) this.change(item.url, { method: "PUT", body: { value } }, `Changed ${item.type}.`);
    });
    input.addEventListener("keydown", (event) => { if (event.key === "Escape") cancel(); });
    actions.replaceWith(form);
    input.focus();
    input.select();
  }

  forgetControl() {
    const box = el("div", { className: "memory-forget" });
    const ask = button("Forget everything", () => {
      const no = button("Cancel", () => { box.replaceChildren(ask); ask.focus(); });
      const yes = button("Forget", () => this.change(USER, { method: "DELETE" }, "Everything was forgotten."),
                         { ariaLabel: "Yes, forget everything" });
      yes.className = "danger";
      box.replaceChildren(text("Forget every fact about you and the memory of all your conversations "
                               + "(summaries, entities, archive)? The messages stay. This cannot be undone.",
                               "memory-confirm"), yes, no);
      no.focus();
    });
    box.append(ask);
    return box;
  }

  // A change, then the panel as the API has it now; the focus goes back to the panel's heading.
  async change(url, options, done) {
    this.error.textContent = "";
    this.status.textContent = "Saving…";
    try {
      await json(url, options);
      await this.refresh();
      this.status.textContent = done;
    } catch (failure) {
      this.status.textContent = "";
      this.error.textContent = failure.message || String(failure);
    }
    this.heading.focus();
  }
}
