"""The model ↔ tools loop of one turn (docs/ARCHITECTURE.md §2 loop rules, §3 step 5)."""

from __future__ import annotations

import json
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from application.chat_turn.step_reply import StepReply
from application.chat_turn.tool_round import ToolRound
from application.errors import InvalidOutput, ModelNotReached
from application.off_loop import parsed
from domain.agents.config import AgentMode, ModelParams
from domain.agents.review import KeywordReview
from domain.conversations.messages import Block, Msg, Role, TextBlock, ToolResultBlock, ToolUseBlock, Usage
from domain.conversations.streaming import Release, shown_so_far
from domain.conversations.structured_output import unfenced
from domain.conversations.thoughts import ThoughtEvent
from domain.text import storable, storable_value
from domain.tools.calls import ToolCall, ToolResult, ToolSpec
from domain.tools.client_tools import AUTO
from domain.tools.react import parse_react_output, react_instructions

if TYPE_CHECKING:
    from collections.abc import Sequence

    from application.chat_turn.output_check import OutputCheck
    from application.chat_turn.tool_executor import ToolExecutor
    from application.chat_turn.turn_events import TurnEvents
    from application.chat_turn.turn_tools import TurnTools
    from application.ports.chat_model import ChatModel
    from application.ports.runtime import IdGenerator, Tokenizer
    from domain.ids import ThoughtId
    from domain.tools.client_tools import ToolChoice

ANSWER_NOW = "You have used all tool rounds. Answer the user now from what you have, without tools."
OUTPUT_REVIEW_HIT = "The output review matched a blocked keyword; the preset response replaced the answer."


@dataclass(slots=True)
class LoopState:
    """What the loop has so far; read by the turn when it is stopped part-way."""

    answer: str = ""
    prompt: str = ""
    usage: Usage = field(default_factory=Usage)
    refused: bool = False  # the input review answered: the exchange stays out of memory
    replaced: bool = False  # the output review matched: the preset response is the answer
    answer_id: ThoughtId | None = None  # the id the answer's deltas share, once one is sent
    first_token_latency: float | None = None  # seconds into the turn when the answer's first text went out
    finish_reason: str | None = None  # why the last completed model call ended, as it said (None: none said)

    def answer_sent(self, at: float) -> None:
        if self.first_token_latency is None:
            self.first_token_latency = round(at, 6)


def prompt_snapshot(messages: Sequence[Msg]) -> str:
    return json.dumps(
        [{"role": m.role.value, "content": [b.to_dict() for b in m.content]} for m in messages],
        ensure_ascii=False,
    )


