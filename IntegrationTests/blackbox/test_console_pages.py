"""The console's pages as #47 item 8 and contract §18 ("Console") ask, in headless Chromium: an
operator creates a user (refused for an address an account holds, the form kept); every option of
an app edited on its page, the issuer and discovery URL shown to copy; the page shown marked in the
navigation; the overview chart's legend, readable on a phone; audit rows naming the person by email,
linked, and dates picked with a date picker; a stale sign-in's "sign in again" coming back to the
page with the form as it was. axe on each page; screenshots at 375 and 1280 px (light and dark)
under output/pages/."""
import datetime
import json
import subprocess
import time

import pytest
from selenium.webdriver.common.by import By

from chromium import chromium
from test_console import BINARY, PROVIDERS, issuer, operator_with_passkey
from test_page_methods import fill, localhost
from test_pages import accessible, click, shots


@pytest.fixture
def browser():
    with chromium(1280, 900) as driver:
        yield driver


def client_settings(server, client_id):
    done = subprocess.run([BINARY, "clients", "show", "--json", "--data", server.folder, "--", client_id], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def marked(driver):
    """The navigation's marked links: label -> aria-current."""
    return {a.text: a.get_attribute("aria-current") for a in driver.find_elements(By.CSS_SELECTOR, "nav.console-nav a[aria-current]")}


def dark(driver, name):
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    shots(driver, name + "-dark")
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "light"}]})


