"""The /device page in a real browser (contract §7 on the pages of §13): headless Chromium, driven by
Selenium, follows the device's verification_uri_complete, signs in on /login (a code read from the
mail as a person reads it, or a password and then an authenticator app's code), compares the code
and approves or denies, while the device polls /oauth/token and receives its session. Screenshots
under IntegrationTests/blackbox/output/device-page/ (look at them after a change to the page)."""
import os
import time

import pyotp
import pytest
import requests
from selenium.webdriver.common.by import By

from chromium import chromium, click
from conftest import running_server
from test_pages import PAGES, Browserish, accessible

OUTPUT = os.path.join(os.path.dirname(__file__), "output", "device-page")
GRANT = "urn:ietf:params:oauth:grant-type:device_code"


@pytest.fixture
def browser():
    with chromium(390, 900) as driver:
        yield driver


def shot(driver, name):
    os.makedirs(OUTPUT, exist_ok=True)
    driver.save_screenshot(os.path.join(OUTPUT, name + ".png"))


def poll(server, started):
    return requests.post(server.url + "/oauth/token", data={"grant_type": GRANT, "device_code": started["device_code"], "client_id": "frame"})


def test_a_person_approves_a_device_in_a_browser(browser):
    with running_server({**PAGES, "device": {"interval": 1}}) as server:
        started = requests.post(server.url + "/oauth/device_authorization",
                                data={"client_id": "frame", "device_name": "Living-room frame", "platform": "linux"}).json()
        code = started["user_code"]
        browser.get(started["verification_uri_complete"])
        # Not signed in: the sign-in page first, then back here.
        assert "/login?return_to=" in browser.current_url
        shot(browser, "1-sign-in")
        browser.find_element(By.ID, "email-address").send_keys("anna@example.com")
        click(browser, By.CSS_SELECTOR, "button[formaction='/login/email/send']")
        browser.find_element(By.ID, "email-code").send_keys(server.mailed_code("anna@example.com"))
        click(browser, By.CSS_SELECTOR, "form[action='/login/email/verify'] button")

        assert browser.find_element(By.ID, "device-name").text == "Living-room frame"
        assert browser.find_element(By.ID, "user-code").text == code
        assert "Does this code match the one on your device?" in browser.find_element(By.ID, "question").text
        shot(browser, "2-confirm")
        accessible(browser)
        # Nothing is approved yet: the device is still waiting.
        assert poll(server, started).json()["error"] == "authorization_pending"
        click(browser, By.ID, "approve")
        assert "Device approved" in browser.find_element(By.TAG_NAME, "h1").text
        shot(browser, "3-approved")

        time.sleep(1.1)  # the device's polling interval
        token = poll(server, started)
        assert token.status_code == 200, token.text
        assert token.json()["user"]["email"] == "anna@example.com"
        assert "a device signed in with a code (Living-room frame, linux)" in server.mailed("anna@example.com", about="new way to sign in")["text"]

        # Signed in already, a second device needs only its code typed.
        second = requests.post(server.url + "/oauth/device_authorization", data={"client_id": "frame", "device_name": "Kitchen"}).json()
        browser.get(server.url + "/device")
        browser.find_element(By.ID, "user_code").send_keys(second["user_code"].lower().replace("-", ""))
        click(browser, By.CSS_SELECTOR, "form[action='/device/lookup'] button")
        assert browser.find_element(By.ID, "device-name").text == "Kitchen"

        # At 320 px wide nothing scrolls sideways (a headless window is at least 500 px wide: the
        # page's width is set with DevTools).
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 320, "height": 800, "deviceScaleFactor": 1, "mobile": False})
        browser.get(server.url + "/device")
        assert browser.execute_script("return [innerWidth, document.documentElement.scrollWidth]") == [320, 320]
        shot(browser, "4-narrow")


def test_an_account_with_an_authenticator_app_signs_in_with_its_code_then_approves(browser):
    with running_server({**PAGES, "providers": ["email", "password", "totp"], "device": {"interval": 1}}) as server:
        from test_pages import register_password
        email = "otto@example.com"
        session = register_password(server, email, "a good long secret")
        enrolment = server.call("POST", "/api/v1/auth/mfa/totp/enroll", token=session["access_token"])[1]
        app = pyotp.parse_uri(enrolment["otpauth_uri"])
        assert server.call("POST", "/api/v1/auth/mfa/totp/confirm", {"code": app.now()}, token=session["access_token"])[0] == 200

        started = requests.post(server.url + "/oauth/device_authorization", data={"client_id": "frame", "device_name": "Hall display"}).json()
        browser.get(started["verification_uri_complete"])
        browser.find_element(By.ID, "email-address").send_keys(email)
        browser.find_element(By.ID, "password-password").send_keys("a good long secret")
        click(browser, By.CSS_SELECTOR, "button[formaction='/login/password/login']")
        browser.find_element(By.ID, "factor-totp").send_keys("000000")
        click(browser, By.CSS_SELECTOR, "form[action='/login/factor'] button")
        assert "tries left" in browser.find_element(By.ID, "page-error").text
        assert poll(server, started).json()["error"] == "authorization_pending"
        browser.find_element(By.ID, "factor-totp").send_keys(app.at(time.time() + 30))
        click(browser, By.CSS_SELECTOR, "form[action='/login/factor'] button")
        assert browser.find_element(By.ID, "device-name").text == "Hall display"
        click(browser, By.ID, "approve")
        time.sleep(1.1)
        token = poll(server, started)
        assert token.status_code == 200 and token.json()["user"]["email"] == email, token.text


