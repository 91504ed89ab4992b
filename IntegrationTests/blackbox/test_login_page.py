"""/login as contract §18 asks, in Chromium: "Sign in to APP" with its logo when an app sent the
person; the address asked once, with a button per way in that takes it (code, password, approval);
a passkey in one click, with a way back; "Use another address"; an error keeps the address (never
the password) and every way in; a refused sign-up keeps its fields; the verify steps can send a
new code, and say when it is too soon. Screenshots at 375 and 1280 px, light and dark, are kept
under IntegrationTests/blackbox/output/login/."""
import os
import urllib.parse

import requests
from selenium.webdriver.common.by import By

from chromium import chromium, click as clicked
from test_openid_browser import APP, register
from test_page_methods import account_with_passkey, add_authenticator, fill, localhost, on_account, open_details
from test_pages import PAGES, accessible, register_password
from conftest import running_server

OUTPUT = os.path.join(os.path.dirname(__file__), "output", "login")
METHODS = ["email", "password", "approval", "passkey"]
# A 1 × 1 PNG.
LOGO = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def click(driver, selector):
    clicked(driver, By.CSS_SELECTOR, selector)


def shots(driver, name):
    """The page at 375 and 1280 px, light and dark."""
    os.makedirs(OUTPUT, exist_ok=True)
    for scheme in ("light", "dark"):
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
        for width in (375, 1280):
            driver.set_window_size(width, 900)
            driver.save_screenshot(os.path.join(OUTPUT, f"{name}-{width}-{scheme}.png"))
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    driver.set_window_size(375, 900)


def visible(driver, selector):
    return [e for e in driver.find_elements(By.CSS_SELECTOR, selector) if e.is_displayed()]


def ways_in(driver):
    """The address form's buttons' targets and the passkey button."""
    buttons = [b.get_attribute("formaction") for b in driver.find_elements(By.CSS_SELECTOR, "#email-form button")]
    return [urllib.parse.urlparse(b).path for b in buttons], bool(driver.find_elements(By.CSS_SELECTOR, "form[action='/login/passkey/begin'] button"))


