"""`hq` (or `python -m hq`): HQ operations on the same backend the service uses (settings as the app's).

It talks to storage directly, not through the partner API, so it works whether or not the service
is running. Exit codes: 0 done, 1 refused (unknown partner, duplicate, ...), 2 bad usage, 141 the reader of its
output went away (`hq ... | head`: quiet, as a shell tool killed by SIGPIPE).

Each command group is a module of this package that adds its own parser and handlers (`add_group`):
a command's parser sets `run` (its handler) and its group's `opens` (what the handler is given: the
backend, or the reconciliation queue). This module only assembles the groups and runs the command.
Handlers import the use cases (and the wire models) when they run: building the parser stays cheap,
so a command starts in a third of a second rather than over one (decision 0077).
"""

from __future__ import annotations

import argparse
import os
import sys

from core.ports import AddressNotAllowed, AdminError, BackendUnavailable
from core.settings import Settings, load_local_settings
from hq import (
    batches,
    cosmos_index,
    dashboard,
    exports,
    keys,
    partners,
    payment_types,
    poison_queue,
    products,
    reconciliations,
    retention,
    smoke,
    stores,
)

GROUPS = (
    partners,
    keys,
    stores,
    batches,
    reconciliations,
    products,
    payment_types,
    poison_queue,
    dashboard,
    exports,
    cosmos_index,
    retention,
    smoke,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hq", description="HQ operations for the partner POS ingestion service.")
    groups = parser.add_subparsers(dest="group", required=True)
    for group in GROUPS:
        group.add_group(groups)
    groups.metavar = "{" + ",".join(groups.choices) + "}"
    return parser


def command_names(parser: argparse.ArgumentParser | None = None) -> list[str]:
    """Every command as typed after `hq` ("partner add", "queue poison list"), read from the parser."""

    def walk(node: argparse.ArgumentParser, words: list[str]) -> list[str]:
        # argparse offers no public way to list a parser's subcommands; _actions is stable since 2.7.
        choices = [action.choices for action in node._actions if isinstance(action, argparse._SubParsersAction)]
        if not choices:
            return [" ".join(words)]
        return [name for word, child in choices[0].items() for name in walk(child, [*words, word])]

    return walk(parser or build_parser(), [])


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    check_usage = getattr(args, "check_usage", None)
    if check_usage is not None:  # what argparse cannot say alone; exits 2 like any usage error
        check_usage(args)
    load_local_settings()
    try:
        args.run(args.opens(Settings.from_env()), args)
        sys.stdout.flush()  # a closed pipe shows here, not at the interpreter's exit
    except BackendUnavailable as error:
        refused = address_refusal(error)
        print(f"error: {error if refused is None else not_allowed_message(refused)}", file=sys.stderr)
        return 1
    except (AdminError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return closed_pipe()
    return 0


def address_refusal(error: BaseException) -> AddressNotAllowed | None:
    """The firewall refusal behind `error`, if that is what it is: raised as such by the adapters, or the
    SDK's 403 under another BackendUnavailable (the Cosmos DB adapter wraps whatever stops it opening)."""
    from backends import storage_firewall
    from backends.cosmos import outages

    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, AddressNotAllowed):
            return seen
        refused = outages.refused_address(seen) or storage_firewall.refused_address(seen)
        if refused is not None:
            return refused
        seen = seen.__cause__ or seen.__context__
    return None


def not_allowed_message(refused: AddressNotAllowed) -> str:
    seen = f" ({refused.address})" if refused.address else ""
    return (
        f"{refused.service} refused the request: your address{seen} is not allowed by its network rules "
        "(firewall). Allow it (docs/operator-guide.md, HQ's way in: operatorIpRanges / POS_OPERATOR_IP_RANGES, then "
        "provision again) or run hq from the virtual network."
    )


# 128 + SIGPIPE: what a shell reports for a tool whose reader closed the pipe (`hq reconcile list | head`).
CLOSED_PIPE_EXIT = 141


def closed_pipe() -> int:
    """The reader of stdout went away: end quietly. What is still buffered goes to /dev/null, so that the
    interpreter's own flush at exit finds no broken pipe either (Python's documented way, "Note on SIGPIPE")."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return CLOSED_PIPE_EXIT