def test_a_denied_device_is_told_so_and_the_page_escapes_what_the_device_reported(browser):
    with running_server({**PAGES, "device": {"interval": 1}}) as server:
        started = requests.post(server.url + "/oauth/device_authorization",
                                data={"client_id": "frame", "device_name": "<img src=x onerror=alert(1)>"}).json()
        browser.get(started["verification_uri_complete"])
        browser.find_element(By.ID, "email-address").send_keys("bo@example.com")
        click(browser, By.CSS_SELECTOR, "button[formaction='/login/email/send']")
        browser.find_element(By.ID, "email-code").send_keys(server.mailed_code("bo@example.com"))
        click(browser, By.CSS_SELECTOR, "form[action='/login/email/verify'] button")
        assert browser.find_element(By.ID, "device-name").text == "<img src=x onerror=alert(1)>"
        assert browser.find_elements(By.CSS_SELECTOR, "main img") == []
        shot(browser, "5-escaped-name")
        click(browser, By.ID, "deny")
        assert "Device denied" in browser.find_element(By.TAG_NAME, "h1").text
        time.sleep(1.1)
        assert poll(server, started).json()["error"] == "access_denied"


def test_the_page_refuses_forged_posts_a_stale_sign_in_and_cannot_be_framed():
    with running_server({**PAGES, "auth": {"fresh_auth": 1}, "device": {"interval": 1}}) as server:
        started = requests.post(server.url + "/oauth/device_authorization", data={"client_id": "frame", "device_name": "TV"}).json()
        code = started["user_code"]
        # Not signed in: to /login, nothing answered.
        anonymous = requests.get(server.url + "/device?user_code=" + code, allow_redirects=False)
        assert anonymous.status_code == 302 and anonymous.headers["Location"].startswith("/login?return_to=%2Fdevice")
        browser = Browserish()
        page = browser.get(server.url + "/login")
        csrf = page.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        browser.post(server.url + "/login/email/send", data={"csrf": csrf, "email": "cy@example.com"}, headers={"Origin": server.url})
        signed = browser.post(server.url + "/login/email/verify", data={"csrf": csrf, "code": server.mailed_code("cy@example.com")},
                              headers={"Origin": server.url}, allow_redirects=False)
        assert signed.status_code == 303
        page = browser.get(server.url + "/device?user_code=" + code)
        csp = page.headers["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in csp and page.headers["X-Frame-Options"] == "DENY" and page.headers["Cache-Control"] == "no-store"
        csrf = page.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        form = {"csrf": csrf, "user_code": code}
        assert browser.post(server.url + "/device/approve", data=form, headers={"Origin": "https://evil.example"}).status_code == 403
        assert browser.post(server.url + "/device/approve", data=form).status_code == 403, "no Origin"
        assert browser.post(server.url + "/device/approve", data={**form, "csrf": "forged"}, headers={"Origin": server.url}).status_code == 403
        assert requests.post(server.url + "/device/approve", data=form, headers={"Origin": server.url}, allow_redirects=False).status_code == 302, \
            "no browser session: to the sign-in page"
        assert poll(server, started).json()["error"] == "authorization_pending"

        # A sign-in older than auth.fresh_auth may not let a device in: the page asks for a new one.
        time.sleep(1.5)
        stale = browser.get(server.url + "/device?user_code=" + code)
        assert "sign in again" in stale.text.lower() and 'id="approve"' not in stale.text
        refused = browser.post(server.url + "/device/approve", data=form, headers={"Origin": server.url}, allow_redirects=False)
        assert refused.status_code == 403 and poll(server, started).json()["error"] == "authorization_pending"
        again = browser.post(server.url + "/device/reauth", data=form, headers={"Origin": server.url}, allow_redirects=False)
        assert again.status_code == 302 and again.headers["Location"].startswith("/login?return_to=%2Fdevice")
        assert browser.get(server.url + "/account", allow_redirects=False).status_code == 302, "that sign-in has ended"
