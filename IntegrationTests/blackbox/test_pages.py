"""authd's own pages (contract §13) in a real browser and over plain HTTP: /login with a mailed code
read from the mail as a person reads it, /account, sign-out; the cookie, CSRF, Origin, header and
return_to rules; an accessibility check of each page (axe-core, nothing serious or critical).
Screenshots at 375 and 1280 px are kept under IntegrationTests/blackbox/output/pages/."""
import os
import re
import time
import urllib.parse

import pyotp
import pytest
import requests
from axe_selenium_python import Axe
from selenium.webdriver.common.by import By

from chromium import chromium, click as clicked
from conftest import running_server
from mailtext import check_filled, code_in, links_in

OUTPUT = os.path.join(os.path.dirname(__file__), "output", "pages")
# Pages are served on the issuer's host only: the default issuer, http://127.0.0.1:PORT, is where the tests go.
PAGES = {"issuer": None}


@pytest.fixture
def browser():
    with chromium(375, 900) as driver:
        yield driver


def click(driver, selector):
    """Clicks the element `selector` names and waits until the next page has replaced this one."""
    clicked(driver, By.CSS_SELECTOR, selector)


def shots(driver, name):
    """The page at a phone's width and a laptop's."""
    os.makedirs(OUTPUT, exist_ok=True)
    for width in (375, 1280):
        driver.set_window_size(width, 900)
        driver.save_screenshot(os.path.join(OUTPUT, f"{name}-{width}.png"))
    driver.set_window_size(375, 900)


def accessible(driver):
    """axe-core finds nothing serious or critical on the page. The axe bundled with
    axe-selenium-python (3.1) predates the HTML standard's `autocomplete="one-time-code"` and calls
    it malformed: that one finding, on such fields only, is set aside."""
    axe = Axe(driver)
    axe.inject()
    results = axe.run()
    bad = []
    for v in results["violations"]:
        if v.get("impact") not in ("serious", "critical"):
            continue
        nodes = [n for n in v["nodes"] if not (v["id"] == "autocomplete-valid" and 'autocomplete="one-time-code"' in n.get("html", ""))]
        if nodes:
            bad.append({**v, "nodes": nodes})
    assert bad == [], axe.report(bad)


def test_a_person_signs_in_with_a_mailed_code_sees_their_account_and_signs_out(browser):
    with running_server(PAGES) as server:
        browser.get(server.url + "/login?return_to=/account")
        assert browser.find_element(By.TAG_NAME, "h1").text == "Sign in"
        accessible(browser)
        shots(browser, "1-login")
        browser.find_element(By.ID, "email-address").send_keys("anna@example.com")
        click(browser, "button[formaction='/login/email/send']")

        assert "We sent a code to anna@example.com" in browser.find_element(By.TAG_NAME, "main").text
        accessible(browser)
        browser.find_element(By.ID, "email-code").send_keys("000000")
        click(browser, "form[action='/login/email/verify'] button")
        error = browser.find_element(By.ID, "page-error")
        assert error.get_attribute("role") == "alert" and "code" in error.text.lower()
        shots(browser, "2-wrong-code")

        mail = server.mailed("anna@example.com", about="sign-in code")
        browser.find_element(By.ID, "email-code").send_keys(code_in(mail))
        click(browser, "form[action='/login/email/verify'] button")

        assert urllib.parse.urlparse(browser.current_url).path == "/account"
        main = browser.find_element(By.TAG_NAME, "main").text
        assert "Signed in as anna@example.com" in main and "this browser" in main
        accessible(browser)
        shots(browser, "3-account")
        cookies = {c["name"]: c for c in browser.get_cookies()}
        session = cookies["__Host-authd"]
        assert session["httpOnly"] and session["secure"] and session["sameSite"] == "Lax" and session["path"] == "/"
        assert "__Host-authd-signin" not in cookies, "nothing from before the sign-in survives it"
        # The cookie is a browser's session: never exchanged for tokens.
        refreshed = requests.post(server.url + "/api/v1/auth/refresh", json={"refresh_token": session["value"]})
        assert refreshed.status_code == 401

        # An app signed in as the same person lists the browser among the sessions.
        app = server.sign_in("anna@example.com")
        listed = requests.get(server.url + "/api/v1/auth/sessions", headers={"Authorization": "Bearer " + app["access_token"]}).json()
        assert "browser" in [s["kind"] for s in listed["sessions"]]

        click(browser, "footer button")
        assert urllib.parse.urlparse(browser.current_url).path == "/login"
        browser.get(server.url + "/account")
        assert urllib.parse.urlparse(browser.current_url).path == "/login", "signed out: the account page asks to sign in"


