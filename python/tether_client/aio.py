"""The asyncio client: the same calls, awaited, on ``asyncio.open_unix_connection`` (no
threads, no polling: an event stream is a coroutine reading lines as the agent writes them)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any, AsyncGenerator, Awaitable, Callable, Dict, Optional, Sequence, Tuple, cast

from . import _wire
from ._resume import Resumption
from .client import TetherClient
from .errors import ProtocolTooNew, TetherError, TimedOut, Unreachable, refusal
from .events import AgentEvent, ClientResetNotice, ClientResetProgress
from .types import HelloResult, ResetInitiated, RetryNowResult, Subscription, SubscriptionsResult

#: The longest line the agent may send (an ``events`` answer holds up to 1,000 events).
LINE_LIMIT = 16 * 1024 * 1024


class AsyncTetherClient:
    """``TetherClient`` for asyncio code. Every call opens a connection of its own."""

    shortest_wait = 0.25
    longest_wait = 5.0

    def __init__(self, socket_path: Optional[str] = None, timeout: float = 30.0) -> None:
        self.socket_path = socket_path or _wire.default_socket()
        self.timeout = timeout

    @property
    def sync(self) -> TetherClient:
        """The synchronous client of the same socket (for code that needs both)."""
        return TetherClient(self.socket_path, self.timeout)

    async def hello(self) -> HelloResult:
        answer = await self._exchange("hello")
        if not answer.get("ok") and answer.get("code") is None and answer.get("exit_code") == 2:
            raise ProtocolTooNew(f"tetherd speaks control protocol 1; this library needs {_wire.PROTOCOL_VERSION}: upgrade tetherd")
        return cast(HelloResult, _result(answer))

    async def status(self) -> Dict[str, Any]:
        return cast(Dict[str, Any], _result(await self._exchange("status")))

    async def wait_synced(self, partition: str, timeout: float = 60.0) -> int:
        answer = await self._exchange("wait-synced", {"partition": partition, "timeout": timeout}, answer_within=self.timeout + timeout)
        return int(_result(answer)["server_version"])

    async def pause(self, partition: str) -> None:
        _result(await self._exchange("pause", {"partition": partition}))

    async def resume(self, partition: str) -> None:
        _result(await self._exchange("resume", {"partition": partition}))

    async def initiate_reset(self, partition: str) -> ResetInitiated:
        """As ``TetherClient.initiate_reset``."""
        return cast(ResetInitiated, _result(await self._exchange("reset-initiate", {"partition": partition})))

    async def retry_now(self, partition: Optional[str] = None) -> RetryNowResult:
        """As ``TetherClient.retry_now``."""
        return cast(RetryNowResult, _result(await self._exchange("retry-now", {"partition": partition})))

    async def subscriptions(self, partition: str) -> SubscriptionsResult:
        """As ``TetherClient.subscriptions``."""
        return cast(SubscriptionsResult, _result(await self._exchange("subscriptions", {"partition": partition})))

    async def update_subscriptions(
        self, partition: str, subscriptions: Optional[Sequence[Subscription]], wait: bool = True, timeout: float = 60.0
    ) -> SubscriptionsResult:
        """As ``TetherClient.update_subscriptions``."""
        fields = _wire.subscription_fields(partition, subscriptions)
        result = cast(SubscriptionsResult, _result(await self._exchange("set-subscriptions", fields)))
        if not wait:
            return result
        await self.wait_synced(partition, timeout)
        return await self.subscriptions(partition)

    async def events(self, after: Optional[int] = None, partition: Optional[str] = None) -> AsyncGenerator[AgentEvent, None]:
        """As ``TetherClient.events``: connects again after the last delivered event whenever
        tetherd stops, restarts or is not running yet. Ends when the iteration ends or the task
        is cancelled."""
        resume = Resumption(after, self.shortest_wait, self.longest_wait)
        while True:
            failure: Optional[TetherError] = None
            try:
                async for event in self._follow(resume.last, partition):
                    yield resume.delivered(event)
            except TetherError as error:
                failure = error
            await asyncio.sleep(resume.ended(failure))

    async def on_compensating_write(self, handler: Callable[[AgentEvent], Awaitable[None]], partition: Optional[str] = None,
                                    after: Optional[int] = None) -> None:
        start = after if after is not None else int((await self.hello())["last_event_seq"])
        async for event in self.events(after=start, partition=partition):
            if event.event == "compensating-write":
                await handler(event)

    async def on_sync_error(self, handler: Callable[[AgentEvent], Awaitable[None]], partition: Optional[str] = None,
                            after: Optional[int] = None) -> None:
        start = after if after is not None else int((await self.hello())["last_event_seq"])
        async for event in self.events(after=start, partition=partition):
            if event.event == "sync-error":
                await handler(event)

    async def on_reset_progress(self, handler: Callable[[ClientResetProgress], Awaitable[None]], partition: Optional[str] = None,
                                after: Optional[int] = None) -> None:
        """As ``TetherClient.on_reset_progress``."""
        start = after if after is not None else int((await self.hello())["last_event_seq"])
        async for event in self.events(after=start, partition=partition):
            progress = ClientResetProgress.from_event(event)
            if progress is not None:
                await handler(progress)

    async def on_client_reset(self, handler: Callable[[ClientResetNotice], Awaitable[None]], partition: Optional[str] = None,
                              after: Optional[int] = None) -> None:
        start = after if after is not None else int((await self.hello())["last_event_seq"])
        async for event in self.events(after=start, partition=partition):
            notice = ClientResetNotice.from_event(event)
            if notice is not None:
                await handler(notice)

    # Exchanges

    async def _connect(self) -> Tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        try:
            return await asyncio.wait_for(asyncio.open_unix_connection(self.socket_path, limit=LINE_LIMIT), self.timeout)
        except asyncio.TimeoutError:
            raise TimedOut(f"tetherd at {self.socket_path} did not accept within {self.timeout} s") from None
        except OSError as error:
            raise _wire.connection_error(self.socket_path, error) from None

    async def _read_line(self, reader: asyncio.StreamReader, within: Optional[float]) -> bytes:
        try:
            return await asyncio.wait_for(reader.readline(), within)
        except asyncio.TimeoutError:
            raise TimedOut(f"tetherd at {self.socket_path} did not answer within {within} s") from None
        except (ValueError, asyncio.LimitOverrunError):
            raise Unreachable(f"tetherd at {self.socket_path} sent a line longer than {LINE_LIMIT} bytes") from None
        except OSError as error:
            raise Unreachable(f"the connection to tetherd at {self.socket_path} failed: {error}") from None

    async def _exchange(self, command: str, fields: Optional[Dict[str, Any]] = None,
                        answer_within: Optional[float] = None) -> Dict[str, Any]:
        """Sends one request and returns the agent's answer, refusals included."""
        reader, writer = await self._connect()
        try:
            await _send(writer, _wire.request_line(command, fields), self.socket_path)
            line = await self._read_line(reader, answer_within if answer_within is not None else self.timeout)
        finally:
            await _close(writer)
        return _wire.parse_answer(line, self.socket_path)

    async def _follow(self, after: Optional[int], partition: Optional[str]) -> AsyncGenerator[AgentEvent, None]:
        """One ``events`` connection with ``follow``: its events until the agent closes it."""
        reader, writer = await self._connect()
        try:
            await _send(writer, _wire.request_line("events", {"follow": True, "after": after, "partition": partition}), self.socket_path)
            answer = _wire.parse_answer(await self._read_line(reader, self.timeout), self.socket_path)
            if not answer.get("ok"):
                raise refusal(answer)
            while True:
                line = await self._read_line(reader, None)
                if not line:
                    return  # the agent closed the stream: it stops or restarts
                try:
                    value: Any = json.loads(line)
                except ValueError:
                    continue
                if isinstance(value, dict):
                    yield AgentEvent.from_json(value)
        finally:
            await _close(writer)


def _result(answer: Dict[str, Any]) -> Any:
    if not answer.get("ok"):
        raise refusal(answer)
    return answer.get("result")


async def _send(writer: asyncio.StreamWriter, line: bytes, path: str) -> None:
    try:
        writer.write(line)
        await writer.drain()
    except OSError as error:
        raise Unreachable(f"the connection to tetherd at {path} failed: {error}") from None


async def _close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