def test_an_app_is_named_with_its_logo_and_the_address_is_asked_once():
    with localhost(METHODS) as server, chromium(375, 900) as browser:
        client = register(server, "--logo-uri", LOGO)
        query = {"response_type": "code", "client_id": client["client_id"], "redirect_uri": APP, "scope": "openid", "state": "s",
                 "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "code_challenge_method": "S256"}
        browser.get(server.url + "/oauth/authorize?" + urllib.parse.urlencode(query))
        assert urllib.parse.urlparse(browser.current_url).path == "/login"
        assert browser.find_element(By.TAG_NAME, "h1").text == "Sign in to Grafana"
        logo = browser.find_element(By.CSS_SELECTOR, ".app-logo img")
        assert logo.get_attribute("src") == LOGO and logo.get_attribute("alt") == ""
        assert browser.execute_script("return arguments[0].naturalWidth", logo) == 1, "the CSP lets the logo load"
        # One address field, one form: a button per way in that takes it; the password field beside them.
        assert len(visible(browser, "input[name=email]")) == 1
        assert ways_in(browser) == (["/login/password/login", "/login/email/send", "/login/approval/start"], True)
        assert browser.find_element(By.ID, "password-password").get_attribute("autocomplete") == "current-password"
        accessible(browser)
        shots(browser, "app")
        # Without an app, the page says "Sign in"; an https logo is allowed by the page's CSP.
        browser.get(server.url + "/login")
        assert browser.find_element(By.TAG_NAME, "h1").text == "Sign in"
        assert not browser.find_elements(By.CSS_SELECTOR, ".app-logo")
        shots(browser, "plain")


def test_the_logo_is_checked_and_an_https_one_is_allowed_by_the_pages_policy():
    with running_server({**PAGES, "providers": ["email"]}) as server:
        import subprocess
        from test_openid_provider import BINARY
        for bad in ["http://example.com/logo.png", "data:text/html;base64,PGI+", "data:image/png,abc", "https://" + "a" * 2050 + ".example/x.png",
                    "data:image/png;base64," + "A" * 70000, "javascript:alert(1)"]:
            out = subprocess.run([BINARY, "clients", "create", "App", "--redirect-uri", APP, "--logo-uri", bad, "--data", server.folder],
                                 capture_output=True, text=True)
            assert out.returncode != 0 and "logo" in out.stderr.lower(), (bad[:40], out.stderr)
        client = register(server, "--logo-uri", "https://cdn.example.com/grafana.svg")
        query = {"response_type": "code", "client_id": client["client_id"], "redirect_uri": APP, "scope": "openid", "state": "s",
                 "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "code_challenge_method": "S256"}
        s = requests.Session()
        page = s.get(server.url + "/oauth/authorize?" + urllib.parse.urlencode(query))
        assert "Sign in to Grafana" in page.text and 'src="https://cdn.example.com/grafana.svg"' in page.text
        assert "img-src 'self' data: https://cdn.example.com;" in page.headers["Content-Security-Policy"]
        assert "img-src 'self' data:;" in requests.get(server.url + "/login").headers["Content-Security-Policy"]
        # The admin view shows it, and "" removes it.
        shown = subprocess.run([BINARY, "clients", "show", client["client_id"], "--data", server.folder], capture_output=True, text=True).stdout
        assert "logo_uri: https://cdn.example.com/grafana.svg" in shown
        subprocess.run([BINARY, "clients", "update", client["client_id"], "--logo-uri", "", "--data", server.folder], check=True, capture_output=True)
        assert "logo_uri" not in subprocess.run([BINARY, "clients", "show", client["client_id"], "--data", server.folder], capture_output=True, text=True).stdout


def test_an_error_keeps_the_address_but_not_the_password_and_every_way_in():
    with localhost(METHODS) as server, chromium(375, 900) as browser:
        register_password(server, "eve@example.com", "correct horse battery")
        browser.get(server.url + "/login")
        before = ways_in(browser)
        fill(browser, "email-address", "eve@example.com")
        fill(browser, "password-password", "the wrong one")
        click(browser, "button[formaction='/login/password/login']")
        assert browser.find_element(By.ID, "page-error").text
        assert browser.find_element(By.ID, "email-address").get_attribute("value") == "eve@example.com"
        assert browser.find_element(By.ID, "password-password").get_attribute("value") == ""
        assert "the wrong one" not in browser.page_source
        assert ways_in(browser) == before
        accessible(browser)
        shots(browser, "error")
        # "Use another address" empties the field and puts the cursor there.
        click(browser, "form[action='/login/restart'] button")
        assert browser.find_element(By.ID, "email-address").get_attribute("value") == ""
        assert browser.switch_to.active_element.get_attribute("id") == "email-address"
        # A bad address for a code: the same.
        fill(browser, "email-address", "not-an-address")
        browser.execute_script("document.getElementById('email-form').noValidate = true")
        click(browser, "button[formaction='/login/email/send']")
        assert browser.find_element(By.ID, "page-error").text
        assert browser.find_element(By.ID, "email-address").get_attribute("value") == "not-an-address"
        assert ways_in(browser) == before


def test_the_password_may_come_in_a_second_step_with_a_way_back():
    with localhost(METHODS) as server, chromium(375, 900) as browser:
        register_password(server, "eve@example.com", "correct horse battery")
        browser.get(server.url + "/login")
        fill(browser, "email-address", "eve@example.com")
        click(browser, "button[formaction='/login/password/login']")  # no password typed: it is asked next
        assert "eve@example.com" in browser.find_element(By.TAG_NAME, "main").text
        accessible(browser)
        shots(browser, "password-step")
        click(browser, "form[action='/login/restart']:not(:has(input[name=forget])) button")
        assert browser.find_element(By.ID, "email-address").get_attribute("value") == "eve@example.com", "another way keeps the address"
        click(browser, "button[formaction='/login/password/login']")
        fill(browser, "password-password", "correct horse battery")
        click(browser, "form[action='/login/password/login'] button")
        assert on_account(browser)


def test_a_code_step_sends_a_new_code_says_when_too_soon_and_offers_another_address():
    with localhost(METHODS) as server, chromium(375, 900) as browser:
        browser.get(server.url + "/login")
        fill(browser, "email-address", "bo@example.com")
        click(browser, "button[formaction='/login/email/send']")
        assert "bo@example.com" in browser.page_source
        click(browser, "form[action='/login/email/send'] button")
        error = browser.find_element(By.ID, "page-error").text
        assert "moment ago" in error and "You can ask for another in" in error, error
        assert browser.find_elements(By.ID, "email-code"), "the code step stays"
        accessible(browser)
        shots(browser, "code-too-soon")
        click(browser, "form[action='/login/restart']:has(input[name=forget]) button")
        assert browser.find_element(By.ID, "email-address").get_attribute("value") == ""
    with localhost(METHODS, email={"resend_interval": 0}) as server, chromium(375, 900) as browser:
        browser.get(server.url + "/login")
        fill(browser, "email-address", "bo@example.com")
        click(browser, "button[formaction='/login/email/send']")
        click(browser, "form[action='/login/email/send'] button")
        assert "We sent a new code to bo@example.com." in browser.find_element(By.ID, "page-notice").text
        assert len(server.mails("bo@example.com")) == 2


def test_a_refused_sign_up_keeps_its_fields_and_its_verify_step_resends():
    with running_server({**PAGES, "providers": ["email", "password"], "password": {"resend_interval": 0}}) as server, chromium(375, 900) as browser:
        browser.get(server.url + "/login")
        open_details(browser, "Create an account")
        fill(browser, "register-email", "nora@example.com")
        fill(browser, "register-name", "Nora")
        fill(browser, "register-password", "password1")
        click(browser, "form[action='/login/password/register'] button")
        assert browser.find_element(By.ID, "page-error").text
        assert browser.find_element(By.ID, "register-email").get_attribute("value") == "nora@example.com"
        assert browser.find_element(By.ID, "register-name").get_attribute("value") == "Nora"
        assert browser.find_element(By.ID, "register-password").get_attribute("value") == ""
        assert browser.find_element(By.ID, "register-password").is_displayed(), "sign-up stays open"
        assert browser.find_elements(By.CSS_SELECTOR, "button[formaction='/login/email/send']"), "the other ways stay"
        accessible(browser)
        shots(browser, "signup-refused")
        fill(browser, "register-password", "a long enough secret")
        click(browser, "form[action='/login/password/register'] button")
        click(browser, "form[action='/login/password/resend'] button")
        assert "We sent a new code" in browser.find_element(By.ID, "page-notice").text
        accessible(browser)
        shots(browser, "verify-resent")
        import time
        deadline = time.time() + 10
        while len(server.mails("nora@example.com")) < 2 and time.time() < deadline:
            time.sleep(0.2)
        assert len(server.mails("nora@example.com")) == 2
    with running_server({**PAGES, "providers": ["email", "password"]}) as server, chromium(375, 900) as browser:
        browser.get(server.url + "/login")
        open_details(browser, "Create an account")
        fill(browser, "register-email", "nora@example.com")
        fill(browser, "register-password", "a long enough secret")
        click(browser, "form[action='/login/password/register'] button")
        click(browser, "form[action='/login/password/resend'] button")
        assert "You can ask for another in" in browser.find_element(By.ID, "page-error").text
        assert browser.find_elements(By.ID, "password-code")


def test_a_passkey_signs_in_in_one_click_and_its_page_without_javascript_has_a_way_back():
    with localhost(METHODS, email={"resend_interval": 0}) as server:
        with chromium(375, 900) as browser:
            account_with_passkey(browser, server, "kai@example.com")
            browser.get(server.url + "/login")
            click(browser, "form[action='/login/passkey/begin'] button")
            assert on_account(browser), "one click: the ceremony starts at once"
        with chromium(375, 900, javascript=False) as browser:
            browser.get(server.url + "/login")
            click(browser, "form[action='/login/passkey/begin'] button")
            assert browser.find_element(By.ID, "passkey-button")
            shots(browser, "passkey-no-script")
            click(browser, "form[action='/login/restart'] button")
            assert urllib.parse.urlparse(browser.current_url).path.startswith("/login")
            assert ways_in(browser) == (["/login/password/login", "/login/email/send", "/login/approval/start"], True), "back to every way in"
