"""The OpenID Provider's second part, as relying parties and operators see it (contract §13):
RP-initiated logout, claims from app_metadata, CORS for public clients, client credentials at
introspection, a code that dies with its browser sign-in, the RSA key rotated with the others, and
clients changed and their secrets rotated from the command line."""
import json
import os
import re
import subprocess
import time
import urllib.parse

import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from joserfc import jwt
from joserfc.jwk import KeySet

from conftest import running_server
from test_app_flows import service_key
from test_openid_provider import BINARY, REDIRECT, authorize, register_client
from test_pages import PAGES, Browserish

BYE = "http://127.0.0.1:9/signed-out"
# The same person signs in twice in a moment here: no wait between codes.
CONFIG = {**PAGES, "email": {"resend_interval": 0}}


def authd(server, *args, check=True):
    out = subprocess.run([BINARY, *args, "--data", server.folder], capture_output=True, text=True)
    assert not check or out.returncode == 0, out.stdout + out.stderr
    return out


def code_flow(server, client, browser, scope="openid email", email="lena@example.com", consent="allow"):
    """Authlib's code flow through authd's pages; the token response."""
    verifier = generate_token(48)
    rp = OAuth2Session(client["client_id"], client.get("client_secret"), scope=scope, redirect_uri=REDIRECT, code_challenge_method="S256")
    url, _ = rp.create_authorization_url(server.url + "/oauth/authorize", code_verifier=verifier, nonce=generate_token(16))
    return rp.fetch_token(server.url + "/oauth/token", authorization_response=authorize(browser, server, url, email=email, consent=consent),
                          code_verifier=verifier)


def userinfo(server, token):
    return requests.get(server.url + "/oauth/userinfo", headers={"Authorization": "Bearer " + token["access_token"]})


def signed_in(browser, server):
    return browser.get(server.url + "/account", allow_redirects=False).status_code == 200


def test_logout_with_the_apps_id_token_ends_the_browser_and_that_apps_tokens_and_keeps_consent():
    with running_server(CONFIG) as server:
        client = register_client(server, "--post-logout-redirect-uri", BYE)
        meta = requests.get(server.url + "/.well-known/openid-configuration").json()
        assert meta["end_session_endpoint"] == server.url + "/oauth/logout"
        assert meta["introspection_endpoint"] == server.url + "/oauth/introspect"
        browser = Browserish()
        token = code_flow(server, client, browser, scope="openid email offline_access")
        hint = token["id_token"]

        # An address the app did not register is never followed, and nothing ends.
        bad = browser.get(server.url + "/oauth/logout?" + urllib.parse.urlencode(
            {"id_token_hint": hint, "post_logout_redirect_uri": "https://evil.example/"}), allow_redirects=False)
        assert bad.status_code == 400 and "Location" not in bad.headers
        # A hint this server did not sign: refused, nothing ends.
        head, body, sig = hint.split(".")
        forged = head + "." + body + "." + ("A" if sig[0] != "A" else "B") + sig[1:]
        bad = browser.get(server.url + "/oauth/logout?id_token_hint=" + forged, allow_redirects=False)
        assert bad.status_code == 400 and signed_in(browser, server) and userinfo(server, token).status_code == 200

        out = browser.get(server.url + "/oauth/logout?" + urllib.parse.urlencode(
            {"id_token_hint": hint, "post_logout_redirect_uri": BYE, "state": "st-1"}), allow_redirects=False)
        assert out.status_code == 302 and out.headers["Location"] == BYE + "?state=st-1"
        assert "__Host-authd=;" in out.headers["Set-Cookie"] or "Max-Age=0" in out.headers["Set-Cookie"]
        assert not signed_in(browser, server)
        assert userinfo(server, token).status_code == 401
        refreshed = requests.post(server.url + "/oauth/token", data={"grant_type": "refresh_token", "refresh_token": token["refresh_token"]},
                                  auth=(client["client_id"], client["client_secret"]))
        assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant"

        # Consent stays: signing in again goes straight back to the app.
        again = code_flow(server, client, browser, scope="openid email offline_access")
        assert userinfo(server, again).status_code == 200


