"""The Azure accept in-process (bench/azure_accept_inprocess.py, decision 0127): each stage runs on the Cosmos DB
emulator and on SQLite, every batch accepted whole, the profile covers the last stage's batches, and each kind
run has its CPU a record. Nothing about time or instructions is asserted (they are counted under valgrind by
hand, and the CPU moves with the machine's load)."""

from __future__ import annotations

import pstats

import pytest

from bench import azure_accept_inprocess


@pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")
@pytest.mark.parametrize("backend", ["azure", "sqlite"])
def test_every_kind_is_accepted_whole_and_the_last_one_profiled(backend, cosmos_emulator, tmp_path):
    profile = tmp_path / "moves.prof"
    cpu = azure_accept_inprocess.run(backend, cosmos_emulator.endpoint, "moves", 1, 20, profile, inline=True)
    assert list(cpu) == ["new", "later", "moves"]
    called = {name for _, _, name in pstats.Stats(str(profile)).stats}
    assert "post_trade_records" in called


def test_the_set_up_stage_measures_nothing(cosmos_emulator, tmp_path):
    profile = tmp_path / "none.prof"
    assert azure_accept_inprocess.run("azure", cosmos_emulator.endpoint, "set-up", 1, 10, profile) == {}
    assert not profile.exists()
