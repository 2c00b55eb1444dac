"""Fuzzed bad input: every malformed request gets a 4xx JSON ``{"error": ...}``, never a 5xx.

The cases come from a seeded, hand-rolled generator (no extra dependency): non-JSON text,
random mutations of a valid body, JSON that is not an object, missing or wrong-typed fields,
out-of-range lengths, extra fields, ids the session store refuses, lone surrogates, deep
nesting, oversized payloads, odd content types and base64 flags, and odd path ids.
Every test runs twice: without tenant isolation and with it (`jobs_api.owner`'s checks).
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

from tests.unit.handlers.jobs_api.helpers import Api, FakeContext, Reply, make_event

SEED = 20_260_501
WEIRD_STRINGS: list[Any] = [
    "", " ", "..", "a..b", "a/b", "a\\b", "x" * 129, "a b", "ü", "\n", "\x00", "\u202e", "😀",
    "\ud800", "%2e%2e", "*", "?", "#",
]  # fmt: skip
WRONG_TYPES: list[Any] = [0, 1, -1, 1.5, 1e308, True, False, None, [], ["x"], {}, {"text": "x"}]


@pytest.fixture(autouse=True, params=["shared", "owner"])
def _tenancy(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.param == "owner":
        monkeypatch.setenv("ELSAI_TENANCY", "owner")


def _raw(value: Any) -> str:
    return json.dumps(value)


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _mutants(rng: random.Random, valid: str, count: int) -> Iterator[str]:
    """Random byte-level edits of a valid body, kept only when they are no longer JSON."""
    alphabet = '{}[]":,\\ \t\n0123456789abcdefnulltrue\x00\x7f\u00e9\ud800'
    made = 0
    while made < count:
        text = list(valid)
        for _ in range(rng.randint(1, 4)):
            pos = rng.randrange(len(text) + 1)
            action = rng.choice(["insert", "delete", "replace", "truncate"])
            if action == "insert":
                text.insert(pos, rng.choice(alphabet))
            elif action == "delete" and pos < len(text):
                del text[pos]
            elif action == "replace" and pos < len(text):
                text[pos] = rng.choice(alphabet)
            elif action == "truncate":
                text = text[:pos]
        mutant = "".join(text)
        try:
            json.loads(mutant)
        except (ValueError, RecursionError):
            made += 1
            yield mutant


def _random_text(rng: random.Random) -> str:
    size = rng.choice([1, 2, 5, 20, 300])
    return "".join(
        chr(rng.choice([rng.randrange(32, 127), rng.randrange(0, 0x2FFF)])) for _ in range(size)
    )


def _non_json(rng: random.Random, valid: str) -> list[str]:
    fixed = [
        " ", "{", "}", "[", "nul", "tru", "{prompt: 'x'}", "{'prompt': 'x'}", "prompt=hi", "<xml/>",
        "\x00", '{"prompt": "x"', '{"prompt": "x",}', '{"prompt": "x"}}', "\ufeff" + valid,
        '{"prompt": "\\x41"}', '{"prompt": "\\ud800', "undefined", "01", "--1",
    ]  # fmt: skip
    randoms = [t for t in (_random_text(rng) for _ in range(60)) if not _parses(t)][:30]
    return fixed + randoms + list(_mutants(rng, valid, 50))


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _common_non_objects() -> list[str]:
    return [
        "0",
        "1.5",
        "-1",
        '"prompt"',
        "true",
        "false",
        "null",
        "[]",
        "[1, 2]",
        "NaN",
        "Infinity",
        "1e999",
    ]


def start_job_bodies() -> list[str]:
    """≥ 200 bodies POST /jobs must refuse."""
    rng = random.Random(SEED)
    valid = _raw({"prompt": "Process orders 1, 2 and 3", "session_id": "s-1", "agent_id": "a-1"})
    cases = _non_json(rng, valid) + _common_non_objects()
    cases += [
        _raw([{"prompt": "x"}]),
        _raw({"Prompt": "x"}),
        _raw({"prompt ": "x"}),
        _raw({"text": "x"}),
    ]
    cases += [
        _raw({}),
        _raw({"session_id": "s"}),
        _raw({"messages": [{"role": "user", "content": "x"}]}),
    ]
    cases += [_raw({"prompt": value}) for value in WRONG_TYPES]
    cases += [
        _raw({"prompt": ""}),
        _raw({"prompt": "x" * 100_001}),
        _raw({"prompt": "x" * 1_000_000}),
    ]
    cases += [_raw({"prompt": "😀" * 100_000})]  # valid length, too big for Step Functions: 413
    cases += [
        '{"prompt": "\\ud800"}',
        '{"prompt": "a\\udfff"}',
        '{"prompt": "x", "session_id": "\\ud83d"}',
    ]
    for name in [
        "extra",
        "__proto__",
        "constructor",
        "Session_ID",
        "prompt2",
        "\ud800",
        "x" * 10_000,
    ]:
        cases.append(_raw({"prompt": "x", name: 1}))
    cases.append(_raw({"prompt": "x", **{f"f{i}": i for i in range(1000)}}))
    for field in ("session_id", "agent_id"):
        cases += [_raw({"prompt": "x", field: value}) for value in WEIRD_STRINGS]
        cases += [_raw({"prompt": "x", field: value}) for value in WRONG_TYPES if value is not None]
    cases.append(_raw({"prompt": "x", "agent_id": None}))
    cases += [
        _deep(100_000),
        '{"prompt": ' + _deep(50_000) + "}",
        '{"prompt": "x", "z": ' + _deep(10_000) + "}",
    ]
    cases += [_raw({"prompt": {"nested": [{"deep": "x" * 10}] * 50}})]
    return cases


def answer_bodies() -> list[str]:
    """≥ 100 bodies POST /jobs/{id}/responses must refuse."""
    rng = random.Random(SEED + 1)
    item = {"interruptId": "interrupt-1", "response": {"ok": True}}
    valid = _raw({"responses": [item]})
    cases = _non_json(rng, valid) + _common_non_objects()
    cases += [
        _raw({}),
        _raw({"interrupt_responses": [item]}),
        _raw([item]),
        _raw({"responses": item}),
    ]
    cases += [_raw({"responses": value}) for value in WRONG_TYPES if value != []]
    cases += [_raw({"responses": []}), _raw({"responses": [item] * 101})]
    cases += [_raw({"responses": [item], "extra": 1}), _raw({"responses": [{**item, "extra": 1}]})]
    cases += [_raw({"responses": [{"response": 1}]}), _raw({"responses": [{"interruptId": "i"}]})]
    cases += [_raw({"responses": [{"interruptId": value, "response": 1}]}) for value in WRONG_TYPES]
    cases += [_raw({"responses": [{"interruptId": "", "response": 1}]})]
    cases += [_raw({"responses": [{"interruptId": "x" * 257, "response": 1}]})]
    cases += ['{"responses": [{"interruptId": "\\ud800", "response": 1}]}']
    cases += ['{"responses": [{"interruptId": "i", "response": ' + _deep(100_000) + "}]}"]
    cases += [
        _raw({"responses": [{"interruptId": "i", "response": "x" * 300_000}]})
    ]  # > 256 KiB: 413
    return cases


def assert_refused(reply: Reply, what: str) -> None:
    assert 400 <= reply.status < 500, (what[:200], reply.status, reply.body)
    assert isinstance(reply.body, dict) and isinstance(reply.body.get("error"), str), (
        what[:200],
        reply.body,
    )


def _call(api: Api, event: dict[str, Any]) -> Reply:
    raw = api.module.handler(event, FakeContext())
    json.dumps(raw)  # the Lambda runtime can serialise it ...
    raw["body"].encode("utf-8")  # ... and the body is valid UTF-8 for the client
    return Reply.of(raw)


def test_generators_are_big_enough() -> None:
    assert len(start_job_bodies()) >= 200
    assert len(answer_bodies()) >= 100
    assert start_job_bodies() == start_job_bodies()  # seeded: the same cases every run


def test_fuzzed_start_job_bodies_are_refused_with_4xx_json(api: Api) -> None:
    statuses: dict[int, int] = {}
    for body in start_job_bodies():
        reply = _call(api, make_event("post_jobs.json", raw_body=body))
        assert_refused(reply, body)
        statuses[reply.status] = statuses.get(reply.status, 0) + 1
    assert api.executions() == []  # nothing was started by any of them
    assert set(statuses) <= {400, 413}, statuses
    assert statuses.get(413) == 1


def test_fuzzed_answer_bodies_are_refused_with_4xx_json(api: Api) -> None:
    job_id = api.post_job({"prompt": "hi"}).body["job_id"]
    for body in answer_bodies():
        event = make_event(
            "post_job_responses.json", path=f"/jobs/{job_id}/responses", raw_body=body
        )
        assert_refused(_call(api, event), body)


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("text/plain", "prompt"),
        ("application/xml", "<prompt>x</prompt>"),
        ("application/x-www-form-urlencoded", "prompt=hi"),
        ("application/x-www-form-urlencoded", "%%%"),
        ("multipart/form-data; boundary=xyz", "--xyz\r\nnot a part\r\n--xyz--"),
        ("multipart/form-data", "no boundary"),
        ("application/json; charset=utf-16", "\x00{"),
    ],
)
def test_odd_content_types_are_4xx(api: Api, content_type: str, body: str) -> None:
    event = make_event("post_jobs.json", raw_body=body, headers={"Content-Type": content_type})
    assert_refused(_call(api, event), f"{content_type}: {body}")
    assert api.executions() == []


def test_json_body_is_read_whatever_the_content_type(api: Api) -> None:
    """Lenient on purpose: `curl -d` sends form-urlencoded; the body is still a JSON object."""
    for content_type in ["text/plain", "application/x-www-form-urlencoded"]:
        event = make_event(
            "post_jobs.json", raw_body='{"prompt": "x"}', headers={"Content-Type": content_type}
        )
        assert _call(api, event).status == 202


@pytest.mark.parametrize(
    "encoded",
    [
        "!!!not base64!!!",
        base64.b64encode(b"\xff\xfe\xfa").decode(),
        base64.b64encode(b"[").decode(),
        "a",
    ],
)
def test_bad_base64_bodies_are_4xx(api: Api, encoded: str) -> None:
    event = make_event("post_jobs.json")
    event["body"] = encoded  # the SAM fixture keeps isBase64Encoded: true
    assert event["isBase64Encoded"] is True
    assert_refused(_call(api, event), encoded)


def test_fuzzed_path_ids_are_4xx(api: Api) -> None:
    rng = random.Random(SEED + 2)
    ids = [s for s in WEIRD_STRINGS if isinstance(s, str) and s and "/" not in s]
    ids += [_random_text(rng).replace("/", "") or "-" for _ in range(40)]
    for value in ids:
        for fixture, path in [
            ("get_job.json", f"/jobs/{value}"),
            ("get_session.json", f"/sessions/{value}"),
        ]:
            assert_refused(_call(api, make_event(fixture, path=path)), path)
        event = make_event("post_job_responses.json", path=f"/jobs/{value}/responses")
        assert_refused(_call(api, event), value)


def test_fuzzed_idempotency_keys_never_5xx(api: Api) -> None:
    rng = random.Random(SEED + 3)
    keys = [
        *(s for s in WEIRD_STRINGS if isinstance(s, str)),
        *(_random_text(rng) for _ in range(30)),
    ]
    for key in keys:
        event = make_event(
            "post_jobs.json", body={"prompt": "hi"}, headers={"Idempotency-Key": key}
        )
        reply = _call(api, event)
        assert reply.status in (202, 400), (key, reply.body)
        if reply.status == 400:
            assert_refused(reply, key)
