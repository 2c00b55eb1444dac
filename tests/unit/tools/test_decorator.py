"""Behaviour of `@tool`: schema generation, context injection, invocation and results."""

import asyncio
import enum
import threading
from types import SimpleNamespace
from typing import Annotated, Any, Literal, Optional

import pydantic
import pytest
from pydantic import BaseModel, Field

from elsai.errors import ToolError
from elsai.tools import AgentTool, FunctionTool, ToolContext, tool
from elsai.types import ToolResult


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    """A postal address."""

    street: str
    title: str = "home"  # a *property* called title must survive title stripping


class Forecast(BaseModel):
    city: str
    temperature: float


class Signal(BaseException):
    """Stand-in for a control-flow signal (e.g. an interrupt) that must not be swallowed."""


def make_context(tool_use: dict[str, Any] | None = None) -> ToolContext:
    tool_use = tool_use or {"toolUseId": "t1", "name": "x", "input": {}}
    agent = SimpleNamespace(session_id="sess", agent_id="agent")
    return ToolContext(tool_use=tool_use, agent=agent)  # type: ignore[arg-type]


def run(t: AgentTool, tool_input: Any, tool_use_id: str = "t1") -> ToolResult:
    tool_use = {"toolUseId": tool_use_id, "name": t.name, "input": tool_input}
    return asyncio.run(t.invoke(tool_use, make_context(tool_use)))  # type: ignore[arg-type]


def schema_of(t: FunctionTool[Any, Any]) -> dict[str, Any]:
    return t.spec["inputSchema"]["json"]


# --------------------------------------------------------------------------- schema


def test_basic_types_and_required() -> None:
    @tool
    def f(
        s: str,
        i: int,
        x: float,
        b: bool,
        tags: list[str],
        counts: dict[str, int],
        opt: int = 5,
    ) -> None:
        """Doc."""

    schema = schema_of(f)
    props = schema["properties"]
    assert schema["type"] == "object"
    assert props["s"]["type"] == "string"
    assert props["i"]["type"] == "integer"
    assert props["x"]["type"] == "number"
    assert props["b"]["type"] == "boolean"
    assert props["tags"] == {
        "type": "array",
        "items": {"type": "string"},
        "description": "Parameter tags",
    }
    assert props["counts"]["type"] == "object"
    assert props["counts"]["additionalProperties"] == {"type": "integer"}
    assert props["opt"]["default"] == 5
    assert schema["required"] == ["s", "i", "x", "b", "tags", "counts"]
    assert list(props) == ["s", "i", "x", "b", "tags", "counts", "opt"]


def test_optional_literal_enum_nested_model() -> None:
    @tool
    def f(
        units: Literal["c", "f"],
        color: Color,
        address: Address,
        note: Optional[str] = None,  # noqa: UP045 - testing the typing.Optional spelling
        maybe: int | None = None,
    ) -> None:
        """Doc."""

    schema = schema_of(f)
    props = schema["properties"]
    assert props["units"]["enum"] == ["c", "f"]
    assert schema["$defs"]["Color"]["enum"] == ["red", "blue"]
    assert props["color"]["$ref"] == "#/$defs/Color"
    address = schema["$defs"][props["address"]["$ref"].split("/")[-1]]
    assert address["required"] == ["street"]
    assert set(address["properties"]) == {"street", "title"}
    assert {"type": "null"} in props["note"]["anyOf"]
    assert {"type": "string"} in props["note"]["anyOf"]
    assert {"type": "integer"} in props["maybe"]["anyOf"]
    assert schema["required"] == ["units", "color", "address"]


def test_no_title_noise() -> None:
    @tool
    def f(city: str, address: Address | None = None) -> None:
        """Doc."""

    schema = schema_of(f)
    assert "title" not in schema
    assert "title" not in schema["properties"]["city"]
    address = schema["$defs"]["Address"]
    assert "title" not in address
    assert "title" in address["properties"]  # the field, not the pydantic title


def test_google_docstring() -> None:
    @tool
    def f(city: str, days: int = 1, other: str = "") -> str:
        """Get the weather forecast.

        Uses the national service.

        Args:
            city: The city name,
                for example Paris.
            days (int): How many days.

        Returns:
            The forecast.
        """
        return ""

    assert f.spec["description"] == "Get the weather forecast.\n\nUses the national service."
    props = schema_of(f)["properties"]
    assert props["city"]["description"] == "The city name, for example Paris."
    assert props["days"]["description"] == "How many days."
    assert props["other"]["description"] == "Parameter other"


def test_rest_docstring() -> None:
    @tool
    def f(city: str, days: int = 1) -> str:
        """Get the weather.

        :param city: The city name.
        :param int days: How many
            days ahead.
        :returns: The forecast.
        """
        return ""

    assert f.spec["description"] == "Get the weather."
    props = schema_of(f)["properties"]
    assert props["city"]["description"] == "The city name."
    assert props["days"]["description"] == "How many days ahead."