class Browserish(requests.Session):
    """A requests session that keeps cookies as a browser does for one site: it sends the pages'
    `Secure` cookies over loopback http (requests keeps them for https only), whatever the `Host`
    header says, and forgets one set with `Max-Age=0`."""

    def __init__(self):
        super().__init__()
        self.kept = {}

    def send(self, request, **kwargs):
        if self.kept:
            request.headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in sorted(self.kept.items()))
        response = super().send(request, **kwargs)
        for line in response.raw.headers.getlist("Set-Cookie") if response.raw is not None else []:
            parts = [p.strip() for p in line.split(";")]
            name, _, value = parts[0].partition("=")
            if value == "" or any(p.lower() == "max-age=0" for p in parts[1:]):
                self.kept.pop(name, None)
            else:
                self.kept[name] = value
        return response

    @property
    def cookie_names(self):
        return set(self.kept)


def login_form(session, url):
    """GET /login and the CSRF token of its form."""
    page = session.get(url + "/login")
    assert page.status_code == 200
    return re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)


def test_every_post_needs_the_issuers_origin_and_the_forms_csrf_token():
    with running_server(PAGES) as server:
        s = Browserish()
        csrf = login_form(s, server.url)
        origin = {"Origin": server.url}
        foreign = s.post(server.url + "/login/email/send", data={"csrf": csrf, "email": "a@example.com"}, headers={"Origin": "https://evil.example"})
        assert foreign.status_code == 403
        missing = s.post(server.url + "/login/email/send", data={"csrf": csrf, "email": "a@example.com"})
        assert missing.status_code == 403
        wrong = s.post(server.url + "/login/email/send", data={"csrf": "x" + csrf, "email": "a@example.com"}, headers=origin)
        assert wrong.status_code == 403
        stranger = requests.post(server.url + "/login/email/send", data={"csrf": csrf, "email": "a@example.com"}, headers=origin)
        assert stranger.status_code == 400, "without the sign-in's cookie the token means nothing"
        assert server.mails(to="a@example.com") == []
        ok = s.post(server.url + "/login/email/send", data={"csrf": csrf, "email": "a@example.com"}, headers=origin)
        assert ok.status_code == 200 and "We sent a code" in ok.text
        assert len(server.mails(to="a@example.com")) == 1


