"""ToolRegistry: registration, lookup, duplicate names and spec order."""

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from elsai.tools import AgentTool, FunctionTool, ToolContext, ToolRegistry, tool
from elsai.types import ToolResult, ToolSpec, ToolUse


class EchoTool(AgentTool):
    """A hand-written AgentTool, to check the registry does not assume FunctionTool."""

    def __init__(self, name: str = "echo") -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    @property
    def spec(self) -> ToolSpec:
        return {"name": self._name, "description": "Echo.", "inputSchema": {"json": {}}}

    async def invoke(self, tool_use: ToolUse, context: ToolContext) -> ToolResult:
        return {"toolUseId": tool_use["toolUseId"], "status": "success", "content": []}


@tool
def weather(city: str) -> str:
    """Get the weather."""
    return f"sunny in {city}"


def plain_add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_mixed_items_and_lookup() -> None:
    echo = EchoTool()
    registry = ToolRegistry([weather, plain_add, echo])

    assert registry.names == ["weather", "plain_add", "echo"]
    assert len(registry) == 3
    assert registry.get("weather") is weather
    assert registry.get("echo") is echo
    wrapped = registry.get("plain_add")
    assert isinstance(wrapped, FunctionTool)
    assert wrapped.__wrapped__ is plain_add
    assert registry.get("missing") is None
    assert list(registry) == [weather, wrapped, echo]


def test_plain_function_is_invokable_after_registration() -> None:
    registry = ToolRegistry([plain_add])
    t = registry.get("plain_add")
    assert t is not None
    use: ToolUse = {"toolUseId": "u", "name": "plain_add", "input": {"a": 2, "b": 3}}
    context = ToolContext(tool_use=use, agent=SimpleNamespace())  # type: ignore[arg-type]
    result = asyncio.run(t.invoke(use, context))
    assert result == {"toolUseId": "u", "status": "success", "content": [{"json": 5}]}


def test_contains() -> None:
    registry = ToolRegistry([weather])
    assert "weather" in registry
    assert "nope" not in registry
    assert weather in registry
    assert tool(name="weather")(weather.func) not in registry  # same name, other object
    assert 42 not in registry


def test_duplicate_names_rejected() -> None:
    with pytest.raises(ValueError, match="duplicate tool name 'echo'"):
        ToolRegistry([EchoTool(), EchoTool()])

    registry = ToolRegistry([weather])
    with pytest.raises(ValueError, match="'weather'"):
        registry.register(tool(name="weather")(plain_add))
    assert registry.get("weather") is weather
    assert len(registry) == 1


def test_register_returns_stored_tool() -> None:
    registry = ToolRegistry()
    stored = registry.register(plain_add)
    assert stored is registry.get("plain_add")
    assert registry.register(weather) is weather


def test_non_tool_rejected() -> None:
    with pytest.raises(TypeError, match="not a tool"):
        ToolRegistry(["weather"])  # type: ignore[list-item]


def test_specs_in_registration_order_and_cached() -> None:
    registry = ToolRegistry([EchoTool("b"), weather, EchoTool("a")])
    specs = registry.specs()
    assert [s["name"] for s in specs] == ["b", "weather", "a"]
    assert specs[1] is weather.spec

    again = registry.specs()
    assert again == specs
    assert all(x is y for x, y in zip(again, specs, strict=True))
    again.append({"name": "junk", "description": "", "inputSchema": {}})  # caller's copy
    assert len(registry.specs()) == 3

    registry.register(plain_add)
    assert [s["name"] for s in registry.specs()] == ["b", "weather", "a", "plain_add"]


def test_specs_computed_once() -> None:
    calls: list[int] = []

    class CountingTool(EchoTool):
        @property
        def spec(self) -> ToolSpec:
            calls.append(1)
            return super().spec

    registry = ToolRegistry([CountingTool()])
    registry.specs()
    registry.specs()
    assert len(calls) == 1


def test_empty_registry() -> None:
    registry: ToolRegistry = ToolRegistry()
    assert registry.specs() == []
    assert registry.names == []
    assert len(registry) == 0
    assert list(registry) == []
    assert len(ToolRegistry(None)) == 0
    assert repr(ToolRegistry([weather])) == "ToolRegistry(['weather'])"


def test_any_callable_object_is_wrapped() -> None:
    class Greeter:
        __name__ = "greet"

        def __call__(self, who: str) -> str:
            return f"hi {who}"

    registry = ToolRegistry([Greeter()])
    t: Any = registry.get("greet")
    assert t is not None
    assert t.spec["inputSchema"]["json"]["required"] == ["who"]
