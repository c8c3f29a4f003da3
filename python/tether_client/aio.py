"""The asyncio client: the same calls, awaited; the blocking socket work runs in threads."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, AsyncIterator, Awaitable, Callable, Dict, Optional

from .client import TetherClient
from .events import AgentEvent, ClientResetNotice


class AsyncTetherClient:
    """``TetherClient`` for asyncio code."""

    def __init__(self, socket_path: Optional[str] = None, timeout: float = 30.0) -> None:
        self.sync = TetherClient(socket_path, timeout)

    @property
    def socket_path(self) -> str:
        return self.sync.socket_path

    async def hello(self) -> Dict[str, Any]:
        return await asyncio.to_thread(self.sync.hello)

    async def status(self) -> Dict[str, Any]:
        return await asyncio.to_thread(self.sync.status)

    async def wait_synced(self, partition: str, timeout: float = 60.0) -> int:
        return await asyncio.to_thread(self.sync.wait_synced, partition, timeout)

    async def pause(self, partition: str) -> None:
        await asyncio.to_thread(self.sync.pause, partition)

    async def resume(self, partition: str) -> None:
        await asyncio.to_thread(self.sync.resume, partition)

    async def events(self, after: Optional[int] = None, partition: Optional[str] = None) -> AsyncIterator[AgentEvent]:
        """As ``TetherClient.events``; stops its thread when the iteration ends or is cancelled."""
        loop = asyncio.get_running_loop()
        queue: "asyncio.Queue[Any]" = asyncio.Queue()
        stop = threading.Event()
        done = object()

        def pump() -> None:
            try:
                for event in self.sync.events(after=after, partition=partition, stop=stop):
                    loop.call_soon_threadsafe(queue.put_nowait, event)
            except BaseException as error:  # delivered to the awaiting side
                loop.call_soon_threadsafe(queue.put_nowait, error)
            finally:
                loop.call_soon_threadsafe(queue.put_nowait, done)

        thread = threading.Thread(target=pump, name="tether-client-events", daemon=True)
        thread.start()
        try:
            while True:
                item = await queue.get()
                if item is done:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            stop.set()

    async def on_sync_error(self, handler: Callable[[AgentEvent], Awaitable[None]], partition: Optional[str] = None,
                            after: Optional[int] = None) -> None:
        start = after if after is not None else int((await self.hello())["last_event_seq"])
        async for event in self.events(after=start, partition=partition):
            if event.event == "sync-error":
                await handler(event)

    async def on_client_reset(self, handler: Callable[[ClientResetNotice], Awaitable[None]], partition: Optional[str] = None,
                              after: Optional[int] = None) -> None:
        start = after if after is not None else int((await self.hello())["last_event_seq"])
        async for event in self.events(after=start, partition=partition):
            notice = ClientResetNotice.from_event(event)
            if notice is not None:
                await handler(notice)
