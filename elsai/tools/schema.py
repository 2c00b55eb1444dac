"""Turn a Python function's signature and docstring into a validated tool input model.

The model validates what the LLM sends; its JSON schema (cleaned of pydantic noise) is what
the LLM sees. Both come from one pydantic model so they can never disagree.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Any, NamedTuple, Union

import pydantic
from pydantic.fields import FieldInfo

from elsai.tools.context import ToolContext

#: Bedrock's rule for tool names; other providers accept a superset.
TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

# Section headers that end the free-text description (Google / numpy-ish names).
_SECTION_RE = re.compile(
    r"^\s*(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters|"
    r"Returns?|Yields?|Raises|Exceptions?|Examples?|Notes?|Attributes|See Also|Warnings?|"
    r"Todo|References)\s*:\s*$"
)
_ARGS_HEADER_RE = re.compile(
    r"^\s*(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments)\s*:\s*$"
)
_GOOGLE_ARG_RE = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_REST_FIELD_RE = re.compile(r"^:(\w+)(?:\s+([^:]*?))?\s*:\s*(.*)$")
# Schema keywords whose values are data, not sub-schemas: never strip "title" inside them.
_DATA_KEYWORDS = frozenset({"default", "enum", "const", "examples"})


def validate_tool_name(name: str) -> str:
    """Fail at decoration time rather than at the first (remote) model call."""
    if not isinstance(name, str) or not TOOL_NAME_PATTERN.match(name):
        raise ValueError(
            f"invalid tool name {name!r}: tool names must match {TOOL_NAME_PATTERN.pattern} "
            "(letters, digits, '_' or '-', at most 64 characters); pass name=... to override"
        )
    return name


# --------------------------------------------------------------------------- docstrings


class ParsedDocstring(NamedTuple):
    """A docstring split into the tool description and per-parameter descriptions."""

    description: str
    params: dict[str, str]


def parse_docstring(doc: str | None) -> ParsedDocstring:
    """Split a docstring into the free-text description and per-parameter descriptions.

    Understands Google style (`Args:` section) and reST (`:param name: text`), since both are
    common and a tool author should not have to rewrite docstrings to get good schemas.
    """
    if not doc:
        return ParsedDocstring("", {})
    lines = inspect.cleandoc(doc).splitlines()
    desc_lines: list[str] = []
    params: dict[str, str] = {}
    i = 0
    # Description: everything before the first section header or reST field.
    while (
        i < len(lines) and not _SECTION_RE.match(lines[i]) and not lines[i].lstrip().startswith(":")
    ):
        desc_lines.append(lines[i])
        i += 1
    while i < len(lines):
        line = lines[i]
        if _ARGS_HEADER_RE.match(line):
            i = _parse_google_args(lines, i + 1, _indent(line), params)
            continue
        rest = _REST_FIELD_RE.match(line.strip())
        if rest:
            i = _parse_rest_field(lines, i, rest, params)
            continue
        i += 1
    return ParsedDocstring("\n".join(desc_lines).strip(), params)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _parse_google_args(lines: list[str], i: int, header_indent: int, out: dict[str, str]) -> int:
    """Read `name (type): text` entries (with indented continuations); return the next index."""
    entry_indent: int | None = None
    current: str | None = None
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        indent = _indent(line)
        if indent <= header_indent:
            break  # the section ended
        if entry_indent is None:
            entry_indent = indent
        m = _GOOGLE_ARG_RE.match(line.strip()) if indent <= entry_indent else None
        if m:
            current = m.group(1)
            out[current] = m.group(2).strip()
        elif current is not None:
            out[current] = f"{out[current]} {line.strip()}".strip()
        i += 1
    return i


def _parse_rest_field(lines: list[str], i: int, m: re.Match[str], out: dict[str, str]) -> int:
    kind, arg, text = m.group(1), (m.group(2) or "").split(), m.group(3).strip()
    i += 1
    parts = [text] if text else []
    while i < len(lines) and lines[i].strip() and _indent(lines[i]) > 0:
        parts.append(lines[i].strip())
        i += 1
    if kind in ("param", "parameter", "arg", "argument", "key", "keyword") and arg:
        out[arg[-1]] = " ".join(parts)  # `:param str city:` -> the name is the last word
    return i


# --------------------------------------------------------------------------- signatures


def is_tool_context_annotation(annotation: Any) -> bool:
    """True for `ToolContext`, `ToolContext | None`, `Optional[...]` and `Annotated[...]` of it."""
    if annotation is ToolContext:
        return True
    if isinstance(annotation, str):  # an unresolvable string annotation: judge by its text
        return re.fullmatch(r"\s*(\w+\.)*ToolContext(\s*\|\s*None)?\s*", annotation) is not None
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return is_tool_context_annotation(typing.get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return len(args) == 1 and is_tool_context_annotation(args[0])
    return False


def resolved_parameters(func: Callable[..., Any]) -> list[tuple[inspect.Parameter, Any]]:
    """The signature's parameters with annotations evaluated (handles `from __future__`)."""
    sig = inspect.signature(func)
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception:  # noqa: BLE001 - unresolvable names or a non-function callable
        hints = {}
    globalns = getattr(inspect.unwrap(func), "__globals__", {})
    result = []
    for p in sig.parameters.values():
        ann = hints.get(p.name, p.annotation)
        if ann is inspect.Parameter.empty:
            ann = Any
        elif isinstance(ann, str):
            try:
                ann = eval(ann, dict(globalns))  # noqa: S307 - the author's own annotation
            except Exception:  # noqa: BLE001
                if not is_tool_context_annotation(ann):
                    raise TypeError(
                        f"cannot resolve the annotation {ann!r} of parameter {p.name!r}; "
                        "define the type at module level"
                    ) from None
        result.append((p, ann))
    return result


