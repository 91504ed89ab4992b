"""A lost phone does not lock a person out (contract §18). On /account a person sees their passkeys
with their names and times in words, renames one and removes one (a fresh sign-in only), each
answered by a one-line notice; removing the last second factor says what follows. In the console an
operator removes a user's authenticator app and password: audited, the owner told by mail (read as a
person reads it), and the next sign-in asks only for what is left. Chromium with Chrome's virtual
authenticator; axe on each page; screenshots at 375 and 1280 px."""
import re
import subprocess
import time

import pyotp
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from chromium import chromium
from test_console import BINARY, operator_with_passkey
from test_page_methods import add_authenticator, fill, localhost, on_account, sign_in_with_email
from test_pages import accessible, click, shots

PASSWORD = "a long enough secret"


def notice(driver):
    return driver.find_element(By.ID, "page-notice").text


def passkey_names(driver):
    return [e.text for e in driver.find_elements(By.CSS_SELECTOR, "form[action='/account/passkey/rename'] input[name='name']")] or \
        [e.get_attribute("value") for e in driver.find_elements(By.CSS_SELECTOR, "input[id^='passkey-name-']")]


def add_passkey(driver, name):
    click(driver, "form[action='/account/passkey/begin'] button")
    WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.ID, "passkey-name") or d.find_elements(By.ID, "page-error"))
    assert driver.find_elements(By.ID, "passkey-name"), driver.current_url + driver.find_element(By.TAG_NAME, "main").text
    fill(driver, "passkey-name", name)
    click(driver, "#passkey-button")
    assert on_account(driver), driver.current_url + driver.page_source[:1500]


def test_a_person_renames_and_removes_a_passkey_on_their_account_page():
    with chromium(1280, 900) as browser, localhost(["email", "passkey"], email={"resend_interval": 0}, auth={"fresh_auth": 4}) as server:
        add_authenticator(browser)
        sign_in_with_email(browser, server, "ana@example.com")
        add_passkey(browser, "Laptop")
        assert notice(browser) == "Passkey “Laptop” added."
        item = browser.find_element(By.CSS_SELECTOR, "ul.sessions li:has(input[name='id'])")
        assert "added just now" in item.text and "never used yet" in item.text, item.text
        # The exact time is beside the words, for a person who wants it.
        assert re.fullmatch(r"\d{1,2} \w{3} \d{4}, \d\d:\d\d UTC", item.find_element(By.TAG_NAME, "time").get_attribute("title"))
        assert "Your only second factor" in item.text
        shots(browser, "account-passkeys")
        accessible(browser)
        # The notice is shown once.
        browser.get(server.url + "/account")
        assert not browser.find_elements(By.ID, "page-notice")

        browser.find_element(By.CSS_SELECTOR, "details.inline-edit summary").click()
        fill(browser, "passkey-name-1", "Blue <key>")
        click(browser, "form[action='/account/passkey/rename'] button")
        assert notice(browser) == "Passkey renamed to “Blue <key>”."
        assert browser.find_element(By.ID, "passkey-name-1").get_attribute("value") == "Blue <key>"

        browser.find_element(By.CSS_SELECTOR, "details.inline-edit summary").click()
        click(browser, "form[action='/account/passkey/remove'] button")
        assert notice(browser) == "Passkey removed. Your account has no second factor now: signing in asks for one step only."
        assert "No passkey yet" in browser.page_source
        shots(browser, "account-passkey-removed")
        accessible(browser)

        # A sign-in older than auth.fresh_auth cannot remove one: the passkey stays.
        add_passkey(browser, "Phone")
        time.sleep(5)
        browser.find_element(By.CSS_SELECTOR, "details.inline-edit summary").click()
        click(browser, "form[action='/account/passkey/remove'] button")
        assert "Sign out and in again first" in browser.find_element(By.ID, "page-error").text
        assert browser.find_element(By.ID, "passkey-name-1").get_attribute("value") == "Phone"


def test_an_operator_removes_a_users_authenticator_app_and_password_and_the_owner_is_told():
    with chromium(1280, 900) as browser, localhost(["email", "password", "passkey", "totp", "approval"], email={"resend_interval": 0}) as server:
        email = "lost@example.com"
        assert server.call("POST", "/api/v1/auth/password/register", {"email": email, "password": PASSWORD})[0] == 202
        status, session, _ = server.call("POST", "/api/v1/auth/password/verify-email", {"email": email, "code": server.mailed_code(email), "password": PASSWORD})
        assert status == 200, session
        _, enrolment, _ = server.call("POST", "/api/v1/auth/mfa/totp/enroll", token=session["access_token"])
        app = pyotp.parse_uri(enrolment["otpauth_uri"])
        assert server.call("POST", "/api/v1/auth/mfa/totp/confirm", {"code": app.now()}, token=session["access_token"])[0] == 200
        status, challenge, _ = server.call("POST", "/api/v1/auth/password/login", {"email": email, "password": PASSWORD})
        assert status == 202 and challenge["status"] == "second_factor_required"

        operator_with_passkey(browser, server, "root@example.com")
        user_id = session["user"]["id"]
        browser.get(server.url + "/admin/users/" + user_id)
        ways = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "form[action$='/remove'] button")]
        # What the person enrolled, nothing offered to everyone (an approval, a mailed code).
        assert ways == ["Remove the authenticator app and its recovery codes", "Remove the recovery codes", "Remove the password"], ways
        # The recovery codes alone (printed ones stolen): a sign-in no longer offers them, the app stays.
        click(browser, "form[action$='/remove']:has(input[value='recovery_code']) button")
        assert notice(browser) == f"Removed the recovery codes. {email} was told by mail."
        status, challenge, _ = server.call("POST", "/api/v1/auth/password/login", {"email": email, "password": PASSWORD})
        assert status == 202 and "recovery_code" not in challenge["factors"] and "totp" in challenge["factors"], challenge
        shots(browser, "console-user-ways-to-sign-in")
        accessible(browser)
        mailed = len(server.mails(to=email))
        click(browser, "form[action$='/remove']:has(input[value='totp']) button")
        assert notice(browser) == f"Removed the authenticator app and its recovery codes. {email} was told by mail."
        assert "Remove the authenticator app" not in browser.page_source

        # The owner reads what happened, and where to add a new one.
        mail = server.mailed(email, about="removed", after=mailed)
        assert "removed the authenticator app and its recovery codes from your account" in mail["text"], mail["text"]
        assert "http://localhost:" in mail["text"] and "/account" in mail["text"]
        # The next sign-in asks only for the password.
        status, signed_in, _ = server.call("POST", "/api/v1/auth/password/login", {"email": email, "password": PASSWORD})
        assert status == 200 and "access_token" in signed_in, signed_in

        click(browser, "form[action$='/remove']:has(input[value='password']) button")
        assert notice(browser).startswith("Removed the password.")
        assert server.call("POST", "/api/v1/auth/password/login", {"email": email, "password": PASSWORD})[0] == 401
        assert "No password, passkey or authenticator app" in browser.page_source

        # Audited with the operator's email.
        audit = subprocess.run([BINARY, "audit", "tail", "--data", server.folder], capture_output=True, text=True).stdout
        assert "remove credential: totp" in audit and "remove credential: password" in audit and "root@example.com" in audit, audit[-2000:]
