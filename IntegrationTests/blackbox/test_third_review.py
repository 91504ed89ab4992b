"""The third outside review of the pages and the OpenID Provider (contract §17), each finding refused
against the real binary: a PIN typed for a kiosk app opens that app only; a public client's loopback
and custom-scheme redirects are asked every time; a stranger who knows a client id cannot spend the
app's token budget; `prompt=login` is not met by a parameter; a 429 of the token endpoint is RFC
6749's shape, not the device flow's `slow_down`."""
import base64
import hashlib
import re
import time
import urllib.parse

import requests
from authlib.common.security import generate_token

from conftest import running_server
from test_openid_provider import REDIRECT, authorize, register_client, sign_in_on_the_page
from test_pages import PAGES, Browserish

CONFIG = {**PAGES, "email": {"resend_interval": 0}}
VERIFIER = "dBjftJeZ4CVP-mJ0FfFsXgoXSnJtWbQD3kY6MFTz9qQ"
CHALLENGE = base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest()).rstrip(b"=").decode()


def authorize_url(server, client, redirect=REDIRECT, **extra):
    return server.url + "/oauth/authorize?" + urllib.parse.urlencode({
        "client_id": client["client_id"], "redirect_uri": redirect, "response_type": "code", "scope": "openid", "nonce": generate_token(12),
        "state": generate_token(12), "code_challenge": CHALLENGE, "code_challenge_method": "S256", **extra})


def query(location):
    return urllib.parse.parse_qs(urllib.parse.urlparse(location).query)


def test_a_pin_signs_in_to_the_kiosk_app_that_asked_for_it_and_nowhere_else():
    with running_server({**PAGES, "providers": ["email", "anonymous", "pin"]}) as server:
        kiosk = register_client(server, "--first-party", "--allow-pin", name="Kiosk")
        grafana = register_client(server, "--first-party", name="Grafana")
        _, session, _ = server.call("POST", "/api/v1/auth/anonymous", {"device_name": "tablet"})
        assert server.call("PUT", "/api/v1/auth/pin", {"pin": "4821"}, session["access_token"])[0] == 204
        assert server.call("PUT", "/api/v1/auth/username", {"username": "tablet-kid"}, session["access_token"])[0] in (200, 204)

        browser = Browserish()
        first = browser.get(authorize_url(server, kiosk), allow_redirects=False)
        page = browser.get(server.url + first.headers["Location"])
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        done = browser.post(server.url + "/login/pin/login", data={"csrf": csrf, "username": "tablet-kid", "pin": "4821"},
                            headers={"Origin": server.url}, allow_redirects=False)
        back = browser.get(server.url + done.headers["Location"], allow_redirects=False)
        assert back.status_code == 302 and "code" in query(back.headers["Location"]), "the kiosk app that asked gets its code"
        again = browser.get(authorize_url(server, kiosk, prompt="none"), allow_redirects=False)
        assert "code" in query(again.headers["Location"]), "and keeps getting them while the PIN sign-in lives"

        # Another app, first-party and silent: the PIN sign-in is not a sign-in there.
        silent = browser.get(authorize_url(server, grafana, prompt="none"), allow_redirects=False)
        assert query(silent.headers["Location"])["error"] == ["login_required"]
        asked = browser.get(authorize_url(server, grafana), allow_redirects=False)
        assert asked.status_code == 302 and asked.headers["Location"].startswith("/login?")
        login = browser.get(server.url + asked.headers["Location"], allow_redirects=False)
        assert login.status_code == 200, "the sign-in page, not a redirect back with the PIN sign-in"
        assert 'action="/login/pin/login"' not in login.text and 'action="/login/email/send"' in login.text
        # Nor is it one on authd's own pages: /account, /device and the console ask for a sign-in.
        for path in ("/account", "/device", "/admin"):
            answer = browser.get(server.url + path, allow_redirects=False)
            assert answer.status_code in (302, 303) and "/login" in answer.headers["Location"], path


