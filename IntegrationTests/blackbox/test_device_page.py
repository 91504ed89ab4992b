"""The /device page in a real browser: headless Chromium driven by Selenium through the whole flow
(type the code, read the code from the mail as a person reads it, compare, approve) while the device polls
/oauth/token and receives its session. A screenshot of each step is kept under
IntegrationTests/blackbox/output/device-page/ (look at them after a change to the page)."""
import os
import time

import pytest
import requests

from chromium import chromium, click
from conftest import running_server

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

OUTPUT = os.path.join(os.path.dirname(__file__), "output", "device-page")
GRANT = "urn:ietf:params:oauth:grant-type:device_code"


@pytest.fixture
def browser():
    with chromium(390, 900) as driver:
        yield driver


def shot(driver, name):
    os.makedirs(OUTPUT, exist_ok=True)
    driver.save_screenshot(os.path.join(OUTPUT, name + ".png"))


def test_a_person_approves_a_device_in_a_browser(browser):
    with running_server({"device": {"interval": 1}}) as server:
        server.sign_in("anna@example.com")  # the account exists, its email verified
        started = requests.post(server.url + "/oauth/device_authorization",
                                data={"client_id": "frame", "device_name": "Living-room frame", "platform": "linux"}).json()
        code = started["user_code"]

        browser.get(server.url + "/device?user_code=" + code)
        assert browser.find_element(By.ID, "user_code").get_attribute("value") == code
        # Asked once the page has settled: right after a load Chromium may still be moving focus.
        WebDriverWait(browser, 5).until(lambda b: b.execute_script("return document.activeElement && document.activeElement.id") == "email")
        shot(browser, "1-enter-code")
        browser.find_element(By.ID, "email").send_keys("anna@example.com")
        click(browser, By.CSS_SELECTOR, "button[type=submit]")

        assert "Check your email" in browser.find_element(By.TAG_NAME, "h1").text
        shot(browser, "2-mailed-code")
        browser.find_element(By.ID, "code").send_keys("000000")
        click(browser, By.CSS_SELECTOR, "form[action='/device/verify'] button")
        assert "wrong" in browser.find_element(By.ID, "error").text
        shot(browser, "3-wrong-code")
        browser.find_element(By.ID, "code").send_keys(server.mailed_code("anna@example.com", about="sign in a device"))
        click(browser, By.CSS_SELECTOR, "form[action='/device/verify'] button")

        assert browser.find_element(By.ID, "device-name").text == "Living-room frame"
        assert browser.find_element(By.ID, "user-code").text == code
        assert "Does this code match the one on your device?" in browser.find_element(By.ID, "question").text
        shot(browser, "4-confirm")
        # Nothing is approved yet: the device is still waiting.
        pending = requests.post(server.url + "/oauth/token", data={"grant_type": GRANT, "device_code": started["device_code"], "client_id": "frame"})
        assert pending.json()["error"] == "authorization_pending"
        click(browser, By.ID, "approve")
        assert browser.find_element(By.ID, "result").text == "Device approved"
        shot(browser, "5-approved")

        time.sleep(1.1)
        token = requests.post(server.url + "/oauth/token", data={"grant_type": GRANT, "device_code": started["device_code"], "client_id": "frame"})
        assert token.status_code == 200, token.text
        assert token.json()["user"]["email"] == "anna@example.com"
        assert "a device signed in with a code (Living-room frame, linux)" in server.mailed("anna@example.com", about="new way to sign in")["text"]

        # At 320 px wide nothing scrolls sideways.
        browser.set_window_size(320, 800)
        browser.get(server.url + "/device")
        assert browser.execute_script("return document.documentElement.scrollWidth") <= 320
        shot(browser, "6-narrow")


