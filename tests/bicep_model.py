"""Bicep files read without the Bicep compiler: declarations and literal values, for tests/toolchain/test_infra.py.

The Bicep compiler is a .NET program that the az CLI downloads from GitHub; no package registry this
project can reach ships it. What can be installed are two independent parsers of the language:
tree-sitter-bicep (a tree-sitter grammar, with the tree-sitter bindings) and pycep-parser (a Lark
grammar). Both must accept every file; the tree-sitter tree is then turned into this small model:
declarations (param, var, resource, module, output) whose literal values are Python values, names and
member accesses `Ref('a.b.c')`, and every other expression `Expr(source text)`. Nothing is evaluated.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

import tree_sitter_bicep
from pycep import BicepParser
from tree_sitter import Language, Node, Parser

_PARSER = Parser(Language(tree_sitter_bicep.language()))
NO_DEFAULT = object()
# Names Bicep provides without a declaration: the function namespaces.
BUILT_IN_NAMES = {"az", "sys"}


@dataclass(frozen=True)
class Ref:
    """A symbol or a member access on one: `identity.properties.clientId`."""

    path: str

    @property
    def root(self) -> str:
        return self.path.split(".")[0]


@dataclass(frozen=True)
class Expr:
    """Any other expression (a call, an interpolated string, a condition...), as written."""

    text: str


@dataclass
class Param:
    name: str
    type: str
    default: object
    decorators: dict

    @property
    def required(self) -> bool:
        return self.default is NO_DEFAULT


@dataclass
class Resource:
    name: str
    type: str  # Microsoft.Web/sites
    api_version: str
    body: object  # dict for a plain or conditional declaration, the loop body for a loop
    loop: Expr | None = None  # `for x in ...` source text
    condition: Expr | None = None
    decorators: dict = field(default_factory=dict)  # @batchSize(1) -> {'batchSize': [1]}


@dataclass
class Module:
    name: str
    path: str
    body: object
    loop: Expr | None = None
    condition: Expr | None = None


@dataclass
class BicepFile:
    path: Path
    source: str
    root: Node
    params: dict[str, Param] = field(default_factory=dict)
    variables: dict[str, object] = field(default_factory=dict)
    resources: dict[str, Resource] = field(default_factory=dict)
    modules: dict[str, Module] = field(default_factory=dict)
    outputs: dict[str, object] = field(default_factory=dict)
    loop_variables: set[str] = field(default_factory=set)

    @property
    def declared(self) -> set[str]:
        return (
            set(self.params)
            | set(self.variables)
            | set(self.resources)
            | set(self.modules)
            | self.loop_variables
            | BUILT_IN_NAMES
        )


def syntax_errors(source: str) -> list[str]:
    """What each parser refuses, as 'parser: line N: ...'; empty when both accept the text."""
    errors = [
        f"tree-sitter-bicep: line {node.start_point[0] + 1}: "
        f"{'missing ' + node.type if node.is_missing else 'cannot parse ' + _excerpt(node)}"
        for node in _walk(_PARSER.parse(source.encode("utf-8")).root_node)
        if node.type == "ERROR" or node.is_missing
    ]
    try:
        _pycep().parse(text=source)
    except Exception as error:
        errors.append(f"pycep-parser: {str(error).splitlines()[0]}")
    return errors


@functools.cache
def _pycep() -> BicepParser:
    return BicepParser()  # building the grammar takes a while: once per process


def load(path: Path) -> BicepFile:
    source = path.read_text(encoding="utf-8")
    model = BicepFile(path, source, _PARSER.parse(source.encode("utf-8")).root_node)
    decorators: dict = {}
    for node in _named(model.root):
        if node.type == "decorators":
            decorators = _decorators(node)
            continue
        parts = _named(node)
        if node.type == "parameter_declaration":
            type_node = next(child for child in parts if child.type == "type")
            default = _value(parts[-1]) if parts[-1] is not type_node else NO_DEFAULT
            model.params[_text(parts[0])] = Param(_text(parts[0]), _text(type_node), default, decorators)
        elif node.type == "variable_declaration":
            model.variables[_text(parts[0])] = _value(parts[-1])
        elif node.type == "output_declaration":
            model.outputs[_text(parts[0])] = _value(parts[-1])
        elif node.type == "resource_declaration":
            resource_type, _, api_version = _value(parts[1]).partition("@")
            body, loop, condition = _body(parts[-1])
            model.resources[_text(parts[0])] = Resource(
                _text(parts[0]), resource_type, api_version, body, loop, condition, decorators
            )
        elif node.type == "module_declaration":
            body, loop, condition = _body(parts[-1])
            model.modules[_text(parts[0])] = Module(_text(parts[0]), _value(parts[1]), body, loop, condition)
        decorators = {}
    model.loop_variables = {
        _text(node)
        for node in _walk(model.root)
        if node.type in ("loop_variable", "loop_enumerator")
        or (
            node.parent is not None
            and node.parent.type == "for_statement"
            and node.parent.child_by_field_name("initializer") == node
        )
    }
    return model


def references(model: BicepFile) -> list[tuple[int, str]]:
    """(line, name) of every name used in an expression (not declared, not a key, not a function)."""
    used = []
    for node in _walk(model.root):
        if node.type != "identifier" or node.parent is None:
            continue
        parent = node.parent
        if parent.type.endswith("_declaration") and _named(parent)[0] == node:
            continue  # the declared name
        if parent.type == "object_property" and _named(parent)[0] == node:
            continue  # a key
        if parent.type == "call_expression" and parent.child_by_field_name("function") == node:
            continue  # a function name
        if parent.type == "for_statement" and parent.child_by_field_name("initializer") == node:
            continue  # the loop variable
        if parent.type in ("type", "primitive_type"):
            continue
        used.append((node.start_point[0] + 1, _text(node)))
    return used


def string_calls(model: BicepFile, function: str) -> list[str]:
    """The literal first arguments of every call of `function` (e.g. loadJsonContent)."""
    found = []
    for node in _walk(model.root):
        if node.type == "call_expression" and _text(node.child_by_field_name("function")) == function:
            arguments = _named(node.child_by_field_name("arguments"))
            if arguments and isinstance(_value(arguments[0]), str):
                found.append(_value(arguments[0]))
    return found


def member_paths(value) -> set[str]:
    """Every Ref path inside a value (dicts and lists walked), and names interpolated in strings."""
    if isinstance(value, Ref):
        return {value.path}
    if isinstance(value, Expr):
        return set(re.findall(r"[A-Za-z_][\w.]*", value.text))
    if isinstance(value, dict):
        return set().union(*(member_paths(item) for item in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(member_paths(item) for item in value)) if value else set()
    return set()


# -- evaluation of the expressions a test needs ----------------------------------------------------


class DeploymentFailure(Exception):
    """What Resource Manager would stop the deployment with (a guard's `int('message')`)."""


def evaluate(expression: str, values: dict):
    """The value of a Bicep expression over `values` (parameters and variables by name), for the subset of
    the language main.bicep uses in names and guards: literals, interpolated strings, names and member
    access, `? :`, comparison, arithmetic and logic, the functions in _FUNCTIONS, and filter() and map() with a
    one-parameter lambda."""
    tree = _PARSER.parse(f"var _ = {expression}\n".encode()).root_node
    (declaration,) = _named(tree)
    return _evaluate(_named(declaration)[-1], values)


def _int(value):
    try:
        return int(value)
    except ValueError:
        raise DeploymentFailure(value) from None


_FUNCTIONS = {
    "toLower": str.lower,
    "toUpper": str.upper,
    "replace": lambda text, old, new: text.replace(old, new),
    "take": lambda value, count: value[: max(count, 0)],
    "empty": lambda value: len(value) == 0,
    "length": len,
    "trim": str.strip,
    "split": lambda text, separator: text.split(separator),
    "int": _int,
    "string": lambda value: str(value).lower() if isinstance(value, bool) else str(value),
    "last": lambda value: value[-1],
    "endsWith": lambda text, end: text.lower().endswith(end.lower()),
    "startsWith": lambda text, start: text.lower().startswith(start.lower()),
    "concat": lambda *parts: "".join(parts) if all(isinstance(p, str) for p in parts) else sum(parts, []),
    # Stand-ins: Azure's uniqueString is a 13-character base-32 hash of its arguments (not reproduced here:
    # a test compares names with each other, never with Azure's); environment() of the public cloud.
    "uniqueString": lambda *parts: (
        base64.b32encode(hashlib.sha256("|".join(parts).encode()).digest()).decode()[:13].lower()
    ),
    "environment": lambda: {"suffixes": {"storage": "core.windows.net"}},
    "resourceId": lambda resource_type, *names: f"resourceId({resource_type}/{'/'.join(names)})",
}
_OPERATORS = {
    "%": lambda a, b: a % b,
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a // b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def _evaluate(node: Node, values: dict):
    kind = node.type
    if kind == "string" and not _named(node):
        return _blank_string(node)
    if kind == "string":
        return "".join(
            str(_evaluate(_named(part)[0], values))
            if part.type == "interpolation"
            else _unescape(_text(part))
            if part.type == "escape_sequence"
            else _text(part)
            for part in _named(node)
        )
    if kind in ("number", "boolean", "null"):
        return _value(node)
    if kind == "identifier":
        return values[_text(node)]
    if kind == "member_expression":
        parts = _named(node)
        return _evaluate(parts[0], values)[_text(parts[-1])]
    if kind == "parenthesized_expression":
        return _evaluate(_named(node)[0], values)
    if kind == "subscript_expression":
        target, index = _named(node)
        return _evaluate(target, values)[_evaluate(index, values)]
    if kind == "array":
        return [_evaluate(item, values) for item in _named(node)]
    if kind == "object":
        return {
            _text(_named(prop)[0]): _evaluate(_named(prop)[-1], values)
            for prop in _named(node)
            if prop.type == "object_property"
        }
    if kind == "ternary_expression":
        branch = "consequence" if _evaluate(node.child_by_field_name("condition"), values) else "alternative"
        return _evaluate(node.child_by_field_name(branch), values)  # only the branch taken, as ARM's if()
    if kind == "unary_expression":
        return not _evaluate(_named(node)[-1], values)
    if kind == "binary_expression":
        operator = _text(node.child_by_field_name("operator"))
        left = _evaluate(node.child_by_field_name("left"), values)
        if operator in ("&&", "||"):
            return (
                (left and _evaluate(node.child_by_field_name("right"), values))
                if operator == "&&"
                else (left or _evaluate(node.child_by_field_name("right"), values))
            )
        return _OPERATORS[operator](left, _evaluate(node.child_by_field_name("right"), values))
    if kind == "call_expression" and _text(node.child_by_field_name("function")) in ("filter", "map"):
        items, function = _named(node.child_by_field_name("arguments"))
        parameter, body = _named(function)  # a lambda of one parameter: `item => expression`
        results = [_evaluate(body, {**values, _text(parameter): item}) for item in _evaluate(items, values)]
        if _text(node.child_by_field_name("function")) == "map":
            return results
        return [item for item, keep in zip(_evaluate(items, values), results, strict=True) if keep]
    if kind == "call_expression":
        name = _text(node.child_by_field_name("function"))
        arguments = [_evaluate(argument, values) for argument in _named(node.child_by_field_name("arguments"))]
        return _FUNCTIONS[name](*arguments)
    raise NotImplementedError(f"{kind}: {_text(node)}")


# -- tree to values ---------------------------------------------------------------------------------


def _body(node: Node):
    """(body, loop, condition) of a resource or module: an object, `[for ...: {...}]` or `if (...) {...}`."""
    if node.type == "for_statement":
        inner = node.child_by_field_name("body")
        body, _, condition = _body(inner)
        return body, Expr(_text(node)), condition
    if node.type == "if_statement":
        parts = _named(node)
        return _value(parts[-1]), None, Expr(_text(parts[0]))
    return _value(node), None, None


def _value(node: Node):
    kind = node.type
    if kind == "string" and not _named(node):
        return _blank_string(node)
    if kind == "string":
        parts = _named(node)
        if any(part.type == "interpolation" for part in parts):
            return Expr(_text(node))
        return "".join(_unescape(_text(part)) if part.type == "escape_sequence" else _text(part) for part in parts)
    if kind == "number":
        return int(_text(node))
    if kind == "boolean":
        return _text(node) == "true"
    if kind == "null":
        return None
    if kind == "object":
        result = {}
        for prop in _named(node):
            if prop.type != "object_property":
                continue
            parts = _named(prop)
            key = _value(parts[0]) if parts[0].type == "string" else _text(parts[0])
            result[key] = _value(parts[-1])
        return result
    if kind == "array":
        return [_value(item) for item in _named(node)]
    if kind == "identifier":
        return Ref(_text(node))
    if kind == "member_expression" and re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", _text(node)):
        return Ref(_text(node))
    return Expr(_text(node))


def _blank_string(node: Node) -> str:
    """A string of spaces only ('' or ' '): tree-sitter-bicep gives it no content node, only its quotes."""
    return _text(node)[1:-1]


def _decorators(node: Node) -> dict:
    found = {}
    for decorator in _named(node):
        call = next((child for child in _named(decorator) if child.type == "call_expression"), None)
        if call is None:
            continue
        name = _text(call.child_by_field_name("function")).split(".")[-1]
        found[name] = [_value(argument) for argument in _named(call.child_by_field_name("arguments"))]
    return found


def _unescape(escape: str) -> str:
    simple = {"\\'": "'", "\\\\": "\\", "\\n": "\n", "\\r": "\r", "\\t": "\t", "\\$": "$"}
    if escape in simple:
        return simple[escape]
    match = re.fullmatch(r"\\u\{([0-9A-Fa-f]+)\}", escape)
    return chr(int(match.group(1), 16)) if match else escape


def _named(node: Node) -> list[Node]:
    return [child for child in node.named_children if child.type != "comment"]


def _walk(node: Node):
    yield node
    for child in node.children:
        yield from _walk(child)


def _text(node: Node) -> str:
    return node.text.decode("utf-8")


def _excerpt(node: Node) -> str:
    return repr(_text(node)[:60])