def test_a_native_redirect_is_asked_every_time_even_for_a_first_party_app():
    with running_server(CONFIG) as server:
        loopback = "http://127.0.0.1:7777/cb"
        native = register_client(server, "--public", "--first-party", name="Desktop", redirect=loopback)
        mixed = register_client(server, "--public", "--redirect-uri", "com.example.photos:/oauth", name="Photos",
                                redirect="https://photos.example.com/cb")
        browser = Browserish()
        # A first-party public client's loopback redirect: the consent page, on any port.
        first = browser.get(authorize_url(server, native, loopback), allow_redirects=False)
        back = sign_in_on_the_page(browser, server, server.url + first.headers["Location"], "nina@example.com")
        page = browser.get(server.url + back, allow_redirects=False)
        assert page.status_code == 200 and 'name="decision"' in page.text, "first-party, but a loopback redirect is asked"
        other_port = browser.get(authorize_url(server, native, "http://127.0.0.1:49152/cb"), allow_redirects=False)
        assert other_port.status_code == 200 and 'name="decision"' in other_port.text
        assert query(browser.get(authorize_url(server, native, loopback, prompt="none"), allow_redirects=False)
                     .headers["Location"])["error"] == ["consent_required"]

        # A consent given to the app's https redirect covers it there, never its custom-scheme one.
        callback = authorize(browser, server, authorize_url(server, mixed, "https://photos.example.com/cb"))
        assert "code" in query(callback)
        assert "code" in query(browser.get(authorize_url(server, mixed, "https://photos.example.com/cb"), allow_redirects=False).headers["Location"])
        for _ in range(2):  # allowed once, asked again the next time
            custom = browser.get(authorize_url(server, mixed, "com.example.photos:/oauth"), allow_redirects=False)
            assert custom.status_code == 200 and 'name="decision"' in custom.text
            assert "code" in query(authorize(browser, server, authorize_url(server, mixed, "com.example.photos:/oauth")))
        assert query(browser.get(authorize_url(server, mixed, "com.example.photos:/oauth", prompt="none"), allow_redirects=False)
                     .headers["Location"])["error"] == ["consent_required"]


def code_for(server, client, browser, email="gus@example.com"):
    return query(authorize(browser, server, authorize_url(server, client), email=email))["code"][0]


def test_a_stranger_cannot_spend_an_apps_token_budget_and_a_429_spends_nothing():
    limits = {"token_per_client": {"limit": 1, "window": 2}, "failures_per_ip": {"limit": 3, "window": 600}}
    with running_server({**CONFIG, "openid": limits}) as server:
        grafana = register_client(server, "--first-party", name="Grafana")
        token = server.url + "/oauth/token"
        # 20 requests with Grafana's id and a wrong secret: each refused, the network limited after 3.
        wrong = [requests.post(token, data={"grant_type": "authorization_code", "code": "x", "redirect_uri": REDIRECT},
                               auth=(grafana["client_id"], "not-the-secret")) for _ in range(20)]
        assert [w.status_code for w in wrong[:3]] == [401, 401, 401] and {w.status_code for w in wrong[3:]} == {429}
        limited = wrong[-1]
        assert limited.json()["error"] == "invalid_request" and int(limited.headers["Retry-After"]) >= 1, limited.text
        assert limited.headers["Cache-Control"] == "no-store"

        # Grafana itself, from the same network, is neither limited by that network's budget nor by its own.
        browser = Browserish()
        code = code_for(server, grafana, browser)
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "code_verifier": VERIFIER}
        first = requests.post(token, data=form, auth=(grafana["client_id"], grafana["client_secret"]))
        assert first.status_code == 200, first.text

        # Over its own budget (1 per 2 s) a request spends nothing: the code answered 429 still works.
        code = code_for(server, grafana, browser)
        form["code"] = code
        over = requests.post(token, data=form, auth=(grafana["client_id"], grafana["client_secret"]))
        assert over.status_code == 429 and over.json()["error"] == "invalid_request", over.text
        time.sleep(int(over.headers["Retry-After"]) + 0.2)
        assert requests.post(token, data=form, auth=(grafana["client_id"], grafana["client_secret"])).status_code == 200


