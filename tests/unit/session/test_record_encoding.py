"""How a record becomes its stored bytes: any JSON data round-trips, nothing else is accepted.

Plain JSON data takes pydantic-core's encoder and other values the standard library's, so the
two must agree on what comes back, and a value JSON has no form for must still fail loudly.
"""

from __future__ import annotations

import datetime
import enum
import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from elsai.session.layout.records import MessageRecord, dump, load

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
    | st.binary(max_size=20)
)
_DATA = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


def _record(data: Any) -> MessageRecord:
    return MessageRecord(
        message_id=0,
        created_at="2026-12-01T00:00:00.000000Z",
        message={"role": "user", "content": [{"json": data}]},
    )


def _same(a: Any, b: Any) -> bool:
    """Equality in which NaN equals NaN (it is stored as NaN and read back as one)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b


@given(_DATA)
def test_any_json_data_with_bytes_reads_back_as_it_was_written(data: Any) -> None:
    stored = load(MessageRecord, dump(_record(data)), "message_0.json")
    assert _same(stored.message["content"][0]["json"], data)


def test_plain_data_is_indented_utf8_that_any_json_reader_parses() -> None:
    data = {"text": "café ☃", "n": 3, "x": 1.5e-7, "ok": True, "none": None, "list": [1, "a"]}
    raw = dump(_record(data))
    assert "café ☃".encode() in raw  # UTF-8, not \\u escapes
    assert raw.startswith(b'{\n "message_id": 0,\n')  # one-space indent, as before
    assert json.loads(raw)["message"]["content"][0]["json"] == data


def test_a_lone_surrogate_is_stored_escaped_and_reads_back() -> None:
    raw = dump(_record({"text": "bad \ud800 half"}))
    assert b"\\ud800" in raw
    assert load(MessageRecord, raw, "m").message["content"][0]["json"]["text"] == "bad \ud800 half"


@pytest.mark.parametrize(
    "value", [datetime.datetime(2026, 1, 1), {1, 2}, object()], ids=["datetime", "set", "object"]
)
def test_a_value_json_has_no_form_for_is_refused_not_converted(value: Any) -> None:
    with pytest.raises(TypeError, match="is not JSON-serialisable"):
        dump(_record({"value": value}))


class _Level(enum.IntEnum):
    HIGH = 2


class _Name(str):
    pass


def test_subclasses_of_json_types_are_stored_as_their_plain_values() -> None:
    raw = dump(_record({"level": _Level.HIGH, "name": _Name("ada"), "ratio": math.inf}))
    back = load(MessageRecord, raw, "m").message["content"][0]["json"]
    assert back == {"level": 2, "name": "ada", "ratio": math.inf}
    assert type(back["level"]) is int and type(back["name"]) is str
