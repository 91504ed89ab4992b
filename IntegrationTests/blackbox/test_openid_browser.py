"""The OpenID Provider's flows in headless Chromium, as a person at a relying party sees them
(contract §13): Authlib starts the code flow the way Grafana's generic OAuth does (issuer
http://localhost:PORT, as on a laptop, since a passkey's RP ID cannot be an IP address), the person
signs in on authd's page with a passkey (Chrome's virtual authenticator), allows the app on the
consent page and lands back at the app; Authlib redeems the code and joserfc checks the ID token
against the JWKS. Then the app signs the person out (RP-initiated logout). Screenshots under
output/pages/."""
import json
import subprocess
import urllib.parse

import pytest
import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from joserfc import jwt
from joserfc.jwk import KeySet
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from chromium import chromium
from test_openid_provider import BINARY
from test_page_methods import account_with_passkey, localhost, sign_in_with_email
from test_pages import accessible, click, shots

APP = "http://127.0.0.1:9/login/generic_oauth"  # nothing listens: the test reads the address the browser was sent to
BYE = "http://127.0.0.1:9/login"


@pytest.fixture
def browser():
    with chromium(1280, 900) as driver:
        yield driver


def register(server, *flags):
    out = subprocess.run([BINARY, "clients", "create", "Grafana", "--redirect-uri", APP, *flags, "--data", server.folder],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out[: out.rindex("}") + 1])


def arrived_at(driver, prefix):
    """Waits until the browser has been sent to `prefix` (the app, which does not answer)."""
    WebDriverWait(driver, 10).until(lambda d: d.current_url.startswith(prefix))
    return driver.current_url


def test_a_person_signs_in_to_an_app_with_a_passkey_allows_it_and_is_signed_out_by_it(browser):
    with localhost(["email", "passkey"], email={"resend_interval": 0}) as server:
        client = register(server, "--post-logout-redirect-uri", BYE)
        account_with_passkey(browser, server, "gwen@example.com")

        # Grafana's generic OAuth: client_secret in the token request, PKCE S256, scopes openid email profile.
        meta = requests.get(server.url + "/.well-known/openid-configuration").json()
        rp = OAuth2Session(client["client_id"], client["client_secret"], scope="openid email profile", redirect_uri=APP,
                           code_challenge_method="S256", token_endpoint_auth_method="client_secret_post")
        verifier, nonce = generate_token(48), generate_token(16)
        url, state = rp.create_authorization_url(meta["authorization_endpoint"], code_verifier=verifier, nonce=nonce)
        issuer = meta["issuer"]
        browser.get(url)
        assert browser.current_url.startswith(issuer + "/login")
        click(browser, "form[action='/login/passkey/begin'] button")
        WebDriverWait(browser, 10).until(lambda d: "Allow" in d.page_source and "/oauth/authorize" in d.current_url)
        assert "Grafana" in browser.page_source and "your email address" in browser.page_source
        shots(browser, "consent")
        accessible(browser)
        browser.find_element(By.CSS_SELECTOR, "button[value='allow']").click()
        callback = arrived_at(browser, APP)
        query = urllib.parse.parse_qs(urllib.parse.urlparse(callback).query)
        assert query["state"] == [state] and query["iss"] == [issuer]

        token = rp.fetch_token(meta["token_endpoint"], authorization_response=callback, code_verifier=verifier)
        keys = KeySet.import_key_set(requests.get(meta["jwks_uri"]).json())
        claims = jwt.decode(token["id_token"], keys, algorithms=["RS256"]).claims
        assert claims["email"] == "gwen@example.com" and claims["nonce"] == nonce and claims["aud"] == client["client_id"]
        assert claims["amr"] == ["passkey", "mfa"]
        assert rp.get(meta["userinfo_endpoint"]).json()["email"] == "gwen@example.com"

        # The app signs the person out: back at the app, and authd's own sign-in has ended.
        browser.get(meta["end_session_endpoint"] + "?" + urllib.parse.urlencode(
            {"id_token_hint": token["id_token"], "post_logout_redirect_uri": BYE, "state": "bye"}))
        assert arrived_at(browser, BYE) == BYE + "?state=bye"
        browser.get(issuer + "/account")
        assert browser.current_url.startswith(issuer + "/login")
        assert requests.get(meta["userinfo_endpoint"], headers={"Authorization": "Bearer " + token["access_token"]}).status_code == 401


def test_a_person_asked_to_sign_out_by_an_app_without_a_hint_chooses(browser):
    with localhost(["email"], email={"resend_interval": 0}) as server:
        client = register(server, "--first-party", "--post-logout-redirect-uri", BYE)
        sign_in_with_email(browser, server, "hal@example.com")
        issuer = requests.get(server.url + "/.well-known/openid-configuration").json()["issuer"]
        browser.get(issuer + "/oauth/logout?" + urllib.parse.urlencode({"client_id": client["client_id"], "post_logout_redirect_uri": BYE}))
        assert "asks to sign you out" in browser.page_source
        shots(browser, "logout-asked")
        accessible(browser)
        browser.find_element(By.CSS_SELECTOR, "button[value='logout']").click()
        arrived_at(browser, BYE)
        browser.get(issuer + "/account")
        assert browser.current_url.startswith(issuer + "/login")