def test_a_public_clients_budget_is_spent_only_by_valid_grants():
    limits = {"token_per_client": {"limit": 1, "window": 600}, "failures_per_ip": {"limit": 50, "window": 600}}
    with running_server({**CONFIG, "openid": limits}) as server:
        app = register_client(server, "--public", "--first-party", name="Web app", redirect="https://app.example.com/cb")
        token = server.url + "/oauth/token"
        for _ in range(5):  # codes that are nobody's: charged to the network, not the app
            bad = requests.post(token, data={"grant_type": "authorization_code", "client_id": app["client_id"], "code": generate_token(20),
                                             "redirect_uri": "https://app.example.com/cb", "code_verifier": VERIFIER})
            assert bad.status_code == 400 and bad.json()["error"] == "invalid_grant"
        code = query(authorize(Browserish(), server, authorize_url(server, app, "https://app.example.com/cb")))["code"][0]
        form = {"grant_type": "authorization_code", "client_id": app["client_id"], "code": code, "redirect_uri": "https://app.example.com/cb",
                "code_verifier": VERIFIER}
        good = requests.post(token, data=form)
        assert good.status_code == 200, good.text
        # The code's replay is not a fresh code: it still ends what the first redemption issued.
        replay = requests.post(token, data=form)
        assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
        assert requests.get(server.url + "/oauth/userinfo", headers={"Authorization": "Bearer " + good.json()["access_token"]}).status_code == 401


def test_a_public_clients_introspection_of_tokens_not_its_own_is_charged_to_the_network():
    limits = {"failures_per_ip": {"limit": 3, "window": 600}}
    with running_server({**CONFIG, "openid": limits}) as server:
        app = register_client(server, "--public", name="Web app", redirect="https://app.example.com/cb")
        answers = [requests.post(server.url + "/oauth/introspect", data={"client_id": app["client_id"], "token": generate_token(30)})
                   for _ in range(5)]
        assert [a.status_code for a in answers[:3]] == [200, 200, 200] and answers[0].json() == {"active": False}
        assert {a.status_code for a in answers[3:]} == {429} and answers[-1].json()["error"] == "invalid_request"


def test_prompt_login_is_not_met_by_a_parameter_and_a_new_sign_in_meets_it():
    with running_server(CONFIG) as server:
        client = register_client(server, "--first-party")
        browser = Browserish()
        authorize(browser, server, authorize_url(server, client))  # signed in now
        time.sleep(1.1)  # auth_time is in whole seconds
        for extra in ({"prompt": "login", "auth_after": "1"}, {"prompt": "login", "auth_after": str(10**10)}, {"max_age": "0", "auth_after": "1"}):
            forged = browser.get(authorize_url(server, client, **extra), allow_redirects=False)
            assert forged.status_code == 302 and forged.headers["Location"].startswith("/login?"), (extra, forged.headers["Location"])
        # The sign-in asked for meets the request that asked, once; its ID token says when.
        url = authorize_url(server, client, prompt="login")
        callback = authorize(browser, server, url, email="rita@example.com")
        assert "code" in query(callback)
        assert browser.get(url, allow_redirects=False).headers["Location"].startswith("/login?"), "the mark is spent"
        # A sign-in's mark meets the request that asked for it, not another one.
        asking = authorize_url(server, client, prompt="login")
        first = browser.get(asking, allow_redirects=False)
        back = sign_in_on_the_page(browser, server, server.url + first.headers["Location"], "rita@example.com")
        other = browser.get(authorize_url(server, client, prompt="login"), allow_redirects=False)
        assert other.status_code == 302 and other.headers["Location"].startswith("/login?")
        # max_age=0 goes round once, not for ever.
        time.sleep(1.1)
        assert "code" in query(authorize(browser, server, authorize_url(server, client, max_age="0"), email="rita@example.com"))
        assert back.startswith("/oauth/authorize?")
