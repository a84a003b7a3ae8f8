"""core.records.record_changes skips the version comparison of a row with nothing to compare (its id
neither stored nor repeated in the batch). These cases check that it still answers what comparing every
row answers: the rule taken row by row, as record_changes did before it skipped any."""

from __future__ import annotations

import datetime as dt
import random

from core.records import RecordChanges, RecordMove, StoreDay, StoredVersion, TradeRecordRow, record_changes
from core.versions import Version, trade_record_replaces

T0 = dt.datetime(2026, 11, 20, 12, tzinfo=dt.UTC)
DAYS = [
    StoreDay("S1", dt.date(2026, 11, 20)),
    StoreDay("S2", dt.date(2026, 11, 20)),
    StoreDay("S1", dt.date(2026, 11, 21)),
]


def row(record_id: str, version: int, seconds: int, day: StoreDay) -> TradeRecordRow:
    modified = T0 + dt.timedelta(seconds=seconds)
    return TradeRecordRow(record_id, version, modified, day.store_id, day.business_date, "01", 1, 1, 0, 0, 0, {})


def every_row_compared(rows: list[TradeRecordRow], stored: dict[str, StoredVersion]) -> RecordChanges:
    """The rule applied to every row in order, each compared with the latest version before it."""
    latest = dict(stored)
    newer, moves = 0, []
    for r in rows:
        mine = StoredVersion(Version.of(r.version, r.last_modified_at), StoreDay(r.store_id, r.business_date))
        before = latest.get(r.trade_record_id)
        if trade_record_replaces(mine.version, None if before is None else before.version):
            newer += 1
            if before is not None and before.day != mine.day:
                moves.append(RecordMove(r.trade_record_id, before.day, mine.day))
            latest[r.trade_record_id] = mine
    return RecordChanges(newer, tuple(moves))


def test_new_records_once_each_all_win_without_moves():
    rows = [row(f"T{n}", 1, 0, DAYS[0]) for n in range(5)]
    assert record_changes(rows, {}) == RecordChanges(5, ())


def test_a_record_repeated_in_the_batch_is_compared_with_its_earlier_row():
    rows = [row("T1", 2, 0, DAYS[0]), row("T2", 1, 0, DAYS[0]), row("T1", 1, 9, DAYS[1]), row("T1", 3, 0, DAYS[2])]
    assert record_changes(rows, {}) == RecordChanges(3, (RecordMove("T1", DAYS[0], DAYS[2]),))


def test_a_stored_record_sent_once_is_compared_with_the_stored_version():
    stored = {"T1": StoredVersion(Version.of(2, T0), DAYS[1]), "T2": StoredVersion(Version.of(5, T0), DAYS[0])}
    rows = [row("T1", 2, 1, DAYS[0]), row("T2", 4, 0, DAYS[0]), row("T3", 1, 0, DAYS[0])]
    assert record_changes(rows, stored) == RecordChanges(2, (RecordMove("T1", DAYS[1], DAYS[0]),))


def test_mixed_batches_answer_what_comparing_every_row_answers():
    draw = random.Random(20)
    for _ in range(500):
        ids = [f"T{n}" for n in range(draw.randint(1, 6))]
        stored = {
            record_id: StoredVersion(
                Version.of(draw.randint(1, 3), T0 + dt.timedelta(seconds=draw.randint(0, 2))), draw.choice(DAYS)
            )
            for record_id in ids
            if draw.random() < 0.4
        }
        rows = [
            row(draw.choice(ids), draw.randint(1, 3), draw.randint(0, 2), draw.choice(DAYS))
            for _ in range(draw.randint(0, 8))
        ]
        assert record_changes(rows, stored) == every_row_compared(rows, stored), (rows, stored)
        assert record_changes(iter(rows), stored) == every_row_compared(rows, stored)  # any iterable
