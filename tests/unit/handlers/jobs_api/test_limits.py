"""One limits module: the handler enforces exactly `elsai.serverless.limits`, and its id
pattern agrees with the session store's own id rules."""

from __future__ import annotations

import random
import re

import pytest

from elsai.ids import validate_id
from elsai.serverless import limits
from tests.unit.handlers.jobs_api.helpers import Api

ALLOWED = "".join(c for c in map(chr, range(32, 127)) if re.fullmatch(f"[{limits.ID_CHARS}]", c))


def _ids(count: int) -> list[str]:
    rng = random.Random(9)
    out = [ALLOWED, "a" * limits.MAX_ID_LENGTH, "a.b:c_d-e", "x"]
    while len(out) < count:
        text = "".join(rng.choice(ALLOWED) for _ in range(rng.randint(1, limits.MAX_ID_LENGTH)))
        out.append(text.replace("..", ".a"))
    return out


def test_every_id_the_pattern_admits_the_store_accepts_unless_it_holds_dotdot() -> None:
    pattern = re.compile(limits.ID_PATTERN)
    for value in _ids(300):
        assert pattern.match(value), value
        assert validate_id(value, "id") == value
    # '..' passes the character set; the handler refuses it through validate_id (see below).
    assert pattern.match("a..b")
    with pytest.raises(ValueError):
        validate_id("a..b")


def test_the_length_bound_is_the_stores() -> None:
    longest = "a" * limits.MAX_ID_LENGTH
    assert re.match(limits.ID_PATTERN, longest)
    assert not re.match(limits.ID_PATTERN, longest + "a")
    with pytest.raises(ValueError, match="limit"):
        validate_id(longest + "a")


@pytest.mark.parametrize("field", ["session_id", "agent_id"])
def test_the_handler_takes_ids_up_to_the_limit_and_refuses_beyond(api: Api, field: str) -> None:
    longest = "s" * limits.MAX_ID_LENGTH
    assert api.post_job({"prompt": "hi", field: longest}).status == 202
    assert api.post_job({"prompt": "hi", field: longest + "s"}).status == 400
    assert api.post_job({"prompt": "hi", field: "a..b"}).status == 400


def test_the_handler_takes_prompts_up_to_the_limit_and_refuses_beyond(api: Api) -> None:
    assert api.post_job({"prompt": "p" * limits.MAX_PROMPT_CHARS}).status == 202
    assert api.post_job({"prompt": "p" * (limits.MAX_PROMPT_CHARS + 1)}).status == 400


def test_answers_are_bounded_by_the_limits(api: Api) -> None:
    job_id = api.post_job({"prompt": "hi"}).body["job_id"]
    many = [
        {"interruptId": f"i{n}", "response": n} for n in range(limits.MAX_INTERRUPT_RESPONSES + 1)
    ]
    assert api.answer(job_id, {"responses": many}).status == 400
    long_id = [{"interruptId": "i" * (limits.MAX_INTERRUPT_ID_CHARS + 1), "response": 1}]
    assert api.answer(job_id, {"responses": long_id}).status == 400
    # Within the limits the body is valid: the refusal is about the job's state (never parked).
    within = [{"interruptId": "i" * limits.MAX_INTERRUPT_ID_CHARS, "response": 1}]
    assert api.answer(job_id, {"responses": within}).status == 409


def test_job_ids_follow_the_execution_name_limit(api: Api) -> None:
    assert api.get_job("a" * limits.MAX_JOB_ID_LENGTH).status == 404
    assert api.get_job("a" * (limits.MAX_JOB_ID_LENGTH + 1)).status == 400
