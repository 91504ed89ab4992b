"""Sign in with another OpenID Provider on the pages (contract §16), in headless Chromium with two
authd processes on two hosts (cookies ignore ports): the upstream on 127.0.0.1 is an OpenID
Provider (§13) where the person signs in with a mailed code; the downstream on localhost lists it
in `oidc.providers` and runs the code flow from `/login/oidc/NAME`. An app of the downstream's
(Authlib) starts the whole chain, and joserfc checks the ID token it ends with. Screenshots under
output/pages/."""
import json
import os
import subprocess
import tempfile
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
from conftest import running_server
from test_openid_provider import BINARY
from test_page_methods import fill, free_port, on_account, sign_in_with_email
from test_pages import PAGES, accessible, click, shots

APP = "http://127.0.0.1:9/callback"  # nothing listens: the test reads the address the browser was sent to


@pytest.fixture
def browser():
    with chromium(1280, 900) as driver:
        yield driver


def create_client(server, name, *redirects, first_party=True):
    flags = [flag for uri in redirects for flag in ("--redirect-uri", uri)] + (["--first-party"] if first_party else [])
    out = subprocess.run([BINARY, "clients", "create", name, *flags, "--data", server.folder], capture_output=True, text=True, check=True).stdout
    return json.loads(out[: out.rindex("}") + 1])


class Pair:
    """The upstream authd, the downstream authd pointing at it twice (`upstream`, and `trusted`
    with trust_email), and an app of the downstream's."""

    def __init__(self, up, down, app):
        self.up, self.down, self.app = up, down, app


def two_authds(folder):
    up_ctx = running_server({**PAGES, "providers": ["email"], "email": {"resend_interval": 0}})
    up = up_ctx.__enter__()
    port = free_port()
    origin = f"http://localhost:{port}"
    client = create_client(up, "Downstream", *(f"{origin}/login/oidc/{name}/callback" for name in ("upstream", "trusted")))
    secret = os.path.join(folder, "upstream-secret")
    with open(secret, "w") as f:
        f.write(client["client_secret"] + "\n")
    os.chmod(secret, 0o600)
    entry = {"issuer": up.url, "client_id": client["client_id"], "client_secret_file": secret}
    providers = {"upstream": {**entry, "label": "Upstream ID"}, "trusted": {**entry, "label": "Trusted ID", "trust_email": True}}
    down_ctx = running_server({"issuer": origin, "providers": ["email", "oidc"], "email": {"resend_interval": 0}, "oidc": {"providers": providers}},
                              port=port)
    return up_ctx, down_ctx, up, down_ctx.__enter__()


@pytest.fixture
def pair():
    with tempfile.TemporaryDirectory() as folder:
        up_ctx, down_ctx, up, down = two_authds(folder)
        try:
            yield Pair(up, down, create_client(down, "Photos", APP))
        finally:
            down_ctx.__exit__(None, None, None)
            up_ctx.__exit__(None, None, None)


def sign_in_upstream(driver, up, email):
    """On the upstream's sign-in page the downstream sent the browser to: the address, the mailed code."""
    try:
        WebDriverWait(driver, 10).until(lambda d: d.current_url.startswith(up.url + "/login"))
    except Exception:
        raise AssertionError(driver.current_url + " " + driver.page_source[:3000])
    before = len(up.outbox())
    fill(driver, "email-address", email)
    click(driver, "form[action='/login/email/send'] button")
    fill(driver, "email-code", up.mailed_code(email, after=before))
    click(driver, "form[action='/login/email/verify'] button")


def forget(driver):
    """Every cookie of every site: a browser that was never signed in anywhere."""
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})


def arrived_at(driver, prefix):
    WebDriverWait(driver, 15).until(lambda d: d.current_url.startswith(prefix))
    return driver.current_url


