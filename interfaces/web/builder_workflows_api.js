// The workflow API's calls for the builder. A 422 that lists `problems` ({path, message} each) is an
// answer the page shows beside what it is about, not a failure: it comes back as `{problems}`.
import { ApiError, request } from "/web/api.js";
import { el } from "/web/dom.js";

export async function call(path, { method = "GET", body } = {}) {
  const headers = body === undefined ? {} : { "Content-Type": "application/json" };
  const response = await request(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await response.json().catch(() => null);
  if (response.status === 422 && Array.isArray(data?.problems)) return { problems: data.problems };
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

// Each problem as its JSON path (code) and message: both are text, whatever they hold.
export function showProblems(list, problems) {
  list.replaceChildren(...problems.map((p) => el("li", {},
    el("code", { textContent: String(p.path ?? "") }), " ", el("span", { textContent: String(p.message ?? "") }))));
}
