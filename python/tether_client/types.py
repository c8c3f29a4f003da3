"""The names and answers of the control protocol as types (docs/control-protocol.md,
docs/events.md): ``Literal`` types for the names the agent reports as strings, and
``TypedDict`` types for its answers and its events' JSON.

The wire keeps strings: a name a newer agent adds is still a string on the wire. The typed
accessors (``AgentEvent.reset_phase`` and the like) return the name when this release knows it
and None otherwise; the raw string stays in the event's field. ``tests/swift_names.json`` and
its tests keep these lists equal to the Swift library's (``Tether.*`` in TetherControl)."""

from __future__ import annotations

from typing import Dict, List, Literal, Optional, Tuple, TypedDict, TypeVar, get_args

#: A partition's state (``tetherctl status``, ``state`` events).
PartitionState = Literal["connecting", "syncing", "synced", "offline", "paused", "reset-pending", "resetting", "stopped"]
#: What the agent does about a sync error (the ``action`` of a ``sync-error`` event).
ErrorAction = Literal["retry", "reauth", "client_reset", "client_reset_no_recovery", "delete_store", "fatal", "transient"]
#: What a client reset does to the store.
ResetStrategy = Literal["recover", "discard", "manual", "delete-store"]
#: Where a client reset is.
ResetPhase = Literal[
    "recorded", "manual-hook", "manual-pending", "backing-up", "before-hook", "fetching", "healing", "rewriting", "after-hook",
    "done", "quarantining",
]
#: How a client reset ended.
ResetOutcome = Literal["in-progress", "recovered", "discarded", "manual-pending", "manual-done", "deleted", "superseded"]
#: An event's kind.
EventKind = Literal[
    "state", "sync-error", "reset-phase", "reset-backup", "reset-outcome", "hook", "download", "reload", "dropped", "identity",
    "changes-applied", "synced", "remote-action", "compensating-write",
]

PARTITION_STATES: Tuple[PartitionState, ...] = get_args(PartitionState)
ERROR_ACTIONS: Tuple[ErrorAction, ...] = get_args(ErrorAction)
RESET_STRATEGIES: Tuple[ResetStrategy, ...] = get_args(ResetStrategy)
RESET_PHASES: Tuple[ResetPhase, ...] = get_args(ResetPhase)
RESET_OUTCOMES: Tuple[ResetOutcome, ...] = get_args(ResetOutcome)
EVENT_KINDS: Tuple[EventKind, ...] = get_args(EventKind)

#: The phases in which a reset's backup of the store exists (after ``backing-up``).
BACKUP_EXISTS_PHASES: Tuple[ResetPhase, ...] = ("before-hook", "fetching", "healing", "rewriting", "after-hook", "done")


Name = TypeVar("Name", bound=str)


def _known(value: Optional[str], names: Tuple[Name, ...]) -> Optional[Name]:
    """``value`` when it is one of ``names``, else None."""
    return next((name for name in names if name == value), None)


def partition_state(value: Optional[str]) -> Optional[PartitionState]:
    """``value`` when it is a state this release knows, else None (and so for the others)."""
    return _known(value, PARTITION_STATES)


def error_action(value: Optional[str]) -> Optional[ErrorAction]:
    return _known(value, ERROR_ACTIONS)


def reset_strategy(value: Optional[str]) -> Optional[ResetStrategy]:
    return _known(value, RESET_STRATEGIES)


def reset_phase(value: Optional[str]) -> Optional[ResetPhase]:
    return _known(value, RESET_PHASES)


def reset_outcome(value: Optional[str]) -> Optional[ResetOutcome]:
    return _known(value, RESET_OUTCOMES)


class EventFields(TypedDict, total=False):
    """An event's JSON object (docs/events.md "Fields"): ``seq``, ``at`` and ``event`` always,
    the others where they apply."""

    seq: int
    at: str
    event: str
    partition: str
    state: str
    code: int
    name: str
    message: str
    action: str
    reset_id: str
    phase: str
    outcome: str
    hook: str
    exit_status: int
    rows: int
    bytes: int
    skipped: int
    cause: str
    healed_changes: int
    server_version: int
    tables: Dict[str, int]
    store_path: str
    backup_path: str
    action_id: int
    table: str
    key: str
    reason: str


class HelloResult(TypedDict):
    release: str
    protocol_version: int
    capabilities: List[str]
    role: str
    last_event_seq: int


class ResetInitiated(TypedDict):
    """The answer to ``initiate_reset``: the reset's id and ``initiated`` for a pending manual
    reset now carried out, else the reset's outcome."""

    id: str
    partition: str
    outcome: str


class RetryNowResult(TypedDict):
    """The answer to ``retry_now``: whether the connection was backing off (and reconnects
    now), and the partitions that were (and bind again now)."""

    connection: bool
    partitions: List[str]


class _SubscriptionsResultBase(TypedDict):
    partition: str
    has_store: bool
    held: Optional[List[str]]
    held_digest: str
    wanted: Optional[List[str]]
    wanted_digest: str
    change_pending: bool


class SubscriptionsResult(_SubscriptionsResultBase, total=False):
    """The answer to ``subscriptions`` and ``update_subscriptions``: the subscriptions the
    partition's store holds, those it wants and, from agents with the ``set-subscriptions``
    capability, those configured, one string each (None: the whole partition), their digests,
    whether ``wanted`` was set at run time (``runtime``), and whether a change from the held
    set to the wanted one is pending."""

    runtime: bool
    configured: Optional[List[str]]
    configured_digest: str


class _SubscriptionBase(TypedDict):
    table: str


class Subscription(_SubscriptionBase, total=False):
    """One subscription for ``update_subscriptions`` (docs/subscriptions.md): a table and,
    optionally, a ``where`` filter in Tether's filter language (left out: the whole table).
    ``{"table": "items", "where": "shop_id = 1"}``."""

    where: str


class PartitionStateResult(TypedDict):
    partition: str
    state: str
