"""The console at fleet scale in a real browser: a 10,000-entry ledger written by this test
straight into the server's SQLite database (the server reads the ledger per request), then the
device list's health order, counts and pages, the stalest device (beyond the first 10,000 by
recency) and its page, and a device's history chart."""

import os
import sqlite3
import time

import pytest
from playwright.sync_api import expect

from test_console import URL, browser, shot  # noqa: F401 (browser: the fixture)
from test_enrollment import page  # noqa: F401 (a signed-in page: the fixture)

DB = os.environ["TETHER_SERVER_DB"]
FLEET = 10_000


@pytest.fixture(scope="module")
def fleet():
    now = time.time()
    rows = []
    for i in range(FLEET):
        wedged = i < 3
        rows.append((
            "pos", f"fleet-{i:05d}", f"store-{i % 300:03d}", f"fleet-till-{i:05d}", "1.0",
            "reset-pending" if 3 <= i < 8 else "synced", 10, 1, 7 if wedged else 0,
            now - 7200 if wedged else None, now - 7200 if wedged else now - 60, None, None, "{}", None, now - i * 0.01))
    # The stalest: not seen for 10 days, so the 10,001st by recency.
    rows.append(("pos", "fleet-stalest", "store-001", "fleet-till-stalest", "1.0", "synced", 10, 1, 0, None, None, None, None, "{}", None,
                 now - 10 * 86400))
    history = [("fleet-00010", "store-010", "pos", int((now - k * 600) // 600 * 600), k % 7, now - k * 600 - 30, "synced", now - k * 600)
               for k in range(1, 145)]
    with sqlite3.connect(DB, timeout=30) as db:
        db.executemany(
            "INSERT INTO device_reports(user_name, device_id, partition, device_name, release, state, server_version, client_file, unsynced, "
            "unsynced_since, last_upload_at, last_error_code, last_error_at, resets, pending_reset, reported_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        db.executemany(
            "INSERT INTO device_history(device_id, partition, user_name, bucket, max_unsynced, last_upload_at, state, reported_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", history)
    yield


@pytest.fixture(scope="module")
def console(page, fleet):
    """A signed-in page (test_enrollment's fixture) over the fleet."""
    return page


def test_the_list_puts_unhealthy_devices_first_with_counts(console):
    page = console
    page.goto(URL + "/console/devices")
    rows = page.locator("tbody tr")
    expect(rows).to_have_count(100)
    for i in range(3):
        expect(rows.nth(i)).to_have_class("wedged")
    expect(rows.nth(3).locator("td").nth(1)).to_have_text("reset-pending")
    expect(page.get_by_role("link", name="wedged 3")).to_be_visible()
    expect(page.get_by_role("link", name="reset-pending 5").first).to_be_visible()
    expect(page.locator("caption")).to_contain_text("device partitions, 1–100 shown")
    shot(page, "fleet-devices")
    page.get_by_role("link", name="wedged 3").click()
    expect(page.locator("tbody tr")).to_have_count(3)


def test_pages_reach_the_stalest_device(console):
    page = console
    page.goto(URL + "/console/devices?sort=seen&desc=1")
    page.get_by_role("link", name="Last page").click()
    expect(page.locator("tbody tr").last).to_contain_text("fleet-till-stalest")
    expect(page.locator("tbody tr").last).to_contain_text("10 d ago")
    page.get_by_role("link", name="fleet-till-stalest").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Device fleet-till-stalest")
    shot(page, "fleet-stalest")


def test_a_device_page_charts_its_history_and_refreshes_when_asked(console):
    page = console
    page.goto(URL + "/console/devices/fleet-00010?refresh=30")
    expect(page.locator("svg.chart")).to_have_count(2)
    expect(page.locator("svg.chart polyline").first).to_be_attached()
    assert page.locator("meta[http-equiv=refresh]").get_attribute("content") == "30"
    page.get_by_text("as a table").click()
    expect(page.get_by_role("table", name="Report history of store-010, newest first")).to_be_visible()
    expect(page.get_by_role("heading", name="Remote actions")).to_be_visible()
    shot(page, "fleet-device-history")
