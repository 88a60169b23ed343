// The conversation list: search, pinned first, open, rename, pin, delete.
// Titles come from users and models: they are set as textContent only.
import { json } from "/web/api.js";
import { el } from "/web/dom.js";

export class ConversationList {
  // `report(promise)` shows a failure on the page.
  constructor(root, search, { onOpen, onDeleted, report }) {
    this.root = root;
    this.onOpen = onOpen;
    this.onDeleted = onDeleted;
    this.report = report;
    this.current = null;
    this.query = "";
    this.shown = new Map();  // id → the conversation as last listed
    let timer = 0;
    // Wait for a pause in typing: one request per search, not per key.
    search.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => { this.query = search.value.trim(); this.report(this.refresh()); }, 250);
    });
  }

  async refresh() {
    const params = new URLSearchParams({ limit: "100" });
    if (this.query) params.set("q", this.query);
    const page = await json(`/api/conversations?${params}`);
    // The API orders by activity; pinned ones go first, keeping that order within each group.
    const rows = [...page.data].sort((a, b) => Number(b.pinned) - Number(a.pinned));
    this.shown = new Map(rows.map((c) => [c.id, c]));
    this.root.replaceChildren(...rows.map((c) => this.item(c)));
  }

  select(id) {
    this.current = id;
    for (const li of this.root.children) {
      li.classList.toggle("current", li.dataset.id === id);
      li.querySelector(".open")?.toggleAttribute("aria-current", li.dataset.id === id);  // not while renamed
    }
  }

  item(conversation) {
    const title = conversation.title || "New conversation";
    const open = el("button", { type: "button", className: "open", textContent: title });
    open.addEventListener("click", () => this.onOpen(conversation));
    const pin = el("button", { type: "button", className: "small",
                              textContent: conversation.pinned ? "Unpin" : "Pin" });
    pin.setAttribute("aria-label", `${conversation.pinned ? "Unpin" : "Pin"} ${title}`);
    pin.addEventListener("click", () => this.report(this.change(conversation.id, { pinned: !conversation.pinned })));
    const rename = el("button", { type: "button", className: "small", textContent: "Rename" });
    rename.setAttribute("aria-label", `Rename ${title}`);
    const li = el("li", {}, open, pin, rename);
    rename.addEventListener("click", () => this.renameForm(li, conversation.id, title));
    const remove = el("button", { type: "button", className: "small", textContent: "Delete" });
    remove.setAttribute("aria-label", `Delete ${title}`);
    remove.addEventListener("click", () => this.report(this.remove(conversation.id)));
    li.append(remove);
    li.dataset.id = conversation.id;
    if (conversation.pinned) li.classList.add("pinned");
    if (conversation.id === this.current) li.classList.add("current");
    return li;
  }

  // Inline, not window.prompt(): a modal dialog would block the page's streams.
  renameForm(li, id, title) {
    const input = el("input", { type: "text", value: title, maxLength: 256 });
    input.setAttribute("aria-label", "New title");
    const form = el("form", { className: "rename" }, input,
                    el("button", { type: "submit", textContent: "Save" }));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const title = input.value.trim();
      if (!title) { input.focus(); return; }  // an empty title is no title: keep the form
      this.report(this.change(id, { title }));
    });
    input.addEventListener("keydown", (event) => {
      if (event.key === "Escape") { event.preventDefault(); this.report(this.refresh()); }
    });
    li.replaceChildren(form);
    input.focus();
    input.select();
  }

  async change(id, body) {
    await json(`/api/conversations/${encodeURIComponent(id)}`, { method: "PATCH", body });
    await this.refresh();
    this.root.querySelector(`li[data-id="${CSS.escape(id)}"] .open`)?.focus();  // the rebuilt row
  }

  async remove(id) {
    await json(`/api/conversations/${encodeURIComponent(id)}`, { method: "DELETE" });
    if (id === this.current) this.onDeleted(id);
    await this.refresh();
  }
}