def find_context_parameter(
    params: list[tuple[inspect.Parameter, Any]], context: bool | str | None
) -> str | None:
    """Which parameter receives the ToolContext, per the decorator's `context` option.

    None: the one annotated ToolContext, if any. True: same, else one named `tool_context`,
    and it must exist. A str: that parameter. False: none, and a ToolContext annotation is
    an error (it could not be filled by the model).
    """
    annotated = [p.name for p, ann in params if is_tool_context_annotation(ann)]
    names = [p.name for p, _ in params]
    if isinstance(context, str):
        if context not in names:
            raise TypeError(f"context={context!r} names no parameter; parameters are {names}")
        return context
    if len(annotated) > 1:
        raise TypeError(f"only one parameter may receive the ToolContext, found {annotated}")
    if context is False:
        if annotated:
            raise TypeError(f"parameter {annotated[0]!r} is a ToolContext but context=False")
        return None
    if annotated:
        return annotated[0]
    if context is True:
        if "tool_context" in names:
            return "tool_context"
        raise TypeError(
            "context=True but no parameter is annotated ToolContext or named tool_context"
        )
    return None


# --------------------------------------------------------------------------- input model


class InputModel(NamedTuple):
    """The pydantic model for a tool's input and how its fields map back to parameters."""

    model: type[pydantic.BaseModel]
    #: model field name -> function parameter name, in signature order
    fields: dict[str, str]
    json_schema: dict[str, Any]


def build_input_model(
    tool_name: str,
    params: list[tuple[inspect.Parameter, Any]],
    context_param: str | None,
    param_docs: Mapping[str, str],
) -> InputModel:
    """Build the input model from the parameters other than the context one.

    Fields get neutral internal names with the parameter name as alias, so parameters called
    `json`, `schema`, `model_config` or `_x` cannot clash with BaseModel's own attributes.
    """
    definitions: dict[str, Any] = {}
    mapping: dict[str, str] = {}
    for i, (p, ann) in enumerate(params):
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise TypeError(
                f"tool {tool_name!r}: *args/**kwargs are not supported (parameter {p.name!r}); "
                "the model needs named, typed parameters"
            )
        if p.name == context_param:
            continue
        default = ... if p.default is inspect.Parameter.empty else p.default
        internal = f"p{i}"
        definitions[internal] = (Annotated[ann, pydantic.Field(alias=p.name)], default)
        mapping[internal] = p.name
    model_name = "".join(part.capitalize() for part in re.split(r"[_-]+", tool_name)) + "Input"
    try:
        model: type[pydantic.BaseModel] = pydantic.create_model(model_name, **definitions)
        raw_schema = model.model_json_schema(by_alias=True)
    except (pydantic.PydanticSchemaGenerationError, pydantic.PydanticUserError, TypeError) as e:
        raise TypeError(f"cannot build the input schema of tool {tool_name!r}: {e}") from e
    aliases = {_alias(model.model_fields[k], k): v for k, v in mapping.items()}
    return InputModel(model, mapping, clean_schema(raw_schema, aliases, param_docs))


def _alias(info: FieldInfo, default: str) -> str:
    return info.alias or default


def clean_schema(
    schema: dict[str, Any], aliases: Mapping[str, str], param_docs: Mapping[str, str]
) -> dict[str, Any]:
    """Drop pydantic `title`s and give every property a description.

    Titles only repeat the names and cost tokens; descriptions are what the model reads to
    pick arguments, so a missing one falls back to the docstring, then to "Parameter <name>".
    """
    cleaned: dict[str, Any] = _strip_titles(schema)
    props: dict[str, Any] = cleaned.setdefault("properties", {})
    for prop_name, prop in props.items():
        param = aliases.get(prop_name, prop_name)
        if not prop.get("description"):
            prop["description"] = param_docs.get(param) or f"Parameter {param}"
    ordered: dict[str, Any] = {"type": "object", "properties": props}
    ordered["required"] = cleaned.get("required", [])
    for key, value in cleaned.items():
        if key not in ordered:
            ordered[key] = value
    return ordered


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: (v if k in _DATA_KEYWORDS else _strip_titles(v))
            for k, v in node.items()
            if not (k == "title" and isinstance(v, str))
        }
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


def format_validation_error(tool_name: str, error: pydantic.ValidationError) -> str:
    """One line per problem, `field.path: message`, so the model can fix its call."""
    lines = [f"Invalid input for tool {tool_name!r}:"]
    for err in error.errors(include_url=False):
        loc = ".".join(str(part) for part in err.get("loc", ())) or "(input)"
        msg = err.get("msg", "invalid value")
        if err.get("type") != "missing" and "input" in err:
            given = repr(err["input"])
            if len(given) > 80:
                given = given[:77] + "..."
            msg = f"{msg} (got {given})"
        lines.append(f"- {loc}: {msg}")
    return "\n".join(lines)
