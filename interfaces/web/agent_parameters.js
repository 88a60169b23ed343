// What the page shows of an agent before and after its answers: opening statement, suggested
// questions, whether it takes images, whether follow-up questions come after an answer.
import { json } from "/web/api.js";
import { button, el } from "/web/dom.js";

const NONE = { opening_statement: "", suggested_questions: [], accepts_images: false,
               suggested_questions_after_answer: false };
const known = new Map();

// Read once per agent and page; an agent the key may not read (a debug run) has none of these.
export function parametersOf(agentId) {
  if (!agentId) return Promise.resolve(NONE);
  if (!known.has(agentId)) {
    known.set(agentId, json(`/api/agents/${encodeURIComponent(agentId)}/parameters`).catch(() => NONE));
  }
  return known.get(agentId);
}

export function questionButtons(questions, ask) {
  return questions.map((question) => button(question, () => ask(question)));
}

// The follow-up questions for an answer, as buttons under it; none when the agent has them off.
export async function followUps(agentId, messageId, ask) {
  const parameters = await parametersOf(agentId);
  if (!parameters.suggested_questions_after_answer) return null;
  const questions = (await json(`/api/messages/${encodeURIComponent(messageId)}/suggested`)).data;
  if (!questions.length) return null;
  const group = el("div", { className: "follow-ups" }, ...questionButtons(questions, ask));
  group.setAttribute("role", "group");
  group.setAttribute("aria-label", "Suggested follow-ups");
  return group;
}