def test_logout_without_a_hint_asks_the_person_first():
    with running_server(CONFIG) as server:
        client = register_client(server, "--first-party", "--post-logout-redirect-uri", BYE)
        browser = Browserish()
        token = code_flow(server, client, browser)
        asked = browser.get(server.url + "/oauth/logout?" + urllib.parse.urlencode(
            {"client_id": client["client_id"], "post_logout_redirect_uri": BYE, "state": "s2"}), allow_redirects=False)
        assert asked.status_code == 200 and "asks to sign you out" in asked.text and signed_in(browser, server)
        csrf = re.search(r'name="csrf" value="([^"]+)"', asked.text).group(1)
        sealed = re.search(r'name="request" value="([^"]+)"', asked.text).group(1)
        form = {"csrf": csrf, "request": sealed, "decision": "logout"}
        foreign = browser.post(server.url + "/oauth/logout/confirm", data=form, headers={"Origin": "https://evil.example"}, allow_redirects=False)
        assert foreign.status_code == 403 and signed_in(browser, server)
        no_csrf = browser.post(server.url + "/oauth/logout/confirm", data={**form, "csrf": "x"}, headers={"Origin": server.url}, allow_redirects=False)
        assert no_csrf.status_code == 403 and signed_in(browser, server)
        stay = browser.post(server.url + "/oauth/logout/confirm", data={**form, "decision": "stay"}, headers={"Origin": server.url},
                            allow_redirects=False)
        assert stay.status_code == 303 and signed_in(browser, server)
        done = browser.post(server.url + "/oauth/logout/confirm", data=form, headers={"Origin": server.url}, allow_redirects=False)
        assert done.status_code == 302 and done.headers["Location"] == BYE + "?state=s2"
        assert not signed_in(browser, server) and userinfo(server, token).status_code == 401

        # A relying party's form post (no SameSite=Lax cookie comes with it) is answered with the same request as a GET.
        posted = requests.post(server.url + "/oauth/logout", data={"client_id": client["client_id"], "state": "s3"}, allow_redirects=False)
        assert posted.status_code == 303 and posted.headers["Location"] == "/oauth/logout?client_id=" + client["client_id"] + "&state=s3"


def test_app_metadata_keys_a_client_names_are_claims_and_reserved_names_are_refused():
    """`groups` is the user's own field (contract §17), never app_metadata's key of that name."""
    with running_server(CONFIG) as server:
        refused = authd(server, "clients", "create", "Bad", "--redirect-uri", REDIRECT, "--claims", "email", check=False)
        assert refused.returncode == 1 and "standard claim" in refused.stdout + refused.stderr
        client = register_client(server, "--first-party", "--claims", "groups,plan")
        key = service_key(server.folder)
        app = server.sign_in("gus@example.com")
        status, body, _ = server.call("GET", "/api/v1/auth/me", token=app["access_token"])
        headers = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}
        patched = requests.patch(server.url + "/api/v1/admin/users/" + body["id"], headers=headers,
                                 data=json.dumps({"groups": ["admins"], "app_metadata": {"groups": ["not-these"], "plan": "pro", "internal": "x"}}))
        assert patched.status_code == 200, patched.text
        token = code_flow(server, client, Browserish(), email="gus@example.com")
        keys = KeySet.import_key_set(requests.get(server.url + "/.well-known/jwks.json").json())
        claims = jwt.decode(token["id_token"], keys, algorithms=["RS256"]).claims
        assert claims["groups"] == ["admins"] and claims["plan"] == "pro" and "internal" not in claims
        info = userinfo(server, token).json()
        assert info["groups"] == ["admins"] and info["plan"] == "pro" and "internal" not in info


def test_token_userinfo_and_revoke_answer_a_public_clients_origin_only():
    with running_server(CONFIG) as server:
        spa = register_client(server, "--public", redirect="http://127.0.0.1:5173/callback")
        register_client(server, redirect="https://confidential.example/cb")
        for path in ("/oauth/token", "/oauth/userinfo", "/oauth/revoke"):
            pre = requests.options(server.url + path, headers={"Origin": "http://127.0.0.1:5173", "Access-Control-Request-Method": "POST"})
            assert pre.status_code == 204 and pre.headers["Access-Control-Allow-Origin"] == "http://127.0.0.1:5173", path
            assert "Access-Control-Allow-Credentials" not in pre.headers
            other = requests.options(server.url + path, headers={"Origin": "https://confidential.example"})
            assert "Access-Control-Allow-Origin" not in other.headers, path
        # The answer itself carries the header, errors too; another origin gets none.
        answered = requests.post(server.url + "/oauth/token", data={"grant_type": "authorization_code", "code": "x", "client_id": spa["client_id"]},
                                 headers={"Origin": "http://127.0.0.1:5173"})
        assert answered.status_code == 400 and answered.headers["Access-Control-Allow-Origin"] == "http://127.0.0.1:5173"
        foreign = requests.post(server.url + "/oauth/token", data={"grant_type": "authorization_code", "code": "x", "client_id": spa["client_id"]},
                                headers={"Origin": "https://evil.example"})
        assert "Access-Control-Allow-Origin" not in foreign.headers
        # Discovery and the JWKS are for anyone.
        assert requests.get(server.url + "/.well-known/jwks.json").headers["Access-Control-Allow-Origin"] == "*"


