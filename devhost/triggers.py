"""Runs the app's queue and timer triggers against a queue, as the Functions host does: poll, hide the
message for the visibility timeout, delete on success, move it to `<queue>-poison` after
maxDequeueCount failed attempts (host.json's extensions.queues, with its AzureFunctionsJobHost__ overrides:
core.settings.host_settings). The queue is the embedded SqliteQueue or an AzureQueue: either is a
core.ports.QueueConsumer."""

from __future__ import annotations

import datetime as dt
import logging
import re
import threading

from azure.functions.queue import QueueMessage  # the worker's class: it carries dequeue_count
from azure.functions.timer import TimerRequest
from croniter import croniter

from core.queue_ports import QueueConsumer
from core.settings import host_value
from devhost.functions import QueueFunction, TimerFunction, invoke
from triggers.telemetry import log_exception

log = logging.getLogger("pos.devhost")


def _timespan_seconds(text: str, default: float) -> float:
    matched = re.fullmatch(r"(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2}(?:\.\d+)?)", text or "")
    if not matched:
        return default
    days, hours, minutes, seconds = matched.groups()
    return int(days or 0) * 86400 + int(hours) * 3600 + int(minutes) * 60 + float(seconds)


class QueueTriggerRunner(threading.Thread):
    def __init__(
        self, function: QueueFunction, queue: QueueConsumer, queue_settings: dict, stop: threading.Event
    ) -> None:
        super().__init__(name=f"queue:{function.name}", daemon=True)
        self.function = function
        self.queue = queue
        self.stop_event = stop
        self.visibility = _timespan_seconds(host_value(queue_settings, "visibilityTimeout", ""), 30)
        self.max_dequeue = int(host_value(queue_settings, "maxDequeueCount", 5))
        # Poll at least every second locally, so short reconciliation delays are honoured.
        self.poll = min(_timespan_seconds(host_value(queue_settings, "maxPollingInterval", ""), 1.0), 1.0)

    def run(self) -> None:
        while not self.stop_event.is_set():
            try:
                if not self.run_once():
                    self.stop_event.wait(self.poll)
            except Exception as error:
                log_exception(log, f"queue runner {self.function.name} failed; retrying", error)
                self.stop_event.wait(self.poll)

    def run_once(self) -> bool:
        """Process one visible message; False when there was none."""
        message = self.queue.receive(self.visibility)
        if message is None:
            return False
        # The body as the host hands it over: the bytes the sender wrote (SqliteQueue keeps text).
        body = message.body if isinstance(message.body, bytes) else message.body.encode()
        try:
            invoke(
                self.function.name,
                self.function.handler,
                QueueMessage(
                    id=message.message_id,
                    body=body,
                    pop_receipt=message.pop_receipt,
                    dequeue_count=message.dequeue_count,
                ),
            )
        except Exception as error:
            # Types and frames only: the message of a reconciliation's failure could quote stored data.
            log_exception(
                log,
                f"function {self.function.name} failed on message {message.message_id} "
                f"(attempt {message.dequeue_count} of {self.max_dequeue})",
                error,
                message_id=message.message_id,
                dequeue_count=message.dequeue_count,
            )
            if message.dequeue_count >= self.max_dequeue:
                self.queue.move_to_poison(message)
                log.error("message %s moved to %s", message.message_id, self.queue.poison_name)
            return True
        self.queue.delete(message)
        return True


class TimerTriggerRunner(threading.Thread):
    def __init__(self, function: TimerFunction, stop: threading.Event) -> None:
        super().__init__(name=f"timer:{function.name}", daemon=True)
        self.function = function
        self.stop_event = stop

    def run(self) -> None:
        if self.function.run_on_startup:
            self._fire(past_due=False)
        schedule = croniter(self.function.schedule, dt.datetime.now(dt.UTC), second_at_beginning=True)
        while not self.stop_event.is_set():
            due = schedule.get_next(dt.datetime)
            wait = (due - dt.datetime.now(dt.UTC)).total_seconds()
            if self.stop_event.wait(max(wait, 0)):
                return
            self._fire(past_due=wait < -1)

    def _fire(self, past_due: bool) -> None:
        try:
            invoke(self.function.name, self.function.handler, TimerRequest(past_due=past_due))
        except Exception as error:
            log_exception(log, f"timer function {self.function.name} failed", error)
