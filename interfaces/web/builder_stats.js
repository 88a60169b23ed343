// An agent's usage (GET /api/agents/{id}/stats: published turns only): totals as figures, and per
// day and per version as small bar charts drawn as inline SVG (no chart library: a few rects).
import { json } from "/web/api.js";
import { el } from "/web/dom.js";
import { $, svg } from "/web/builder_dom.js";

const WIDTH = 300;
const HEIGHT = 72;

const seconds = (value) => (value === null ? "–" : `${value.toFixed(2)} s`);
const count = (value) => value.toLocaleString("en");

function figures(total) {
  const items = [
    ["Conversations", count(total.conversations)], ["Messages", count(total.messages)],
    ["End users", count(total.end_users)], ["Tokens", count(total.tokens)],
    ["Cost", `$${total.cost.toFixed(4)}`], ["Avg latency", seconds(total.avg_latency)],
    ["First token", seconds(total.avg_first_token_latency)], ["Likes / dislikes", `${total.likes} / ${total.dislikes}`],
  ];
  return el("dl", { className: "figures" },
    ...items.map(([name, value]) => el("div", {}, el("dt", { textContent: name }), el("dd", { textContent: value }))));
}

// Columns, one per entry: `points` are [label, value]. Each bar's <title> names its value, and the
// whole chart has a summary as its accessible name.
function columns(title, points, unit) {
  const peak = Math.max(1, ...points.map(([, v]) => v));
  const step = WIDTH / Math.max(points.length, 1);
  const bars = points.map(([label, value], i) => {
    const height = value ? Math.max(1, (value / peak) * (HEIGHT - 4)) : 0;
    return svg("rect", { x: i * step + step * 0.12, y: HEIGHT - height, width: step * 0.76, height, class: "bar" },
               svg("title", {}, `${label}: ${count(value)} ${unit}`));
  });
  const total = points.reduce((sum, [, v]) => sum + v, 0);
  // Stretched to the box's width: the bars hold no text to distort.
  const chart = svg("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, preserveAspectRatio: "none", role: "img", class: "chart",
                             "aria-label": `${title}: ${count(total)} in all, at most ${count(peak)} a day` },
                    svg("line", { x1: 0, y1: HEIGHT - 0.5, x2: WIDTH, y2: HEIGHT - 0.5, class: "axis" }), ...bars);
  const ends = points.length ? [points[0][0], points.at(-1)[0]] : ["", ""];
  return el("figure", { className: "chart-box" }, el("figcaption", { textContent: title }), chart,
            el("div", { className: "chart-ends meta" }, el("span", { textContent: ends[0] }),
               el("span", { textContent: ends[1] })));
}

// Rows, one per published version: how many messages each answered.
function rows(title, points) {
  const peak = Math.max(1, ...points.map(([, v]) => v));
  const height = 18;
  const items = points.flatMap(([label, value], i) => [
    svg("text", { x: 0, y: i * height + 13, class: "label" }, label),
    svg("rect", { x: 40, y: i * height + 3, height: 12, width: Math.max(value ? 1 : 0, (value / peak) * (WIDTH - 100)),
                  class: "bar" }, svg("title", {}, `${label}: ${count(value)} messages`)),
    svg("text", { x: 44 + (value / peak) * (WIDTH - 100), y: i * height + 13, class: "value" }, count(value)),
  ]);
  const chart = svg("svg", { viewBox: `0 0 ${WIDTH} ${Math.max(points.length, 1) * height}`, role: "img",
                             class: "chart rows", "aria-label": `${title}: ${points.map(([l, v]) => `${l} ${v}`).join(", ")}` },
                    ...items);
  return el("figure", { className: "chart-box" }, el("figcaption", { textContent: title }), chart);
}

// The charts of an agent's stats, for the caller to show if the agent is still the one on screen.
export async function statsCharts(agentId) {
  const stats = await json(`/api/agents/${encodeURIComponent(agentId)}/stats`);
  const days = stats.days.map((d) => [d.date, d.messages]);
  const tokens = stats.days.map((d) => [d.date, d.tokens]);
  const charts = [figures(stats.total), columns("Messages per day", days, "messages"),
                  columns("Tokens per day", tokens, "tokens")];
  if (stats.versions.length) {
    charts.push(rows("Messages per version", stats.versions.map((v) => [`v${v.version}`, v.messages])));
  }
  if (!stats.total.messages) charts.unshift(el("p", { className: "meta", textContent: "No published turns yet." }));
  return charts;
}
