"""tether_client against a real tetherd and tether-server (issue 36).

Run by the Swift test ``PythonClientEndToEndTests`` (``make test``), which starts the server and
two agents — ``a``, another device, and ``b``, this application's, whose resets are manual
(``[reset] mode = "manual"``: the application initiates them) — and passes where they are:

TETHER_TEST_SOCKET        b's control socket          TETHER_TEST_STORE        b's store of p
TETHER_TEST_AGENT_PID     b's process                 TETHER_TEST_AGENT_ARGV   how to start b again (JSON)
TETHER_TEST_OTHER_SOCKET  a's control socket          TETHER_TEST_OTHER_STORE  a's store of p
TETHER_TEST_ADMIN         the server's admin command (JSON)
TETHER_TEST_TETHERCTL     tetherctl                   TETHER_TEST_READER       uid:gid of a member of b's group only

The tests share the agents and run in the order of this file: those that subscribe b leave it
subscribed to nothing (the whole partition), and they come before the one that revokes every
device's access (after it, nothing syncs).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, List, Optional, Tuple, TypeVar

import pytest

from tether_client import (
    AgentEvent,
    AgentNotRunning,
    AsyncTetherClient,
    ClientResetNotice,
    ClientResetProgress,
    PROTOCOL_VERSION,
    Refused,
    TetherClient,
    UnknownPartition,
)

T = TypeVar("T")
ENV = os.environ
pytestmark = pytest.mark.skipif("TETHER_TEST_SOCKET" not in ENV, reason="started by PythonClientEndToEndTests (make test)")

PARTITION = "p"
restarted: List["subprocess.Popen[bytes]"] = []


def eventually(what: str, check: Callable[[], Optional[T]], timeout: float = 60.0) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(0.1)


def run(argv: List[str]) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{argv}: {done.returncode} {done.stderr}"
    return done.stdout.strip()


def sql(store: str, statement: str) -> None:
    run(["sqlite3", "-cmd", ".timeout 5000", store, statement])


def wait_synced(socket_path: str) -> None:
    run([ENV["TETHER_TEST_TETHERCTL"], "--socket", socket_path, "wait-synced", PARTITION, "--timeout", "60"])


def admin(*arguments: str) -> str:
    return run(json.loads(ENV["TETHER_TEST_ADMIN"]) + list(arguments))


def other_device_writes(statement: str) -> None:
    sql(ENV["TETHER_TEST_OTHER_STORE"], statement)
    wait_synced(ENV["TETHER_TEST_OTHER_SOCKET"])


def orders_in(store: str) -> List[Tuple[str, str]]:
    """The ``(id, customer)`` of every row of ``orders`` in ``store``, by id."""
    connection = sqlite3.connect(store, timeout=10)
    try:
        return [(str(id), str(customer)) for id, customer in connection.execute("SELECT id, customer FROM orders ORDER BY id")]
    finally:
        connection.close()


def application_writes(store: str, *statements: str) -> None:
    """Writes into ``store`` as an application does: one transaction, with Python's sqlite3."""
    connection = sqlite3.connect(store, timeout=10, isolation_level=None)
    try:
        connection.execute("BEGIN IMMEDIATE")
        for statement in statements:
            connection.execute(statement)
        connection.execute("COMMIT")
    finally:
        connection.close()


def subscribed_to_nothing(client: TetherClient) -> None:
    """Clears b's subscriptions set at run time and waits until its store holds the whole
    partition again (the other tests expect it)."""
    cleared = client.update_subscriptions(PARTITION, None, wait=True, timeout=60)
    assert cleared["held"] is None and not cleared["change_pending"], cleared


class Heard:
    """Every event the client delivered, in order, from a thread of its own."""

    def __init__(self, client: TetherClient, after: int) -> None:
        self.events: List[AgentEvent] = []
        self.error: Optional[BaseException] = None
        self.stop = threading.Event()
        self.lock = threading.Lock()

        def collect() -> None:
            try:
                for event in client.events(after=after, stop=self.stop):
                    with self.lock:
                        self.events.append(event)
            except BaseException as error:  # reported by the test
                self.error = error

        self.thread = threading.Thread(target=collect, daemon=True)
        self.thread.start()

    def snapshot(self) -> List[AgentEvent]:
        assert self.error is None, f"the event stream failed: {self.error!r}"
        with self.lock:
            return list(self.events)

    def rows(self, table: str) -> int:
        return sum((event.tables or {}).get(table, 0) for event in self.snapshot() if event.event == "changes-applied")

    def resets(self) -> List[ClientResetNotice]:
        return [notice for notice in map(ClientResetNotice.from_event, self.snapshot()) if notice]

    def progress(self) -> List[ClientResetProgress]:
        return [progress for progress in map(ClientResetProgress.from_event, self.snapshot()) if progress]


