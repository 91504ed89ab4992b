"""Every sign-in method on authd's pages in headless Chromium (contract §13): a password sign-up
with the code read from the mail, both password resets (a mailed code; another signed-in device's
approval with number matching), a passkey added on /account and used to sign in and as a second
factor (Chrome's virtual authenticator), the emailed second factor, and user name + PIN offered
only to a client registered --allow-pin. Screenshots at 375 and 1280 px under output/pages/."""
import re
import socket
import urllib.parse

import pyotp
import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.common.virtual_authenticator import Protocol, Transport, VirtualAuthenticatorOptions

from chromium import chromium
from conftest import running_server
from mailtext import code_in
from test_pages import PAGES, Browserish, accessible, click, shots


@pytest.fixture
def browser():
    with chromium(375, 900) as driver:
        yield driver


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def localhost(providers, log=False, **sections):
    """A server whose issuer is http://localhost:PORT, as on a laptop: a passkey's RP ID cannot be an IP address."""
    port = free_port()
    origin = f"http://localhost:{port}"
    config = {"issuer": origin, "providers": providers, "passkeys": {"rp_id": "localhost", "origins": [origin]}, **sections}
    return running_server(config, port=port, log=log)


def fill(driver, field_id, text):
    element = driver.find_element(By.ID, field_id)
    element.clear()
    element.send_keys(text)


def open_details(driver, summary):
    driver.find_element(By.XPATH, f"//summary[normalize-space()='{summary}']").click()


def on_account(driver):
    return "Your account" in driver.page_source and driver.current_url.endswith("/account")


def test_a_person_signs_up_with_a_password_reading_the_code_from_the_mail(browser):
    with running_server({**PAGES, "providers": ["email", "password"]}) as server:
        browser.get(server.url + "/login")
        open_details(browser, "Create an account")
        fill(browser, "register-email", "nora@example.com")
        fill(browser, "register-name", "Nora <b>")
        fill(browser, "register-password", "12345678")  # long enough for the browser, too common for the server
        click(browser, "form[action='/login/password/register'] button")
        assert browser.find_element(By.ID, "page-error").text
        # Refused, sign-up stays open with what was typed, but the password (contract §18).
        assert browser.find_element(By.ID, "register-email").get_attribute("value") == "nora@example.com"
        assert browser.find_element(By.ID, "register-name").get_attribute("value") == "Nora <b>"
        assert browser.find_element(By.ID, "register-password").get_attribute("value") == ""
        fill(browser, "register-password", "a long enough secret")
        click(browser, "form[action='/login/password/register'] button")
        assert "nora@example.com" in browser.page_source
        shots(browser, "password-verify")
        accessible(browser)
        mail = server.mailed("nora@example.com")
        fill(browser, "password-code", "000000" if code_in(mail) != "000000" else "111111")
        click(browser, "form[action='/login/password/verify'] button")
        assert "code is wrong" in browser.find_element(By.ID, "page-error").text
        fill(browser, "password-code", code_in(mail))
        click(browser, "form[action='/login/password/verify'] button")
        assert on_account(browser)
        # The account exists with that password, its address verified, and no second mailed code was needed.
        assert len(server.mails("nora@example.com")) == 1
        status, session, _ = server.call("POST", "/api/v1/auth/password/login", {"email": "nora@example.com", "password": "a long enough secret"})
        assert status == 200 and session["user"]["email_verified"] is True