def test_an_app_of_the_downstream_signs_a_person_in_through_the_upstream(browser, pair):
    down = pair.down
    meta = requests.get(down.url + "/.well-known/openid-configuration").json()
    rp = OAuth2Session(pair.app["client_id"], pair.app["client_secret"], scope="openid email profile", redirect_uri=APP, code_challenge_method="S256")
    verifier, nonce = generate_token(48), generate_token(16)
    url, state = rp.create_authorization_url(meta["authorization_endpoint"], code_verifier=verifier, nonce=nonce)
    browser.get(url)
    issuer = meta["issuer"]
    assert browser.current_url.startswith(issuer + "/login") and "Continue with Upstream ID" in browser.page_source
    shots(browser, "login-with-identity-providers")
    accessible(browser)

    click(browser, "a[href='/login/oidc/upstream']")
    sign_in_upstream(browser, pair.up, "uma@example.com")
    callback = arrived_at(browser, APP)
    query = urllib.parse.parse_qs(urllib.parse.urlparse(callback).query)
    assert query["state"] == [state] and query["iss"] == [issuer], "on to the app's authorize request, which answers the app"

    token = rp.fetch_token(meta["token_endpoint"], authorization_response=callback, code_verifier=verifier)
    claims = jwt.decode(token["id_token"], KeySet.import_key_set(requests.get(meta["jwks_uri"]).json()), algorithms=["RS256"]).claims
    assert claims["amr"] == ["oidc"] and claims["nonce"] == nonce and claims["aud"] == pair.app["client_id"]
    info = rp.get(meta["userinfo_endpoint"]).json()
    assert info["sub"] == claims["sub"] and "email" not in info, "an upstream not trusted for email gives the account none"

    # The next time the same person comes through the upstream: the same account.
    forget(browser)
    browser.get(issuer + "/login")
    click(browser, "a[href='/login/oidc/upstream']")
    sign_in_upstream(browser, pair.up, "uma@example.com")
    WebDriverWait(browser, 10).until(on_account)
    assert "Upstream ID" in browser.page_source and "Linked: you can sign in with it." in browser.page_source
    session = requests.get(issuer + "/oauth/userinfo", headers={"Authorization": "Bearer " + token["access_token"]})
    assert session.status_code == 200 and session.json()["sub"] == claims["sub"]


def test_a_trusted_upstream_joins_the_verified_account_a_fresh_sign_in_links_and_an_identity_linked_elsewhere_is_refused(browser, pair):
    down, up = pair.down, pair.up
    issuer = requests.get(down.url + "/.well-known/openid-configuration").json()["issuer"]
    down_mail = lambda: len(down.outbox())

    # Rita's account has a verified address: the trusted upstream's verified address joins it.
    rita = down.sign_in("rita@example.com")
    before = down_mail()
    browser.get(issuer + "/login")
    click(browser, "a[href='/login/oidc/trusted']")
    sign_in_upstream(browser, up, "rita@example.com")
    WebDriverWait(browser, 10).until(on_account)
    assert "rita@example.com" in browser.page_source
    assert "/not-me" in down.mailed("rita@example.com", after=before)["text"], "Rita is told a new way in was added"

    # Sam, signed in on the downstream, links the upstream from his account page.
    forget(browser)
    sign_in_with_email(browser, down, "sam@example.com")
    assert on_account(browser) and "Link Upstream ID" in browser.page_source
    click(browser, "a[href^='/login/oidc/upstream?link=1&csrf=']")
    sign_in_upstream(browser, up, "sam.upstream@example.com")
    WebDriverWait(browser, 10).until(on_account)
    assert "sam@example.com" in browser.page_source and "Linked: you can sign in with it." in browser.page_source
    shots(browser, "account-linked-identity-provider")
    accessible(browser)

    # Tom tries to link the same upstream person: it is Sam's.
    forget(browser)
    sign_in_with_email(browser, down, "tom@example.com")
    click(browser, "a[href^='/login/oidc/upstream?link=1&csrf=']")
    sign_in_upstream(browser, up, "sam.upstream@example.com")
    WebDriverWait(browser, 10).until(lambda d: "already belongs to another account" in d.page_source)
    assert "Back to your account" in browser.page_source
    assert browser.current_url.startswith(issuer + "/login/oidc/upstream/callback")
    shots(browser, "identity-linked-elsewhere")

    # Signed out, the upstream person signs in to Sam's account.
    forget(browser)
    browser.get(issuer + "/login")
    click(browser, "a[href='/login/oidc/upstream']")
    sign_in_upstream(browser, up, "sam.upstream@example.com")
    WebDriverWait(browser, 10).until(on_account)
    assert "sam@example.com" in browser.page_source
    assert len(down.outbox()) >= before
    assert rita["user"]["email"] == "rita@example.com"


