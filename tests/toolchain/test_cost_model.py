"""bench/cost_model.py (decision 0067): what each environment costs a month, from documented prices and stated
quantities, and the operator guide's cost table as its output."""

from __future__ import annotations

import json
from pathlib import Path

from bench import cost_model

ROOT = Path(__file__).resolve().parents[2]


def test_the_operator_guides_cost_table_is_the_models_output():
    guide = (ROOT / "docs" / "operator-guide.md").read_text(encoding="utf-8")
    assert cost_model.markdown() in guide, "run: .venv/bin/python -m bench.cost_model --markdown"


def test_zone_redundancy_bills_two_always_ready_instances_per_scale_group():
    production = cost_model.infra("main.production.parameters.json")
    assert production["zoneRedundant"] is True and production["alwaysReadyInstanceCount"] == 2
    assert (
        cost_model.scale_groups()[:4]
        == (
            "http",
            "function:reconcile_store_day",
            "function:sweep_overdue_closes",
            "function:export_reconciled_days",
        )
        and len(cost_model.scale_groups()) >= 4
    )  # a later trigger adds its group
    assert cost_model.always_ready_instances(production) == 2 * len(cost_model.scale_groups())
    assert cost_model.always_ready_instances({**production, "zoneRedundant": False}) == 2
    assert cost_model.always_ready_instances(cost_model.infra("main.test.parameters.json")) == 0
    assert cost_model.always_ready_instances(cost_model.infra("main.parameters.json")) == 0  # azd's defaults


def test_idle_production_costs_more_than_idle_test_and_the_chain_more_still():
    totals = {case: sum(costs.values()) for case, (costs, _) in cost_model.table().items()}
    assert totals["idle test"] < 10 < totals["idle production"] < totals["production, 10,000-store chain"]
    costs, _ = cost_model.table()["idle production"]
    assert costs["Functions: always-ready baseline"] == max(costs.values())  # idle, the warm instances dominate


def test_data_plane_logs_would_cost_several_times_every_other_log_together():
    """Why production sends no CDBDataPlaneRequests (decision 0067)."""
    costs, volumes = cost_model.environment("main.production.parameters.json", chain=cost_model.CHAIN_FROM_CAPACITY)
    assert "CDBDataPlaneRequests" not in volumes
    assert cost_model.data_plane_logs_cost() > 4 * costs["Log Analytics: ingestion"]
    _, test_volumes = cost_model.environment("main.test.parameters.json")
    assert "CDBDataPlaneRequests" in test_volumes  # on in test, where it costs cents


def test_the_chain_figures_can_come_from_a_capacity_run(tmp_path, capsys):
    doubled = {name: 2 * value for name, value in cost_model.CHAIN_FROM_CAPACITY.items()}
    path = tmp_path / "capacity.json"
    path.write_text(json.dumps({"plan": {"cost_per_month_usd": doubled}}), encoding="utf-8")
    assert cost_model.main(["--capacity", str(path)]) == 0
    printed = capsys.readouterr().out
    chain_costs, _ = cost_model.environment("main.production.parameters.json", chain=doubled)
    assert f"production, 10,000-store chain: {cost_model._usd(sum(chain_costs.values()))} USD a month" in printed