def restart_agent() -> None:
    """Stops b (SIGTERM) and starts it again as the harness did."""
    pid = int(ENV["TETHER_TEST_AGENT_PID"])
    os.kill(pid, signal.SIGTERM)
    eventually("b stopped", lambda: not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z")
    other_device_writes("INSERT INTO orders (id, customer, total) VALUES ('w3', 'w', 3)")
    restarted.append(subprocess.Popen(json.loads(ENV["TETHER_TEST_AGENT_ARGV"]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))


def teardown_module() -> None:
    for process in restarted:
        process.terminate()
        process.wait(timeout=30)


def test_hello_says_who_answers() -> None:
    hello = TetherClient(ENV["TETHER_TEST_SOCKET"], timeout=10).hello()
    assert hello["protocol_version"] == PROTOCOL_VERSION
    assert hello["role"] == "operator"
    assert "events-after" in hello["capabilities"] and "changes-applied" in hello["capabilities"]
    assert "retry-now" in hello["capabilities"] and "reset-backup" in hello["capabilities"]


def test_retry_now_and_initiate_reset_say_what_they_did() -> None:
    client = TetherClient(ENV["TETHER_TEST_SOCKET"], timeout=10)
    client.wait_synced(PARTITION, timeout=60)
    # Connected and synced: nothing backs off, and nothing waits for an operator.
    assert client.retry_now(PARTITION) == {"connection": False, "partitions": []}
    with pytest.raises(Refused) as refused:
        client.initiate_reset(PARTITION)
    assert refused.value.code == "failed"
    with pytest.raises(UnknownPartition):
        client.initiate_reset("nope")


def test_update_subscriptions_waits_until_the_store_holds_the_new_set() -> None:
    client = TetherClient(ENV["TETHER_TEST_SOCKET"], timeout=10)
    other_device_writes("INSERT INTO orders (id, customer, total) VALUES ('sx1', 'x', 1), ('sx2', 'x', 2), ('sy1', 'y', 3)")
    client.wait_synced(PARTITION, timeout=60)
    everything = orders_in(ENV["TETHER_TEST_OTHER_STORE"])
    assert {("sx1", "x"), ("sx2", "x"), ("sy1", "y")} <= set(everything)
    eventually("b holds the whole partition", lambda: orders_in(ENV["TETHER_TEST_STORE"]) == everything)
    x_rows = [row for row in everything if row[1] == "x"]

    # A set the store's schema cannot serve is refused, and nothing changes.
    with pytest.raises(Refused) as refused:
        client.update_subscriptions(PARTITION, [{"table": "orders", "where": "colour = 'red'"}])
    assert refused.value.code == "bad-request"
    assert client.subscriptions(PARTITION)["runtime"] is False
    try:
        subscribed = client.update_subscriptions(PARTITION, [{"table": "orders", "where": "customer = 'x'"}], wait=True, timeout=60)
        # wait=True returned: the store holds exactly x's rows now (no polling).
        assert orders_in(ENV["TETHER_TEST_STORE"]) == x_rows
        assert subscribed["held"] == subscribed["wanted"] == ["orders WHERE customer = 'x'"], subscribed
        assert subscribed["runtime"] is True and not subscribed["change_pending"]
        assert orders_in(ENV["TETHER_TEST_OTHER_STORE"]) == everything, "leaving b's store deletes nothing"

        cleared = client.update_subscriptions(PARTITION, None, wait=True, timeout=60)
        assert orders_in(ENV["TETHER_TEST_STORE"]) == everything
        assert cleared["held"] is None and cleared["wanted"] is None and cleared["runtime"] is False
        assert not cleared["change_pending"]
    finally:
        subscribed_to_nothing(client)


def test_a_write_outside_the_subscriptions_reaches_on_compensating_write() -> None:
    client = TetherClient(ENV["TETHER_TEST_SOCKET"], timeout=10)
    heard: List[AgentEvent] = []
    stop = threading.Event()
    follower: Optional[threading.Thread] = None
    try:
        client.update_subscriptions(PARTITION, [{"table": "orders", "where": "customer = 'x'"}], wait=True, timeout=60)
        start = int(client.hello()["last_event_seq"])
        follower = threading.Thread(
            target=client.on_compensating_write, args=(heard.append,), kwargs={"partition": PARTITION, "after": start, "stop": stop},
            daemon=True)
        follower.start()
        # One transaction: a row of x (inside b's subscription) and one of z (outside).
        application_writes(ENV["TETHER_TEST_STORE"], "INSERT INTO orders (id, customer, total) VALUES ('cx1', 'x', 5)",
                           "INSERT INTO orders (id, customer, total) VALUES ('cz1', 'z', 9)")
        event = eventually("the compensating write reached the handler", lambda: next(iter(list(heard)), None))
        assert (event.event, event.partition, event.code) == ("compensating-write", PARTITION, 231)
        assert (event.table, event.key, event.reason) == ("orders", "cz1", "outside_subscriptions")
        eventually("the write outside was removed from b's store", lambda: ("cz1", "z") not in orders_in(ENV["TETHER_TEST_STORE"]))
        eventually("the write inside reached the other device", lambda: ("cx1", "x") in orders_in(ENV["TETHER_TEST_OTHER_STORE"]))
        client.wait_synced(PARTITION, timeout=60)
        assert ("cx1", "x") in orders_in(ENV["TETHER_TEST_STORE"])
        assert ("cz1", "z") not in orders_in(ENV["TETHER_TEST_OTHER_STORE"]), "the server never integrated it"
        assert [(e.table, e.key) for e in heard] == [("orders", "cz1")], "one event, for the refused row only"
    finally:
        stop.set()
        if follower is not None:
            follower.join(timeout=10)
        subscribed_to_nothing(client)
    assert follower is not None and not follower.is_alive()


def test_asyncio_updates_subscriptions_and_hears_compensating_writes() -> None:
    async def main() -> None:
        client = AsyncTetherClient(ENV["TETHER_TEST_SOCKET"], timeout=10)
        everything = orders_in(ENV["TETHER_TEST_OTHER_STORE"])
        heard: "asyncio.Queue[AgentEvent]" = asyncio.Queue()
        follower: "Optional[asyncio.Task[None]]" = None
        try:
            subscribed = await client.update_subscriptions(PARTITION, [{"table": "orders", "where": "customer = 'y'"}])
            assert orders_in(ENV["TETHER_TEST_STORE"]) == [row for row in everything if row[1] == "y"]
            assert subscribed["held"] == ["orders WHERE customer = 'y'"] and not subscribed["change_pending"]
            start = int((await client.hello())["last_event_seq"])
            follower = asyncio.ensure_future(client.on_compensating_write(heard.put, partition=PARTITION, after=start))
            application_writes(ENV["TETHER_TEST_STORE"], "INSERT INTO orders (id, customer, total) VALUES ('az1', 'z', 7)")
            event = await asyncio.wait_for(heard.get(), timeout=60)
            assert (event.table, event.key, event.reason, event.code) == ("orders", "az1", "outside_subscriptions", 231)
            await asyncio.to_thread(eventually, "the write outside was removed from b's store",
                                    lambda: ("az1", "z") not in orders_in(ENV["TETHER_TEST_STORE"]))
            cleared = await client.update_subscriptions(PARTITION, None)
            assert cleared["held"] is None and orders_in(ENV["TETHER_TEST_STORE"]) == orders_in(ENV["TETHER_TEST_OTHER_STORE"])
            assert ("az1", "z") not in orders_in(ENV["TETHER_TEST_STORE"])
        finally:
            if follower is not None:
                follower.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await follower
            await client.update_subscriptions(PARTITION, None)

    asyncio.run(main())


def test_an_application_hears_writes_resets_and_errors_across_a_restart() -> None:
    client = TetherClient(ENV["TETHER_TEST_SOCKET"], timeout=10)
    client.wait_synced(PARTITION, timeout=60)
    start = int(client.hello()["last_event_seq"])
    heard = Heard(client, start)
    try:
        other_device_writes("INSERT INTO orders (id, customer, total) VALUES ('w1', 'w', 1), ('w2', 'w', 2)")
        eventually("changes-applied for the other device's rows", lambda: heard.rows("orders") >= 2)

        restart_agent()
        eventually("changes-applied after b restarted", lambda: heard.rows("orders") >= 3)
        assert heard.rows("orders") == 3

        snapshot = admin("snapshot", PARTITION)
        other_device_writes("INSERT INTO orders (id, customer, total) VALUES ('late', 'l', 4)")
        client.wait_synced(PARTITION, timeout=60)
        admin("restore", PARTITION, snapshot, "--rollback")
        # b's resets are manual: the application hears it start and wait, and starts it.
        began = eventually("b's reset started", lambda: next((p for p in heard.progress() if p.is_start), None))
        assert began.code == 211 and began.strategy == "manual" and began.backup_path is None
        eventually("b's reset waits", lambda: any(p.phase == "manual-pending" for p in heard.progress()))
        assert client.status()["partitions"][0]["state"] == "reset-pending"
        initiated = client.initiate_reset(PARTITION)
        assert initiated["id"] == began.reset_id and initiated["outcome"] == "initiated"
        ready = eventually("b's backup", lambda: next((p for p in heard.progress() if p.is_backup_ready), None))
        assert ready.backup_path is not None and os.path.exists(ready.backup_path)
        assert ready.event.reset_phase == "backing-up" and ready.store_path == ENV["TETHER_TEST_STORE"]
        notice = eventually("b's client reset", lambda: next(iter(heard.resets()), None))
        assert notice.code == 211 and notice.reset_outcome == "manual-done"
        assert notice.after == ENV["TETHER_TEST_STORE"]
        assert notice.before == ready.backup_path and os.path.exists(notice.before)
        assert ready.event.seq < notice.event.seq
        assert any(event.event == "sync-error" and event.code == 211 for event in heard.snapshot())

        admin("revoke", "device", "*")
        eventually("the 206", lambda: any(e.event == "sync-error" and e.code == 206 for e in heard.snapshot()))
    finally:
        heard.stop.set()
        heard.thread.join(timeout=10)
    numbers = [event.seq for event in heard.snapshot() if event.seq > 0]
    assert numbers == sorted(set(numbers)), "no event came twice or out of order"
    assert numbers[0] == start + 1 and numbers[-1] - numbers[0] + 1 == len(numbers), "none was missed"


def test_asyncio_has_the_same_surface() -> None:
    async def main() -> None:
        client = AsyncTetherClient(ENV["TETHER_TEST_SOCKET"], timeout=10)
        hello = await client.hello()
        assert hello["role"] == "operator"
        status = await client.status()
        assert [partition["name"] for partition in status["partitions"]] == [PARTITION]
        recent = client.events(after=max(0, int(hello["last_event_seq"]) - 5))
        first = await asyncio.wait_for(recent.__anext__(), timeout=30)
        assert first.seq > 0
        await recent.aclose()
        retried = await client.retry_now()
        assert isinstance(retried["connection"], bool) and isinstance(retried["partitions"], list)
        with pytest.raises(UnknownPartition):
            await client.retry_now("nope")
        # A follower that is cancelled closes its connection: no thread is left behind.
        follower = asyncio.ensure_future(client.on_sync_error(handle_nothing))
        await asyncio.sleep(0.2)
        follower.cancel()
        with pytest.raises(asyncio.CancelledError):
            await follower

    asyncio.run(main())


async def handle_nothing(event: AgentEvent) -> None:
    pass


def test_an_agent_that_is_not_running_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(AgentNotRunning) as raised:
        TetherClient(str(tmp_path / "tetherd.sock"), timeout=2).status()
    assert raised.value.transient


def test_a_reader_may_read_and_may_not_pause() -> None:
    uid, gid = ENV["TETHER_TEST_READER"].split(":")
    program = (
        "import json, sys\n"
        "from tether_client import TetherClient, PermissionDenied\n"
        "client = TetherClient(sys.argv[1], timeout=10)\n"
        "role = client.hello()['role']\n"
        "try:\n"
        "    client.pause('p')\n"
        "    outcome = 'paused'\n"
        "except PermissionDenied as error:\n"
        "    outcome = error.code\n"
        "print(json.dumps({'role': role, 'pause': outcome}))\n"
    )
    argv = ["setpriv", f"--reuid={uid}", f"--regid={uid}", f"--groups={gid}", sys.executable, "-c", program, ENV["TETHER_TEST_SOCKET"]]
    answer = json.loads(run(argv))
    assert answer == {"role": "reader", "pause": "permission-denied"}
