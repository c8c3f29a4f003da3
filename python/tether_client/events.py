"""Events of the agent (docs/events.md) and the notice of a finished client reset."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional


@dataclass(frozen=True)
class AgentEvent:
    """One event. ``event`` is its kind (``changes-applied``, ``synced``, ``sync-error``,
    ``reset-phase``, ``reset-outcome``, ``state``, ``download``, ``hook``, ``reload``,
    ``identity``, ``dropped``, or a kind a newer agent added); fields that do not apply are
    None. ``raw`` is the whole JSON object, for fields this release does not name."""

    seq: int
    at: str
    event: str
    partition: Optional[str] = None
    state: Optional[str] = None
    code: Optional[int] = None
    name: Optional[str] = None
    message: Optional[str] = None
    action: Optional[str] = None
    reset_id: Optional[str] = None
    phase: Optional[str] = None
    outcome: Optional[str] = None
    rows: Optional[int] = None
    skipped: Optional[int] = None
    cause: Optional[str] = None
    server_version: Optional[int] = None
    tables: Optional[Dict[str, int]] = None
    store_path: Optional[str] = None
    backup_path: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_json(cls, value: Dict[str, Any]) -> "AgentEvent":
        names = cls.__dataclass_fields__.keys()
        known = {key: value[key] for key in names if key in value and key != "raw"}
        known.setdefault("seq", 0)
        known.setdefault("at", "")
        known.setdefault("event", "")
        return cls(raw=dict(value), **known)


@dataclass(frozen=True)
class ClientResetNotice:
    """A client reset that finished: the store's copy from before (``before``, the backup in
    recovery_dir) and the store now (``after``) — Realm's ``afterReset(before, after)``."""

    partition: str
    reset_id: str
    outcome: str
    before: str
    after: str
    code: Optional[int]
    event: AgentEvent

    @classmethod
    def from_event(cls, event: AgentEvent) -> Optional["ClientResetNotice"]:
        """The notice a ``reset-outcome`` event with both paths stands for, else None."""
        if event.event != "reset-outcome" or event.outcome in (None, "superseded"):
            return None
        if not (event.partition and event.reset_id and event.backup_path and event.store_path):
            return None
        return cls(event.partition, event.reset_id, event.outcome or "", event.backup_path, event.store_path, event.code, event)