def test_a_forgotten_password_is_reset_with_the_mailed_code_and_the_person_is_signed_in(browser):
    with running_server({**PAGES, "providers": ["email", "password"]}) as server:
        from test_pages import register_password
        app = register_password(server, "otto@example.com", "the old password")
        browser.get(server.url + "/login")
        open_details(browser, "Forgot your password?")
        fill(browser, "reset-email", "otto@example.com")
        click(browser, "form[action='/login/password/reset-send'] button")
        shots(browser, "password-reset-code")
        accessible(browser)
        code = server.mailed_code("otto@example.com", about="reset")
        fill(browser, "reset-code", code)
        fill(browser, "reset-new-password", "otto@example.com")
        click(browser, "form[action='/login/password/reset-verify'] button")
        assert browser.find_element(By.ID, "page-error").text, "a password the policy refuses is said so"
        fill(browser, "reset-code", code)
        fill(browser, "reset-new-password", "the brand new password")
        click(browser, "form[action='/login/password/reset-verify'] button")
        assert on_account(browser)
        # Every earlier session ended; the new password works, the old one not.
        assert server.call("GET", "/api/v1/auth/me", token=app["access_token"])[0] == 401
        assert server.call("POST", "/api/v1/auth/password/login", {"email": "otto@example.com", "password": "the brand new password"})[0] == 200
        assert server.call("POST", "/api/v1/auth/password/login", {"email": "otto@example.com", "password": "the old password"})[0] == 401


def test_a_forgotten_password_is_reset_by_typing_the_number_on_a_signed_in_phone(browser):
    with running_server({**PAGES, "providers": ["email", "password"]}) as server:
        from test_pages import register_password
        phone = register_password(server, "pia@example.com", "the old password")
        browser.get(server.url + "/login")
        open_details(browser, "Forgot your password?")
        fill(browser, "reset-device-email", "pia@example.com")
        fill(browser, "reset-device-password", "a phone approved secret")
        click(browser, "form[action='/login/password/reset-device'] button")
        number = browser.find_element(By.CSS_SELECTOR, ".match-code").text
        assert re.fullmatch(r"\d{2,3}", number), number
        shots(browser, "password-reset-wait")
        accessible(browser)
        # Not approved yet: said so, nothing changes.
        click(browser, "form[action='/login/password/reset-device-check'] button")
        assert "not approved yet" in browser.find_element(By.ID, "page-error").text.lower()
        status, listed, _ = server.call("GET", "/api/v1/auth/approvals", token=phone["access_token"])
        request = listed["approvals"][0]
        assert "match_code" not in request, "the number is never shown to the approver"
        assert server.call("POST", f"/api/v1/auth/approvals/{request['id']}/approve", {"match_code": number}, token=phone["access_token"])[0] == 204
        click(browser, "form[action='/login/password/reset-device-check'] button")
        assert "password is changed" in browser.page_source
        fill(browser, "password-password", "a phone approved secret")
        click(browser, "button[formaction='/login/password/login']")
        assert on_account(browser)


def add_authenticator(driver):
    options = VirtualAuthenticatorOptions()
    options.protocol = Protocol.CTAP2
    options.transport = Transport.INTERNAL
    options.has_resident_key = True
    options.has_user_verification = True
    options.is_user_verified = True
    options.is_user_consenting = True
    driver.add_virtual_authenticator(options)


def sign_in_with_email(driver, server, email):
    driver.get(server.url + "/login")
    before = len(server.outbox())
    fill(driver, "email-address", email)
    click(driver, "button[formaction='/login/email/send']")
    fill(driver, "email-code", server.mailed_code(email, after=before))
    click(driver, "form[action='/login/email/verify'] button")


def account_with_passkey(driver, server, email):
    """An account with a passkey on the browser's virtual authenticator (email code, then "Add a
    passkey" on /account), signed out again."""
    add_authenticator(driver)
    sign_in_with_email(driver, server, email)
    click(driver, "form[action='/account/passkey/begin'] button")
    click(driver, "#passkey-button")
    assert on_account(driver)
    click(driver, "form[action='/logout'] button")


