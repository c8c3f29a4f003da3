"""Tether's control protocol for applications on the device (docs/control-protocol.md)."""

from ._wire import DEFAULT_SOCKET, PROTOCOL_VERSION
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
from .events import AgentEvent, ClientResetNotice

__all__ = [
    "DEFAULT_SOCKET",
    "PROTOCOL_VERSION",
    "AgentEvent",
    "AgentNotRunning",
    "AsyncTetherClient",
    "ClientResetNotice",
    "PermissionDenied",
    "ProtocolTooNew",
    "Refused",
    "TetherClient",
    "TetherError",
    "TimedOut",
    "UnknownPartition",
    "Unreachable",
]
