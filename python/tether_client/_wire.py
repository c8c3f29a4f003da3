"""The control socket: one JSON request line, one JSON answer line (docs/control-protocol.md)."""

from __future__ import annotations

import errno
import json
import os
import socket
from typing import Any, Dict, Mapping, Optional, Sequence

from .errors import AgentNotRunning, PermissionDenied, TetherError, TimedOut, Unreachable

PROTOCOL_VERSION = 2
DEFAULT_SOCKET = "/run/tether/tetherd.sock"


def default_socket() -> str:
    return os.environ.get("TETHER_SOCKET") or DEFAULT_SOCKET


def connect(path: str, timeout: Optional[float]) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
    except OSError as error:
        sock.close()
        raise connection_error(path, error) from None
    return sock


def connection_error(path: str, error: OSError) -> TetherError:
    """The error a failed connect to the socket at ``path`` stands for."""
    if error.errno in (errno.ENOENT, errno.ECONNREFUSED):
        return AgentNotRunning(f"tetherd is not running at {path}: {error.strerror}")
    if error.errno == errno.EACCES:
        return PermissionDenied(f"permission denied on {path}: run as a member of the agent's group")
    return Unreachable(f"cannot connect to {path}: {error}")


def request_line(command: str, fields: Optional[Dict[str, Any]] = None) -> bytes:
    body: Dict[str, Any] = {"command": command, "protocol": PROTOCOL_VERSION}
    body.update({key: value for key, value in (fields or {}).items() if value is not None})
    return (json.dumps(body) + "\n").encode()


def subscription_fields(partition: str, subscriptions: Optional[Sequence[Mapping[str, Any]]]) -> Dict[str, Any]:
    """The fields of ``set-subscriptions``: each subscription's ``table`` and ``where`` (when
    given), or ``clear`` for None. The agent checks them."""
    if subscriptions is None:
        return {"partition": partition, "clear": True}
    listed: list[Dict[str, Any]] = []
    for subscription in subscriptions:
        entry: Dict[str, Any] = {"table": subscription["table"]}
        if subscription.get("where") is not None:
            entry["where"] = subscription["where"]
        listed.append(entry)
    return {"partition": partition, "subscriptions": listed}


def exchange(path: str, answer_within: Optional[float], command: str, fields: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Sends one request (``fields`` besides its command) and returns the agent's answer,
    refusals included, waiting ``answer_within`` seconds at most."""
    timeout = answer_within
    sock = connect(path, timeout)
    try:
        sock.sendall(request_line(command, fields))
        data = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except socket.timeout:
                raise TimedOut(f"tetherd at {path} did not answer within {timeout} s") from None
            if not chunk:
                break
            data += chunk
    finally:
        sock.close()
    return parse_answer(data, path)


def parse_answer(data: bytes, path: str) -> Dict[str, Any]:
    line = data.split(b"\n", 1)[0]
    if not line:
        raise Unreachable(f"tetherd at {path} closed the connection without answering")
    try:
        answer: Any = json.loads(line)
    except ValueError:
        raise Unreachable(f"unreadable answer from tetherd at {path}") from None
    if not isinstance(answer, dict) or "ok" not in answer:
        raise Unreachable(f"unreadable answer from tetherd at {path}")
    return answer