def test_an_operator_creates_a_user_edits_every_app_option_and_reads_the_marked_pages_chart_and_audit(browser):
    with localhost(PROVIDERS, email={"resend_interval": 0}) as server:
        server.sign_in("ana@example.com")
        operator_with_passkey(browser, server, "root@example.com")
        base = issuer(server)

        # The overview: marked, and its chart has a legend; its text readable on a phone.
        assert marked(browser) == {"Overview": "page"}
        legend = [t.text for t in browser.find_elements(By.CSS_SELECTOR, "svg.chart .chart-legend text")]
        assert legend == ["Sign-ins", "Failed sign-ins"], legend
        assert any("signed in" in t.text for t in browser.find_elements(By.CSS_SELECTOR, "svg.chart text.chart-value"))
        browser.set_window_size(375, 900)
        sizes = [t.rect["height"] for t in browser.find_elements(By.CSS_SELECTOR, "svg.chart text")]
        browser.set_window_size(1280, 900)
        assert sizes and min(sizes) >= 11, f"the chart's text at 375 px: {sizes}"
        shots(browser, "console-overview-legend")
        dark(browser, "console-overview-legend")
        accessible(browser)

        # Create a user: its page next, with a notice; the operator's change audited.
        browser.get(base + "/admin/users")
        assert marked(browser) == {"Users": "page"}
        fill(browser, "new-email", "nia@example.com")
        fill(browser, "new-name", "Nia Nowak")
        fill(browser, "new-groups", "family, photos")
        browser.find_element(By.CSS_SELECTOR, "input[name='email_verified']").click()
        click(browser, "form[action='/admin/users/new'] button")
        assert "nia@example.com" in browser.find_element(By.TAG_NAME, "h1").text
        assert "Created the account nia@example.com" in browser.find_element(By.ID, "page-notice").text
        assert "(verified)" in browser.page_source and browser.find_element(By.ID, "groups").get_attribute("value") == "family, photos"
        assert marked(browser) == {"Users": "true"}
        nia_page = browser.current_url
        shots(browser, "console-user-created")
        accessible(browser)
        # The person signs in with a mailed code to that account.
        nia = server.sign_in("nia@example.com")
        assert nia["user"]["id"] in nia_page

        # The same address again: refused, said why, the form as typed.
        browser.get(base + "/admin/users")
        fill(browser, "new-email", "NIA@example.com")
        fill(browser, "new-name", "Someone Else")
        click(browser, "form[action='/admin/users/new'] button")
        assert "exists already" in browser.find_element(By.ID, "page-error").text
        assert browser.find_element(By.ID, "new-name").get_attribute("value") == "Someone Else"
        shots(browser, "console-users-create-refused")
        accessible(browser)

        # Apps: the issuer and discovery URL to copy.
        browser.get(base + "/admin/clients")
        assert marked(browser) == {"Apps": "page"}
        issuer_field = browser.find_element(By.ID, "clients-issuer")
        assert issuer_field.get_attribute("value") == base and issuer_field.get_attribute("readonly")
        assert browser.find_element(By.ID, "clients-discovery").get_attribute("value") == base + "/.well-known/openid-configuration"
        fill(browser, "client-name", "Gitea")
        fill(browser, "client-redirects", "https://git.example.com/user/oauth2/authd/callback")
        click(browser, "form[action='/admin/clients'] button")
        client_id = browser.find_element(By.ID, "created-client-id").text
        browser.get(base + "/admin/clients/" + client_id)
        assert marked(browser) == {"Apps": "true"}
        assert browser.find_element(By.ID, "client-discovery").get_attribute("value") == base + "/.well-known/openid-configuration"

        # Every option, edited and saved.
        fill(browser, "client-name", "Gitea (family)")
        fill(browser, "client-redirects", "https://git.example.com/user/oauth2/authd/callback\nhttps://git2.example.com/cb")
        fill(browser, "client-logout-redirects", "https://git.example.com/")
        fill(browser, "client-claims", "plan")
        fill(browser, "client-groups", "family")
        fill(browser, "client-logo", "https://git.example.com/logo.svg")
        browser.find_element(By.CSS_SELECTOR, "#client-alg option[value='EdDSA']").click()
        for box in ["first_party", "pkce_optional", "allow_pin", "unverified_email"]:
            browser.find_element(By.CSS_SELECTOR, f"input[name='{box}']").click()
        click(browser, f"form[action='/admin/clients/{client_id}/edit'] button")
        assert "Saved" in browser.find_element(By.ID, "page-notice").text
        saved = client_settings(server, client_id)
        assert saved["name"] == "Gitea (family)" and saved["redirect_uris"] == ["https://git.example.com/user/oauth2/authd/callback", "https://git2.example.com/cb"]
        assert saved["post_logout_redirect_uris"] == ["https://git.example.com/"] and saved["claims"] == ["plan"] and saved["allowed_groups"] == ["family"]
        assert saved["first_party"] and saved["pkce_optional"] and saved["allow_pin"] and saved["unverified_email"] and saved["id_token_alg"] == "EdDSA", saved
        assert saved.get("logo_uri") == "https://git.example.com/logo.svg", saved
        assert browser.find_element(By.CSS_SELECTOR, "input[name='allow_pin']").is_selected()
        shots(browser, "console-client-options")
        dark(browser, "console-client-options")
        accessible(browser)
        # Unticked, saved as off; a bad claim refused with the form as sent.
        browser.find_element(By.CSS_SELECTOR, "input[name='allow_pin']").click()
        fill(browser, "client-claims", "email")
        click(browser, f"form[action='/admin/clients/{client_id}/edit'] button")
        assert "registered or standard claim" in browser.find_element(By.ID, "page-error").text
        assert browser.find_element(By.ID, "client-claims").get_attribute("value") == "email"
        assert not browser.find_element(By.CSS_SELECTOR, "input[name='allow_pin']").is_selected()
        assert client_settings(server, client_id)["allow_pin"], "nothing saved"
        fill(browser, "client-claims", "plan")
        click(browser, f"form[action='/admin/clients/{client_id}/edit'] button")
        assert client_settings(server, client_id)["allow_pin"] is False

        # The audit log: the person by email, linked; dates picked.
        browser.get(base + "/admin/audit?event=admin_console")
        assert marked(browser) == {"Audit log": "page"}
        link = browser.find_element(By.CSS_SELECTOR, f"tbody a[href='/admin/users/{nia['user']['id']}']")
        assert link.text == "nia@example.com"
        assert "by root@example.com" in link.find_element(By.XPATH, "..").text
        since = browser.find_element(By.ID, "audit-since")
        assert since.get_attribute("type") == "date" and browser.find_element(By.ID, "audit-until").get_attribute("type") == "date"
        today = datetime.datetime.now(datetime.timezone.utc).date()
        browser.execute_script("arguments[0].value = arguments[1]", since, today.isoformat())
        browser.execute_script("document.getElementById('audit-until').value = arguments[0]", today.isoformat())
        click(browser, "form.filters button")
        assert f"since={today.isoformat()}" in browser.current_url
        assert browser.find_elements(By.CSS_SELECTOR, "tbody tr"), "today's events, the whole day included"
        assert browser.find_element(By.ID, "audit-since").get_attribute("value") == today.isoformat()
        shots(browser, "console-audit-people")
        dark(browser, "console-audit-people")
        accessible(browser)
        yesterday = (today - datetime.timedelta(days=1)).isoformat()
        browser.get(base + f"/admin/audit?until={yesterday}")
        assert not browser.find_elements(By.CSS_SELECTOR, "tbody tr")
        # A deleted account: its id, said to be gone.
        deleted = subprocess.run([BINARY, "users", "delete", "nia@example.com", "--data", server.folder], capture_output=True, text=True)
        assert deleted.returncode == 0, deleted.stderr
        browser.get(base + "/admin/audit?event=admin_console")
        assert not browser.find_elements(By.CSS_SELECTOR, f"tbody a[href='/admin/users/{nia['user']['id']}']")
        assert nia["user"]["id"] + " (account deleted)" in browser.page_source


