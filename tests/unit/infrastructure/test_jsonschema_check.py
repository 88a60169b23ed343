"""The SchemaCheck port on jsonschema: a bad schema and a failing value, each in one readable line."""

from infrastructure.tools.jsonschema_check import JsonSchemaCheck

PERSON = {"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"]}


def test_a_valid_schema_and_a_matching_value_have_no_problem() -> None:
    check = JsonSchemaCheck()
    assert check.schema_problem(PERSON) is None
    assert check.value_problem({"age": 3}, PERSON) is None


def test_a_schema_with_a_wrong_keyword_value_is_named() -> None:
    problem = JsonSchemaCheck().schema_problem({"type": "objekt"})
    assert problem is not None
    assert "objekt" in problem


def test_a_failing_value_names_where_it_fails() -> None:
    assert JsonSchemaCheck().value_problem({"age": "three"}, PERSON) == "$.age: 'three' is not of type 'integer'"
    assert JsonSchemaCheck().value_problem({}, PERSON) == "'age' is a required property"


def test_a_long_problem_is_cut_to_one_short_line() -> None:
    problem = JsonSchemaCheck().value_problem({"age": "x" * 1000}, PERSON)
    assert problem is not None
    assert len(problem) == 300
    assert problem.endswith("…")
