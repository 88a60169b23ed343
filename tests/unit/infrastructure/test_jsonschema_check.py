"""The SchemaCheck port on jsonschema: a bad schema and a failing value, each in one readable line;
a client's schema never makes the server fetch anything."""

from infrastructure.tools.jsonschema_check import JsonSchemaCheck

PERSON = {"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"]}


async def test_a_valid_schema_and_a_matching_value_have_no_problem() -> None:
    check = JsonSchemaCheck()
    assert check.schema_problem(PERSON) is None
    assert await check.value_problem({"age": 3}, PERSON) is None


def test_a_schema_with_a_wrong_keyword_value_is_named() -> None:
    problem = JsonSchemaCheck().schema_problem({"type": "objekt"})
    assert problem is not None
    assert "objekt" in problem


async def test_a_failing_value_names_where_it_fails() -> None:
    assert await JsonSchemaCheck().value_problem({"age": "three"}, PERSON) == "$.age: 'three' is not of type 'integer'"
    assert await JsonSchemaCheck().value_problem({}, PERSON) == "'age' is a required property"


async def test_a_long_problem_is_cut_to_one_short_line() -> None:
    problem = await JsonSchemaCheck().value_problem({"age": "x" * 1000}, PERSON)
    assert problem is not None
    assert len(problem) == 300
    assert problem.endswith("…")


def test_a_reference_outside_the_schema_is_refused_unfetched() -> None:
    for ref in ("http://169.254.169.254/latest/meta-data", "file:///etc/passwd", "other.json#/a"):
        problem = JsonSchemaCheck().schema_problem({"type": "object", "properties": {"a": {"$ref": ref}}})
        assert problem == f"the reference {ref!r} points outside the schema: only `#…` references are allowed"


def test_a_reference_inside_the_schema_must_point_somewhere() -> None:
    good = {"$defs": {"age": {"type": "integer"}}, "properties": {"age": {"$ref": "#/$defs/age"}}}
    assert JsonSchemaCheck().schema_problem(good) is None
    bad = {"properties": {"age": {"$ref": "#/$defs/missing"}}}
    assert JsonSchemaCheck().schema_problem(bad) == "the reference '#/$defs/missing' points nowhere in the schema"


async def test_a_local_reference_is_followed_when_a_value_is_checked() -> None:
    schema = {"$defs": {"age": {"type": "integer"}}, "properties": {"age": {"$ref": "#/$defs/age"}}}
    assert await JsonSchemaCheck().value_problem({"age": "x"}, schema) == "$.age: 'x' is not of type 'integer'"


def test_a_schema_draft_that_is_not_a_string_is_a_problem_not_a_crash() -> None:
    problem = JsonSchemaCheck().schema_problem({"$schema": 5, "type": "object"})
    assert problem == "$schema must be a string naming a draft"
