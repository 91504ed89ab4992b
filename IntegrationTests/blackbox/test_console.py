"""The operator's console (contract §14) in headless Chromium: the first operator comes in by the
invite link and a passkey (Chrome's virtual authenticator), a TOTP operator with pyotp; an operator
finds a user, edits app_metadata (a token refreshed afterwards carries it, checked by joserfc),
disables and enables the account, deletes it after a typed confirmation; and the refusals: a user
without the role, a sign-in without a passkey or TOTP, a Bearer token, a stale sign-in, a missing
CSRF token, a foreign Origin. axe on each page; screenshots at 375 and 1280 px under output/pages/."""
import base64
import json
import os
import re
import subprocess
import time

import pyotp
import pytest
import requests
from joserfc import jwt
from joserfc.jwk import KeySet
from selenium.webdriver.common.by import By

from chromium import chromium
from test_page_methods import add_authenticator, fill, localhost, on_account, sign_in_with_email
from test_pages import Browserish, accessible, click, shots

BINARY = os.environ.get("AUTHD_BINARY", ".build/debug/authd")
PROVIDERS = ["email", "passkey", "totp"]


@pytest.fixture
def browser():
    with chromium(1280, 900) as driver:
        yield driver


def authd(server, *args):
    done = subprocess.run([BINARY, *args, "--data", server.folder], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def invite(server, email):
    link = re.search(r"(http://\S+/admin/setup\?token=\S+)", authd(server, "admins", "invite", email)).group(1)
    return link


def operator_with_passkey(driver, server, email):
    """The invite link, a passkey added on the page it leads to, and a sign-in with that passkey."""
    add_authenticator(driver)
    link = invite(server, email)
    driver.get(link)
    shots(driver, "console-setup")
    accessible(driver)
    click(driver, "form[action='/admin/setup'] button")
    assert "Add a passkey or an authenticator app" in driver.page_source
    click(driver, "form[action='/account/passkey/begin'] button")
    click(driver, "#passkey-button")
    assert on_account(driver)
    driver.get(server.url + "/admin")
    # The invite's own sign-in is not a passkey's: the console still asks for one.
    assert "Add a passkey or an authenticator app" in driver.page_source
    click(driver, "form[action='/admin/reauth'] button")
    click(driver, "form[action='/login/passkey/begin'] button")
    assert driver.current_url == issuer(server) + "/admin", driver.current_url
    return link


def issuer(server):
    """The laptop's address the server names (localhost: a passkey's RP ID cannot be an IP address)."""
    return server.url.replace("127.0.0.1", "localhost")


def claims(server, token):
    keys = KeySet.import_key_set(requests.get(server.url + "/.well-known/jwks.json").json())
    return jwt.decode(token, keys, algorithms=["EdDSA"]).claims


def browser_session(driver, server):
    """The browser's cookies in a requests session, for forms a browser would not send."""
    session = Browserish()
    for cookie in driver.get_cookies():
        session.kept[cookie["name"]] = cookie["value"]
    return session


def test_the_first_operator_comes_in_by_the_invite_and_a_passkey_and_manages_a_user(browser):
    with localhost(PROVIDERS, email={"resend_interval": 0}, log=True) as server:
        deadline = time.monotonic() + 30
        while "admins invite EMAIL --data" not in open(server.log_path).read() and time.monotonic() < deadline:
            time.sleep(0.05)
        log = open(server.log_path).read()
        assert f"console={issuer(server)}/admin" in log and f"admins invite EMAIL --data {server.folder}`" in log, "the first start names the console"

        ana = server.sign_in("ana@example.com")
        link = operator_with_passkey(browser, server, "root@example.com")
        # The invite works once.
        assert requests.get(link).status_code == 404 and "not valid" in requests.get(link).text
        assert "At a glance" in browser.page_source
        assert browser.find_elements(By.CSS_SELECTOR, "svg.chart rect.chart-ok"), "the sign-ins by provider, drawn"
        rows = {r.find_element(By.TAG_NAME, "th").text: r.find_elements(By.TAG_NAME, "td")[0].text
                for r in browser.find_elements(By.CSS_SELECTOR, "section[aria-labelledby='by-provider'] tbody tr")}
        assert rows.get("email") == "1" and rows.get("passkey") == "1", rows
        shots(browser, "console-overview")
        accessible(browser)

        # Find the user.
        browser.get(server.url + "/admin/users")
        fill(browser, "query", "ana@")
        click(browser, "form.search button")
        shots(browser, "console-users")
        accessible(browser)
        click(browser, "a[href^='/admin/users/']")
        assert "ana@example.com" in browser.find_element(By.TAG_NAME, "h1").text
        shots(browser, "console-user")
        accessible(browser)
        user_url = browser.current_url

        # app_metadata: checked as JSON before it is saved; then a refreshed token carries it.
        fill(browser, "app_metadata", "{\"plan\": \"pro\"")
        click(browser, "form[action$='/profile'] button")
        assert "must be a JSON object" in browser.find_element(By.ID, "page-error").text
        accessible(browser)
        fill(browser, "app_metadata", '{"plan": "pro", "seats": 3}')
        fill(browser, "display_name", "Ana <b>Ops</b>")
        click(browser, "form[action$='/profile'] button")
        assert browser.current_url == user_url
        assert json.loads(browser.find_element(By.ID, "app_metadata").get_attribute("value")) == {"plan": "pro", "seats": 3}
        assert browser.find_element(By.ID, "display_name").get_attribute("value") == "Ana <b>Ops</b>", "escaped, not markup"
        status, refreshed, _ = server.call("POST", "/api/v1/auth/refresh", {"refresh_token": ana["refresh_token"]})
        assert status == 200
        assert claims(server, refreshed["access_token"])["app_metadata"] == {"plan": "pro", "seats": 3}

        # Disabled: every session ends; enabled again.
        click(browser, "form[action$='/disable'] button")
        assert "disabled" in browser.find_element(By.CSS_SELECTOR, "dl.facts").text
        assert server.call("POST", "/api/v1/auth/refresh", {"refresh_token": refreshed["refresh_token"]})[0] == 401
        click(browser, "form[action$='/enable'] button")
        assert "active" in browser.find_element(By.CSS_SELECTOR, "dl.facts").text

        # Deleted only with the email typed.
        fill(browser, "confirm", "ana@example.co")
        click(browser, "form[action$='/delete'] button")
        assert "Nothing was deleted" in browser.find_element(By.ID, "page-error").text
        fill(browser, "confirm", "ana@example.com")
        click(browser, "form[action$='/delete'] button")
        assert browser.current_url.endswith("/admin/users")
        assert subprocess.run([BINARY, "users", "show", "ana@example.com", "--data", server.folder], capture_output=True).returncode == 1

        # Not their own account, though.
        browser.get(issuer(server) + "/admin/users?query=root")
        click(browser, "a[href^='/admin/users/']")
        fill(browser, "confirm", "root@example.com")
        click(browser, "form[action$='/delete'] button")
        assert "cannot delete your own account" in browser.find_element(By.ID, "page-error").text

        # Every change is audited with the operator's email.
        audit = [json.loads(line) for line in open(os.path.join(server.folder, "audit.jsonl"))]
        console = [e for e in audit if e["event"] == "admin_console" and e.get("account") == "root@example.com"]
        reasons = [e["reason"] for e in console]
        assert "update user: app_metadata, display_name" in reasons and "update user: disabled" in reasons
        assert "update user: enabled" in reasons and "delete user" in reasons, reasons
        assert "root@example.com" in authd(server, "admins", "list")


def test_a_totp_operator_signs_in_with_the_apps_code(browser):
    with localhost(PROVIDERS, email={"resend_interval": 0}) as server:
        sign_in_with_email(browser, server, "tia@example.com")
        click(browser, "form[action='/account/totp/begin'] button")
        app = pyotp.TOTP(browser.find_element(By.ID, "totp-key").text.replace(" ", ""))
        fill(browser, "totp-code", app.now())
        click(browser, "form[action='/account/totp/confirm'] button")
        click(browser, "form[action='/logout'] button")
        assert "tia@example.com is an operator" in authd(server, "admins", "grant", "tia@example.com")

        sign_in_with_email(browser, server, "tia@example.com")
        # The code of the next period: the enrolment used this one.
        time.sleep(max(0, 30 - time.time() % 30) + 0.5)
        fill(browser, "factor-totp", app.now())
        click(browser, "form[action='/login/factor'] button")
        browser.get(server.url + "/admin")
        assert "At a glance" in browser.page_source


def test_the_console_refuses_what_it_must(browser):
    with localhost(PROVIDERS, email={"resend_interval": 0}, auth={"fresh_auth": 2}) as server:
        # A signed-in user without the role.
        sign_in_with_email(browser, server, "eve@example.com")
        browser.get(server.url + "/admin")
        assert "not an operator" in browser.page_source
        accessible(browser)
        # An operator signed in with an emailed code only: how to add a passkey, and nothing else.
        authd(server, "admins", "grant", "eve@example.com")
        browser.get(server.url + "/admin")
        assert "Add a passkey or an authenticator app" in browser.page_source and "At a glance" not in browser.page_source
        shots(browser, "console-factor")
        accessible(browser)
        browser.get(server.url + "/admin/users")
        assert "At a glance" not in browser.page_source and "Add a passkey" in browser.page_source
        click(browser, "form[action='/logout'] button")
        browser.delete_all_cookies()

        operator_with_passkey(browser, server, "root@example.com")
        target = server.sign_in("bob@example.com")
        bob = subprocess.run([BINARY, "users", "show", "bob@example.com", "--json", "--data", server.folder], capture_output=True, text=True)
        bob_id = json.loads(bob.stdout)["id"]
        session = browser_session(browser, server)
        page = session.get(issuer(server) + f"/admin/users/{bob_id}")
        assert page.status_code == 200
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        url = issuer(server) + f"/admin/users/{bob_id}/disable"
        origin = {"Origin": issuer(server)}
        # A Bearer token is not a console sign-in, even an operator's (eve holds the role).
        operator = server.sign_in("eve@example.com")
        bearer = requests.get(issuer(server) + "/admin", headers={"Authorization": "Bearer " + operator["access_token"]}, allow_redirects=False)
        assert bearer.status_code == 302 and "/login" in bearer.headers["Location"]
        # No CSRF token, or a foreign Origin: refused, nothing changed.
        assert session.post(url, data={}, headers=origin, allow_redirects=False).status_code == 403
        assert session.post(url, data={"csrf": csrf}, headers={"Origin": "https://evil.example"}, allow_redirects=False).status_code == 403
        assert server.call("POST", "/api/v1/auth/refresh", {"refresh_token": target["refresh_token"]})[0] == 200, "not disabled"
        # A stale sign-in (auth.fresh_auth is 2 s here): sign in again first.
        time.sleep(2.5)
        stale = session.post(url, data={"csrf": csrf}, headers=origin, allow_redirects=False)
        assert stale.status_code == 403 and "Sign in again" in stale.text
        browser.get(issuer(server) + f"/admin/users/{bob_id}")
        click(browser, "form[action$='/disable'] button")
        assert "Sign in again" in browser.page_source
        shots(browser, "console-reauth")
        accessible(browser)
        # The role taken away: the next request is refused.
        authd(server, "admins", "revoke", "root@example.com")
        assert "not an operator" in session.get(issuer(server) + "/admin").text


def failing_receiver(failures):
    """A webhook receiver on loopback that answers 500 to the first `failures` deliveries, then 204."""
    import http.server
    import threading

    seen = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            seen.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(500 if len(seen) <= failures else 204)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, seen


def test_an_operator_registers_an_app_makes_a_key_retries_a_webhook_and_pages_the_audit_log(browser, tmp_path):
    receiver, seen = failing_receiver(1)
    secret = tmp_path / "webhook-secret"
    secret.write_text("whsec_" + base64.b64encode(os.urandom(32)).decode())
    hooks = [{"url": f"http://127.0.0.1:{receiver.server_address[1]}/hook", "secret_file": str(secret), "events": ["user.created"]}]
    # The runner would retry in an hour: the retry here is the operator's.
    with localhost(PROVIDERS, email={"resend_interval": 0}, webhooks=hooks, webhook_delivery={"retry_delay": 3600}) as server:
        operator_with_passkey(browser, server, "root@example.com")

        # An app: its secret shown once, and it works.
        browser.get(issuer(server) + "/admin/clients")
        fill(browser, "client-name", "Grafana")
        fill(browser, "client-redirects", "https://grafana.example.com/login/generic_oauth")
        click(browser, "form[action='/admin/clients'] button")
        client_id = browser.find_element(By.ID, "created-client-id").text
        client_secret = browser.find_element(By.ID, "created-client-secret").text
        shots(browser, "console-clients")
        accessible(browser)
        revoke = lambda s: requests.post(issuer(server) + "/oauth/revoke", data={"token": "x"}, auth=(client_id, s)).status_code
        assert revoke(client_secret) == 200 and revoke(client_secret + "x") == 401
        browser.get(issuer(server) + "/admin/clients")
        assert client_secret not in browser.page_source, "shown once"
        click(browser, f"a[href='/admin/clients/{client_id}']")
        fill(browser, "client-claims", "plan")
        click(browser, f"form[action='/admin/clients/{client_id}/edit'] button")
        assert browser.find_element(By.ID, "client-claims").get_attribute("value") == "plan"
        assert "The new secret" not in browser.page_source, "no rotated-secret box on a visit that rotated nothing"
        accessible(browser)
        click(browser, f"form[action='/admin/clients/{client_id}/rotate'] button")
        rotated = browser.find_element(By.ID, "rotated-client-secret").text
        assert revoke(client_secret) == 401 and revoke(rotated) == 200

        # A service key: shown once; it asks /oauth/introspect.
        browser.get(issuer(server) + "/admin/keys")
        fill(browser, "key-name", "photo-backend")
        click(browser, "form[action='/admin/keys'] button")
        key = browser.find_element(By.ID, "created-key").text
        accessible(browser)
        asked = requests.post(issuer(server) + "/oauth/introspect", data={"token": "x"}, headers={"Authorization": "Bearer " + key})
        assert asked.status_code == 200 and asked.json() == {"active": False}
        click(browser, "form[action='/admin/keys/photo-backend/revoke'] button")
        assert requests.post(issuer(server) + "/oauth/introspect", data={"token": "x"}, headers={"Authorization": "Bearer " + key}).status_code == 401

        # The operator's own account made by the invite: its user.created, refused once by the
        # receiver, waits; retried by the operator, it is delivered.
        deadline = time.monotonic() + 30
        while not seen and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(seen) == 1 and seen[0]["type"] == "user.created" and seen[0]["data"]["email"] == "root@example.com"
        browser.get(issuer(server) + "/admin/webhooks")
        assert "the receiver answered 500" in browser.page_source
        shots(browser, "console-webhooks")
        accessible(browser)
        click(browser, "form[action$='/retry'] button")
        assert len(seen) == 2 and seen[1] == seen[0], "the same message again"
        assert "Nothing is waiting." in browser.page_source and "delivered" in browser.page_source

        # The audit log in pages of 50, filtered by event and user.
        for i in range(60):
            server.call("POST", "/api/v1/auth/email/send-code", {"email": f"u{i}@example.com"})
            server.call("POST", "/api/v1/auth/email/verify", {"email": f"u{i}@example.com", "code": "000000"})
        browser.get(issuer(server) + "/admin/audit")
        first = [r.find_element(By.TAG_NAME, "th").text for r in browser.find_elements(By.CSS_SELECTOR, "tbody tr")]
        assert len(first) == 50 and first == sorted(first, reverse=True)
        shots(browser, "console-audit")
        accessible(browser)
        click(browser, "a[rel='next']")
        second = [r.find_element(By.TAG_NAME, "th").text for r in browser.find_elements(By.CSS_SELECTOR, "tbody tr")]
        assert second and max(second) <= min(first)
        browser.get(issuer(server) + "/admin/audit?event=admin_console&user=root%40example.com")
        reasons = [r.find_elements(By.TAG_NAME, "td")[-1].text for r in browser.find_elements(By.CSS_SELECTOR, "tbody tr")]
        assert any(r.startswith("create client") for r in reasons) and any(r.startswith("retry webhook delivery") for r in reasons), reasons
        browser.get(issuer(server) + "/admin/config")
        assert "issuer = " in browser.page_source and "(file)" in browser.page_source
        accessible(browser)
    receiver.shutdown()


def test_an_operator_mails_a_password_reset_that_the_owner_completes(browser):
    from test_pages import register_password

    with localhost(PROVIDERS + ["password"], email={"resend_interval": 0}) as server:
        register_password(server, "pia@example.com", "the first password")
        passwordless = server.sign_in("sol@example.com")
        operator_with_passkey(browser, server, "root@example.com")
        browser.get(issuer(server) + "/admin/users?query=pia")
        click(browser, "a[href^='/admin/users/']")
        assert not browser.find_elements(By.ID, "page-notice"), "no empty notice box on a visit"
        before = len(server.outbox())
        click(browser, "form[action$='/reset'] button")
        assert "was mailed to pia@example.com" in browser.find_element(By.ID, "page-notice").text
        accessible(browser)
        # The owner reads the code in the mail and sets a new password with it.
        code = server.mailed_code("pia@example.com", about="reset", after=before)
        status, body, _ = server.call("POST", "/api/v1/auth/password/reset/email/verify",
                                      {"email": "pia@example.com", "code": code, "new_password": "the second password"})
        assert status == 200, body
        assert server.call("POST", "/api/v1/auth/password/login", {"email": "pia@example.com", "password": "the second password"})[0] == 200
        # An account without a password has none to reset.
        browser.get(issuer(server) + "/admin/users?query=sol")
        click(browser, "a[href^='/admin/users/']")
        click(browser, "form[action$='/reset'] button")
        assert "has no password to reset" in browser.find_element(By.ID, "page-error").text
        assert server.call("GET", "/api/v1/auth/me", token=passwordless["access_token"])[0] == 200, "nothing else changed"


def test_an_operator_invites_a_person_who_makes_the_account_from_the_mail_and_gives_groups_and_app_access(browser):
    """Contract §17 in the console and on the invitation's page: "Invite a person" mails a link
    (shown once) with groups; the invitee reads the link in the mail, gets a code mailed on the page
    it opens, and lands on /account with the groups; the operator edits a user's groups and an app's
    allowed groups. axe on each page; screenshots."""
    with localhost(PROVIDERS, email={"resend_interval": 0}, signup={"mode": "invite"}) as server:
        operator_with_passkey(browser, server, "root@example.com")
        assert "Sign-up: by invitation only" in browser.page_source, "the overview says who may make an account"
        browser.get(issuer(server) + "/admin/users")
        fill(browser, "invite-email", "nan@example.com")
        fill(browser, "invite-name", "Nan")
        fill(browser, "invite-groups", "family, photos")
        click(browser, "form[action='/admin/invitations'] button")
        shown = browser.find_element(By.ID, "invitation-url").text
        assert "nan@example.com" in browser.page_source and "family, photos" in browser.page_source, "listed as pending"
        accessible(browser)
        shots(browser, "console-invite")
        mail = server.mailed("nan@example.com", about="invited")
        link = re.search(r"(http://\S+/invitation\?token=\S+)", mail["text"]).group(1)
        assert link == shown and "root@example.com invited nan@example.com" in mail["text"]

        with chromium(375, 900) as invitee:
            invitee.get(link)
            assert "root@example.com" in invitee.page_source and "nan@example.com" in invitee.page_source
            accessible(invitee)
            shots(invitee, "invitation")
            before = len(server.outbox())
            click(invitee, "form[action='/invitation/send'] button")
            code = server.mailed_code("nan@example.com", about="invitation", after=before)
            accessible(invitee)
            shots(invitee, "invitation-code")
            fill(invitee, "invitation-code", code)
            click(invitee, "form[action='/invitation/verify'] button")
            assert on_account(invitee), invitee.current_url
        shown = json.loads(authd(server, "users", "show", "nan@example.com", "--json"))
        assert shown["groups"] == ["family", "photos"] and shown["display_name"] == "Nan"

        # The operator changes her groups on her page, and limits an app to a group.
        browser.get(issuer(server) + "/admin/users?query=nan")
        click(browser, "a[href^='/admin/users/']")
        fill(browser, "groups", "family")
        click(browser, "form[action$='/groups'] button")
        assert json.loads(authd(server, "users", "show", "nan@example.com", "--json"))["groups"] == ["family"]
        accessible(browser)
        out = authd(server, "clients", "create", "Photos", "--redirect-uri", "https://photos.example.com/cb")
        client = json.loads(out[: out.rindex("}") + 1])
        browser.get(issuer(server) + "/admin/clients/" + client["client_id"])
        fill(browser, "client-groups", "family, admins")
        click(browser, "form[action$='/edit'] button")
        assert json.loads(authd(server, "clients", "show", client["client_id"], "--json"))["allowed_groups"] == ["admins", "family"]
        accessible(browser)