def test_pages_keep_out_of_frames_and_escape_what_people_type():
    with running_server(PAGES) as server:
        page = requests.get(server.url + "/login")
        csp = page.headers["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in csp and "default-src 'self'" in csp
        assert page.headers["X-Frame-Options"] == "DENY" and page.headers["Cache-Control"] == "no-store"
        s = Browserish()
        csrf = login_form(s, server.url)
        typed = '"><script>alert(1)</script>'
        echoed = s.post(server.url + "/login/email/send", data={"csrf": csrf, "email": typed}, headers={"Origin": server.url})
        assert echoed.status_code == 400
        assert "<script>alert(1)</script>" not in echoed.text and "&lt;script&gt;" in echoed.text


@pytest.mark.parametrize("asked, landed", [
    ("/account", "/account"),
    ("/account?tab=sessions", "/account?tab=sessions"),
    ("//evil.example/x", "/"),
    ("/\\evil.example", "/"),
    ("/%2Fevil.example", "/"),
    ("https://evil.example/", "/"),
    ("/ok%0d%0aSet-Cookie:x=1", "/ok%0d%0aSet-Cookie:x=1"),
])
def test_return_to_stays_on_the_issuer(asked, landed):
    with running_server(PAGES) as server:
        s = Browserish()
        page = s.get(server.url + "/login", params={"return_to": asked})
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        origin = {"Origin": server.url}
        s.post(server.url + "/login/email/send", data={"csrf": csrf, "email": "bo@example.com"}, headers=origin)
        code = server.mailed_code("bo@example.com")
        done = s.post(server.url + "/login/email/verify", data={"csrf": csrf, "code": code}, headers=origin, allow_redirects=False)
        assert done.status_code == 303
        assert done.headers["Location"] == landed
        if landed == "/":
            home = s.get(server.url + "/", allow_redirects=False)
            assert home.status_code == 302 and home.headers["Location"] == "/account", "/ is the account page"


def test_a_page_asked_by_another_host_name_moves_to_the_issuers():
    with running_server(PAGES) as server:
        port = urllib.parse.urlparse(server.url).port
        moved = requests.get(f"http://localhost:{port}/login?return_to=/account", allow_redirects=False)
        assert moved.status_code == 307
        assert moved.headers["Location"] == server.url + "/login?return_to=/account"


def register_password(server, email, password):
    status, body, _ = server.call("POST", "/api/v1/auth/password/register", {"email": email, "password": password})
    assert status == 202, body
    status, session, _ = server.call("POST", "/api/v1/auth/password/verify-email", {"email": email, "code": server.mailed_code(email), "password": password})
    assert status == 200, session
    return session


def test_a_password_signs_in_on_the_page_and_a_password_change_ends_that_browser(browser):
    with running_server(PAGES) as server:
        app = register_password(server, "cleo@example.com", "correct horse battery")
        browser.get(server.url + "/login")
        browser.find_element(By.ID, "email-address").send_keys("cleo@example.com")
        browser.find_element(By.ID, "password-password").send_keys("wrong horse battery")
        click(browser, "button[formaction='/login/password/login']")
        error = browser.find_element(By.ID, "page-error")
        assert error.get_attribute("role") == "alert" and "credentials" in error.text.lower()
        # What the person typed stays, but never the password.
        assert browser.find_element(By.ID, "email-address").get_attribute("value") == "cleo@example.com"
        assert browser.find_element(By.ID, "password-password").get_attribute("value") == ""
        accessible(browser)
        shots(browser, "4-wrong-password")
        browser.find_element(By.ID, "password-password").send_keys("correct horse battery")
        click(browser, "button[formaction='/login/password/login']")
        assert urllib.parse.urlparse(browser.current_url).path == "/account"
        assert "Signed in as cleo@example.com" in browser.find_element(By.TAG_NAME, "main").text

        # Recovery reaches everything (contract §12): a password change elsewhere ends this browser's session.
        status, body, _ = server.call("POST", "/api/v1/auth/password/change",
                                      {"current_password": "correct horse battery", "new_password": "a brand new battery"}, token=app["access_token"])
        assert status in (200, 204), body
        browser.get(server.url + "/account")
        assert urllib.parse.urlparse(browser.current_url).path == "/login"


def test_an_authenticator_app_is_asked_after_the_password_and_a_wrong_code_is_counted(browser):
    with running_server({**PAGES, "providers": ["email", "password", "totp"]}) as server:
        app = register_password(server, "dora@example.com", "correct horse battery")
        enrolment = server.call("POST", "/api/v1/auth/mfa/totp/enroll", token=app["access_token"])[1]
        otp = pyotp.parse_uri(enrolment["otpauth_uri"])
        assert server.call("POST", "/api/v1/auth/mfa/totp/confirm", {"code": otp.now()}, token=app["access_token"])[0] == 200

        browser.get(server.url + "/login?return_to=/account")
        browser.find_element(By.ID, "email-address").send_keys("dora@example.com")
        browser.find_element(By.ID, "password-password").send_keys("correct horse battery")
        click(browser, "button[formaction='/login/password/login']")
        assert browser.find_element(By.TAG_NAME, "h1").text == "Second step"
        accessible(browser)
        shots(browser, "5-second-factor")
        wrong = "000000" if "000000" not in (otp.now(), otp.at(time.time() + 30)) else "111111"
        browser.find_element(By.ID, "factor-totp").send_keys(wrong)
        click(browser, "#factor-totp + button")
        assert "tries left" in browser.find_element(By.ID, "page-error").text
        # The code of the next 30 s (accepted within the clock skew): the current one confirmed the app,
        # and a code is accepted once.
        browser.find_element(By.ID, "factor-totp").send_keys(otp.at(time.time() + 30))
        click(browser, "#factor-totp + button")
        assert urllib.parse.urlparse(browser.current_url).path == "/account", browser.find_element(By.TAG_NAME, "main").text
        # The browser's session carries both factors.
        app_view = server.call("GET", "/api/v1/auth/sessions", token=app["access_token"])[1]
        assert any(s["kind"] == "browser" for s in app_view["sessions"])
        assert server.call("GET", "/api/v1/auth/mfa", token=app["access_token"])[0] == 200


def test_not_you_on_a_new_authenticator_app_removes_it_and_signs_out_everywhere(browser):
    with running_server({**PAGES, "providers": ["email", "password", "totp"]}) as server:
        app = register_password(server, "eve@example.com", "correct horse battery")
        enrolment = server.call("POST", "/api/v1/auth/mfa/totp/enroll", token=app["access_token"])[1]
        otp = pyotp.parse_uri(enrolment["otpauth_uri"])
        assert server.call("POST", "/api/v1/auth/mfa/totp/confirm", {"code": otp.now()}, token=app["access_token"])[0] == 200
        other = server.call("POST", "/api/v1/auth/password/login", {"email": "eve@example.com", "password": "correct horse battery"})[1]
        assert other.get("status") == "second_factor_required", other

        notice = server.mailed("eve@example.com", about="new way to sign in")
        check_filled(notice)
        link = next(l for l in links_in(notice) if "/not-me?token=" in l)
        assert link.startswith(server.url + "/not-me?token=")

        # Opening the link changes nothing (mail scanners open every link).
        browser.get(link)
        assert browser.find_element(By.TAG_NAME, "h1").text == "Not you?"
        assert "an authenticator app" in browser.find_element(By.TAG_NAME, "main").text.lower()
        accessible(browser)
        shots(browser, "6-not-me")
        assert server.call("GET", "/api/v1/auth/me", token=app["access_token"])[0] == 200
        # A post from elsewhere changes nothing either.
        token = urllib.parse.parse_qs(urllib.parse.urlparse(link).query)["token"][0]
        assert requests.post(server.url + "/not-me", data={"token": token}, headers={"Origin": "https://evil.example"}).status_code == 403

        click(browser, "form[action='/not-me'] button")
        assert browser.find_element(By.TAG_NAME, "h1").text == "Done"
        assert "reset it now" in browser.find_element(By.TAG_NAME, "main").text
        shots(browser, "7-not-me-done")
        # Every session ended; the app is gone: the password alone signs in again.
        assert server.call("GET", "/api/v1/auth/me", token=app["access_token"])[0] == 401
        again = server.call("POST", "/api/v1/auth/password/login", {"email": "eve@example.com", "password": "correct horse battery"})[1]
        assert "access_token" in again, again
        done = server.mailed("eve@example.com", about="We removed")
        check_filled(done)
        assert "signed out every device" in done["text"]
        # The link works once.
        browser.get(link)
        assert "used or has expired" in browser.find_element(By.TAG_NAME, "main").text
        assert requests.post(server.url + "/not-me", data={"token": token}, headers={"Origin": server.url}).status_code == 404


def test_not_you_on_a_new_api_key_revokes_it():
    with running_server(PAGES) as server:
        session = server.sign_in("finn@example.com")
        status, key, _ = server.call("POST", "/api/v1/auth/api-keys", {"name": "Photo frame"}, token=session["access_token"])
        assert status == 201, key
        notice = server.mailed("finn@example.com", about="new way to sign in")
        link = next(l for l in links_in(notice) if "/not-me?token=" in l)
        token = urllib.parse.parse_qs(urllib.parse.urlparse(link).query)["token"][0]
        assert requests.post(server.url + "/not-me", data={"token": token}, headers={"Origin": server.url}).status_code == 200
        exchanged = requests.post(server.url + "/api/v1/auth/api-keys/exchange", json={"api_key": key["api_key"]})
        assert exchanged.status_code == 401 and exchanged.json()["error"]["code"] == "INVALID_API_KEY"
