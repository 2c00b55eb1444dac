"""Reading a user's `tool_choice`: the Converse shapes, or the short strings "auto" and "any".

Providers only ever see the normalized Converse form (`{"auto": {}}`, `{"any": {}}` or
`{"tool": {"name": ...}}`) and map it onto their own API; a wrong value fails here, before any
request or write, with a message that shows the accepted forms.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from elsai.types.messages import ToolChoice

_FORMS = '"auto", "any", {"auto": {}}, {"any": {}} or {"tool": {"name": "<tool name>"}}'


def parse_tool_choice(value: Any) -> ToolChoice | None:
    """`value` as a Converse tool choice (None stays None: the provider's default)."""
    if value is None:
        return None
    if isinstance(value, str):
        if value in ("auto", "any"):
            return {"auto": {}} if value == "auto" else {"any": {}}
        raise ValueError(
            f"tool_choice {value!r} is not one of {_FORMS}; to force one tool write "
            f'{{"tool": {{"name": {value!r}}}}}'
        )
    if not isinstance(value, Mapping) or len(value) != 1:
        raise ValueError(f"tool_choice must be one of {_FORMS}, got {value!r}")
    ((key, body),) = value.items()
    if key in ("auto", "any") and isinstance(body, Mapping) and not body:
        return {"auto": {}} if key == "auto" else {"any": {}}
    if key == "tool" and isinstance(body, Mapping) and set(body) == {"name"}:
        name = body["name"]
        if isinstance(name, str) and name:
            return {"tool": {"name": name}}
    raise ValueError(f"tool_choice must be one of {_FORMS}, got {value!r}")


def check_tool_choice(choice: ToolChoice | None, tool_names: Iterable[str]) -> None:
    """Fail when `choice` forces a tool the model will not be offered."""
    if choice is None or "auto" in choice:
        return
    names = list(tool_names)
    if "any" in choice and not names:
        raise ValueError('tool_choice "any" forces a tool call, but the agent has no tools')
    if "tool" in choice and choice["tool"]["name"] not in names:
        raise ValueError(
            f"tool_choice names tool {choice['tool']['name']!r}, which the agent does not have; "
            f"its tools: {names}"
        )