def test_annotated_field_description_and_constraints() -> None:
    @tool
    def f(n: Annotated[int, Field(description="A count.", ge=1)] = 1) -> int:
        """Doc.

        Args:
            n: Docstring text (the Field description wins).
        """
        return n

    prop = schema_of(f)["properties"]["n"]
    assert prop["description"] == "A count."
    assert prop["minimum"] == 1
    result = run(f, {"n": 0})
    assert result["status"] == "error"
    assert "n:" in result["content"][0]["text"]


def test_name_and_description_overrides() -> None:
    @tool(name="get-weather", description="Custom description.")
    def f(city: str) -> str:
        """Original."""
        return city

    assert f.name == "get-weather"
    assert f.spec["name"] == "get-weather"
    assert f.spec["description"] == "Custom description."
    assert f.tool_type == "function"


def test_bare_and_called_forms_are_equivalent() -> None:
    def f(city: str) -> str:
        """Doc."""
        return city

    assert tool(f).spec == tool()(f).spec
    assert tool(f).name == "f"


def test_missing_docstring_still_has_description() -> None:
    @tool
    def ping() -> str:
        return "pong"

    assert ping.spec["description"] == "ping"
    assert schema_of(ping) == {"type": "object", "properties": {}, "required": []}


@pytest.mark.parametrize("bad", ["has space", "", "x" * 65, "dots.not.ok"])
def test_bad_name_rejected(bad: str) -> None:
    with pytest.raises(ValueError, match="invalid tool name"):
        tool(name=bad)(lambda: None)


def test_lambda_name_rejected() -> None:
    with pytest.raises(ValueError, match="name="):
        tool(lambda: None)


def test_var_args_rejected() -> None:
    def star(*args: int) -> None: ...

    def double_star(a: int, **kwargs: int) -> None: ...

    with pytest.raises(TypeError, match=r"\*args/\*\*kwargs"):
        tool(star)
    with pytest.raises(TypeError, match="kwargs"):
        tool(double_star)


def test_generator_rejected() -> None:
    def gen() -> Any:
        yield 1

    with pytest.raises(TypeError, match="generator"):
        tool(gen)


def test_unsupported_type_gives_clear_error() -> None:
    class Opaque:
        pass

    def f(x: Opaque) -> None: ...

    with pytest.raises(TypeError, match="cannot build the input schema of tool 'f'"):
        tool(f)


def test_string_annotations_are_resolved() -> None:
    def f(x: "int", ctx: "ToolContext") -> int:
        return x

    t = tool(f)
    assert schema_of(t)["properties"]["x"]["type"] == "integer"
    assert t.context_parameter == "ctx"


def test_parameters_named_like_basemodel_attributes() -> None:
    @tool
    def f(json: str, model_config: int, schema: bool = False) -> dict[str, Any]:
        return {"json": json, "model_config": model_config, "schema": schema}

    assert set(schema_of(f)["properties"]) == {"json", "model_config", "schema"}
    result = run(f, {"json": "j", "model_config": 2})
    assert result["content"] == [{"json": {"json": "j", "model_config": 2, "schema": False}}]


# --------------------------------------------------------------------------- context


def test_context_injected_by_annotation_and_excluded_from_schema() -> None:
    seen: list[ToolContext] = []

    @tool
    def f(city: str, ctx: ToolContext) -> str:
        seen.append(ctx)
        return ctx.tool_use_id

    assert "ctx" not in schema_of(f)["properties"]
    assert schema_of(f)["required"] == ["city"]
    tool_use = {"toolUseId": "abc", "name": "f", "input": {"city": "Paris"}}
    context = make_context(tool_use)
    result = asyncio.run(f.invoke(tool_use, context))  # type: ignore[arg-type]
    assert seen == [context]
    assert result["content"] == [{"text": "abc"}]
    assert len(seen[0].idempotency_key) == 32


def test_optional_context_annotation_and_direct_call() -> None:
    @tool
    def f(city: str, ctx: ToolContext | None = None) -> str:
        return "with" if ctx else "without"

    assert set(schema_of(f)["properties"]) == {"city"}
    assert f(city="x") == "without"
    assert run(f, {"city": "x"})["content"] == [{"text": "with"}]


def test_context_parameter_named_explicitly() -> None:
    @tool(context="c")
    def f(city: str, c: Any) -> str:
        return type(c).__name__

    assert set(schema_of(f)["properties"]) == {"city"}
    assert run(f, {"city": "x"})["content"] == [{"text": "ToolContext"}]