def test_a_client_introspects_its_own_tokens_only_and_a_deleted_clients_tokens_stop():
    with running_server(CONFIG) as server:
        a = register_client(server, "--first-party", name="A")
        b = register_client(server, "--first-party", name="B")
        token = code_flow(server, a, Browserish())
        ask = lambda auth=None, headers=None: requests.post(server.url + "/oauth/introspect", data={"token": token["access_token"]}, auth=auth,
                                                            headers=headers).json()
        own = ask(auth=(a["client_id"], a["client_secret"]))
        assert own["active"] is True and own["client_id"] == a["client_id"] and own["scope"] == "openid email"
        assert ask(auth=(b["client_id"], b["client_secret"])) == {"active": False}
        assert requests.post(server.url + "/oauth/introspect", data={"token": token["access_token"]}, auth=(a["client_id"], "wrong")).status_code == 401
        key = service_key(server.folder)
        assert ask(headers={"Authorization": "Bearer " + key})["active"] is True
        # An authd session's token is not a client's business.
        app = server.sign_in("lena@example.com")
        theirs = requests.post(server.url + "/oauth/introspect", data={"token": app["access_token"]}, auth=(a["client_id"], a["client_secret"]))
        assert theirs.json() == {"active": False}

        authd(server, "clients", "delete", a["client_id"])
        assert userinfo(server, token).status_code == 401
        assert ask(headers={"Authorization": "Bearer " + key}) == {"active": False}


def test_a_code_dies_with_the_browser_sign_in_it_came_from():
    with running_server(CONFIG) as server:
        client = register_client(server, "--first-party")
        browser = Browserish()
        verifier = generate_token(48)
        rp = OAuth2Session(client["client_id"], client["client_secret"], scope="openid", redirect_uri=REDIRECT, code_challenge_method="S256")
        url, _ = rp.create_authorization_url(server.url + "/oauth/authorize", code_verifier=verifier, nonce="n")
        callback = authorize(browser, server, url)
        account = browser.get(server.url + "/account")
        csrf = re.search(r'name="csrf" value="([^"]+)"', account.text).group(1)
        assert browser.post(server.url + "/logout", data={"csrf": csrf}, headers={"Origin": server.url}, allow_redirects=False).status_code == 303
        code = urllib.parse.parse_qs(urllib.parse.urlparse(callback).query)["code"][0]
        late = requests.post(server.url + "/oauth/token", data={"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
                                                                "code_verifier": verifier}, auth=(client["client_id"], client["client_secret"]))
        assert late.status_code == 400 and late.json()["error"] == "invalid_grant"


def test_keys_rotate_rotates_the_rsa_key_and_the_old_one_still_verifies():
    with running_server(CONFIG) as server:
        client = register_client(server, "--first-party")
        before = code_flow(server, client, Browserish())
        jwks = requests.get(server.url + "/.well-known/jwks.json").json()
        old_kid = jwt.decode(before["id_token"], KeySet.import_key_set(jwks), algorithms=["RS256"]).header["kid"]
        out = authd(server, "keys", "rotate").stdout
        assert "new RSA key" in out and old_kid in out
        jwks = requests.get(server.url + "/.well-known/jwks.json").json()
        rsa = [k["kid"] for k in jwks["keys"] if k["kty"] == "RSA"]
        assert len(rsa) == 2 and rsa[1] == old_kid
        keys = KeySet.import_key_set(jwks)
        assert jwt.decode(before["id_token"], keys, algorithms=["RS256"]).claims["aud"] == client["client_id"]
        assert userinfo(server, before).status_code == 200, "a token the retired key signed still works"
        after = code_flow(server, client, Browserish(), email="nia@example.com")
        assert jwt.decode(after["id_token"], keys, algorithms=["RS256"]).header["kid"] == rsa[0]


