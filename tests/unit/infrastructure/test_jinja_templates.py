"""JinjaTemplates: workflow templates and expressions in Jinja's sandbox, bounded in size and work,
failing with sentences a workflow's author can act on."""

from __future__ import annotations

import pytest

from application.errors import NodeFailed
from infrastructure.workflows.jinja_templates import JinjaTemplates

SCOPE = {"start": {"city": "Paris", "items": [1, 2, 3]}, "l1": {"json": {"score": 4}}}


@pytest.fixture
def templates() -> JinjaTemplates:
    return JinjaTemplates(max_output_chars=10_000, max_steps=5_000)


async def failure(templates: JinjaTemplates, template: str) -> str:
    with pytest.raises(NodeFailed) as raised:
        await templates.render(template, SCOPE)
    return raised.value.message


async def test_a_template_reads_node_outputs_and_leaves_text_unescaped(templates: JinjaTemplates) -> None:
    text = await templates.render("<b>{{ start.city }}</b> {% for i in start['items'] %}{{ i }}{% endfor %}", SCOPE)
    assert text == "<b>Paris</b> 123"


async def test_a_json_key_wins_over_a_dict_method_of_the_same_name(templates: JinjaTemplates) -> None:
    assert await templates.evaluate("start.items", SCOPE) == [1, 2, 3]


async def test_an_expression_is_evaluated_with_or_without_braces(templates: JinjaTemplates) -> None:
    assert await templates.evaluate("l1.json.score > 3", SCOPE) is True
    assert await templates.evaluate("{{ l1.json.score > 5 }}", SCOPE) is False
    assert await templates.evaluate(" {{ start['items'][1:] }} ", SCOPE) == [2, 3]


def test_names_are_the_roots_a_template_reads(templates: JinjaTemplates) -> None:
    names = templates.names("{{ start.city }}{% for x in l1.json.rows %}{{ x }}{{ item }}{% endfor %}")
    assert names == {"start", "l1", "item"}


def test_a_syntax_error_is_a_sentence_with_its_line(templates: JinjaTemplates) -> None:
    assert templates.problem("fine\n{{ start.city }") == "line 2: unexpected '}'"
    assert templates.problem("{{ start.city | no_such_filter }}") == "line 1: No filter named 'no_such_filter'."
    assert templates.problem("{{ start.city }}") is None


@pytest.mark.parametrize(("template", "sentence"), [
    ("{{ nope }}", "The template reads `nope`, which is not defined here: no node or input of that name."),
    ("{{ start.country }}", "The template reads `country`, which the value it reads from does not have."),
    ("{{ 1 + 'a' }}", "The template combines values of kinds that do not go together, such as a number and a text."),
    ("{{ 1 / 0 }}", "The template divides by zero."),
    ("{{ x }", "The template does not parse: line 1: unexpected '}'"),
])
async def test_a_failing_template_says_why_in_a_sentence(templates: JinjaTemplates, template: str,
                                                           sentence: str) -> None:
    assert await failure(templates, template) == sentence


@pytest.mark.parametrize("template", [
    "{{ ''.__class__.__mro__ }}",
    "{{ start.__class__ }}",
    "{{ cycler.__init__.__globals__ }}",
])
async def test_underscore_attributes_are_unreachable(templates: JinjaTemplates, template: str) -> None:
    message = await failure(templates, template)
    assert message.startswith("Reading `__")
    assert message.endswith("is not allowed in a template.")


async def test_a_template_cannot_change_the_values_it_reads(templates: JinjaTemplates) -> None:
    message = await failure(templates, "{{ start['items'].append(4) }}")
    assert message == "Reading `append` is not allowed in a template."
    assert SCOPE["start"]["items"] == [1, 2, 3]


@pytest.mark.parametrize("template", [
    "{{ 'x' * 10**9 }}",
    "{{ [0] * 10**9 }}",
    "{{ 'x'.ljust(10**9) }}",
    "{{ 'x' | center(10**9) }}",
    "{{ [1] | batch(10**9, 0) | list }}",
    "{{ '%999999999d' % 1 }}",
    "{{ '{:>999999999}'.format(1) }}",
    "{{ ('a' * 5000).replace('', 'b' * 5000) }}",
    "{% set ns = namespace(t='x') %}{% for i in range(60) %}{% set ns.t = ns.t ~ ns.t %}{% endfor %}",
    "{% set ns = namespace(t=['x' * 1000]) %}{% for i in range(60) %}{% set ns.t = [ns.t, ns.t] %}{% endfor %}"
    "{{ ns.t }}",
])
async def test_a_value_over_the_size_limit_is_refused_before_it_is_made(templates: JinjaTemplates,
                                                                        template: str) -> None:
    assert await failure(templates, template) == \
        "The template was stopped: the template made a value longer than 10,000 characters."


async def test_a_huge_number_is_refused(templates: JinjaTemplates) -> None:
    assert await failure(templates, "{{ 9 ** (9 ** 9) }}") == \
        "The template was stopped: the template made a number too large to compute."


async def test_a_range_past_the_sandbox_cap_is_refused(templates: JinjaTemplates) -> None:
    assert await failure(templates, "{{ range(10**9) | list | length }}") == \
        "The template was stopped: a range of more than 100,000 numbers is not allowed."


@pytest.mark.parametrize("template", [
    "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}",
])
async def test_work_past_the_step_budget_is_stopped(templates: JinjaTemplates, template: str) -> None:
    assert await failure(templates, template) == \
        "The template was stopped: the template did more than 5,000 steps (loop iterations and calls)."


async def test_the_step_budget_is_per_render(templates: JinjaTemplates) -> None:
    template = "{% for i in range(4000) %}{% endfor %}done"
    assert [await templates.render(template, {}) for _ in range(3)] == ["done"] * 3


async def test_output_past_the_limit_is_refused(templates: JinjaTemplates) -> None:
    assert await failure(templates, "{% for i in range(3000) %}abcd{% endfor %}") == \
        "The template's text is longer than 10,000 characters."