def test_context_true_uses_tool_context_name() -> None:
    @tool(context=True)
    def f(tool_context: Any) -> str:
        return tool_context.tool_use_id

    assert run(f, {}, tool_use_id="zz")["content"] == [{"text": "zz"}]


def test_context_option_errors() -> None:
    def no_ctx(city: str) -> None: ...

    def with_ctx(ctx: ToolContext) -> None: ...

    with pytest.raises(TypeError, match="context='nope'"):
        tool(context="nope")(no_ctx)
    with pytest.raises(TypeError, match="context=True"):
        tool(context=True)(no_ctx)
    with pytest.raises(TypeError, match="context=False"):
        tool(context=False)(with_ctx)


# --------------------------------------------------------------------------- invoke


def test_sync_tool_runs_in_worker_thread() -> None:
    @tool
    def where() -> int:
        return threading.get_ident()

    async def main() -> tuple[int, ToolResult]:
        tool_use = {"toolUseId": "t", "name": "where", "input": {}}
        result = await where.invoke(tool_use, make_context(tool_use))  # type: ignore[arg-type]
        return threading.get_ident(), result

    loop_thread, result = asyncio.run(main())
    tool_thread = result["content"][0]["json"]
    assert isinstance(tool_thread, int)
    assert tool_thread != loop_thread


def test_sync_tools_overlap() -> None:
    # Both calls must be inside the function at once to pass the barrier; if invoke ran them
    # one after the other the barrier would time out and both would return errors.
    barrier = threading.Barrier(2, timeout=5)

    @tool
    def wait() -> str:
        barrier.wait()
        return "ok"

    async def main() -> list[ToolResult]:
        uses = [{"toolUseId": f"t{i}", "name": "wait", "input": {}} for i in range(2)]
        return await asyncio.gather(*(wait.invoke(u, make_context(u)) for u in uses))  # type: ignore[arg-type]

    results = asyncio.run(main())
    assert [r["status"] for r in results] == ["success", "success"]


def test_async_tool() -> None:
    @tool
    async def fetch(city: str, days: int = 2) -> dict[str, Any]:
        """Fetch."""
        await asyncio.sleep(0)
        return {"city": city, "days": days, "thread": threading.get_ident()}

    async def main() -> tuple[int, ToolResult]:
        use = {"toolUseId": "t", "name": "fetch", "input": {"city": "Oslo"}}
        return threading.get_ident(), await fetch.invoke(use, make_context(use))  # type: ignore[arg-type]

    loop_thread, result = asyncio.run(main())
    assert result["status"] == "success"
    assert result["content"] == [{"json": {"city": "Oslo", "days": 2, "thread": loop_thread}}]


def test_invalid_input_gives_readable_error() -> None:
    @tool
    def f(city: str, days: int, address: Address | None = None) -> str:
        return "unreachable"

    result = run(f, {"days": "many", "address": {"title": 3}})
    assert result["status"] == "error"
    assert result["toolUseId"] == "t1"
    text = result["content"][0]["text"]
    assert text.startswith("Invalid input for tool 'f':")
    assert "- city: Field required" in text
    assert "- days: Input should be a valid integer" in text
    assert "'many'" in text
    assert "address.street: Field required" in text


def test_input_is_coerced_to_annotated_types() -> None:
    received: dict[str, Any] = {}

    @tool
    def f(color: Color, address: Address, items: list[Address]) -> str:
        received.update(color=color, address=address, items=items)
        return "ok"

    result = run(f, {"color": "blue", "address": {"street": "Main"}, "items": [{"street": "A"}]})
    assert result["status"] == "success"
    assert received["color"] is Color.BLUE
    assert received["address"] == Address(street="Main")
    assert received["items"] == [Address(street="A")]


@pytest.mark.parametrize("bad_input", [["a"], "city=Paris", 42])
def test_non_object_input_is_an_error(bad_input: Any) -> None:
    @tool
    def f(city: str) -> str:
        return city

    result = run(f, bad_input)
    assert result["status"] == "error"
    assert "must be a JSON object" in result["content"][0]["text"]


def test_missing_input_treated_as_empty_object() -> None:
    @tool
    def ping() -> str:
        return "pong"

    assert run(ping, None)["content"] == [{"text": "pong"}]


def test_exception_becomes_error_result() -> None:
    @tool
    def boom() -> None:
        raise ValueError("bad value")

    @tool
    async def aboom() -> None:
        raise KeyError("k")

    result = run(boom, {})
    assert result == {
        "toolUseId": "t1",
        "status": "error",
        "content": [{"text": "Error: ValueError: bad value"}],
    }
    assert run(aboom, {})["content"] == [{"text": "Error: KeyError: 'k'"}]


def test_tool_error_message_is_clean() -> None:
    @tool
    def f() -> None:
        raise ToolError("city not found")

    result = run(f, {})
    assert result["status"] == "error"
    assert result["content"] == [{"text": "Error: city not found"}]


