// Small DOM helpers of the builder. Untrusted text only ever goes in as a text node (children that
// are strings become text nodes through append), never as HTML.
const SVG = "http://www.w3.org/2000/svg";

export const $ = (id) => document.getElementById(id);

// An SVG element: its geometry as attributes (the CSP forbids style attributes, not these).
export function svg(tag, attributes = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  node.append(...children);
  return node;
}

// A config value as the text it is: strings as they are, the rest as JSON.
export function shown(value) {
  if (typeof value === "string") return value === "" ? "(empty)" : value;
  return JSON.stringify(value);
}

// {"memory": {"summary": true}} → {"memory.summary": true}: how the API names fields in diffs.
export function flatten(config, prefix = "", into = {}) {
  for (const [key, value] of Object.entries(config)) {
    if (value && typeof value === "object" && !Array.isArray(value)) flatten(value, `${prefix}${key}.`, into);
    else into[`${prefix}${key}`] = value;
  }
  return into;
}