class AgentLoop:
    def __init__(
        self,
        model: ChatModel,
        tools: TurnTools,
        executor: ToolExecutor,
        events: TurnEvents,
        tokenizer: Tokenizer,
        ids: IdGenerator,
    ) -> None:
        self._model = model
        self._tools = tools
        self._executor = executor
        self._events = events
        self._tokenizer = tokenizer
        self._ids = ids
        self._round = ToolRound(tools, executor, events, ids)
        self._review = KeywordReview()
        self.state = LoopState()

    @property
    def tools(self) -> list[ToolSpec]:
        return self._tools.specs

    @property
    def model(self) -> ChatModel:
        return self._model

    async def load_tools(self) -> None:
        """The tools the store holds (the agent's workflows), added before the first model call."""
        await self._tools.load()

    async def run(
        self, messages: list[Msg], mode: AgentMode, max_rounds: int, stream_thoughts: bool = True,
        params: ModelParams | None = None, output: OutputCheck | None = None, review: KeywordReview | None = None,
    ) -> LoopState:
        """`output`: the turn's structured output, whose answer is held until it passes its check;
        `review`: the output review, which text passes before it is sent (domain.agents.review)."""
        self._review = review or KeywordReview()
        tools = self._tools.specs
        if mode is AgentMode.REACT:
            messages = self._with_system(messages, react_instructions(tools))
        if output is not None:
            messages = self._with_system(messages, output.instructions)
            params = output.params(params)
        choice = self._tools.client.tools.choice if self._tools.client is not None else AUTO
        for round_no in range(max_rounds + 1):
            last_round = round_no == max_rounds
            if last_round and tools and mode is not AgentMode.CHAT:
                messages = [*messages, self._msg(Role.SYSTEM, (TextBlock(ANSWER_NOW),))]
            offered = self._tools.offered(choice) if mode is AgentMode.FUNCTION_CALLING and not last_round else []
            react = mode is AgentMode.REACT and not last_round
            release = _release(react, bool(offered), stream_thoughts, output)
            reply = await self._step(messages, offered, release, _choosing(params, choice, bool(offered)))
            if react and not reply.blocked:
                reply = await self._parse_react(reply)
            if not reply.calls or reply.blocked:
                if output is not None and output.checked and not reply.blocked:
                    reply = await self._repaired(messages, reply, output, params)
                await (self._replace(reply) if reply.blocked else self._answer(reply))
                return self.state
            if self.state.answer_id == reply.thought_id:  # its text went out, and is its thought after all
                self.state.answer, self.state.answer_id = "", None
            results, choice = await self._round.run(reply, self.state.usage)
            if self._tools.direct_answer is not None:  # a `return_direct` workflow answered: the loop ends
                await self._answer_directly(self._tools.direct_answer)
                return self.state
            messages = [*messages, *self._follow_up(reply, results, mode)]
        raise AssertionError("unreachable: the last round offers no tools")

    async def _step(
        self, messages: list[Msg], offered: list[ToolSpec], release: Release, params: ModelParams | None
    ) -> StepReply:
        """One model call; its text goes out as `release` and the output review allow (domain.conversations.streaming);
        a review hit cuts the call off."""
        thought_id = self._events.new_id()
        started = self._events.elapsed
        prompt = prompt_snapshot(messages)
        self.state.prompt = prompt
        parts: list[str] = []
        sent = checked = 0  # characters of the text already out, and already reviewed
        calls: list[ToolCall] = []
        usage: Usage | None = None
        finish: str | None = None
        blocked = False
        try:
            async with aclosing(self._model.stream(messages, offered, params)) as stream:
                async for chunk in stream:
                    calls.extend(_storable_call(call) for call in chunk.tool_calls)
                    usage, finish = chunk.usage or usage, chunk.finish_reason or finish
                    if not chunk.text:
                        continue
                    parts.append(storable(chunk.text))
                    so_far = "".join(parts)
                    if self._review.hit(so_far[max(0, checked - self._review.longest + 1):]):
                        blocked = True
                        break
                    checked = len(so_far)
                    upto = min(shown_so_far(so_far, release), len(so_far) - self._review.held(so_far))
                    tentative = release in (Release.TENTATIVE, Release.REACT)  # a thought, if an action follows
                    sent = await self._send(thought_id, so_far, sent, upto, tentative)
        except ModelNotReached:  # no byte of the model's came back: nothing was spent
            raise
        except BaseException:  # a stop, a timeout or a failure mid-stream: what was spent still counts
            self.state.usage = self.state.usage + (usage or self._estimate(prompt, "".join(parts)))
            raise
        text = "".join(parts)
        usage = usage or self._estimate(prompt, text)
        self.state.usage, self.state.finish_reason = self.state.usage + usage, finish
        return StepReply(thought_id, text, calls, usage, prompt, self._events.elapsed - started, sent, blocked)

    async def _send(self, thought_id: ThoughtId, text: str, sent: int, upto: int, tentative: bool = False) -> int:
        """Publish the text from `sent` up to `upto`; how much is out then."""
        if upto > sent:
            self.state.answer, self.state.answer_id = text[:upto], thought_id
            self.state.answer_sent(self._events.elapsed)
            await self._events.publish(
                ThoughtEvent.AGENT_MESSAGE, thought_id, answer=text[sent:upto], tentative=tentative
            )
        return max(sent, upto)

    def _estimate(self, prompt: str, text: str) -> Usage:
        """The tokens of a call the server reported no usage for, counted here."""
        return Usage(self._tokenizer.count(prompt), self._tokenizer.count(text), estimated=True)

    async def _parse_react(self, reply: StepReply) -> StepReply:
        step = await parsed(parse_react_output, reply.text, call_id=self._ids.new_id())
        if step.call is None:
            return reply
        reply.text, reply.calls = step.thought, [_storable_call(step.call)]
        return reply

    async def _replace(self, reply: StepReply) -> None:
        """The output review matched: the preset response is the answer, none of the text goes out
        any more, and the step records the replacement (the terminal event carries the answer)."""
        preset = self._review.preset_response
        self.state.answer, self.state.answer_id, self.state.replaced = preset, reply.thought_id, True
        # Tentative: a client that held the step's text drops it with the rest, as the end says why.
        await self._events.publish(ThoughtEvent.AGENT_MESSAGE, reply.thought_id, usage=self.state.usage,
                                   tentative=True)
        self._events.record_step(
            reply.thought_id, ThoughtEvent.AGENT_MESSAGE, usage=reply.usage, latency=reply.latency,
            prompt=reply.prompt, thought=OUTPUT_REVIEW_HIT, answer=preset,
        )

    async def _answer(self, reply: StepReply) -> None:
        self.state.answer, self.state.answer_id = reply.text, reply.thought_id
        totals = self.state.usage
        if reply.sent < len(reply.text):  # held back until the step ended: it is the answer after all
            self.state.answer_sent(self._events.elapsed)
            await self._events.publish(ThoughtEvent.AGENT_MESSAGE, reply.thought_id, answer=reply.text[reply.sent:])
        # The closing delta is empty and carries the turn's totals for the client.
        await self._events.publish(ThoughtEvent.AGENT_MESSAGE, reply.thought_id, usage=totals)
        self._events.record_step(
            reply.thought_id, ThoughtEvent.AGENT_MESSAGE, usage=reply.usage, latency=reply.latency,
            prompt=reply.prompt, answer=reply.text,
        )

    async def _answer_directly(self, text: str) -> None:
        """A workflow's outputs are the answer as they are: a step of no model call, under the output review."""
        reply = StepReply(self._events.new_id(), text, [], Usage(), "", 0.0, 0, self._review.hit(text) is not None)
        await (self._replace(reply) if reply.blocked else self._answer(reply))

    def _follow_up(self, reply: StepReply, results: list[ToolResult], mode: AgentMode) -> list[Msg]:
        if mode is AgentMode.REACT:
            said = self._msg(Role.ASSISTANT, (TextBlock(reply.text or "(calling a tool)"),))
            seen = "\n".join(f"Result of {r.name}: {r.output}" for r in results)
            return [said, self._msg(Role.USER, (TextBlock(seen),))]
        blocks: list[Block] = [TextBlock(reply.text)] if reply.text else []
        blocks += [ToolUseBlock(c.id, c.name, dict(c.arguments)) for c in reply.calls]
        outputs = tuple(ToolResultBlock(r.call_id, r.name, r.output, r.is_error) for r in results)
        return [self._msg(Role.ASSISTANT, tuple(blocks)), self._msg(Role.TOOL, outputs)]

    def _with_system(self, messages: list[Msg], addition: str) -> list[Msg]:
        """The system prompt (the first message) with `addition` after a blank line."""
        if not addition:
            return messages
        system, rest = messages[0], messages[1:]
        return [self._msg(Role.SYSTEM, (TextBlock(f"{system.text}\n\n{addition}"),)), *rest]

    async def _repaired(
        self, messages: list[Msg], reply: StepReply, output: OutputCheck, params: ModelParams | None
    ) -> StepReply:
        """`reply` when it passes its check; else the model's one repair, which must pass. The answer
        is the JSON itself, without a code fence a model may have put around it."""
        problem = await output.problem(reply.text)
        if problem is None:
            reply.text = unfenced(reply.text)
            return reply
        self._record_invalid(reply, problem)
        said = self._msg(Role.ASSISTANT, (TextBlock(reply.text),))
        retry = [*messages, said, self._note(output.format.repair_request(problem))]
        again = await self._step(retry, [], Release.WHOLE, params)
        if again.blocked:
            return again
        problem = await output.problem(again.text)
        if problem is not None:
            self._record_invalid(again, problem)
            raise InvalidOutput(f"The answer is not the structured output asked for, after one repair: {problem}.")
        again.text = unfenced(again.text)
        return again

    def _record_invalid(self, reply: StepReply, problem: str) -> None:
        self._events.record_step(
            reply.thought_id, ThoughtEvent.AGENT_THOUGHT, usage=reply.usage, latency=reply.latency,
            prompt=reply.prompt, thought=reply.text, observation=f"Not the structured output asked for: {problem}",
        )

    def _note(self, text: str) -> Msg:
        return self._msg(Role.USER, (TextBlock(text),))

    def _msg(self, role: Role, blocks: tuple[Block, ...]) -> Msg:
        return Msg(self._ids.new_id(), role.value, role, blocks, self._events.now())


def _release(react: bool, offered: bool, stream_thoughts: bool, output: OutputCheck | None) -> Release:
    """How much of a step's text may stream before it ends (see domain.conversations.streaming)."""
    if output is not None and output.checked:
        return Release.WHOLE
    if react:
        return Release.REACT
    return Release.TENTATIVE if offered and not stream_thoughts else Release.AT_ONCE


def _choosing(params: ModelParams | None, choice: ToolChoice, offered: bool) -> ModelParams | None:
    """The call's parameters with the client's forced tool choice, when it offers tools."""
    if not offered or not choice.forces:
        return params
    return replace(params or ModelParams(), tool_choice=choice)


def _storable_call(call: ToolCall) -> ToolCall:
    """The call as the model made it, with text no store could hold replaced (see domain.text)."""
    return ToolCall(call.id, storable(call.name), storable_value(call.arguments))
