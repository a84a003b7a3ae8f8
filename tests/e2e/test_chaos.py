"""kill -9 in the middle of writes (decision 0071): the short form of `make chaos` on each backend.

The local host is killed with SIGKILL while two clients push business days, first at steps inside a
write (armed to kill at once: inside the SQLite transaction of a batch; between a Cosmos DB batch's record
writes, and between its marker and the answer), then as the run's plan goes, and restarted on the same
data; the clients resend what got no answer, with the same batch_id. Every close must then be reconciled
MATCHED with the totals the clients computed from what they sent: nothing lost, nothing counted twice.
The long run (`make chaos`, at least 30 kills) and its figures: docs/reliability.md.
"""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from devhost import fault_injection
from loadtest.chaos import Pace, run
from loadtest.chaos_kills import kill_points

# Steps in the middle of a write, each the first kill of a run on its backend (chance 1: the first hit).
MID_WRITE = {
    "sqlite": ("storage.data_written", "batch.before_response"),
    "azure": ("cosmos.record", "cosmos.marker_committed"),
}


# Small batches, and an armed life waits for its point as long as it takes (it ends when the point is hit).
PACE = Pace(batch_size=(5, 30), random_seconds=(0.5, 2.0), armed_seconds=(45.0, 45.0))


@pytest.mark.parametrize("backend", ["sqlite", "azure"])
def test_kill_9_at_any_moment_loses_and_doubles_nothing(backend, tmp_path):
    points = MID_WRITE[backend]
    figures = run(
        backend,
        seconds=150,  # a bound only: the run ends after its kills
        partners=1,
        stores=2,
        seed=19,
        min_kills=len(points) + 1,
        drain_seconds=90,
        first_kills=[(point, 1.0) for point in points],
        until_kills=len(points) + 1,  # the first life's, at a random moment during set-up, then the points
        pace=PACE,
        work=tmp_path,
    )

    assert figures["failures"] == [], figures
    for point in points:
        assert figures["kills_by_point"].get(point, 0) >= 1, figures["kills_by_point"]
    assert figures["requests_resent"] >= len(points)  # the requests the host died under were resent
    assert figures["closes"] >= 2 and figures["statuses"] == {"MATCHED": figures["closes"]}, figures
    assert figures["records_counted"] == figures["records_sent"] > 0
    assert (figures["lost"], figures["doubled"], figures["stuck"], figures["differing"]) == (0, 0, [], [])


def test_a_point_armed_to_kill_kills_the_process_there_and_says_where():
    script = (
        "from core import faults\n"
        "from devhost import fault_injection\n"
        "fault_injection.arm_kills_from_text('batch.validated:1.0')\n"
        "faults.point('close.enqueued')\n"  # not armed: nothing happens
        "print('before', flush=True)\n"
        "faults.point('batch.validated')\n"
        "print('after', flush=True)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)

    assert done.returncode == -signal.SIGKILL
    assert done.stdout == "before\n"
    assert done.stderr == f"{fault_injection.KILL_LINE}batch.validated\n"


def test_pos_faults_kill_text_names_points_and_chances():
    try:
        armed = fault_injection.arm_kills_from_text("*:0.25, cosmos.record:0.01")
        assert {fault.name for fault in armed} == fault_injection.NAMES
        assert all(fault.times == -1 and fault.action for fault in armed)
    finally:
        fault_injection.disarm()
    for wrong in ("batch.validated", "batch.validated:0", "batch.validated:2", "no.such.point:0.5"):
        with pytest.raises(ValueError):
            fault_injection.arm_kills_from_text(wrong)
    fault_injection.disarm()


def test_the_chaos_run_arms_only_points_its_backend_reaches():
    sqlite, azure = dict(kill_points("sqlite")), dict(kill_points("azure"))
    assert "storage.data_written" in sqlite and "cosmos.record" not in sqlite
    assert {"cosmos.record", "cosmos.marker_committed", "storage.data_written"} <= set(azure)
    assert azure["cosmos.record"] < azure["batch.validated"]  # hit once per record, not per request