def test_clients_are_shown_changed_and_their_secrets_rotated_from_the_command_line():
    with running_server(CONFIG) as server:
        client = register_client(server)
        shown = json.loads(authd(server, "clients", "show", client["client_id"], "--json").stdout)
        assert shown["client_id"] == client["client_id"] and shown["id_token_alg"] == "RS256" and "secret_hash" not in shown
        changed = authd(server, "clients", "update", client["client_id"], "--claims", "groups", "--id-token-alg", "EdDSA").stdout
        assert "claims: groups" in changed and "id_token_alg: EdDSA" in changed
        assert authd(server, "clients", "update", client["client_id"], "--claims", "sub", check=False).returncode == 1

        def authenticates(secret):
            return requests.post(server.url + "/oauth/revoke", data={"token": "x"}, auth=(client["client_id"], secret)).status_code == 200

        rotated = authd(server, "clients", "rotate-secret", client["client_id"], "--grace", "600").stdout
        new = json.loads(rotated[: rotated.rindex("}") + 1])["client_secret"]
        assert authenticates(new) and authenticates(client["client_secret"]), "the old secret works through the grace"
        assert "previous secret works until" in authd(server, "clients", "show", client["client_id"]).stdout
        rotated = authd(server, "clients", "rotate-secret", client["client_id"]).stdout
        latest = json.loads(rotated[: rotated.rindex("}") + 1])["client_secret"]
        assert authenticates(latest) and not authenticates(new) and not authenticates(client["client_secret"])

        # `authd check` warns of a client redirecting to the issuer's own host (cookies ignore ports).
        check = authd(server, "check").stdout
        assert re.search(r"warning\s+client " + re.escape(client["client_id"]) + r" .*issuer's host", check), check


def test_authorize_is_limited_per_network_and_token_per_client():
    with running_server({**CONFIG, "openid": {"authorize_per_ip": {"limit": 2, "window": 600}, "token_per_client": {"limit": 2, "window": 600}}}) as server:
        client = register_client(server, "--first-party")
        other = register_client(server, "--first-party", name="Other")
        url = server.url + "/oauth/authorize?" + urllib.parse.urlencode({"client_id": client["client_id"], "redirect_uri": REDIRECT, "response_type": "code",
                                                                          "scope": "openid", "nonce": "n"})
        answers = [requests.get(url, allow_redirects=False).status_code for _ in range(3)]
        assert answers[:2] == [302, 302] and answers[2] == 429
        form = {"grant_type": "authorization_code", "code": "nothing", "redirect_uri": REDIRECT}
        tries = [requests.post(server.url + "/oauth/token", data=form, auth=(client["client_id"], client["client_secret"])) for _ in range(3)]
        assert [t.status_code for t in tries[:2]] == [400, 400] and tries[2].status_code == 429
        assert int(tries[2].headers["Retry-After"]) > 0
        # Another client's budget is its own.
        assert requests.post(server.url + "/oauth/token", data=form, auth=(other["client_id"], other["client_secret"])).status_code == 400


def test_a_client_registered_pkce_optional_signs_in_as_gitea_does_with_neither_pkce_nor_nonce():
    """Gitea's OpenID Connect login source sends only `state` (contract §13): registered
    --pkce optional it works; without that registration the same request is refused."""
    with running_server(CONFIG) as server:
        gitea = register_client(server, "--pkce", "optional", "--first-party", name="Gitea")
        strict = register_client(server, "--first-party", name="Strict")
        browser = Browserish()

        def ask(client):
            return server.url + "/oauth/authorize?" + urllib.parse.urlencode({
                "client_id": client["client_id"], "redirect_uri": REDIRECT, "response_type": "code", "scope": "openid email profile", "state": "g1"})

        refused = browser.get(ask(strict), allow_redirects=False)
        assert urllib.parse.parse_qs(urllib.parse.urlparse(refused.headers["Location"]).query)["error"] == ["invalid_request"]
        callback = authorize(browser, server, ask(gitea), email="gil@example.com")
        query = urllib.parse.parse_qs(urllib.parse.urlparse(callback).query)
        assert query["state"] == ["g1"]
        # Gitea's token request: client_secret_post, no code_verifier.
        token = requests.post(server.url + "/oauth/token", data={"grant_type": "authorization_code", "code": query["code"][0], "redirect_uri": REDIRECT,
                                                                "client_id": gitea["client_id"], "client_secret": gitea["client_secret"]})
        assert token.status_code == 200, token.text
        keys = KeySet.import_key_set(requests.get(server.url + "/.well-known/jwks.json").json())
        claims = jwt.decode(token.json()["id_token"], keys, algorithms=["RS256"]).claims
        assert claims["email"] == "gil@example.com" and "nonce" not in claims
        # A code of such a client still needs its secret.
        again = authorize(browser, server, ask(gitea), email="gil@example.com")
        code = urllib.parse.parse_qs(urllib.parse.urlparse(again).query)["code"][0]
        stolen = requests.post(server.url + "/oauth/token", data={"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
                                                                 "client_id": gitea["client_id"]})
        assert stolen.status_code == 401 and stolen.json()["error"] == "invalid_client"