def test_a_passkey_added_on_the_account_page_signs_in_and_answers_as_a_second_factor(browser):
    with localhost(["email", "password", "passkey", "totp"], email={"resend_interval": 0}) as server:
        add_authenticator(browser)
        sign_in_with_email(browser, server, "kai@example.com")
        assert on_account(browser)
        click(browser, "form[action='/account/passkey/begin'] button")
        shots(browser, "passkey-create")
        accessible(browser)
        fill(browser, "passkey-name", "Test laptop")
        click(browser, "#passkey-button")
        assert on_account(browser) and "Test laptop" in browser.page_source
        assert "passkey" in server.mailed("kai@example.com", about="A new way to sign in")["text"].lower(), "the owner is told"
        # Signed out, the passkey alone signs in: nothing typed.
        click(browser, "form[action='/logout'] button")
        browser.get(server.url + "/login")
        click(browser, "form[action='/login/passkey/begin'] button")
        shots(browser, "passkey-sign-in")
        accessible(browser)
        assert on_account(browser)
        import json, subprocess
        from test_openid_provider import BINARY
        listed = json.loads(subprocess.run([BINARY, "sessions", "list", "kai@example.com", "--json", "--data", server.folder],
                                           capture_output=True, text=True, check=True).stdout)
        browsers = [s for s in listed if s.get("kind") == "browser"]
        assert len(browsers) == 1 and browsers[0]["amr"] == ["passkey", "mfa"], listed


def test_a_passkey_is_asked_after_a_password(browser):
    with localhost(["email", "password", "passkey"], email={"resend_interval": 0}) as server:
        from test_pages import register_password
        register_password(server, "ivo@example.com", "a fine password")
        add_authenticator(browser)
        browser.get(server.url + "/login")
        fill(browser, "email-address", "ivo@example.com")
        fill(browser, "password-password", "a fine password")
        click(browser, "button[formaction='/login/password/login']")
        assert on_account(browser)
        click(browser, "form[action='/account/passkey/begin'] button")
        click(browser, "#passkey-button")
        click(browser, "form[action='/logout'] button")
        # Now the password is followed by the passkey (the policy asks every user with one).
        browser.get(server.url + "/login")
        fill(browser, "email-address", "ivo@example.com")
        fill(browser, "password-password", "a fine password")
        click(browser, "button[formaction='/login/password/login']")
        assert "second factor" in browser.page_source
        shots(browser, "factor-passkey")
        accessible(browser)
        click(browser, "#passkey-button")
        assert on_account(browser)


def test_the_emailed_second_factor_is_asked_on_the_page(browser):
    with running_server({**PAGES, "providers": ["email", "password"], "password": {"login_requires_email_code": True}}) as server:
        from test_pages import register_password
        register_password(server, "eve@example.com", "a fine password")
        before = len(server.outbox())
        browser.get(server.url + "/login")
        fill(browser, "email-address", "eve@example.com")
        fill(browser, "password-password", "a fine password")
        click(browser, "button[formaction='/login/password/login']")
        assert "We emailed you a code" in browser.page_source
        shots(browser, "factor-email-code")
        accessible(browser)
        fill(browser, "factor-email_code", "000000")
        click(browser, "form[action='/login/factor'] button")
        assert "not right" in browser.find_element(By.ID, "page-error").text
        fill(browser, "factor-email_code", server.mailed_code("eve@example.com", after=before))
        click(browser, "form[action='/login/factor'] button")
        assert on_account(browser)


