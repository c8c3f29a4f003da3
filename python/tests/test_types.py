"""The package names what the Swift library names (``swift_names.json``, which the Swift test
``PythonNamesTests`` keeps equal to the Swift side): every field of an event, every event kind,
and the names of states, actions, strategies, phases and outcomes. Needs no agent."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any, Dict, List, Tuple

from tether_client import AgentEvent, AsyncTetherClient, ClientResetProgress, EventFields, Subscription, TetherClient, types

SWIFT: Dict[str, List[str]] = json.loads((Path(__file__).parent / "swift_names.json").read_text())


def test_an_event_has_every_field_of_the_swift_one() -> None:
    python = {item.name for item in fields(AgentEvent) if item.name != "raw"}
    assert python == set(SWIFT["event_fields"])
    assert set(EventFields.__annotations__) == set(SWIFT["event_fields"])


def test_the_literal_types_list_the_swift_names() -> None:
    lists: Dict[str, Tuple[str, ...]] = {
        "event_kinds": types.EVENT_KINDS,
        "partition_states": types.PARTITION_STATES,
        "error_actions": types.ERROR_ACTIONS,
        "reset_strategies": types.RESET_STRATEGIES,
        "reset_phases": types.RESET_PHASES,
        "reset_outcomes": types.RESET_OUTCOMES,
    }
    assert set(lists) | {"event_fields"} == set(SWIFT)
    for key, names in lists.items():
        assert list(names) == SWIFT[key], key


def test_every_field_of_an_event_is_read_and_an_unknown_name_is_not_an_error() -> None:
    value: Dict[str, Any] = {key: 1 for key in SWIFT["event_fields"]}
    value.update({"event": "reset-backup", "phase": "backing-up", "partition": "p", "reset_id": "r",
                  "message": "manual, because", "backup_path": "/b", "brand-new": True})
    event = AgentEvent.from_json(value)
    assert all(getattr(event, key) == value[key] for key in SWIFT["event_fields"])
    assert event.raw["brand-new"] is True
    assert event.reset_phase == "backing-up" and event.reset_strategy == "manual"
    progress = ClientResetProgress.from_event(event)
    assert progress is not None and progress.is_backup_ready and progress.backup_path == "/b"
    assert AgentEvent.from_json({"seq": 1, "at": "", "event": "state", "state": "hibernating"}).partition_state is None
    assert AgentEvent.from_json({"seq": 1, "at": "", "event": "download", "phase": "started"}).reset_phase is None


def test_update_subscriptions_sends_each_table_with_its_filter_or_clear() -> None:
    from tether_client import _wire

    listed: List[Subscription] = [{"table": "items", "where": "shop_id = 1"}, {"table": "settings"}]
    assert _wire.subscription_fields("catalog", listed) == {
        "partition": "catalog",
        "subscriptions": [{"table": "items", "where": "shop_id = 1"}, {"table": "settings"}],
    }
    assert _wire.subscription_fields("catalog", None) == {"partition": "catalog", "clear": True}
    for client in (TetherClient, AsyncTetherClient):
        assert callable(getattr(client, "update_subscriptions"))
