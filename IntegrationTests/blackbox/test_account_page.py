"""/account as a person uses it (contract §18), in Chromium: a sign-in asked from a second browser is
approved on the first one's account page by typing its number (no app anywhere), a password change
asked "from another device" is denied and then approved there; sessions are named by app, device, or
browser and system from the User-Agent, with times in words and the exact time beside them; the
display name is edited; "Delete my account" asks for a typed confirmation and a fresh sign-in. Each
action answers with a one-line notice. axe on each page; screenshots at 375 and 1280 px."""
import re
import time

from selenium.webdriver.common.by import By

from chromium import chromium
from test_page_methods import fill, localhost, on_account, sign_in_with_email
from test_pages import accessible, click, shots

PASSWORD = "a long enough secret"


def notice(driver):
    return driver.find_element(By.ID, "page-notice").text


def error(driver):
    return driver.find_element(By.ID, "page-error").text


def waiting(driver):
    """The requests listed under "Waiting for you", as (heading, detail) text."""
    return [(li.find_element(By.CLASS_NAME, "session-name").text, li.find_element(By.CLASS_NAME, "session-detail").text)
            for li in driver.find_elements(By.CSS_SELECTOR, "section.approvals li")]


def ask_for_approval(driver, server, email):
    """On a second browser: "Approve from another device" on /login; the number the page shows."""
    driver.get(server.url + "/login")
    fill(driver, "email-address", email)
    click(driver, "#email-form button[formaction='/login/approval/start']")
    assert "/account" in driver.find_element(By.TAG_NAME, "main").text, "the waiting page says where to approve"
    return driver.find_element(By.ID, "approval-match-code").text.strip()


def test_a_sign_in_from_a_second_browser_is_approved_on_the_first_ones_account_page():
    with chromium(1280, 900) as first, chromium(1280, 900) as second, localhost(["email", "approval"], email={"resend_interval": 0}) as server:
        sign_in_with_email(first, server, "ana@example.com")
        assert on_account(first), first.current_url + first.page_source[:3000]
        number = ask_for_approval(second, server, "ana@example.com")
        assert re.fullmatch(r"\d\d", number)

        first.get(server.url + "/account")
        [(heading, detail)] = waiting(first)
        # Headless Chromium's User-Agent says HeadlessChrome on Linux; the network is the /24.
        assert heading == "Sign-in request from Chromium on Linux", heading
        assert detail.startswith("web · network 127.0.0.0/24 · just now"), detail
        shots(first, "account-approval")
        accessible(first)

        wrong = "%02d" % ((int(number) + 1) % 100)
        fill(first, first.find_element(By.CSS_SELECTOR, "section.approvals input[name='match_code']").get_attribute("id"), wrong)
        click(first, "section.approvals form[action$='/approve'] button")
        assert error(first) == "That was not the number the other device shows, so the request was refused: ask again from that device."
        # One wrong number ends a sign-in request (§15): the second browser is told so.
        assert waiting(first) == []

        number = ask_for_approval(second, server, "ana@example.com")
        first.get(server.url + "/account")
        fill(first, first.find_element(By.CSS_SELECTOR, "section.approvals input[name='match_code']").get_attribute("id"), number)
        click(first, "section.approvals form[action$='/approve'] button")
        assert notice(first) == "Sign-in request approved: that device goes on."
        assert waiting(first) == []
        click(second, "form[action$='/check'] button")
        assert on_account(second), second.current_url
        # The second browser is listed on the first one's page, by its browser and system.
        first.get(server.url + "/account")
        names = [e.text for e in first.find_elements(By.CSS_SELECTOR, "ul.sessions .session-name")]
        assert names.count("Chromium on Linux") == 2, names
        assert "nil" not in first.find_element(By.TAG_NAME, "main").text

        # "Not me": refused, and the owner told by mail.
        mailed = len(server.mails(to="ana@example.com"))
        status, started, _ = server.call("POST", "/api/v1/auth/approval/start", {"email": "ana@example.com", "device_name": "Unknown laptop"})
        assert status == 200, started
        first.get(server.url + "/account")
        assert waiting(first)[0][0] == "Sign-in request from Unknown laptop"
        click(first, "section.approvals form[action$='/not-me'] button")
        assert notice(first).startswith("Sign-in request refused.")
        assert server.mailed("ana@example.com", after=mailed)


