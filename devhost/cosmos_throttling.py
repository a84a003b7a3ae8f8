"""Cosmos DB throttling injected for tests: the emulator never answers 429, so with a ThrottlePlan installed
(`installed`, or `install_from_environment` in the local host) the containers the Cosmos DB adapter opens
are wrapped (the hook of backends/cosmos/connection.py), and a chosen call raises what the SDK raises when
it gives up on a 429 (CosmosHttpResponseError 429, sub-status 3200, `x-ms-retry-after-ms`) instead of
reaching the database, as a real 429 never changes anything.

The Functions app never imports this module (.funcignore does not deploy devhost/). The local host installs
it when COSMOS_INJECT_THROTTLING is set (only tests set it); it is refused for an account that is not on
this machine, and announced in the log when on. Its text is fields separated by ";":

    calls=2,5-7              the calls throttled, numbered from 1 in the order they are made
    fraction=0.1             or each call with this probability (seed=N makes the draw repeatable)
    container=trade-records  count and throttle only this container's calls (default: every container)
    operation=create_item    and only this operation's (a marker is one create_item in `batches`)
    retry_after_ms=1500      the retry-after the 429 carries (default 1000)

A call is a data-plane operation of the adapter (read_item, create_item, query_items, ...); a query's 429
is raised when its items are read, as the SDK raises it while fetching a page.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import random
import threading
from collections.abc import Iterator

from azure.cosmos.exceptions import CosmosHttpResponseError

from backends.cosmos.connection import Containers, ContainersHook, install_containers_hook, is_loopback
from backends.cosmos.outages import RETRY_AFTER_MS_HEADER, THROTTLED

SETTING = "COSMOS_INJECT_THROTTLING"
REQUEST_RATE_TOO_LARGE = 3200  # the sub-status of a 429 for request units exhausted
DATA_CALLS = frozenset(
    {
        "read_item",
        "create_item",
        "replace_item",
        "upsert_item",
        "patch_item",
        "delete_item",
        "query_items",
        "execute_item_batch",
    }
)
log = logging.getLogger("pos.cosmos")


@dataclasses.dataclass
class ThrottlePlan:
    """Which calls answer 429. Thread-safe; counts what it did (`counted`, `injected`)."""

    calls_throttled: frozenset[int] = frozenset()
    fraction: float = 0.0
    container: str | None = None
    operation: str | None = None
    retry_after_ms: int = 1000
    seed: int | None = None
    counted: int = 0  # calls counted so far
    injected: int = 0  # 429s raised so far
    _paused: int = 0
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock, repr=False)
    _random: random.Random = dataclasses.field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not 0 <= self.fraction <= 1:
            raise ValueError(f"{SETTING}: fraction must be between 0 and 1")
        if self.retry_after_ms < 0:
            raise ValueError(f"{SETTING}: retry_after_ms must be 0 or more")
        self._random = random.Random(self.seed)

    @classmethod
    def parse(cls, text: str) -> ThrottlePlan | None:
        """The plan a COSMOS_INJECT_THROTTLING text describes; None for an empty text (off)."""
        fields: dict = {}
        for part in filter(None, (piece.strip() for piece in text.split(";"))):
            name, _, value = (side.strip() for side in part.partition("="))
            try:
                if name == "calls":
                    fields["calls_throttled"] = frozenset(_numbers(value))
                elif name == "fraction":
                    fields[name] = float(value)
                elif name in ("retry_after_ms", "seed"):
                    fields[name] = int(value)
                elif name == "container" and value:
                    fields[name] = value
                elif name == "operation" and value in DATA_CALLS:
                    fields[name] = value
                else:
                    raise ValueError(name)
            except ValueError:
                raise ValueError(
                    f"{SETTING}: {part!r} is not calls=N,M-K, fraction=F, container=NAME, operation=NAME, "
                    "retry_after_ms=MS or seed=N"
                ) from None
        return cls(**fields) if fields else None

    def describe(self) -> str:
        which = f"calls {sorted(self.calls_throttled)}" if self.calls_throttled else ""
        if self.fraction:
            which = " and ".join(filter(None, (which, f"a fraction {self.fraction:g}")))
        where = f"{self.operation or 'every operation'} in {self.container or 'every container'}"
        return f"{which or 'no call'} of {where}, retry-after {self.retry_after_ms} ms"

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """No call is counted or throttled inside: a test's retry after Retry-After, once the partition has
        room again, and its checks of what was stored."""
        with self._lock:
            self._paused += 1
        try:
            yield
        finally:
            with self._lock:
                self._paused -= 1

    def throttles(self, container_id: str, operation: str) -> bool:
        """Count a call of `operation` to `container_id`; True when it is to answer 429."""
        if self.container not in (None, container_id) or self.operation not in (None, operation):
            return False
        with self._lock:
            if self._paused:
                return False
            self.counted += 1
            throttled = self.counted in self.calls_throttled or (
                self.fraction > 0 and self._random.random() < self.fraction
            )
            self.injected += throttled
            return throttled

    def error(self) -> CosmosHttpResponseError:
        error = CosmosHttpResponseError(
            status_code=THROTTLED,
            message="Request rate is large (injected: COSMOS_INJECT_THROTTLING)",
            sub_status=REQUEST_RATE_TOO_LARGE,
        )
        error.headers = {RETRY_AFTER_MS_HEADER: str(self.retry_after_ms), "x-ms-substatus": str(REQUEST_RATE_TOO_LARGE)}
        return error


def _numbers(text: str) -> Iterator[int]:
    for part in filter(None, (piece.strip() for piece in text.split(","))):
        first, _, last = part.partition("-")
        low, high = int(first), int(last or first)
        if low < 1 or high < low:
            raise ValueError(part)
        yield from range(low, high + 1)


class ThrottledContainer:
    """A container whose data-plane calls the plan may answer 429; everything else is the container's."""

    def __init__(self, container, plan: ThrottlePlan) -> None:
        self._container = container
        self._plan = plan

    def __getattr__(self, name: str):
        attribute = getattr(self._container, name)
        if name not in DATA_CALLS:
            return attribute

        def call(*args, **kwargs):
            if not self._plan.throttles(self._container.id, name):
                return attribute(*args, **kwargs)
            if name == "query_items":
                return _ThrottledQuery(self._plan.error())
            raise self._plan.error()

        return call


