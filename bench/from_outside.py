"""Measuring a service from outside, as HQ's capacity planner would (bench/azure_accept.py): every request the
Cosmos DB emulator serves, counted by the emulator itself (bench/emulator_counter.js, preloaded into it), so
that whatever SDK calls a service makes (point operations, queries, transactional batches, another client)
each request is counted once; and the CPU time of a process tree, read from /proc."""

from __future__ import annotations

import contextlib
import ctypes
import http.client
import os
import ssl
import subprocess
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import orjson

from bench import ROOT
from devhost.cosmos_emulator import SERVER, command
from devhost.processes import free_port, stop_process

COUNTER = Path(__file__).resolve().with_name("emulator_counter.js")
COUNTS_PATH = "/_bench/requests"  # answered by the counter, not counted
# The operations the counter names, by kind (bench/emulator_counter.js).
KINDS = {
    "read": "point reads",
    "create": "writes",
    "replace": "writes",
    "upsert": "writes",
    "patch": "writes",
    "delete": "writes",
    "query": "queries",
    "batch": "transactional batches",
    "read_feed": "other",
    "other": "other",
}
KIND_ORDER = ("point reads", "writes", "queries", "transactional batches", "other")
# /proc/<pid>/stat counts CPU time in these; each live process's own CPU-time clock, through libc's
# clock_getcpuclockid(3), counts it in nanoseconds.
TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")
_LIBC = ctypes.CDLL(None, use_errno=True)


@dataclass
class CountingEmulator:
    port: int
    process: subprocess.Popen
    log_path: Path

    @property
    def endpoint(self) -> str:
        return f"https://127.0.0.1:{self.port}/"

    def counts(self) -> dict:
        """Every request the emulator has served so far (bench/emulator_counter.js)."""
        connection = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=10, context=_unverified())
        try:
            connection.request("GET", COUNTS_PATH)
            response = connection.getresponse()
            answer = response.read()
        finally:
            connection.close()
        if response.status != 200:
            raise RuntimeError(f"the emulator's counter answered {response.status}: {answer[:300]!r}")
        return orjson.loads(answer)

    def stop(self) -> None:
        stop_process(self.process)


def _unverified() -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the emulator's self-signed certificate, on loopback
    return context


def start_counting_emulator(log_path: Path, timeout_seconds: float = 30) -> CountingEmulator:
    """The project's Cosmos DB emulator (devhost/cosmos_emulator.py's command, with its fixes), the counter
    preloaded after them; a port taken between choosing and binding it is retried."""
    for _ in range(3):
        port = free_port()
        arguments = command(port)
        at = arguments.index(str(SERVER))
        arguments[at:at] = ["--require", str(COUNTER)]
        with log_path.open("wb") as log:
            process = subprocess.Popen(arguments, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        emulator = CountingEmulator(port, process, log_path)
        deadline = time.monotonic() + timeout_seconds
        while time.monotonic() < deadline and process.poll() is None:
            with contextlib.suppress(OSError, http.client.HTTPException):
                emulator.counts()
                return emulator
            time.sleep(0.1)
        emulator.stop()
        if "EADDRINUSE" not in log_path.read_text(errors="replace"):
            log = log_path.read_text(errors="replace")
            raise RuntimeError(f"the counting Cosmos DB emulator did not start:\n{log}")
    raise RuntimeError("the counting Cosmos DB emulator found no free port")


def requests_between(before: dict, after: dict) -> dict:
    """The requests served between two counts: total, by operation, by kind, by 'operation status', by
    'container operation', and the operations inside transactional batches."""

    def diff(name: str) -> dict[str, int]:
        changed = Counter(after[name])
        changed.subtract(before[name])
        return {key: value for key, value in sorted(changed.items()) if value}

    by_operation = diff("by_operation")
    by_kind = Counter()
    for operation, amount in by_operation.items():
        by_kind[KINDS.get(operation, "other")] += amount
    return {
        "requests": after["requests"] - before["requests"],
        "by_kind": {kind: by_kind[kind] for kind in KIND_ORDER if by_kind[kind]},
        "by_operation": by_operation,
        "by_status": diff("by_status"),
        "by_container": diff("by_container"),
        "batch_operations": after["batch_operations"] - before["batch_operations"],
    }


def tree_cpu_seconds(root: int) -> float:
    """The CPU time of a process and of every live descendant, plus what its exited children used, from /proc
    (Linux). A live process's time is its CPU-time clock, to the nanosecond; /proc's utime + stime come in
    ticks of 10 ms, as much as a fifth of a 500-record batch on the embedded backend (decision 0132)."""
    parents: dict[int, int] = {}
    stats: dict[int, list[str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue  # gone meanwhile
        fields = text[text.rindex(")") + 2 :].split()  # after the command name, which may hold spaces
        pid = int(entry)
        parents[pid] = int(fields[1])
        stats[pid] = fields
    if root not in stats:
        raise RuntimeError(f"process {root} is gone")
    tree, grown = {root}, True
    while grown:
        children = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= children
        grown = bool(children)
    exited_children = sum(int(stats[pid][13]) + int(stats[pid][14]) for pid in tree)  # cutime + cstime
    return sum(_process_cpu_seconds(pid, stats[pid]) for pid in tree) + exited_children / TICKS_PER_SECOND


def _process_cpu_seconds(pid: int, stat_fields: list[str]) -> float:
    """All the threads' CPU time of a live process, exited threads included (its clock_getcpuclockid(3)
    clock), else utime + stime from its stat fields."""
    clock = ctypes.c_int()
    if _LIBC.clock_getcpuclockid(pid, ctypes.byref(clock)) == 0:
        with contextlib.suppress(OSError):  # gone meanwhile
            return time.clock_gettime(clock.value)
    return (int(stat_fields[11]) + int(stat_fields[12])) / TICKS_PER_SECOND