def test_a_password_change_asked_from_another_device_is_denied_then_approved_on_the_account_page():
    with chromium(1280, 900) as browser, localhost(["email", "password"], email={"resend_interval": 0}) as server:
        email = "ben@example.com"
        assert server.call("POST", "/api/v1/auth/password/register", {"email": email, "password": PASSWORD})[0] == 202
        assert server.call("POST", "/api/v1/auth/password/verify-email", {"email": email, "code": server.mailed_code(email), "password": PASSWORD})[0] == 200
        sign_in_with_email(browser, server, email)

        ask = {"email": email, "new_password": "another long secret", "device_name": "new laptop", "platform": "linux"}
        status, first, _ = server.call("POST", "/api/v1/auth/password/reset/device/initiate", ask)
        assert status == 202, first
        browser.get(server.url + "/account")
        [(heading, detail)] = waiting(browser)
        assert heading == "Password change from new laptop" and detail.startswith("linux · network 127.0.0.0/24 · just now"), (heading, detail)
        assert not browser.find_elements(By.CSS_SELECTOR, "section.approvals form[action$='/not-me']")
        click(browser, "section.approvals form[action$='/deny'] button")
        assert notice(browser) == "Password change denied."
        assert server.call("GET", f"/api/v1/auth/password/reset/device/{first['request_id']}")[1]["status"] == "denied"

        status, second, _ = server.call("POST", "/api/v1/auth/password/reset/device/initiate", ask)
        browser.get(server.url + "/account")
        fill(browser, browser.find_element(By.CSS_SELECTOR, "section.approvals input[name='match_code']").get_attribute("id"), second["match_code"])
        click(browser, "section.approvals form[action$='/approve'] button")
        assert notice(browser) == "Password change approved: that device goes on."
        assert server.call("POST", f"/api/v1/auth/password/reset/device/{second['request_id']}/complete")[0] == 200
        assert server.call("POST", "/api/v1/auth/password/login", {"email": email, "password": "another long secret"})[0] == 200


def test_sessions_are_named_the_name_is_edited_and_the_account_deleted_after_a_typed_confirmation():
    with chromium(1280, 900) as browser, localhost(["email"], email={"resend_interval": 0}, auth={"fresh_auth": 3}) as server:
        app = server.sign_in("cy@example.com")
        sign_in_with_email(browser, server, "cy@example.com")
        sent = len(server.outbox())
        assert server.call("POST", "/api/v1/auth/email/send-code", {"email": "cy@example.com"})[0] == 200
        status, phone, _ = server.call(
            "POST", "/api/v1/auth/email/verify",
            {"email": "cy@example.com", "code": server.mailed_code("cy@example.com", after=sent), "device_name": "Cy's iPhone", "platform": "ios"})
        assert status == 200, phone
        browser.get(server.url + "/account")
        rows = {li.find_element(By.CLASS_NAME, "session-name").text: li.find_element(By.CLASS_NAME, "session-detail").text
                for li in browser.find_elements(By.CSS_SELECTOR, "ul.sessions li") if li.find_elements(By.CLASS_NAME, "session-name")}
        assert rows["Cy's iPhone"].startswith("ios · app · network 127.0.0.0/24 · since just now · last used just now"), rows
        assert rows["Chromium on Linux"].endswith("this browser"), rows
        assert "An app" in rows, rows  # the first API sign-in named nothing
        exact = browser.find_element(By.CSS_SELECTOR, "ul.sessions time").get_attribute("title")
        assert re.fullmatch(r"\d{1,2} \w{3} \d{4}, \d\d:\d\d UTC", exact), exact
        shots(browser, "account-sessions")
        accessible(browser)

        fill(browser, "display-name", "Cy <b>Young</b>")
        click(browser, "form[action='/account/profile'] button")
        assert notice(browser) == "Your name is now “Cy <b>Young</b>”."
        assert server.call("GET", "/api/v1/auth/me", token=app["access_token"])[1]["display_name"] == "Cy <b>Young</b>"

        browser.find_element(By.CSS_SELECTOR, "details.delete-account summary").click()
        fill(browser, "delete-confirm", "someone@example.com")
        click(browser, "form[action='/account/delete'] button")
        assert "Type cy@example.com exactly" in error(browser) and "Nothing was deleted" in error(browser)
        time.sleep(4)  # older than auth.fresh_auth
        browser.find_element(By.CSS_SELECTOR, "details.delete-account summary").click()
        fill(browser, "delete-confirm", "cy@example.com")
        click(browser, "form[action='/account/delete'] button")
        assert "too old" in error(browser)
        assert server.call("GET", "/api/v1/auth/me", token=app["access_token"])[0] == 200

        click(browser, "form[action='/logout'] button")
        sign_in_with_email(browser, server, "cy@example.com")
        browser.find_element(By.CSS_SELECTOR, "details.delete-account summary").click()
        fill(browser, "delete-confirm", "CY@example.com")
        click(browser, "form[action='/account/delete'] button")
        assert browser.find_element(By.TAG_NAME, "h1").text == "Your account was deleted"
        shots(browser, "account-deleted")
        accessible(browser)
        assert server.call("GET", "/api/v1/auth/me", token=app["access_token"])[0] == 401
        browser.get(server.url + "/account")
        assert "/login" in browser.current_url