def test_a_person_signs_in_on_the_page_with_a_password_instead(browser):
    with running_server({"device": {"interval": 1}}) as server:
        email = "pat@example.com"
        assert server.call("POST", "/api/v1/auth/password/register", {"email": email, "password": "a good long secret"})[0] == 202
        assert server.call("POST", "/api/v1/auth/password/verify-email",
                           {"email": email, "code": server.mailed_code(email), "password": "a good long secret"})[0] == 200
        started = requests.post(server.url + "/oauth/device_authorization", data={"device_name": "Kitchen TV"}).json()
        browser.get(server.url + "/device?user_code=" + started["user_code"])
        browser.find_element(By.ID, "email").send_keys(email)
        browser.find_element(By.ID, "password").send_keys("not the password")
        shot(browser, "8-password")
        click(browser, By.CSS_SELECTOR, "button[type=submit]")
        assert "wrong" in browser.find_element(By.ID, "error").text
        assert browser.find_element(By.ID, "password").get_attribute("value") == "", "the password is never sent back"
        shot(browser, "9-wrong-password")
        browser.find_element(By.ID, "password").send_keys("a good long secret")
        click(browser, By.CSS_SELECTOR, "button[type=submit]")
        assert browser.find_element(By.ID, "device-name").text == "Kitchen TV", "straight to the confirmation: no mailed code"
        click(browser, By.ID, "approve")
        assert browser.find_element(By.ID, "result").text == "Device approved"
        time.sleep(1.1)
        token = requests.post(server.url + "/oauth/token", data={"grant_type": GRANT, "device_code": started["device_code"]})
        assert token.status_code == 200 and token.json()["user"]["email"] == email, token.text
        audit = open(os.path.join(server.folder, "audit.jsonl")).read()
        assert '"device_page"' in audit and "sign_in_failed" in audit


def test_an_account_with_an_authenticator_app_answers_its_code_on_the_page(browser):
    import pyotp
    with running_server({"providers": ["email", "password", "totp"], "device": {"interval": 1}}) as server:
        email = "otto@example.com"
        assert server.call("POST", "/api/v1/auth/password/register", {"email": email, "password": "a good long secret"})[0] == 202
        status, session, _ = server.call("POST", "/api/v1/auth/password/verify-email",
                                         {"email": email, "code": server.mailed_code(email), "password": "a good long secret"})
        enrolment = server.call("POST", "/api/v1/auth/mfa/totp/enroll", token=session["access_token"])[1]
        app = pyotp.parse_uri(enrolment["otpauth_uri"])
        codes = server.call("POST", "/api/v1/auth/mfa/totp/confirm", {"code": app.now()}, token=session["access_token"])[1]["recovery_codes"]

        started = requests.post(server.url + "/oauth/device_authorization", data={"device_name": "Hall display"}).json()
        browser.get(server.url + "/device?user_code=" + started["user_code"])
        browser.find_element(By.ID, "email").send_keys(email)
        browser.find_element(By.ID, "password").send_keys("a good long secret")
        click(browser, By.CSS_SELECTOR, "button[type=submit]")
        assert browser.find_element(By.TAG_NAME, "h1").text == "One more step"
        choices = [e.get_attribute("value") for e in browser.find_elements(By.CSS_SELECTOR, "input[name=factor]")]
        assert choices == ["totp", "recovery_code"], choices
        shot(browser, "10-second-factor")
        browser.find_element(By.ID, "answer").send_keys("000000")
        click(browser, By.CSS_SELECTOR, "form[action='/device/factor'] button")
        assert "4 tries left" in browser.find_element(By.ID, "error").text
        shot(browser, "11-wrong-second-factor")
        # Nothing approved yet, and no session for the page's own sign-in.
        pending = requests.post(server.url + "/oauth/token", data={"grant_type": GRANT, "device_code": started["device_code"]})
        assert pending.json()["error"] == "authorization_pending"
        browser.find_element(By.ID, "answer").send_keys(app.at(time.time() + 30))
        click(browser, By.CSS_SELECTOR, "form[action='/device/factor'] button")
        assert browser.find_element(By.ID, "device-name").text == "Hall display"
        click(browser, By.ID, "approve")
        assert browser.find_element(By.ID, "result").text == "Device approved"
        time.sleep(1.1)
        token = requests.post(server.url + "/oauth/token", data={"grant_type": GRANT, "device_code": started["device_code"]})
        assert token.status_code == 200 and token.json()["user"]["email"] == email, token.text

        # A recovery code works on the page too.
        second = requests.post(server.url + "/oauth/device_authorization", data={"device_name": "Garage"}).json()
        browser.get(server.url + "/device?user_code=" + second["user_code"])
        browser.find_element(By.ID, "email").send_keys(email)
        browser.find_element(By.ID, "password").send_keys("a good long secret")
        click(browser, By.CSS_SELECTOR, "button[type=submit]")
        browser.find_element(By.CSS_SELECTOR, "input[value=recovery_code]").click()
        browser.find_element(By.ID, "answer").send_keys(codes[0])
        click(browser, By.CSS_SELECTOR, "form[action='/device/factor'] button")
        assert browser.find_element(By.ID, "device-name").text == "Garage"


