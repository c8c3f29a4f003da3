"""The web console in a real browser: Debian's headless Chromium driven by Playwright, against
a real tether-server and tetherd started by ConsoleBrowserEndToEndTests (Swift), which passes
where everything is in TETHER_* variables. Each page's screenshot goes to TETHER_SCREENSHOTS.

Run in file order: sign-in, the devices page before and after the agent binds, an action, a
restore and the reset it causes, then the refusals."""

import json
import os
import sqlite3
import subprocess
import time

import pytest
from playwright.sync_api import Page, expect, sync_playwright

URL = os.environ["TETHER_CONSOLE_URL"]
TOKEN = open(os.environ["TETHER_ADMIN_TOKEN_FILE"]).read().strip()
SHOTS = os.environ["TETHER_SCREENSHOTS"]
AGENT_ARGV = json.loads(os.environ["TETHER_AGENT_ARGV"])
STORE = os.environ["TETHER_AGENT_STORE"]
TETHERCTL = [os.environ["TETHER_TETHERCTL"], "--socket", os.environ["TETHER_AGENT_SOCKET"]]
DEVICE = "till-7 (shop 3)"


def shot(page: Page, name: str) -> None:
    """The page's screenshot, after the checks every page must pass: ids unique, every field
    labelled, one main heading, nothing loaded from elsewhere and no script."""
    page.screenshot(path=os.path.join(SHOTS, f"{name}.png"), full_page=True)
    ids = page.eval_on_selector_all("[id]", "els => els.map(e => e.id)")
    assert len(ids) == len(set(ids)), f"{name}: duplicate ids {ids}"
    unlabelled = page.eval_on_selector_all(
        "input:not([type=hidden]), select, textarea", "els => els.filter(e => e.labels.length == 0).map(e => e.name)")
    assert unlabelled == [], f"{name}: fields without a label: {unlabelled}"
    assert page.locator("h1").count() == 1, f"{name}: one h1"
    assert page.locator("script").count() == 0, f"{name}: no script"
    external = page.eval_on_selector_all("[src], link[href]", "els => els.map(e => e.src || e.href).filter(u => !u.startsWith(location.origin))")
    assert external == [], f"{name}: external assets {external}"


def eventually(what: str, check, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if check():
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.25)


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"), args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture(scope="module")
def agent():
    process = subprocess.Popen(AGENT_ARGV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    yield process
    process.terminate()
    process.wait(timeout=30)


def test_without_a_session_every_page_sends_to_sign_in(browser):
    context = browser.new_context()
    page = context.new_page()
    for path in ["/console", "/console/partitions", "/console/devices", "/console/devices/x"]:
        page.goto(URL + path)
        expect(page).to_have_url(URL + "/console/sign-in")
    response = page.request.post(URL + "/console/actions/terminate-sync", form={"csrf": "x", "confirmed": "yes"})
    assert response.status == 403
    shot(page, "sign-in")
    context.close()


def test_a_wrong_token_is_refused_and_the_right_one_signs_in_by_keyboard(page):
    page.goto(URL + "/console/sign-in")
    page.get_by_label("Admin token").fill("not-the-token")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("not the admin token")
    # Keyboard only: focus the field, type, Enter.
    page.get_by_label("Admin token").focus()
    page.keyboard.type(TOKEN)
    page.keyboard.press("Enter")
    expect(page).to_have_url(URL + "/console/partitions")
    expect(page.get_by_role("heading", level=1)).to_have_text("Partitions")
    cookie = next(c for c in page.context.cookies() if c["name"] == "tether_console")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    shot(page, "partitions-empty")


def test_a_device_appears_once_its_agent_binds(page, agent):
    page.goto(URL + "/console/devices")
    row = page.locator("tr", has=page.get_by_role("link", name=DEVICE))
    def synced():
        page.reload()
        # Cells after the device's name: partition, state, …
        return row.count() == 1 and row.locator("td").nth(1).inner_text() == "synced"
    eventually("the device in the ledger, synced", synced)
    shot(page, "devices")
    page.get_by_role("link", name=DEVICE).first.click()
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Device {DEVICE}")
    expect(page.get_by_role("link", name="p", exact=True)).to_be_visible()
    shot(page, "device")


def test_a_snapshot_is_taken_after_confirmation(page):
    page.goto(URL + "/console/partitions/p")
    expect(page.get_by_role("heading", level=1)).to_have_text("Partition p")
    page.get_by_role("button", name="Take a snapshot…").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Confirm")
    page.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("Snapshot")
    shot(page, "snapshot-done")


def test_a_restore_resets_the_device_and_the_partition_shows_it(page, agent):
    # A row written and synced after the snapshot: the restore drops it, the device resets.
    with sqlite3.connect(STORE) as db:
        db.execute("INSERT INTO orders (id, customer, total) VALUES ('after', 'browser', 1)")
    subprocess.run(TETHERCTL + ["wait-synced", "p", "--timeout", "60"], check=True, capture_output=True)
    page.goto(URL + "/console/partitions/p")
    page.get_by_role("button", name="Restore…").first.click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Confirm")
    expect(page.locator("p.notice")).to_contain_text("devices give back what the restore drops")
    page.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("restored to snapshot")
    page.goto(URL + "/console/partitions/p")
    expect(page.get_by_role("heading", name="Last restore")).to_be_visible()
    def reset_shown():
        page.goto(URL + f"/console/devices")
        return "recovered 1" in page.get_by_role("table").inner_text()
    eventually("the device's recovered reset", reset_shown)
    page.goto(URL + "/console/partitions/p")
    shot(page, "partition")


def test_a_cross_site_form_is_refused(page):
    before = page.goto(URL + "/console/partitions/p")
    snapshots = page.locator("table").last.inner_text()
    # A page of another site (here: no origin at all) posting the console's own form.
    page.set_content(
        f'<form method="post" action="{URL}/console/actions/snapshot">'
        '<input name="partition" value="p"><input name="confirmed" value="yes"><input name="csrf" value="guess">'
        '<button>go</button></form>')
    with page.expect_navigation():
        page.get_by_role("button", name="go").click()
    expect(page.get_by_role("alert")).to_contain_text("Refused")
    shot(page, "refused")
    page.goto(URL + "/console/partitions/p")
    assert page.locator("table").last.inner_text() == snapshots, "no snapshot taken"


def test_a_form_without_its_csrf_token_is_refused(page):
    page.goto(URL + "/console/partitions")
    response = page.request.post(URL + "/console/actions/snapshot", form={"partition": "p", "confirmed": "yes"})
    assert response.status == 403
    response = page.request.post(
        URL + "/console/actions/snapshot", form={"partition": "p", "confirmed": "yes", "csrf": "0" * 64},
        headers={"Origin": URL})
    assert response.status == 403


def test_signing_out_ends_the_session(page):
    page.goto(URL + "/console/partitions")
    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(URL + "/console/sign-in")
    page.goto(URL + "/console/devices")
    expect(page).to_have_url(URL + "/console/sign-in")
