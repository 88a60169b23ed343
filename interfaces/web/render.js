// Untrusted text into the page. Answers are markdown: marked renders it, DOMPurify makes it inert.
// Everything else (titles, queries, errors) is set as textContent, never as HTML.
import { Lexer, marked } from "/web/vendor/marked.esm.js";
import DOMPurify from "/web/vendor/purify.es.js";

// Raw HTML in an answer is shown as the text it is, never parsed: a model's answer has no business
// laying out the page, and people ask about HTML. (Parsing it, even only to sanitise it, makes
// Chromium report each inline handler as a CSP violation.) DOMPurify still cleans what markdown
// itself produces: `[x](javascript:…)` links, images. A block of it is a paragraph
// of that text, so that every block of an answer is an element (see LiveAnswer).
const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escapeHtml = (text) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
const rawHtml = ({ text, block }) => (block ? `<p>${escapeHtml(text.trimEnd())}</p>\n` : escapeHtml(text));

// An image is shown only when it is inline (data:image): one from anywhere else would be fetched
// as the answer renders, telling its host what the page shows (`![](https://host/?q=…)`), or
// make the browser request memagent's own paths (in single-user mode a GET needs no key). It
// becomes a link to the image instead; the CSP's `img-src data:` holds the same line.
const INLINE_IMAGE = /^data:image\//i;
const image = ({ href, text }) => (INLINE_IMAGE.test(href)
  ? `<img src="${escapeHtml(href)}" alt="${escapeHtml(text)}">`
  : `<a href="${escapeHtml(href)}">${escapeHtml(text || href)}</a>`);

marked.use({ gfm: true, breaks: true, renderer: { html: rawHtml, image } });

// Links open elsewhere and leak nothing; DOMPurify has already removed javascript: URLs by then.
// A link to memagent itself is text: an answer must not lead a click to the API with the page's
// rights.
function sameOrigin(href) {
  try {
    return new URL(href, document.baseURI).origin === location.origin;
  } catch {
    return true;  // not a URL a browser could follow: no link either
  }
}
DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "IMG" && !INLINE_IMAGE.test(node.getAttribute("src") || "")) {
    node.removeAttribute("src");
    node.removeAttribute("srcset");
  }
  if (node.tagName === "A") {
    if (node.hasAttribute("href") && sameOrigin(node.getAttribute("href"))) node.removeAttribute("href");
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer nofollow");
  }
});

// Markdown makes none of these; were one to get through, it would not be a rendering of an answer.
// The result is DOMPurify's own cleaned nodes: nothing parses the HTML a second time, and a whole
// answer and an answer built block by block are made the same way.
const PURIFY = { USE_PROFILES: { html: true }, FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select"],
                 FORBID_ATTR: ["style"], RETURN_DOM_FRAGMENT: true };
const clean = (html) => DOMPurify.sanitize(html, PURIFY);

export function markdownInto(element, text) {
  element.replaceChildren(clean(marked.parse(text)));
}

// marked reads "\r\n" and "\r" as "\n"; offsets into the text are taken after the same change.
const normalise = (text) => text.replace(/\r\n?/g, "\n");

// Blocks after which later text can still change them: a list takes a later item even after a
// blank line, a paragraph, quote or table takes a line that turns out not to interrupt it ("#"
// is an empty heading, "#x" is not), a definition takes a title on the next line, indented code
// takes more indented lines. Headings, rules and closed fences end where they end.
const ENDED = new Set(["heading", "hr"]);
const ended = (token) => ENDED.has(token.type) || (token.type === "code" && token.codeBlockStyle !== "indented");

// How many of `tokens` are final: all but the last block, and the one before it unless it has ended.
function finalCount(tokens) {
  const blocks = tokens.flatMap((token, index) => (token.type === "space" ? [] : [index]));
  if (blocks.length < 2) return 0;
  const last = blocks.at(-1);
  const before = blocks.at(-2);
  return ended(tokens[before]) ? last : before;
}

// An answer that grows token by token. Blocks that later text can no longer change are rendered
// once, cleaned and kept; only the open tail is rendered again, at most once per animation frame:
// a re-parse of the whole text per token would be quadratic work on the main thread.
// A kept block's nodes go straight into the answer, with no wrapper: every block renders as
// elements (raw HTML too, as a paragraph), so they are the very nodes one render of the whole
// text makes, and the answer looks the same while it streams as after.
export class LiveAnswer {
  constructor(element) {
    this.element = element;
    this.frame = 0;
    this.start("");
  }

  start(text) {
    this.text = text;
    this.kept = 0;               // the length of the normalised text rendered for good
    this.keptHtml = "";          // the HTML those blocks rendered as
    this.links = Object.create(null);  // reference definitions among them, for later blocks
    this.tail = [...this.element.childNodes];  // replaced on the next render
    this.tailHtml = "";
  }

  append(delta) {
    this.set(this.text + delta);
  }

  // The whole text so far. Text that does not extend what is shown starts the answer over.
  set(text) {
    if (text.startsWith(this.text)) this.text = text; else this.start(text);
    this.frame ||= requestAnimationFrame(() => { this.frame = 0; this.render(); });
  }

  render() {
    const source = normalise(this.text);
    const lexer = new Lexer(marked.defaults);
    Object.assign(lexer.tokens.links, this.links);  // the first definition of a label wins, as in one parse
    const tokens = lexer.lex(source.slice(this.kept));
    const final = tokens.slice(0, finalCount(tokens));
    this.tailHtml = marked.parser(this.keep(source, final) ? tokens.slice(final.length) : tokens);
    const nodes = clean(this.tailHtml);
    const fresh = [...nodes.childNodes];
    this.element.insertBefore(nodes, this.tail[0] ?? null);
    for (const node of this.tail) node.remove();
    this.tail = fresh;
  }

  keep(source, tokens) {
    const raw = tokens.map((token) => token.raw).join("");
    if (!raw || !source.startsWith(raw, this.kept)) return false;  // offsets would be off: keep nothing
    const html = marked.parser(tokens);
    this.element.insertBefore(clean(html), this.tail[0] ?? null);
    this.kept += raw.length;
    this.keptHtml += html;
    for (const token of tokens) {
      if (token.type === "def") this.links[token.tag] ??= { href: token.href, title: token.title };
    }
    return true;
  }

  // The turn ended: render now (the last delta must not wait for a frame that may never come in
  // a background tab), then check the blocks against one parse of the whole text. They differ
  // only where a block depends on text after it, a reference link defined further down: then
  // the whole answer is rendered once more. One full parse per answer, none per token.
  flush() {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
    this.render();
    const whole = marked.parse(this.text);
    if (whole === this.keptHtml + this.tailHtml) return;
    markdownInto(this.element, this.text);
    this.start(this.text);
    this.tailHtml = whole;
  }
}
