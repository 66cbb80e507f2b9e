"""Property-based tests against the OpenAPI schema (schemathesis): generated requests, valid
and invalid, never cause a server error and every response matches the documented schema.

Cases come from each operation's hypothesis strategy (schemathesis 4.15's pytest plugin does not
run under pytest 9; newer releases need a jsonschema-rs that langgraph-api refuses).
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.generation import GenerationMode

from tests.api.conftest import Keys, Served

OPERATIONS = [("/rag/ask", "POST"), ("/rag/retrieve", "POST"), ("/rag/source", "GET"),
              ("/collections", "GET"), ("/health", "GET"), ("/metrics", "GET")]


@pytest.fixture(scope="module")
def api_schema(keyed: Served) -> schemathesis.BaseSchema:
    """The service's own OpenAPI schema, called in-process."""
    return schemathesis.openapi.from_asgi("/openapi.json", keyed.client.app)


def test_every_operation_is_covered(api_schema: schemathesis.BaseSchema) -> None:
    documented = {(path, method.upper()) for path, methods in api_schema.items()
                  for method in methods}
    assert documented == {*OPERATIONS, ("/rag/ingest", "POST")}  # ingest: tests of its own


CASES = [(path, method, GenerationMode.POSITIVE) for path, method in OPERATIONS] + [
    (path, method, GenerationMode.NEGATIVE) for path, method in OPERATIONS[:3]]
"""Valid requests for every operation; invalid ones for those that take input."""


@pytest.mark.parametrize("path, method, mode", CASES)
def test_generated_requests_conform_to_the_schema(api_schema: schemathesis.BaseSchema,
                                                  keys: Keys, path: str, method: str,
                                                  mode: GenerationMode) -> None:
    operation = api_schema[path][method]

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=8, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    def check(case: schemathesis.Case) -> None:
        case.call_and_validate(headers=Keys.header(keys.admin))

    check()
