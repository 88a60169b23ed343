// Untrusted text into the page. Answers are markdown: marked renders it, DOMPurify makes it inert.
// Everything else (titles, queries, errors) is set as textContent, never as HTML.
import { marked } from "/web/vendor/marked.esm.js";
import DOMPurify from "/web/vendor/purify.es.js";

// Raw HTML in an answer is shown as the text it is, never parsed: a model's answer has no business
// laying out the page, and people ask about HTML. (Parsing it, even only to sanitise it, makes
// Chromium report each inline handler as a CSP violation.) DOMPurify still cleans what markdown
// itself produces: `[x](javascript:…)` links, images from anywhere.
const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escapeHtml = (text) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]);

marked.use({ gfm: true, breaks: true, renderer: { html: ({ text }) => escapeHtml(text) } });

// Images only from https: or inline data: an answer must not make the browser request memagent's
// own paths (in single-user mode a GET needs no key). Links open elsewhere and leak nothing;
// DOMPurify has already removed javascript: URLs by then.
const IMAGE_SOURCE = /^(https:|data:image\/)/i;
DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "IMG" && !IMAGE_SOURCE.test(node.getAttribute("src") || "")) {
    node.removeAttribute("src");
    node.removeAttribute("srcset");
  }
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer nofollow");
  }
});

// Markdown makes none of these; were one to get through, it would not be a rendering of an answer.
const PURIFY = { USE_PROFILES: { html: true }, FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select"],
                 FORBID_ATTR: ["style"] };

export function markdownInto(element, text) {
  element.innerHTML = DOMPurify.sanitize(marked.parse(text), PURIFY);
}

// An answer that grows token by token: the text accumulates at once, the markdown is rendered
// at most once per animation frame from the whole text (a re-parse per token would be quadratic
// work on the main thread for long answers).
export class LiveAnswer {
  constructor(element) {
    this.element = element;
    this.text = "";
    this.frame = 0;
  }

  append(delta) {
    this.set(this.text + delta);
  }

  set(text) {
    this.text = text;
    this.frame ||= requestAnimationFrame(() => this.flush());
  }

  // Render now (the turn ended): the last delta must not wait for a frame that may never come
  // in a background tab.
  flush() {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
    markdownInto(this.element, this.text);
  }
}