def test_a_denied_device_is_told_so_and_the_page_escapes_what_the_device_reported(browser):
    with running_server({"device": {"interval": 1}}) as server:
        server.sign_in("bo@example.com")
        started = requests.post(server.url + "/oauth/device_authorization",
                                data={"device_name": "<img src=x onerror=alert(1)>"}).json()
        browser.get(server.url + "/device")
        browser.find_element(By.ID, "user_code").send_keys(started["user_code"].lower().replace("-", ""))
        browser.find_element(By.ID, "email").send_keys("bo@example.com")
        click(browser, By.CSS_SELECTOR, "button[type=submit]")
        browser.find_element(By.ID, "code").send_keys(server.mailed_code("bo@example.com", about="sign in a device"))
        click(browser, By.CSS_SELECTOR, "form[action='/device/verify'] button")
        assert browser.find_element(By.ID, "device-name").text == "<img src=x onerror=alert(1)>"
        assert browser.find_elements(By.CSS_SELECTOR, "main img") == []
        shot(browser, "7-escaped-name")
        click(browser, By.ID, "deny")
        assert browser.find_element(By.ID, "result").text == "Device denied"
        time.sleep(1.1)
        denied = requests.post(server.url + "/oauth/token", data={"grant_type": GRANT, "device_code": started["device_code"]})
        assert denied.json()["error"] == "access_denied"


def test_the_page_refuses_forged_posts_and_cannot_be_framed():
    with running_server() as server:
        s = requests.Session()
        page = s.get(server.url + "/device")
        assert page.status_code == 200
        csp = page.headers["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in csp and "default-src 'none'" in csp and "script-src" not in csp
        assert page.headers["X-Frame-Options"] == "DENY" and page.headers["Cache-Control"] == "no-store"
        cookie = page.headers["Set-Cookie"]
        assert cookie.startswith("__Host-authd-device=") and "Secure" in cookie and "HttpOnly" in cookie
        assert "SameSite=Strict" in cookie and "Path=/" in cookie and "Domain" not in cookie
        csrf = page.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        origin = server.url
        form = {"csrf": csrf, "user_code": "BCDF-GHJK", "email": "a@example.com"}
        # Requests' cookie jar does not send a Secure cookie over http; send it by hand, as a browser on loopback would.
        jar = {"__Host-authd-device": s.cookies.get("__Host-authd-device")}
        assert requests.post(server.url + "/device/start", data=form, cookies=jar, headers={"Origin": origin}, allow_redirects=False).status_code == 400
        assert requests.post(server.url + "/device/start", data=form, cookies=jar, headers={"Origin": "https://evil.example"}).status_code == 403
        assert requests.post(server.url + "/device/start", data=form, cookies=jar).status_code == 403, "no Origin"
        assert requests.post(server.url + "/device/start", data={**form, "csrf": "forged"}, cookies=jar, headers={"Origin": origin}).status_code == 403
        assert requests.post(server.url + "/device/start", data=form, headers={"Origin": origin}).status_code == 403, "no page session"
        assert requests.post(server.url + "/device/approve", data={"csrf": csrf}, cookies=jar, headers={"Origin": origin}).status_code == 403, "not signed in"
