// The workflow's graph drawn as SVG: dagre (vendored) places the nodes, the page draws boxes and
// arrows with DOM calls. Ids, types and branch names are the graph's own text, so untrusted: they go
// in as text nodes only. A graph the API would refuse is still drawn as far as it makes sense.
import dagre from "/web/vendor/dagre.esm.js";
import { svg } from "/web/builder_dom.js";

const CHAR = 7;  // px per character of the 12px monospace labels: boxes sized without measuring text
const MAX_LABEL = 28;
const short = (text) => (text.length > MAX_LABEL ? `${text.slice(0, MAX_LABEL - 1)}…` : text);

// The nodes worth drawing: objects with a string id, each id once (a duplicate is a validation
// problem the editor already lists).
function drawable(graph) {
  const seen = new Map();
  for (const node of Array.isArray(graph?.nodes) ? graph.nodes : []) {
    if (node && typeof node.id === "string" && !seen.has(node.id)) seen.set(node.id, String(node.type ?? "?"));
  }
  const edges = (Array.isArray(graph?.edges) ? graph.edges : []).filter(
    (e) => e && seen.has(e.source) && seen.has(e.target) && e.source !== e.target);
  return { nodes: seen, edges };
}

function laidOut({ nodes, edges }) {
  const layout = new dagre.graphlib.Graph({ multigraph: true });
  layout.setGraph({ rankdir: "TB", nodesep: 24, ranksep: 36, marginx: 8, marginy: 8 });
  for (const [id, type] of nodes) {
    const width = Math.max(short(id).length, type.length) * CHAR + 24;
    layout.setNode(id, { width, height: 40, type });
  }
  edges.forEach((edge, index) => {
    const branch = typeof edge.branch === "string" ? short(edge.branch) : "";
    layout.setEdge(edge.source, edge.target,
      { branch, width: branch.length * CHAR, height: branch ? 14 : 0, labelpos: "c" }, `e${index}`);
  });
  dagre.layout(layout);
  return layout;
}

function arrowHead() {
  return svg("defs", {}, svg("marker", {
    id: "wf-arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 8, markerHeight: 8, orient: "auto",
  }, svg("path", { d: "M0,0 L10,5 L0,10 z", class: "wf-arrow" })));
}

function drawEdge(edge) {
  const d = edge.points.map((p, i) => `${i ? "L" : "M"}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(" ");
  const group = svg("g", { class: "wf-edge" }, svg("path", { d, "marker-end": "url(#wf-arrow)" }));
  if (edge.branch) group.append(svg("text", { x: edge.x, y: edge.y + 4, "text-anchor": "middle" }, edge.branch));
  return group;
}

const token = (text) => (/^[a-z_]+$/.test(text) ? text : "unknown");  // a class name, from untrusted text

function drawNode(id, node, status) {
  const group = svg("g", { class: `wf-node ${token(node.type)}${status ? ` status-${token(status)}` : ""}`,
                           transform: `translate(${node.x - node.width / 2},${node.y - node.height / 2})` },
    svg("title", {}, status ? `${id} (${node.type}): ${status}` : `${id} (${node.type})`),
    svg("rect", { width: node.width, height: node.height, rx: 6 }),
    svg("text", { x: node.width / 2, y: 17, "text-anchor": "middle", class: "wf-id" }, short(id)),
    svg("text", { x: node.width / 2, y: 32, "text-anchor": "middle", class: "wf-type" }, node.type));
  group.dataset.id = id;
  return group;
}

// `statuses`: node id → its status in the last run shown, to colour the boxes.
export function drawGraph(graph, statuses = {}) {
  const layout = laidOut(drawable(graph));
  const { width = 0, height = 0 } = layout.graph();
  const picture = svg("svg", { class: "wf-graph", role: "img", viewBox: `0 0 ${Math.max(width, 1)} ${Math.max(height, 1)}`,
                               width: Math.max(width, 1), "aria-label": `Graph: ${layout.nodeCount()} nodes` },
    arrowHead());
  for (const e of layout.edges()) picture.append(drawEdge(layout.edge(e)));
  for (const id of layout.nodes()) picture.append(drawNode(id, layout.node(id), statuses[id]));
  return picture;
}
