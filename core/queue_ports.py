"""The delayed queue's ports: the sending side the use cases hold (a daily close schedules its reconciliation),
and the consuming side the local host's queue trigger and HQ's poison commands need (the Functions host does
that part in Azure). The adapters: SQLite (backends/sqlite/delayed_queue.py) and Azure Storage Queue
(backends/azure_queue.py)."""

from __future__ import annotations

from typing import Protocol, TypeVar


class DelayedQueue(Protocol):
    def send(self, body: str, delay_seconds: int) -> None: ...
    def ping(self) -> None: ...
    def send_to_poison(self, body: bytes) -> None:
        """Put a message that no retry can process on the poison queue, as it came, for HQ to look at."""
        ...


class ReceivedMessage(Protocol):
    """A message as a queue's consumer side hands it over (received, or peeked on the poison queue)."""

    @property
    def message_id(self) -> str: ...
    @property
    def body(self) -> bytes | str: ...  # the SQLite queue keeps text; Azure gives the bytes the sender wrote
    @property
    def dequeue_count(self) -> int: ...
    @property
    def pop_receipt(self) -> str: ...  # "" for a peeked message
    @property
    def inserted_at_us(self) -> int: ...


Message = TypeVar("Message", bound=ReceivedMessage)


class QueueConsumer(Protocol[Message]):
    """The consumer side of the delayed queue: what the local host's queue trigger and HQ's poison
    commands need (the Functions host does this part in Azure). Each adapter has its message class."""

    @property
    def queue_name(self) -> str: ...
    @property
    def poison_name(self) -> str: ...
    def receive(self, visibility_timeout_seconds: float) -> Message | None: ...
    def delete(self, message: Message) -> None: ...
    def move_to_poison(self, message: Message) -> None: ...
    def poison_messages(self) -> list[Message]:
        """The poisoned messages, oldest first, without hiding them; Azure shows at most its peek limit."""
        ...

    def poison_count(self) -> int:
        """How many messages are poisoned (Azure: approximate, as the service reports it)."""
        ...

    def replay_poison(self, message_id: str) -> bool:
        """Put one poisoned message back on the queue, visible now; False when there is none by that id."""
        ...

    def replay_all_poison(self) -> int:
        """Put every poisoned message back on the queue; returns how many."""
        ...
