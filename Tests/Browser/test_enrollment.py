"""The console's enrollment pages in a real browser (after test_console.py, same server): an
enrollment key created behind a confirmation and shown once, a device enrolled with it through
POST /enroll on the devices' listener, its page with its tags changed, its credential rotated and
the device revoked (each behind a confirmation), the key revoked, and a form without its CSRF
token refused."""

import json
import os
import re

import pytest
from playwright.sync_api import Page, expect

from test_console import TOKEN, URL, browser, shot  # noqa: F401 (browser: the fixture)

DEVICES_URL = os.environ["TETHER_DEVICES_URL"]
DEVICE_ID = "5a" * 16
KEY = re.compile(r"tek1\.[0-9a-f]{16}\.[A-Za-z0-9_-]{43}")


@pytest.fixture(scope="module")
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(URL + "/console/sign-in")
    page.get_by_label("Admin token").fill(TOKEN)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(URL + "/console/partitions")
    yield page
    context.close()


@pytest.fixture(scope="module")
def created(page):
    """The key created through the console: (its id, its text)."""
    page.goto(URL + "/console/enrollment")
    expect(page.get_by_role("heading", level=1)).to_have_text("Enrollment")
    page.get_by_label("Tags (K=V, separated by spaces)").fill("store=17 region=north")
    page.get_by_label("Devices it may enroll (empty: one)").fill("2")
    page.get_by_label("Note").fill("browser <test>")
    page.get_by_role("button", name="Create key…").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Confirm")
    expect(page.locator("p.notice")).to_contain_text("store=17 region=north")
    page.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Enrollment key created")
    text = page.locator("#enrollment-key").inner_text().strip()
    assert KEY.fullmatch(text), text
    shot(page, "enroll-key-created")
    return text.split(".")[1], text


def test_a_created_key_is_shown_once_and_listed_without_its_secret(page, created):
    key_id, text = created
    page.goto(URL + "/console/enrollment")
    row = page.locator("tr", has=page.locator("code", has_text=key_id))
    expect(row).to_contain_text("active")
    expect(row).to_contain_text("0 of 2")
    expect(row).to_contain_text("browser <test>")
    assert text.split(".")[2] not in page.content(), "the secret is not on the list"
    shot(page, "enrollment")


def test_an_enrolled_device_is_tagged_rotated_and_revoked(page, created):
    _, text = created
    answer = page.request.post(
        DEVICES_URL + "/enroll",
        data=json.dumps({"key": text, "device_id": DEVICE_ID, "name": "till-enrolled", "release": "browser"}),
        headers={"Content-Type": "application/json"})
    assert answer.status == 201, answer.text()
    page.goto(URL + "/console/enrollment")
    page.get_by_role("link", name="till-enrolled").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Device till-enrolled")
    expect(page.get_by_role("heading", name="Enrollment")).to_be_visible()
    shot(page, "device-enrolled")

    page.get_by_label("Tags to change (K=V sets, K= removes)").fill("lane=a region=")
    page.get_by_role("button", name="Change tags…").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Confirm")
    page.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("lane=a,store=17")

    page.goto(URL + f"/console/devices/{DEVICE_ID}")
    page.get_by_role("button", name="Rotate credential…").click()
    page.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("new credential")
    page.goto(URL + f"/console/devices/{DEVICE_ID}")
    expect(page.get_by_text("rotation pending")).to_be_visible()

    page.get_by_role("button", name="Revoke device…").click()
    expect(page.locator("p.notice")).to_contain_text("sessions end at once")
    page.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("revoked")
    page.goto(URL + f"/console/devices/{DEVICE_ID}")
    expect(page.get_by_role("button", name="Rotate credential…")).to_have_count(0)
    shot(page, "device-revoked")


def test_a_key_is_revoked_behind_a_confirmation(page, created):
    key_id, _ = created
    page.goto(URL + "/console/enrollment")
    page.locator("tr", has=page.locator("code", has_text=key_id)).get_by_role("button", name="Revoke…").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Confirm")
    page.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("revoked")
    page.goto(URL + "/console/enrollment")
    expect(page.locator("tr", has=page.locator("code", has_text=key_id))).to_contain_text("revoked")


def test_an_enrollment_form_without_its_csrf_token_is_refused(page):
    for action, form in [
        ("create-enroll-key", {"tags": "store=1", "confirmed": "yes"}),
        ("revoke-device", {"device": "till-enrolled", "confirmed": "yes"}),
    ]:
        response = page.request.post(URL + f"/console/actions/{action}", form=form)
        assert response.status == 403, action
