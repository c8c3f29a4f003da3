"""Events of the agent (docs/events.md), the progress of a client reset and the notice of a
finished one."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Dict, Optional

from . import types
from .types import ErrorAction, PartitionState, ResetOutcome, ResetPhase, ResetStrategy


@dataclass(frozen=True)
class AgentEvent:
    """One event. ``event`` is its kind (``types.EventKind``, or a kind a newer agent added);
    fields that do not apply are None. ``raw`` is the whole JSON object, for fields this
    release does not name. The fields are those of the Swift library's ``AgentEvent``
    (``tests/swift_names.json`` keeps them equal)."""

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
    hook: Optional[str] = None
    exit_status: Optional[int] = None
    rows: Optional[int] = None
    bytes: Optional[int] = None
    skipped: Optional[int] = None
    cause: Optional[str] = None
    healed_changes: Optional[int] = None
    server_version: Optional[int] = None
    tables: Optional[Dict[str, int]] = None
    store_path: Optional[str] = None
    backup_path: Optional[str] = None
    action_id: Optional[int] = None
    table: Optional[str] = None
    key: Optional[str] = None
    reason: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_json(cls, value: Dict[str, Any]) -> "AgentEvent":
        names = [item.name for item in fields(cls) if item.name != "raw"]
        known = {key: value[key] for key in names if key in value}
        known.setdefault("seq", 0)
        known.setdefault("at", "")
        known.setdefault("event", "")
        return cls(raw=dict(value), **known)

    @property
    def partition_state(self) -> Optional[PartitionState]:
        """``state`` events: the new state (None for a state this release does not know)."""
        return types.partition_state(self.state) if self.event == "state" else None

    @property
    def error_action(self) -> Optional[ErrorAction]:
        """``sync-error`` events: what the agent does about it."""
        return types.error_action(self.action) if self.event == "sync-error" else None

    @property
    def reset_phase(self) -> Optional[ResetPhase]:
        """``reset-phase`` and ``reset-backup`` events: the reset's phase."""
        return types.reset_phase(self.phase) if self.event in ("reset-phase", "reset-backup") else None

    @property
    def reset_strategy(self) -> Optional[ResetStrategy]:
        """``reset-phase`` and ``reset-backup`` events: the strategy (the first word of ``message``)."""
        if self.event not in ("reset-phase", "reset-backup") or not self.message:
            return None
        return types.reset_strategy(self.message.split(",")[0].split(" ")[0])

    @property
    def reset_outcome(self) -> Optional[ResetOutcome]:
        """``reset-outcome`` events: how the reset ended."""
        return types.reset_outcome(self.outcome) if self.event == "reset-outcome" else None


@dataclass(frozen=True)
class ClientResetProgress:
    """A client reset on its way, from its ``reset-phase`` and ``reset-backup`` events: it
    started (``phase == "recorded"``), waits for an operator (``manual-pending``), or its backup
    of the store exists (``backup_path`` set: the store as it was before the reset — Realm's
    ``beforeReset(before)``). ``ClientResetNotice`` tells when it finished."""

    partition: str
    reset_id: str
    phase: str
    strategy: Optional[ResetStrategy]
    store_path: Optional[str]
    backup_path: Optional[str]
    code: Optional[int]
    event: AgentEvent

    @property
    def is_start(self) -> bool:
        return self.phase == "recorded" and self.event.event == "reset-phase"

    @property
    def is_backup_ready(self) -> bool:
        """Whether this says the backup exists now (the ``reset-backup`` event)."""
        return self.event.event == "reset-backup"

    @classmethod
    def from_event(cls, event: AgentEvent) -> Optional["ClientResetProgress"]:
        """The progress a ``reset-phase`` or ``reset-backup`` event stands for, else None."""
        if event.event not in ("reset-phase", "reset-backup") or not (event.partition and event.reset_id and event.phase):
            return None
        ready = event.event == "reset-backup" or event.phase in types.BACKUP_EXISTS_PHASES
        return cls(
            event.partition, event.reset_id, event.phase, event.reset_strategy, event.store_path,
            event.backup_path if ready else None, event.code, event,
        )


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

    @property
    def reset_outcome(self) -> Optional[ResetOutcome]:
        return types.reset_outcome(self.outcome)

    @classmethod
    def from_event(cls, event: AgentEvent) -> Optional["ClientResetNotice"]:
        """The notice a ``reset-outcome`` event with both paths stands for, else None."""
        if event.event != "reset-outcome" or event.outcome in (None, "superseded"):
            return None
        if not (event.partition and event.reset_id and event.backup_path and event.store_path):
            return None
        return cls(event.partition, event.reset_id, event.outcome or "", event.backup_path, event.store_path, event.code, event)
