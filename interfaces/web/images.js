// Images attached to the next message, by URL: offered only when the agent's model takes images.
// The server accepts http(s) and data:image URLs; the page shows a preview of https ones only.
import { button, el } from "/web/dom.js";

const MAX_IMAGES = 8;  // as many as the chat API takes
const ACCEPTED = /^(https?:\/\/|data:image\/)/i;

export class ImageAttachments {
  constructor(root, report) {
    this.root = root;
    this.report = report;
    this.urls = [];
    this.input = el("input", { type: "url", placeholder: "https://…/picture.png" });
    this.input.setAttribute("aria-label", "Image URL");
    this.list = el("ul", { className: "attachments" });
    this.form = el("div", { className: "attach-form", hidden: true }, this.input,
                   button("Add image", () => this.add()));
    this.toggle = button("Attach image", () => {
      this.form.hidden = !this.form.hidden;
      this.toggle.setAttribute("aria-expanded", String(!this.form.hidden));
      if (!this.form.hidden) this.input.focus();
    });
    this.toggle.setAttribute("aria-expanded", "false");
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") { event.preventDefault(); this.add(); }
    });
    root.append(this.toggle, this.form, this.list);
    this.enable(false);
  }

  enable(accepted) {
    this.root.hidden = !accepted;
    if (!accepted) this.clear();
  }

  add() {
    const url = this.input.value.trim();
    if (!ACCEPTED.test(url)) {
      this.report(Promise.reject(new Error("An image is attached by an http(s) or data:image URL.")));
      return;
    }
    if (this.urls.length >= MAX_IMAGES) {
      this.report(Promise.reject(new Error(`At most ${MAX_IMAGES} images go with one message.`)));
      return;
    }
    this.urls.push(url);
    this.input.value = "";
    this.show();
  }

  show() {
    this.list.replaceChildren(...this.urls.map((url, i) => el("li", {},
      el("span", { className: "url", textContent: url }),
      button("Remove", () => { this.urls.splice(i, 1); this.show(); }, { ariaLabel: `Remove image ${i + 1}` }))));
  }

  // The URLs for the message being sent; the list is empty again after.
  take() {
    const urls = this.urls;
    this.clear();
    return urls;
  }

  clear() {
    this.urls = [];
    this.show();
  }
}