class _ThrottledQuery:
    """A throttled query: raises when its first item or page is read, as the SDK's first page fetch would
    (iterated whole, or page by page with by_page)."""

    def __init__(self, error: Exception) -> None:
        self._error = error

    def __iter__(self) -> _ThrottledQuery:
        return self

    def __next__(self) -> dict:
        raise self._error

    def by_page(self, continuation_token: str | None = None) -> _ThrottledQuery:
        return self


def refuse_unless_local(endpoint: str) -> None:
    """Injection is for an emulator on this machine: a setting copied to a deployment by mistake stops the
    app when it opens storage instead of throttling it."""
    if not is_loopback(endpoint):
        raise ValueError(f"{SETTING} is for tests on a local emulator; it is refused for {endpoint}")


def throttled(containers: Containers, plan: ThrottlePlan) -> Containers:
    """`containers` answering 429 as the plan says."""
    log.warning("COSMOS DB THROTTLING INJECTION IS ON (%s): %s", SETTING, plan.describe())
    wrapped = {
        field.name: ThrottledContainer(getattr(containers, field.name), plan)
        for field in dataclasses.fields(containers)
    }
    return Containers(**wrapped)


def install(plan: ThrottlePlan | None) -> None:
    """Every Cosmos DB storage opened from now on meets the plan's 429s (None: none, as in production)."""
    install_containers_hook(None if plan is None else containers_hook(plan))


def containers_hook(plan: ThrottlePlan) -> ContainersHook:
    """The hook that wraps a storage's containers in the plan, for an emulator on this machine only."""

    def wrap(endpoint: str, containers: Containers) -> Containers:
        refuse_unless_local(endpoint)
        return throttled(containers, plan)

    return wrap


@contextlib.contextmanager
def installed(plan: ThrottlePlan) -> Iterator[ThrottlePlan]:
    """The plan installed while storage is opened in the block (a storage keeps its containers after)."""
    install(plan)
    try:
        yield plan
    finally:
        install(None)


def install_from_environment() -> ThrottlePlan | None:
    """The local host at start: the plan COSMOS_INJECT_THROTTLING describes, installed; None when unset."""
    plan = ThrottlePlan.parse(os.environ.get(SETTING, "").strip())
    install(plan)
    return plan