def test_the_state_comes_back_exactly_as_sent():
    with running_server(CONFIG) as server:
        client = register_client(server, "--first-party")
        state = "a+b c/d?e=f&g%h"
        url = server.url + "/oauth/authorize?" + urllib.parse.urlencode({
            "client_id": client["client_id"], "redirect_uri": REDIRECT, "response_type": "code", "scope": "openid", "state": state})
        back = requests.get(url, allow_redirects=False).headers["Location"]  # no PKCE: an error, with the state
        assert urllib.parse.parse_qs(urllib.parse.urlparse(back).query)["state"] == [state]


def authorize_url(server, client, redirect=REDIRECT, **extra):
    challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    return server.url + "/oauth/authorize?" + urllib.parse.urlencode({
        "client_id": client["client_id"], "redirect_uri": redirect, "response_type": "code", "scope": "openid", "nonce": "n",
        "code_challenge": challenge, "code_challenge_method": "S256", **extra})


def test_a_public_clients_loopback_redirect_may_use_any_port_and_nothing_else_bends():
    with running_server(CONFIG) as server:
        native = register_client(server, "--public", name="CLI", redirect="http://127.0.0.1:5173/cb")
        web = register_client(server, name="Web", redirect="http://127.0.0.1:5173/cb")
        # RFC 8252 §7.3: a native app's loopback redirect, any port.
        assert requests.get(authorize_url(server, native, "http://127.0.0.1:49152/cb"), allow_redirects=False).status_code == 302
        for bad in ("http://127.0.0.1:49152/other", "http://localhost:49152/cb", "https://127.0.0.1:49152/cb"):
            answer = requests.get(authorize_url(server, native, bad), allow_redirects=False)
            assert answer.status_code == 400 and "Location" not in answer.headers, bad
        # A confidential client's redirect matches exactly, port included.
        answer = requests.get(authorize_url(server, web, "http://127.0.0.1:49152/cb"), allow_redirects=False)
        assert answer.status_code == 400 and "Location" not in answer.headers


def test_no_implicit_hybrid_or_password_grant():
    with running_server(CONFIG) as server:
        client = register_client(server, "--first-party")
        for response_type in ("token", "id_token", "code id_token", "code token"):
            back = requests.get(authorize_url(server, client, response_type=response_type), allow_redirects=False)
            assert back.status_code == 302, response_type
            assert urllib.parse.parse_qs(urllib.parse.urlparse(back.headers["Location"]).query)["error"] == ["unsupported_response_type"]
        password = requests.post(server.url + "/oauth/token", data={"grant_type": "password", "username": "a@example.com", "password": "x"},
                                 auth=(client["client_id"], client["client_secret"]))
        assert password.status_code == 400 and password.json()["error"] == "unsupported_grant_type"


def test_a_code_is_bound_to_its_client_and_redirect_uri():
    with running_server(CONFIG) as server:
        a = register_client(server, "--first-party", name="A")
        b = register_client(server, "--first-party", name="B")
        verifier = generate_token(48)
        rp = OAuth2Session(a["client_id"], a["client_secret"], scope="openid", redirect_uri=REDIRECT, code_challenge_method="S256")
        url, _ = rp.create_authorization_url(server.url + "/oauth/authorize", code_verifier=verifier, nonce="n")
        code = urllib.parse.parse_qs(urllib.parse.urlparse(authorize(Browserish(), server, url)).query)["code"][0]
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "code_verifier": verifier}
        other = requests.post(server.url + "/oauth/token", data=form, auth=(b["client_id"], b["client_secret"]))
        assert other.status_code == 400 and other.json()["error"] == "invalid_grant"
        # The attempt used the code up: not even its own client redeems it now (a code works once).
        own = requests.post(server.url + "/oauth/token", data={**form, "redirect_uri": REDIRECT}, auth=(a["client_id"], a["client_secret"]))
        assert own.status_code == 400
        code = urllib.parse.parse_qs(urllib.parse.urlparse(authorize(Browserish(), server, url)).query)["code"][0]
        moved = requests.post(server.url + "/oauth/token", data={**form, "code": code, "redirect_uri": "http://127.0.0.1:9/other"},
                              auth=(a["client_id"], a["client_secret"]))
        assert moved.status_code == 400 and moved.json()["error"] == "invalid_grant"