def test_a_stale_sign_in_comes_back_to_the_page_with_the_form_as_it_was(browser):
    with localhost(PROVIDERS, email={"resend_interval": 0}, auth={"fresh_auth": 4}) as server:
        operator_with_passkey(browser, server, "root@example.com")
        base = issuer(server)
        made = subprocess.run([BINARY, "clients", "create", "Grafana", "--redirect-uri", "https://grafana.example.com/cb", "--data", server.folder],
                              capture_output=True, text=True)
        client_id = json.loads(made.stdout)["client_id"]
        browser.get(base + "/admin/clients/" + client_id)
        fill(browser, "client-claims", "plan, seats")
        fill(browser, "client-groups", "family")
        browser.find_element(By.CSS_SELECTOR, "input[name='allow_pin']").click()
        time.sleep(4.5)
        click(browser, f"form[action='/admin/clients/{client_id}/edit'] button")
        assert "Sign in again" in browser.find_element(By.TAG_NAME, "h1").text
        assert "with the form as you left it" in browser.page_source
        shots(browser, "console-reauth-kept")
        accessible(browser)
        click(browser, "form[action='/admin/reauth'] button")
        click(browser, "form[action='/login/passkey/begin'] button")
        assert browser.current_url == base + "/admin/clients/" + client_id, browser.current_url
        assert "as you left it" in browser.find_element(By.ID, "draft-notice").text
        assert browser.find_element(By.ID, "client-claims").get_attribute("value") == "plan, seats"
        assert browser.find_element(By.ID, "client-groups").get_attribute("value") == "family"
        assert browser.find_element(By.CSS_SELECTOR, "input[name='allow_pin']").is_selected()
        assert client_settings(server, client_id)["claims"] == [], "not saved before it is sent again"
        shots(browser, "console-draft-refilled")
        accessible(browser)
        click(browser, f"form[action='/admin/clients/{client_id}/edit'] button")
        assert client_settings(server, client_id)["claims"] == ["plan", "seats"]
        # Refilled once: the next visit shows what is saved, without the notice.
        browser.get(base + "/admin/clients/" + client_id)
        assert not browser.find_elements(By.ID, "draft-notice")
        # The cookie holds no CSRF token and is not readable as text.
        time.sleep(4.5)
        fill(browser, "client-claims", "plan")
        click(browser, f"form[action='/admin/clients/{client_id}/edit'] button")
        draft = [c for c in browser.get_cookies() if c["name"] == "__Host-authd-console-draft"]
        assert draft and "plan" not in draft[0]["value"] and draft[0]["httpOnly"]
