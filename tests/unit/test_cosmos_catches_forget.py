"""Every Cosmos DB SDK error the adapter catches as an answer forgets its traceback (decision 0126), read from
the source so that it holds for a catch no test happens to reach.

An SDK error's traceback holds the SDK's frames, which hold the error: a cycle that keeps every caller's
frame, up to the batch being accepted, until the cyclic collector runs, and that collection then walks the
batch. So a handler in backends/cosmos/ that catches a `Cosmos*` error either calls `forget(<the error>)` or
ends by raising (the error, or another from it: a raised error keeps its traceback for the logs). The
contract test tests/contract/test_cosmos_caught_errors.py shows on the emulator what a catch without it keeps.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COSMOS = ROOT / "backends" / "cosmos"


def _names(node: ast.expr | None) -> list[str]:
    """The class names an except clause lists (Name, module.Name, a tuple of them, a starred tuple)."""
    if node is None:
        return []
    if isinstance(node, ast.Tuple):
        return [name for element in node.elts for name in _names(element)]
    if isinstance(node, ast.Starred):
        return _names(node.value)
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.Name):
        return [node.id]
    return []


def _forgets(handler: ast.ExceptHandler) -> bool:
    return handler.name is not None and any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name | ast.Attribute)
        and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) == "forget"
        and [ast.unparse(argument) for argument in node.args] == [handler.name]
        for node in ast.walk(handler)
    )


def _ends_raising(body: list[ast.stmt]) -> bool:
    last = body[-1]
    if isinstance(last, ast.Raise):
        return True
    if isinstance(last, ast.If):
        return _ends_raising(last.body) and bool(last.orelse) and _ends_raising(last.orelse)
    return False


def catches_that_keep_their_traceback(source: str, filename: str) -> list[str]:
    """`file:line` of each handler of a Cosmos* error that neither forgets it nor ends by raising."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, ast.ExceptHandler):
            continue
        if not any(name.startswith("Cosmos") for name in _names(node.type)):
            continue
        if not (_forgets(node) or _ends_raising(node.body)):
            found.append(f"{filename}:{node.lineno}")
    return found


def test_every_catch_of_a_cosmos_error_in_the_adapter_forgets_it_or_raises():
    modules = sorted(COSMOS.glob("*.py"))
    assert len(modules) > 20
    kept = [
        where
        for module in modules
        for where in catches_that_keep_their_traceback(module.read_text(), str(module.relative_to(ROOT)))
    ]
    assert kept == [], "call items.forget(error) where these errors are read as answers (decision 0126)"


@pytest.mark.parametrize(
    ("handler", "kept"),
    [
        (["except CosmosResourceNotFoundError as error:", "    forget(error)", "    return None"], False),
        (["except (CosmosResourceExistsError, Other) as error:", "    items.forget(error)", "    pass"], False),
        (["except exceptions.CosmosHttpResponseError as e:", "    if e.status_code != 404:", "        raise"], True),
        (
            ["except exceptions.CosmosHttpResponseError as e:", "    if e.status_code != 404:", "        raise"]
            + ["    forget(e)"],
            False,
        ),
        (
            ["except CosmosHttpResponseError as e:", "    if e.status_code == 400:", "        raise ValueError"]
            + ["    raise"],
            False,
        ),
        (["except CosmosResourceNotFoundError:", "    raise BackendUnavailable('gone') from None"], False),
        (["except CosmosResourceNotFoundError:", "    return None"], True),
        (["except CosmosResourceNotFoundError as error:", "    forget(other)", "    return None"], True),
        (["except (CosmosBatchOperationError, *UNREACHABLE) as error:", "    log(error)"], True),
        (["except ValueError:", "    return None"], False),
    ],
)
def test_the_check_tells_a_forgotten_catch_from_one_that_keeps_its_traceback(handler, kept):
    indented = "\n".join("    " + line for line in handler)
    source = f"def read():\n    try:\n        call()\n{indented}\n"
    assert bool(catches_that_keep_their_traceback(source, "m.py")) is kept
