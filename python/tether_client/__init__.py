"""Tether's control protocol for applications on the device (docs/control-protocol.md)."""

from ._wire import DEFAULT_SOCKET, PROTOCOL_VERSION

#: The release: the repository's ``VERSION`` (TetherVersionTests checks that they agree).
__version__ = "0.1.0"
from .aio import AsyncTetherClient
from .client import TetherClient
from .errors import (
    AgentNotRunning,
    PermissionDenied,
    ProtocolTooNew,
    Refused,
    TetherError,
    TimedOut,
    UnknownPartition,
    Unreachable,
)
from .events import AgentEvent, ClientResetNotice, ClientResetProgress
from .types import (
    ErrorAction,
    EventFields,
    EventKind,
    HelloResult,
    PartitionState,
    ResetInitiated,
    ResetOutcome,
    ResetPhase,
    ResetStrategy,
    RetryNowResult,
    Subscription,
    SubscriptionsResult,
)

__all__ = [
    "DEFAULT_SOCKET",
    "PROTOCOL_VERSION",
    "AgentEvent",
    "AgentNotRunning",
    "AsyncTetherClient",
    "ClientResetNotice",
    "ClientResetProgress",
    "ErrorAction",
    "EventFields",
    "EventKind",
    "HelloResult",
    "PartitionState",
    "ResetInitiated",
    "ResetOutcome",
    "ResetPhase",
    "ResetStrategy",
    "RetryNowResult",
    "Subscription",
    "SubscriptionsResult",
    "PermissionDenied",
    "ProtocolTooNew",
    "Refused",
    "TetherClient",
    "TetherError",
    "TimedOut",
    "UnknownPartition",
    "Unreachable",
]
