"""The synchronous client."""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any, Callable, Dict, Iterator, Optional, Sequence, cast

from . import _wire
from ._resume import Resumption
from .errors import ProtocolTooNew, TetherError, Unreachable, refusal
from .events import AgentEvent, ClientResetNotice, ClientResetProgress
from .types import HelloResult, ResetInitiated, RetryNowResult, Subscription, SubscriptionsResult


class TetherClient:
    """An application's handle on the tetherd of its device (docs/app-integration.md).

    Every call opens a connection of its own; an instance can be shared between threads."""

    #: How long a quiet event connection waits before checking whether it should stop.
    poll_seconds = 0.25
    shortest_wait = 0.25
    longest_wait = 5.0

    def __init__(self, socket_path: Optional[str] = None, timeout: float = 30.0) -> None:
        self.socket_path = socket_path or _wire.default_socket()
        self.timeout = timeout

    def hello(self) -> HelloResult:
        """``release``, ``protocol_version``, ``capabilities``, ``role`` and ``last_event_seq``."""
        answer = _wire.exchange(self.socket_path, self.timeout, "hello")
        if not answer.get("ok") and answer.get("code") is None and answer.get("exit_code") == 2:
            raise ProtocolTooNew(f"tetherd speaks control protocol 1; this library needs {_wire.PROTOCOL_VERSION}: upgrade tetherd")
        return cast(HelloResult, self._result(answer))

    def status(self) -> Dict[str, Any]:
        """The connection and every partition, as ``tetherctl status --json`` shows them."""
        return cast(Dict[str, Any], self._result(_wire.exchange(self.socket_path, self.timeout, "status")))

    def wait_synced(self, partition: str, timeout: float = 60.0) -> int:
        """Waits until the partition is synced; returns the server version it holds."""
        answer = _wire.exchange(self.socket_path, self.timeout + timeout, "wait-synced", {"partition": partition, "timeout": timeout})
        return int(self._result(answer)["server_version"])

    def pause(self, partition: str) -> None:
        """Stops syncing the partition (needs the ``operator`` role)."""
        self._result(_wire.exchange(self.socket_path, self.timeout, "pause", {"partition": partition}))

    def resume(self, partition: str) -> None:
        """Syncs the partition again (needs the ``operator`` role)."""
        self._result(_wire.exchange(self.socket_path, self.timeout, "resume", {"partition": partition}))

    def initiate_reset(self, partition: str) -> ResetInitiated:
        """Carries out the client reset that waits for an operator on ``partition`` (a manual
        reset or a delete-store action), as ``tetherctl reset initiate`` does; on a partition
        stuck in an error state it forces a reset. The reset goes on in the agent:
        ``on_reset_progress`` tells when its backup exists, ``on_client_reset`` when it
        finished. Needs the ``operator`` role; raises ``Refused`` when there is nothing to
        initiate."""
        return cast(ResetInitiated, self._result(_wire.exchange(self.socket_path, self.timeout, "reset-initiate", {"partition": partition})))

    def retry_now(self, partition: Optional[str] = None) -> RetryNowResult:
        """Ends the agent's backoff: it reconnects and binds ``partition`` (None: every
        partition) at once. Says what was backing off. Needs the ``operator`` role."""
        return cast(RetryNowResult, self._result(_wire.exchange(self.socket_path, self.timeout, "retry-now", {"partition": partition})))

    def subscriptions(self, partition: str) -> SubscriptionsResult:
        """The subscriptions ``partition``'s store holds, those it wants and those configured,
        and whether a change is pending (capability ``subscriptions``)."""
        return cast(SubscriptionsResult, self._result(_wire.exchange(self.socket_path, self.timeout, "subscriptions", {"partition": partition})))

    def update_subscriptions(
        self, partition: str, subscriptions: Optional[Sequence[Subscription]], wait: bool = True, timeout: float = 60.0
    ) -> SubscriptionsResult:
        """Changes the subscriptions ``partition`` wants at run time (Realm's
        ``subscriptions.update``; docs/subscriptions.md "Changing them at run time"): from now
        on ``subscriptions`` (``[{"table": "items", "where": "shop_id = 1"}]``), kept across
        restarts of the agent until cleared or until the configured ones change; None clears
        them and the configured ones are in force again. With ``wait`` (Realm's
        ``waitForSync``), returns once the store holds the new set, and raises ``TimedOut``
        when it does not within ``timeout`` seconds (the change stands). Returns the
        partition's subscriptions. Needs the ``operator`` role and the ``set-subscriptions``
        capability; a set that is not valid, that the store's schema cannot serve, or a
        partition in a client reset raises ``Refused`` and nothing changes."""
        fields = _wire.subscription_fields(partition, subscriptions)
        result = cast(SubscriptionsResult, self._result(_wire.exchange(self.socket_path, self.timeout, "set-subscriptions", fields)))
        if not wait:
            return result
        self.wait_synced(partition, timeout)
        return self.subscriptions(partition)

    def events(
        self, after: Optional[int] = None, partition: Optional[str] = None, stop: Optional[threading.Event] = None
    ) -> Iterator[AgentEvent]:
        """Every event after ``after`` (the seq of the last one handled; None: the kept ones
        first), then each new one. Connects again after the last delivered event whenever
        tetherd stops, restarts or is not running yet, so none is lost or repeated while the
        agent keeps them. Ends when ``stop`` is set; raises only when going on cannot help
        (permission denied, an unknown partition, an agent too old)."""
        resume = Resumption(after, self.shortest_wait, self.longest_wait)
        while not (stop and stop.is_set()):
            failure: Optional[TetherError] = None
            try:
                for event in self._follow(resume.last, partition, stop):
                    yield resume.delivered(event)
            except TetherError as error:
                failure = error
            wait = resume.ended(failure)
            if stop is not None:
                if stop.wait(wait):
                    return
            else:
                time.sleep(wait)

    def on_compensating_write(self, handler: Callable[[AgentEvent], None], partition: Optional[str] = None,
                              after: Optional[int] = None, stop: Optional[threading.Event] = None) -> None:
        """Calls ``handler`` for every compensating write from now on: a change of this device the
        server did not integrate and reverted in the store (error 231; ``event.table``,
        ``event.key``, ``event.reason``)."""
        start = after if after is not None else int(self.hello()["last_event_seq"])
        for event in self.events(after=start, partition=partition, stop=stop):
            if event.event == "compensating-write":
                handler(event)

    def on_sync_error(self, handler: Callable[[AgentEvent], None], partition: Optional[str] = None,
                      after: Optional[int] = None, stop: Optional[threading.Event] = None) -> None:
        """Calls ``handler`` for every sync error from now on (Realm's sync error handler)."""
        start = after if after is not None else int(self.hello()["last_event_seq"])
        for event in self.events(after=start, partition=partition, stop=stop):
            if event.event == "sync-error":
                handler(event)

    def on_client_reset(self, handler: Callable[[ClientResetNotice], None], partition: Optional[str] = None,
                        after: Optional[int] = None, stop: Optional[threading.Event] = None) -> None:
        """Calls ``handler`` with the before and after of every reset that finishes from now on
        (Realm's ``afterReset(before, after)``)."""
        start = after if after is not None else int(self.hello()["last_event_seq"])
        for event in self.events(after=start, partition=partition, stop=stop):
            notice = ClientResetNotice.from_event(event)
            if notice is not None:
                handler(notice)

    def on_reset_progress(self, handler: Callable[[ClientResetProgress], None], partition: Optional[str] = None,
                          after: Optional[int] = None, stop: Optional[threading.Event] = None) -> None:
        """Calls ``handler`` as each client reset from now on goes through its phases: its start,
        its wait for an operator, and (``backup_path`` set) as soon as its backup of the store
        exists, before the reset touches the store (Realm's ``beforeReset(before)``)."""
        start = after if after is not None else int(self.hello()["last_event_seq"])
        for event in self.events(after=start, partition=partition, stop=stop):
            progress = ClientResetProgress.from_event(event)
            if progress is not None:
                handler(progress)

    def _follow(self, after: Optional[int], partition: Optional[str], stop: Optional[threading.Event]) -> Iterator[AgentEvent]:
        sock = _wire.connect(self.socket_path, self.timeout)
        try:
            sock.sendall(_wire.request_line("events", {"follow": True, "after": after, "partition": partition}))
            answered = False
            deadline = time.monotonic() + self.timeout
            pending = b""
            sock.settimeout(self.poll_seconds)
            while not (stop and stop.is_set()):
                try:
                    chunk = sock.recv(65536)
                except socket.timeout:
                    if not answered and time.monotonic() > deadline:
                        raise Unreachable(f"tetherd at {self.socket_path} did not answer within {self.timeout} s") from None
                    continue
                if not chunk:
                    return  # the agent closed the stream: it stops or restarts
                pending += chunk
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    if not answered:
                        answer = _wire.parse_answer(line, self.socket_path)
                        if not answer.get("ok"):
                            raise refusal(answer)
                        answered = True
                        continue
                    try:
                        value = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(value, dict):
                        yield AgentEvent.from_json(value)
        finally:
            sock.close()

    @staticmethod
    def _result(answer: Dict[str, Any]) -> Any:
        if not answer.get("ok"):
            raise refusal(answer)
        return answer.get("result")
