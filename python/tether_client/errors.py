"""Errors of the Tether client: each says whether trying again may help."""

from __future__ import annotations

from typing import Any, Dict, Optional


class TetherError(Exception):
    """A call to the agent failed. ``transient`` says whether trying again later may help."""

    transient = False

    def __init__(self, message: str, code: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class AgentNotRunning(TetherError):
    """Nothing listens on the control socket: tetherd is not running (or the path is wrong)."""

    transient = True


class PermissionDenied(TetherError):
    """The socket's permissions, or a changing command sent with the ``reader`` role."""


class ProtocolTooNew(TetherError):
    """tetherd speaks an older control protocol than this library: upgrade tetherd."""


class UnknownPartition(TetherError):
    """No partition of that name is configured in tetherd.toml."""


class TimedOut(TetherError):
    """No answer, or (wait_synced) not synced, within the time allowed."""

    transient = True


class Refused(TetherError):
    """Another refusal; ``code`` is the agent's (``unavailable`` is transient)."""

    @property
    def transient(self) -> bool:  # type: ignore[override]
        return self.code == "unavailable"


class Unreachable(TetherError):
    """The agent could not be reached for another reason, or answered something unreadable."""

    transient = True


def refusal(answer: Dict[str, Any]) -> TetherError:
    """The error an ``{"ok": false, ...}`` answer stands for."""
    message = str(answer.get("error") or "tetherd refused the request")
    code: Optional[str] = answer.get("code")
    if code is None:
        # Control protocol 1 sent no code: its exit statuses say as much.
        exit_code = answer.get("exit_code")
        code = "permission-denied" if exit_code == 4 else "bad-request" if exit_code == 2 else "failed"
    kinds = {
        "permission-denied": PermissionDenied,
        "unknown-partition": UnknownPartition,
        "timed-out": TimedOut,
        "protocol-too-new": ProtocolTooNew,
    }
    return kinds.get(code, Refused)(message, code)