def test_client_secrets_are_kept_only_as_hashes():
    import glob
    with running_server(CONFIG) as server:
        client = register_client(server)
        rotated = authd(server, "clients", "rotate-secret", client["client_id"], "--grace", "60").stdout
        new = json.loads(rotated[: rotated.rindex("}") + 1])["client_secret"]
        stored = b"".join(open(f, "rb").read() for f in glob.glob(server.folder + "/**/*", recursive=True) if os.path.isfile(f))
        for secret in (client["client_secret"], new):
            assert secret.encode() not in stored and secret[len("authd_cs_"):].encode() not in stored


def test_max_age_and_prompt_login_ask_for_a_new_sign_in_and_prompt_none_never_shows_a_page():
    with running_server(CONFIG) as server:
        client = register_client(server, "--first-party")
        native = register_client(server, "--public", name="Native", redirect="http://127.0.0.1:5173/cb")
        browser = Browserish()
        rp = OAuth2Session(client["client_id"], client["client_secret"], scope="openid", redirect_uri=REDIRECT, code_challenge_method="S256")
        url, _ = rp.create_authorization_url(server.url + "/oauth/authorize", code_verifier=generate_token(48), nonce="n")
        authorize(browser, server, url)  # signed in now
        assert browser.get(url, allow_redirects=False).headers["Location"].startswith(REDIRECT + "?code=")
        time.sleep(1.1)  # auth_time is in whole seconds
        for extra in ({"max_age": "0"}, {"prompt": "login"}):
            again = browser.get(url + "&" + urllib.parse.urlencode(extra), allow_redirects=False)
            assert again.status_code == 302 and again.headers["Location"].startswith("/login?"), extra
            # The sign-in page asks, rather than sending the signed-in browser straight back to an
            # authorize request that wants a newer sign-in (which would loop).
            page = browser.get(server.url + again.headers["Location"], allow_redirects=False)
            assert page.status_code == 200 and "Sign in" in page.text, (extra, page.status_code, page.headers.get("Location"))
        # prompt=none: never a page; a native client, whose consent is never remembered, gets consent_required.
        silent = browser.get(authorize_url(server, native, "http://127.0.0.1:5173/cb", prompt="none"), allow_redirects=False)
        assert urllib.parse.parse_qs(urllib.parse.urlparse(silent.headers["Location"]).query)["error"] == ["consent_required"]


def test_the_authorization_server_metadata_names_the_device_endpoint_too():
    with running_server(CONFIG) as server:
        oidc = requests.get(server.url + "/.well-known/openid-configuration").json()
        rfc8414 = requests.get(server.url + "/.well-known/oauth-authorization-server").json()
        assert rfc8414["device_authorization_endpoint"] == server.url + "/oauth/device_authorization"
        assert {k: v for k, v in rfc8414.items() if k not in ("device_authorization_endpoint", "grant_types_supported")} == \
            {k: v for k, v in oidc.items() if k != "grant_types_supported"}
        assert "urn:ietf:params:oauth:grant-type:device_code" in rfc8414["grant_types_supported"]


def test_disabling_or_deleting_the_account_ends_its_client_tokens():
    with running_server(CONFIG) as server:
        client = register_client(server, "--first-party")
        key = service_key(server.folder)
        admin = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}
        for email, action in (("dora@example.com", "disable"), ("dell@example.com", "delete")):
            token = code_flow(server, client, Browserish(), scope="openid offline_access", email=email)
            assert userinfo(server, token).status_code == 200
            user_id = requests.post(server.url + "/oauth/introspect", data={"token": token["access_token"]},
                                    headers={"Authorization": "Bearer " + key}).json()["sub"]
            if action == "disable":
                assert requests.patch(server.url + "/api/v1/admin/users/" + user_id, data=json.dumps({"disabled": True}), headers=admin).status_code == 200
            else:
                assert requests.delete(server.url + "/api/v1/admin/users/" + user_id, headers=admin).status_code == 204
            assert userinfo(server, token).status_code == 401, action
            refreshed = requests.post(server.url + "/oauth/token", data={"grant_type": "refresh_token", "refresh_token": token["refresh_token"]},
                                      auth=(client["client_id"], client["client_secret"]))
            assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant", action