def test_base_exception_propagates() -> None:
    @tool
    def sync_signal() -> None:
        raise Signal("stop")

    @tool
    async def async_signal() -> None:
        raise Signal("stop")

    with pytest.raises(Signal):
        run(sync_signal, {})
    with pytest.raises(Signal):
        run(async_signal, {})


def test_cancellation_propagates() -> None:
    @tool
    async def slow() -> str:
        await asyncio.sleep(10)
        return "done"

    async def main() -> None:
        use = {"toolUseId": "t", "name": "slow", "input": {}}
        task = asyncio.ensure_future(slow.invoke(use, make_context(use)))  # type: ignore[arg-type]
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


# --------------------------------------------------------------------------- results


@pytest.mark.parametrize(
    ("value", "content"),
    [
        ("hello", [{"text": "hello"}]),
        ({"a": 1}, [{"json": {"a": 1}}]),
        ([1, 2], [{"json": [1, 2]}]),
        (3, [{"json": 3}]),
        (2.5, [{"json": 2.5}]),
        (True, [{"json": True}]),
        (None, [{"json": None}]),
        ((1, "a"), [{"json": [1, "a"]}]),
        (
            Forecast(city="Rome", temperature=21.5),
            [{"json": {"city": "Rome", "temperature": 21.5}}],
        ),
        (
            {"f": Forecast(city="A", temperature=1)},
            [{"json": {"f": {"city": "A", "temperature": 1.0}}}],
        ),
    ],
)
def test_return_value_conversion(value: Any, content: list[Any]) -> None:
    @tool
    def f() -> Any:
        return value

    result = run(f, {})
    assert result == {"toolUseId": "t1", "status": "success", "content": content}


def test_arbitrary_object_becomes_text() -> None:
    class Thing:
        def __str__(self) -> str:
            return "a thing"

    @tool
    def f() -> Any:
        return Thing()

    assert run(f, {})["content"] == [{"text": "a thing"}]


def test_tool_result_passed_through_with_id_fixed() -> None:
    @tool
    def f() -> dict[str, Any]:
        return {"status": "error", "content": [{"text": "custom"}]}

    @tool
    def g(ctx: ToolContext) -> dict[str, Any]:
        return {"toolUseId": ctx.tool_use_id, "status": "success", "content": [{"text": "x"}]}

    assert run(f, {}, tool_use_id="id9") == {
        "toolUseId": "id9",
        "status": "error",
        "content": [{"text": "custom"}],
    }
    assert run(g, {}, tool_use_id="id7") == {
        "toolUseId": "id7",
        "status": "success",
        "content": [{"text": "x"}],
    }


# --------------------------------------------------------------------------- the object


def test_decorated_function_is_agent_tool_and_still_callable() -> None:
    def weather(city: str, days: int = 1) -> str:
        """Weather."""
        return f"{city}:{days}"

    t = tool(weather)
    assert isinstance(t, AgentTool)
    assert isinstance(t, FunctionTool)
    assert t(city="Paris") == "Paris:1"
    assert t("Rome", 2) == "Rome:2"
    assert t.__name__ == "weather"
    assert t.__doc__ == "Weather."
    assert t.__wrapped__ is weather
    assert repr(t) == "<FunctionTool 'weather'>"


def test_async_direct_call_returns_coroutine() -> None:
    @tool
    async def f(x: int) -> int:
        return x * 2

    coro = f(x=4)
    assert asyncio.iscoroutine(coro)
    assert asyncio.run(coro) == 8


def test_redecorating_keeps_earlier_options() -> None:
    @tool(name="first", description="Kept.")
    def f(x: int) -> int:
        return x

    g = tool(name="second")(f)
    assert g.name == "second"
    assert g.spec["description"] == "Kept."
    assert g.func is f.func
    with pytest.raises(TypeError, match="already is an AgentTool"):
        tool(_OtherTool())  # type: ignore[call-overload]


def test_positional_only_parameters() -> None:
    @tool
    def f(a: int, /, b: int = 10) -> int:
        return a - b

    assert schema_of(f)["required"] == ["a"]
    assert run(f, {"a": 15})["content"] == [{"json": 5}]


def test_input_model_validates_like_invoke() -> None:
    @tool
    def f(n: int) -> int:
        return n

    with pytest.raises(pydantic.ValidationError):
        f.input_model.model_validate({"n": "x"})


class _OtherTool(AgentTool):
    @property
    def name(self) -> str:
        return "other"

    @property
    def spec(self) -> Any:
        return {"name": "other", "description": "d", "inputSchema": {"json": {}}}

    async def invoke(self, tool_use: Any, context: Any) -> Any:
        return None
