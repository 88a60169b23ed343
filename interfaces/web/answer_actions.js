// The controls under an answer: browse the answers to the same query, rate one (with a note), and
// answer the latest query again. Ratings go to the API at once; the note is optional.
import { json } from "/web/api.js";
import { button, el } from "/web/dom.js";

async function rate(message, rating, note = "") {
  const rated = await json(`/api/messages/${encodeURIComponent(message.id)}/feedback`, {
    method: "POST", body: { rating, note },
  });
  message.feedback = rated.feedback;
}

// Like and Dislike are toggles (aria-pressed); choosing one opens the note field under them.
function feedbackControls(message, report) {
  const note = el("form", { className: "feedback-note", hidden: true });
  const input = el("input", { type: "text", maxLength: 2000, placeholder: "What was good or bad? (optional)" });
  input.setAttribute("aria-label", "Feedback note");
  note.append(input, el("button", { type: "submit", textContent: "Save note" }));
  const choices = {};
  const show = () => {
    for (const [rating, control] of Object.entries(choices)) {
      control.setAttribute("aria-pressed", String(message.feedback?.rating === rating));
    }
    input.value = message.feedback?.note || "";
  };
  for (const [rating, label] of [["like", "Like"], ["dislike", "Dislike"]]) {
    choices[rating] = button(label, () => report((async () => {
      const next = message.feedback?.rating === rating ? null : rating;
      await rate(message, next);
      show();
      note.hidden = next === null;
      if (next) input.focus();
    })()));
  }
  note.addEventListener("submit", (event) => {
    event.preventDefault();
    report(rate(message, message.feedback?.rating ?? null, input.value.trim()).then(() => {
      show();
      note.hidden = true;
    }));
  });
  show();
  return { buttons: [choices.like, choices.dislike], note };
}

// "‹ 2 / 3 ›": which of the answers to this query is shown.
function siblingControls(count, index, choose) {
  if (count < 2) return [];
  const earlier = button("‹", () => choose(index - 1), { ariaLabel: "Previous answer" });
  const later = button("›", () => choose(index + 1), { ariaLabel: "Next answer" });
  earlier.disabled = index === 0;
  later.disabled = index === count - 1;
  const position = el("span", { className: "position", textContent: `${index + 1} / ${count}` });
  return [earlier, position, later];
}

// `options`: { count, index, choose(i), onRegenerate (only for the conversation's latest), report(promise) }.
export function answerActions(message, options) {
  const bar = el("div", { className: "actions" });
  bar.append(...siblingControls(options.count, options.index, options.choose));
  const ended = message.status !== "running";
  const feedback = ended ? feedbackControls(message, options.report) : null;
  if (feedback) bar.append(...feedback.buttons);
  if (options.onRegenerate && ended) bar.append(button("Regenerate", options.onRegenerate, { className: "regenerate" }));
  return feedback ? [bar, feedback.note] : [bar];
}
