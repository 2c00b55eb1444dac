"""docs/openapi.json is the jobs API's document as its table, models and limits make it now."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from elsai.serverless import limits
from elsai.serverless.contract import openapi
from elsai.serverless.contract.jobs_api import JobsApi

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "openapi.json"


def _operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(m, p, op) for p, item in doc["paths"].items() for m, op in item.items()]


def test_the_published_document_is_not_stale() -> None:
    assert DOC.read_text(encoding="utf-8") == openapi.render(), (
        "docs/openapi.json is stale: run `make openapi` and commit it"
    )


def test_the_jobs_api_page_links_the_document() -> None:
    assert "(openapi.json)" in (ROOT / "docs" / "jobs-api.md").read_text(encoding="utf-8")


# 422 is the corrupt-session report of the two routes that read stored sessions, never a
# validation error (invalid input is 400, whatever Powertools would declare).
CORRUPT_SESSION_ROUTES = {("get", "/sessions/{session_id}"), ("get", "/jobs/{job_id}/events")}


def test_every_answer_is_documented_with_the_error_body_and_422_only_for_corrupt_sessions() -> None:
    doc = json.loads(DOC.read_text(encoding="utf-8"))
    described = {(m.upper(), p, op["operationId"]) for m, p, op in _operations(doc)}
    assert described == {(op.method, op.path, op.id) for op in JobsApi.operations()}
    for method, path, op in _operations(doc):
        statuses = set(op["responses"])
        assert ("422" in statuses) == ((method, path) in CORRUPT_SESSION_ROUTES), (method, path)
        assert {"400", "401", "403", "500", "503"} <= statuses, (method, path)
        if "{" in path:
            assert "404" in statuses, (method, path)
        for status in statuses - {"200", "202"}:
            schema = op["responses"][status]["content"]["application/json"]["schema"]
            assert {"$ref": "#/components/schemas/Error"} in [schema, *schema.get("anyOf", [])]
    assert doc["components"]["schemas"]["Error"]["required"] == ["error"]


def test_bodies_are_required_and_ids_follow_the_handlers_constants() -> None:
    doc = json.loads(DOC.read_text(encoding="utf-8"))
    for method, path, op in _operations(doc):
        if method == "post" and not path.endswith("/upgrade"):  # an upgrade has no body
            assert op["requestBody"]["required"] is True, path
        for param in op["parameters"]:
            if param["name"] == "job_id":
                assert param["schema"]["pattern"] == limits.JOB_ID_PATTERN
                assert param["schema"]["maxLength"] == limits.MAX_JOB_ID_LENGTH
            if param["name"] == "session_id":
                assert param["schema"]["pattern"] == limits.SAFE_ID_PATTERN
    start = doc["paths"]["/jobs"]["post"]
    (key,) = [p for p in start["parameters"] if p["name"] == "Idempotency-Key"]
    assert key["in"] == "header" and key["schema"]["maxLength"] == limits.MAX_IDEMPOTENCY_KEY_CHARS
    prompt = doc["components"]["schemas"]["StartJob"]["properties"]["prompt"]
    assert prompt["maxLength"] == limits.MAX_PROMPT_CHARS
    assert set(doc["components"]["securitySchemes"]) == {"sigv4", "cognito"}


def test_the_safe_id_pattern_is_the_stores_rule_on_the_api_characters() -> None:
    from elsai.ids import validate_id

    safe = re.compile(limits.SAFE_ID_PATTERN)
    for candidate in ["a", "a.b", ".a", "a.", "a:b-c_d", ".", "..", "a..b", "a...", "..a", "a b"]:
        try:
            validate_id(candidate)
            store_ok = re.fullmatch(limits.ID_PATTERN, candidate) is not None
        except ValueError:
            store_ok = False
        assert (safe.fullmatch(candidate) is not None) == store_ok, candidate
