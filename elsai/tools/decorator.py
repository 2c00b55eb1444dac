"""`@tool`: turn a plain (sync or async) function into an AgentTool.

The result is still callable like the original function, so decorating a function never
breaks the code (and tests) that already call it directly.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import functools
import inspect
from collections.abc import Callable
from typing import Any, Generic, ParamSpec, TypeVar, overload

import pydantic
from pydantic_core import to_jsonable_python

from elsai.errors import ToolError
from elsai.tools.base import AgentTool, error_result, success_result
from elsai.tools.context import ToolContext
from elsai.tools.schema import (
    build_input_model,
    find_context_parameter,
    format_validation_error,
    parse_docstring,
    resolved_parameters,
    validate_tool_name,
)
from elsai.tools.timeout import (
    ToolTimeoutError,
    call_with_timeout,
    run_in_daemon_thread,
    validate_timeout,
)
from elsai.types import ToolResult, ToolSpec, ToolUse

P = ParamSpec("P")
R = TypeVar("R")

_RESULT_KEYS = frozenset({"toolUseId", "status", "content"})


class FunctionTool(AgentTool, Generic[P, R]):
    """An AgentTool backed by a Python function; built by `@tool`.

    Spec and input model are computed once, at decoration, so schema problems surface on
    import rather than mid-conversation.
    """

    # Copied from the function by functools.update_wrapper; declared for type checkers.
    __name__: str
    __wrapped__: Callable[P, R]

    def __init__(
        self,
        func: Callable[P, R],
        *,
        name: str | None = None,
        description: str | None = None,
        context: bool | str | None = None,
        timeout: float | None = None,
    ) -> None:
        """Build spec and input model from `func`; see `tool` for the options."""
        if not callable(func):
            raise TypeError(f"@tool needs a function, got {type(func).__name__}")
        if inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func):
            raise TypeError("@tool does not support generator functions (streaming tools)")
        self._func = func
        self._options: dict[str, Any] = {
            "name": name,
            "description": description,
            "context": context,
            "timeout": timeout,
        }
        self._timeout = validate_timeout(timeout)
        self._name = validate_tool_name(name if name is not None else _func_name(func))
        self._is_async = inspect.iscoroutinefunction(func)
        params = resolved_parameters(func)
        self._params = [p for p, _ in params]
        self._context_param = find_context_parameter(params, context)
        docs = parse_docstring(inspect.getdoc(func))
        model = build_input_model(self._name, params, self._context_param, docs.params)
        self._input_model = model.model
        self._fields = model.fields
        desc = description if description is not None else docs.description
        self._spec: ToolSpec = {
            "name": self._name,
            "description": desc.strip() or self._name,  # Bedrock rejects an empty description
            "inputSchema": {"json": model.json_schema},
        }
        functools.update_wrapper(self, func)  # __name__, __doc__, __wrapped__, __module__

    # ------------------------------------------------------------------ AgentTool API

    @property
    def name(self) -> str:
        """The tool name (the function name unless given)."""
        return self._name

    @property
    def spec(self) -> ToolSpec:
        """The Converse tool spec. Shared, not copied: treat it as read-only."""
        return self._spec

    @property
    def tool_type(self) -> str:
        """Kind of tool, for listings."""
        return "function"

    @property
    def input_model(self) -> type[pydantic.BaseModel]:
        """The pydantic model tool input is validated with."""
        return self._input_model

    @property
    def context_parameter(self) -> str | None:
        """Name of the parameter that receives the ToolContext, if any."""
        return self._context_param

    @property
    def func(self) -> Callable[P, R]:
        """The decorated function, unchanged."""
        return self._func

    @property
    def timeout(self) -> float | None:
        """Seconds the tool may run before it becomes an error result; None: no own limit."""
        return self._timeout

    def with_timeout(self, seconds: float | None) -> FunctionTool[P, R]:
        """A copy of this tool limited to `seconds` (spec and schema shared, not rebuilt)."""
        limited = copy.copy(self)
        limited._timeout = validate_timeout(seconds)
        limited._options = {**self._options, "timeout": seconds}
        return limited

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Call the original function unchanged (async functions return their coroutine)."""
        return self._func(*args, **kwargs)

    async def invoke(self, tool_use: ToolUse, context: ToolContext) -> ToolResult:
        """Validate the model's input, run the function, wrap the outcome as a toolResult.

        Ordinary exceptions become error results (the model can react to them); only
        BaseExceptions that are not Exceptions propagate: cancellation, interpreter exit and
        control-flow signals such as interrupts must reach the loop.
        """
        tool_use_id = tool_use.get("toolUseId", "")
        raw = tool_use.get("input")
        if raw is None:
            raw = {}  # some providers send no input for parameterless tools
        if not isinstance(raw, dict):
            return error_result(
                tool_use_id,
                f"Invalid input for tool {self._name!r}: the input must be a JSON object "
                f"mapping parameter names to values, got {type(raw).__name__}",
            )
        try:
            validated = self._input_model.model_validate(raw)
        except pydantic.ValidationError as e:
            return error_result(tool_use_id, format_validation_error(self._name, e))

        args, kwargs = self._call_arguments(validated, context)
        try:
            result = await call_with_timeout(
                self._name, self._timeout, lambda: self._run(args, kwargs)
            )
        except ToolTimeoutError as e:
            return error_result(tool_use_id, f"Error: {e}")
        except ToolError as e:
            return error_result(tool_use_id, f"Error: {e}" if str(e) else "Error")
        except Exception as e:  # noqa: BLE001 - reported to the model, by design
            return error_result(tool_use_id, _describe_exception(e))
        return to_tool_result(tool_use_id, result)

    async def _run(self, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if self._is_async:
            return await self._func(*args, **kwargs)  # type: ignore[misc]
        # A worker thread: blocking tools neither stall the loop nor each other. With a
        # timeout, a thread of its own, so that a hung call can be abandoned (see timeout.py).
        if self._timeout is None:
            result = await asyncio.to_thread(self._func, *args, **kwargs)
        else:
            result = await run_in_daemon_thread(self._func, *args, **kwargs)
        if inspect.isawaitable(result):
            result = await result
        return result

    def _call_arguments(
        self, validated: pydantic.BaseModel, context: ToolContext
    ) -> tuple[list[Any], dict[str, Any]]:
        values = {param: getattr(validated, field) for field, param in self._fields.items()}
        if self._context_param is not None:
            values[self._context_param] = context
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for p in self._params:
            if p.name not in values:
                continue
            if p.kind is inspect.Parameter.POSITIONAL_ONLY:
                args.append(values[p.name])
            else:
                kwargs[p.name] = values[p.name]
        return args, kwargs


def _func_name(func: Callable[..., Any]) -> str:
    name = getattr(func, "__name__", None)
    if not isinstance(name, str):
        raise ValueError(f"cannot infer a tool name from {func!r}; pass name=...")
    return name


def _describe_exception(e: BaseException) -> str:
    message = str(e)
    return f"Error: {type(e).__name__}: {message}" if message else f"Error: {type(e).__name__}"


def to_tool_result(tool_use_id: str, value: Any) -> ToolResult:
    """Convert a tool's return value into a toolResult.

    A dict shaped like a ToolResult is passed through (its toolUseId fixed, since a tool
    rarely knows it); pydantic models, dataclasses, tuples and sets become JSON.
    """
    if (
        isinstance(value, dict)
        and "content" in value
        and "status" in value
        and set(value) <= _RESULT_KEYS
    ):
        return {**value, "toolUseId": tool_use_id}  # type: ignore[typeddict-item]
    if isinstance(value, pydantic.BaseModel):
        value = value.model_dump(mode="json")
    elif isinstance(value, (dict, list, tuple, set, frozenset)) or (
        dataclasses.is_dataclass(value) and not isinstance(value, type)
    ):
        value = to_jsonable_python(value, fallback=str)
    return success_result(tool_use_id, value)


@overload
def tool(
    func: Callable[P, R],
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    context: bool | str | None = None,
    timeout: float | None = None,
) -> FunctionTool[P, R]: ...


@overload
def tool(
    func: None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    context: bool | str | None = None,
    timeout: float | None = None,
) -> Callable[[Callable[P, R]], FunctionTool[P, R]]: ...


def tool(
    func: Callable[P, R] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    context: bool | str | None = None,
    timeout: float | None = None,
) -> FunctionTool[P, R] | Callable[[Callable[P, R]], FunctionTool[P, R]]:
    """Make a function a tool the model can call. Use bare (`@tool`) or with options.

    Args:
        func: The function (given when used bare).
        name: Tool name; defaults to the function's name.
        description: Tool description; defaults to the docstring text before its sections.
        context: Where to inject the ToolContext: None finds a parameter annotated
            ToolContext; a str names the parameter; True requires one (annotated or named
            `tool_context`); False disables injection.
        timeout: Seconds the tool may run; past them the call becomes an error result the
            model sees ("timed out after N s") and the loop goes on. A sync tool's thread
            cannot be killed: it is abandoned and its result discarded (see
            `elsai.tools.timeout`). None: no limit of its own (a runtime default may apply).
    """

    def decorate(f: Callable[P, R]) -> FunctionTool[P, R]:
        if isinstance(f, FunctionTool):
            # Re-decorating: keep earlier options unless overridden now.
            options = dict(f._options)
            given = {
                "name": name,
                "description": description,
                "context": context,
                "timeout": timeout,
            }
            options.update({k: v for k, v in given.items() if v is not None})
            return FunctionTool(f.func, **options)
        if isinstance(f, AgentTool):
            raise TypeError(f"{f!r} already is an AgentTool")
        return FunctionTool(f, name=name, description=description, context=context, timeout=timeout)

    if func is not None:
        return decorate(func)
    return decorate
