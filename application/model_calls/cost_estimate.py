"""CostEstimate: what a turn or an upkeep is expected to cost, reserved against the budgets before it
runs (application/model_calls/budgets.py).

A turn's prompt is its preset prompt and query plus, at most, its window (`history_max_tokens`:
the window is cut to it); its answer is `max_tokens` when the agent or the request sets it, else
`completion_tokens` (`MEMAGENT_BUDGETS__COMPLETION_ESTIMATE`). An upkeep reads at most a window of
turns and writes an answer of the same estimate, on the upkeep's own profile. A profile with no
known price costs nothing, as its calls do in the ledger.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from domain.billing.model_calls import cost_of

if TYPE_CHECKING:
    from application.ports.chat_models import ChatModels
    from application.ports.runtime import Tokenizer
    from domain.agents.config import AgentConfig


class CostEstimate:
    def __init__(self, tokenizer: Tokenizer, models: ChatModels, completion_tokens: int = 1024) -> None:
        self._tokenizer = tokenizer
        self._models = models
        self._completion = completion_tokens

    def turn(self, config: AgentConfig, query: str) -> float:
        prompt = self._tokenizer.count(config.preset_prompt) + self._tokenizer.count(query)
        completion = config.model_params.max_tokens or self._completion
        return self._price(config.model, prompt + config.history_max_tokens, completion)

    def upkeep(self, config: AgentConfig) -> float:
        return self._price(config.upkeep_model, config.history_max_tokens, self._completion)

    def _price(self, profile: str, prompt_tokens: int, completion_tokens: int) -> float:
        found = next((p for p in self._models.profiles() if p.name == profile), None)
        if found is None or not found.priced:
            return 0.0
        return cost_of(prompt_tokens, completion_tokens, found.input_price, found.output_price)