class GitHubStandIn:
    """GitHub's OAuth endpoints and user API, as authd's `kind: github` reaches them (api_url
    `/api`): the authorize page answers at once, the token endpoint checks the secret and the PKCE
    verifier (and answers a bad code with 200 and an error, as GitHub does)."""

    def __init__(self):
        import base64
        import hashlib
        import http.server
        import threading
        stand_in = self
        self.seen = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self, status, body, headers=()):
                data = json.dumps(body).encode()
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                url = urllib.parse.urlparse(self.path)
                query = dict(urllib.parse.parse_qsl(url.query))
                if url.path == "/login/oauth/authorize":
                    stand_in.seen.append(("authorize", query))
                    stand_in.challenge = query.get("code_challenge")
                    back = query["redirect_uri"] + "?" + urllib.parse.urlencode({"code": "gh-code", "state": query["state"]})
                    return self.answer(302, {}, [("Location", back)])
                if self.headers.get("Authorization") != "Bearer gho_token":
                    return self.answer(401, {"message": "Bad credentials"})
                if url.path == "/api/user":
                    return self.answer(200, {"id": 9001, "login": "octo", "name": "Octo Cat"})
                if url.path == "/api/user/emails":
                    return self.answer(200, [{"email": "other@example.com", "primary": False, "verified": True},
                                             {"email": "octo@example.com", "primary": True, "verified": True}])
                self.answer(404, {})

            def do_POST(self):
                fields = dict(urllib.parse.parse_qsl(self.rfile.read(int(self.headers["Content-Length"])).decode()))
                stand_in.seen.append(("token", fields))
                digest = base64.urlsafe_b64encode(hashlib.sha256(fields.get("code_verifier", "").encode()).digest()).rstrip(b"=").decode()
                if fields.get("code") != "gh-code" or fields.get("client_secret") != "gh-secret" or digest != stand_in.challenge:
                    return self.answer(200, {"error": "bad_verification_code"})
                self.answer(200, {"access_token": "gho_token", "token_type": "bearer", "scope": "read:user,user:email"})

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def test_github_signs_in_with_its_user_api_and_joins_the_account_of_its_verified_primary_address(browser):
    github = GitHubStandIn()
    with tempfile.TemporaryDirectory() as folder:
        secret = os.path.join(folder, "github-secret")
        with open(secret, "w") as f:
            f.write("gh-secret\n")
        port = free_port()
        entry = {"kind": "github", "client_id": "gh-client", "client_secret_file": secret, "trust_email": True,
                 "authorize_url": github.url + "/login/oauth/authorize", "token_url": github.url + "/login/oauth/access_token", "api_url": github.url + "/api"}
        config = {"issuer": f"http://localhost:{port}", "providers": ["email", "oidc"], "oidc": {"providers": {"github": entry}}}
        with running_server(config, port=port) as down:
            octo = down.sign_in("octo@example.com")
            issuer = f"http://localhost:{port}"
            browser.get(issuer + "/login")
            click(browser, "a[href='/login/oidc/github']")
            WebDriverWait(browser, 10).until(on_account)
            assert "octo@example.com" in browser.page_source, "GitHub's verified primary address joins Octo's account"
            authorize = github.seen[0][1]
            assert authorize["client_id"] == "gh-client" and authorize["scope"] == "read:user user:email" and authorize["code_challenge_method"] == "S256"
            assert authorize["redirect_uri"] == issuer + "/login/oidc/github/callback" and "nonce" not in authorize
            me = requests.post(down.url + "/api/v1/auth/oidc/github", json={"id_token": "x"})
            assert me.status_code == 404, "no ID tokens from GitHub"
            assert octo["user"]["email"] == "octo@example.com"
    github.server.shutdown()
