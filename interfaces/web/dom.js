// Elements built from properties: text goes in as textContent or as text nodes (children that are
// strings), never as HTML.
export function el(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

// `props` as for el(): `{ ariaLabel: "…" }` names a button whose text is a symbol.
export function button(text, onClick, props = {}) {
  const node = el("button", { type: "button", textContent: text, ...props });
  node.addEventListener("click", onClick);
  return node;
}