def test_user_name_and_pin_are_offered_only_to_a_client_registered_for_them():
    with running_server({**PAGES, "providers": ["email", "anonymous", "pin"]}) as server:
        from test_openid_provider import register_client, REDIRECT
        kiosk = register_client(server, "--first-party", "--allow-pin", name="Kiosk")
        other = register_client(server, "--first-party", name="Other")
        status, session, _ = server.call("POST", "/api/v1/auth/anonymous", {"device_name": "tablet"})
        assert server.call("PUT", "/api/v1/auth/pin", {"pin": "4821"}, session["access_token"])[0] == 204
        assert server.call("PUT", "/api/v1/auth/username", {"username": "tablet-kid"}, session["access_token"])[0] in (200, 204)

        def login_page(client):
            browser = Browserish()
            url = server.url + "/oauth/authorize?" + urllib.parse.urlencode({
                "client_id": client["client_id"], "redirect_uri": REDIRECT, "response_type": "code", "scope": "openid", "nonce": "n",
                "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "code_challenge_method": "S256"})
            first = browser.get(url, allow_redirects=False)
            return browser, browser.get(server.url + first.headers["Location"])

        browser, page = login_page(other)
        assert 'action="/login/pin/login"' not in page.text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        refused = browser.post(server.url + "/login/pin/login", data={"csrf": csrf, "username": "tablet-kid", "pin": "4821"},
                               headers={"Origin": server.url}, allow_redirects=False)
        assert refused.status_code == 404
        assert 'action="/login/pin/login"' not in Browserish().get(server.url + "/login").text, "never on the pages' own sign-in"

        browser, page = login_page(kiosk)
        assert 'action="/login/pin/login"' in page.text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        wrong = browser.post(server.url + "/login/pin/login", data={"csrf": csrf, "username": "tablet-kid", "pin": "0000"},
                             headers={"Origin": server.url}, allow_redirects=False)
        assert wrong.status_code == 401 and "do not match" in wrong.text
        done = browser.post(server.url + "/login/pin/login", data={"csrf": csrf, "username": "tablet-kid", "pin": "4821"},
                            headers={"Origin": server.url}, allow_redirects=False)
        assert done.status_code == 303 and done.headers["Location"].startswith("/oauth/authorize")
        back = browser.get(server.url + done.headers["Location"], allow_redirects=False)
        assert back.status_code == 302 and back.headers["Location"].startswith(REDIRECT + "?code=")


def test_the_account_page_turns_an_authenticator_app_on_and_off_and_changes_the_password(browser):
    with running_server({**PAGES, "providers": ["email", "password", "totp"], "email": {"resend_interval": 0}}) as server:
        from test_pages import register_password
        phone = register_password(server, "tom@example.com", "the first password")
        browser.get(server.url + "/login")
        fill(browser, "email-address", "tom@example.com")
        fill(browser, "password-password", "the first password")
        click(browser, "button[formaction='/login/password/login']")
        assert on_account(browser)

        # The password: the current one is checked; other sessions end, this browser stays.
        fill(browser, "account-current-password", "not the password")
        fill(browser, "account-new-password", "the second password")
        click(browser, "form[action='/account/password/change'] button")
        assert browser.find_element(By.ID, "page-error").text
        fill(browser, "account-current-password", "the first password")
        fill(browser, "account-new-password", "the second password")
        click(browser, "form[action='/account/password/change'] button")
        assert on_account(browser)
        assert server.call("GET", "/api/v1/auth/me", token=phone["access_token"])[0] == 401, "the other session ended"
        assert server.call("POST", "/api/v1/auth/password/login", {"email": "tom@example.com", "password": "the second password"})[0] == 200

        # The authenticator app: the key shown, the app's first code, the recovery codes once.
        click(browser, "form[action='/account/totp/begin'] button")
        shots(browser, "totp-enroll")
        accessible(browser)
        key = browser.find_element(By.ID, "totp-key").text.replace(" ", "")
        app = pyotp.TOTP(key)
        fill(browser, "totp-code", "000000" if app.now() != "000000" else "111111")
        click(browser, "form[action='/account/totp/confirm'] button")
        assert "not the app's" in browser.find_element(By.ID, "page-error").text
        assert browser.find_element(By.ID, "totp-key").text.replace(" ", "") == key
        fill(browser, "totp-code", app.now())
        click(browser, "form[action='/account/totp/confirm'] button")
        codes = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#recovery-codes code")]
        assert len(codes) == 10
        shots(browser, "totp-codes")
        # Now a password sign-in asks for the app's code.
        status, challenge, _ = server.call("POST", "/api/v1/auth/password/login", {"email": "tom@example.com", "password": "the second password"})
        assert status == 202 and "totp" in challenge["factors"]
        browser.get(server.url + "/account")
        click(browser, "form[action='/account/totp/off'] button")
        assert on_account(browser) and "Set up an authenticator app" in browser.page_source
        assert browser.find_element(By.ID, "page-notice").text.startswith("Authenticator app turned off")
        assert server.call("POST", "/api/v1/auth/password/login", {"email": "tom@example.com", "password": "the second password"})[0] == 200
