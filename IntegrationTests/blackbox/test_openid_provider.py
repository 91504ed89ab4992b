"""authd as an OpenID Provider, as a relying party sees it (contract §13, first part): Authlib runs the
authorization-code flow with PKCE against the real binary — discovery, authorize, sign-in on authd's
pages, consent, token — joserfc checks the ID token against the published JWKS, and userinfo answers;
then the rules a relying party must be able to count on: exact redirects, no redirect for an unknown
client, PKCE, single-use codes (a replay ends what the code issued), client tokens never taken by
authd's own API."""
import json
import os
import re
import subprocess
import urllib.parse

import pytest
import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from joserfc import jwt
from joserfc.jwk import KeySet

from conftest import running_server
from test_pages import PAGES, Browserish

BINARY = os.environ.get("AUTHD_BINARY", ".build/debug/authd")
REDIRECT = "http://127.0.0.1:9/callback"


def register_client(server, *flags, name="Test app", redirect=REDIRECT):
    out = subprocess.run([BINARY, "clients", "create", name, "--redirect-uri", redirect, *flags, "--data", server.folder],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out[: out.rindex("}") + 1])


def sign_in_on_the_page(browser, server, login_url, email):
    """From the /login page the authorize request sent the browser to, with the mailed code."""
    page = browser.get(login_url)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
    origin = {"Origin": server.url}
    before = len(server.outbox())
    browser.post(server.url + "/login/email/send", data={"csrf": csrf, "email": email}, headers=origin)
    done = browser.post(server.url + "/login/email/verify", data={"csrf": csrf, "code": server.mailed_code(email, after=before)}, headers=origin,
                        allow_redirects=False)
    assert done.status_code == 303
    return done.headers["Location"]


def authorize(browser, server, url, email="rita@example.com", consent="allow"):
    """Follows an authorize URL as a browser would, signing in and answering consent; returns the
    redirect back to the client."""
    answer = browser.get(url, allow_redirects=False)
    if answer.status_code == 302 and urllib.parse.urlparse(answer.headers["Location"]).path == "/login":
        back = sign_in_on_the_page(browser, server, server.url + answer.headers["Location"], email)
        answer = browser.get(server.url + back, allow_redirects=False)
    if answer.status_code == 200 and "consent" in answer.text:
        csrf = re.search(r'name="csrf" value="([^"]+)"', answer.text).group(1)
        sealed = re.search(r'name="request" value="([^"]+)"', answer.text).group(1)
        answer = browser.post(server.url + "/oauth/authorize/consent", data={"csrf": csrf, "request": sealed, "decision": consent},
                              headers={"Origin": server.url}, allow_redirects=False)
    assert answer.status_code == 302, answer.text[:500]
    return answer.headers["Location"]


def test_authlib_signs_a_person_in_with_the_code_flow_and_pkce():
    with running_server(PAGES) as server:
        client = register_client(server)
        discovery = requests.get(server.url + "/.well-known/openid-configuration")
        assert discovery.headers["Access-Control-Allow-Origin"] == "*"
        meta = discovery.json()
        assert meta["issuer"] == server.url and meta["authorization_response_iss_parameter_supported"] is True
        assert meta["code_challenge_methods_supported"] == ["S256"] and meta["response_types_supported"] == ["code"]
        assert meta["id_token_signing_alg_values_supported"] == ["RS256", "EdDSA", "Ed25519"]

        rp = OAuth2Session(client["client_id"], client["client_secret"], scope="openid email profile", redirect_uri=REDIRECT,
                           code_challenge_method="S256")
        verifier, nonce = generate_token(48), generate_token(20)
        url, state = rp.create_authorization_url(meta["authorization_endpoint"], code_verifier=verifier, nonce=nonce)
        browser = Browserish()
        callback = authorize(browser, server, url)
        query = urllib.parse.parse_qs(urllib.parse.urlparse(callback).query)
        assert query["state"] == [state] and query["iss"] == [server.url]

        token = rp.fetch_token(meta["token_endpoint"], authorization_response=callback, code_verifier=verifier)
        assert token["token_type"] == "Bearer" and set(token["scope"].split()) == {"openid", "email", "profile"}
        assert "refresh_token" not in token, "no offline_access asked"
        keys = KeySet.import_key_set(requests.get(meta["jwks_uri"]).json())
        id_token = jwt.decode(token["id_token"], keys, algorithms=["RS256"])
        assert id_token.header["alg"] == "RS256", "RS256 by default: many relying parties accept nothing else"
        rsa = [k for k in requests.get(meta["jwks_uri"]).json()["keys"] if k["kty"] == "RSA"]
        assert len(rsa) == 1 and rsa[0]["kid"] == id_token.header["kid"] and len(rsa[0]["n"]) >= 342  # 2048 bits
        claims = id_token.claims
        assert claims["iss"] == server.url and claims["aud"] == client["client_id"] and claims["nonce"] == nonce
        assert claims["email"] == "rita@example.com" and claims["email_verified"] is True and claims["amr"] == ["email"]
        # at_hash (RS256): the left half of the access token's SHA-256, base64url.
        import base64, hashlib
        digest = hashlib.sha256(token["access_token"].encode()).digest()[:16]
        assert claims["at_hash"] == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        access = jwt.decode(token["access_token"], keys, algorithms=["RS256"])
        assert access.header["typ"] == "at+jwt" and access.claims["aud"] == client["client_id"] and access.claims["client_id"] == client["client_id"]

        userinfo = rp.get(meta["userinfo_endpoint"]).json()
        assert userinfo == {"sub": claims["sub"], "email": "rita@example.com", "email_verified": True}
        # A client's token is not one of authd's own: the account API refuses it.
        me = requests.get(server.url + "/api/v1/auth/me", headers={"Authorization": "Bearer " + token["access_token"]})
        assert me.status_code == 401

        # Consent is remembered: the next authorize goes straight back with a code.
        url2, _ = rp.create_authorization_url(meta["authorization_endpoint"], code_verifier=generate_token(48), nonce=generate_token(20))
        back = browser.get(url2, allow_redirects=False)
        assert back.status_code == 302 and back.headers["Location"].startswith(REDIRECT + "?code=")


def test_a_code_works_once_and_its_replay_ends_what_it_issued():
    with running_server(PAGES) as server:
        client = register_client(server, "--first-party")
        verifier = generate_token(48)
        rp = OAuth2Session(client["client_id"], client["client_secret"], scope="openid", redirect_uri=REDIRECT, code_challenge_method="S256")
        url, _ = rp.create_authorization_url(server.url + "/oauth/authorize", code_verifier=verifier, nonce="n")
        callback = authorize(Browserish(), server, url)  # first-party: no consent asked
        code = urllib.parse.parse_qs(urllib.parse.urlparse(callback).query)["code"][0]
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "code_verifier": verifier}
        auth = (client["client_id"], client["client_secret"])
        first = requests.post(server.url + "/oauth/token", data=form, auth=auth)
        assert first.status_code == 200
        access = first.json()["access_token"]
        assert requests.get(server.url + "/oauth/userinfo", headers={"Authorization": "Bearer " + access}).status_code == 200
        again = requests.post(server.url + "/oauth/token", data=form, auth=auth)
        assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
        assert requests.get(server.url + "/oauth/userinfo", headers={"Authorization": "Bearer " + access}).status_code == 401


def test_pkce_redirects_and_client_authentication_are_checked():
    with running_server(PAGES) as server:
        client = register_client(server, "--first-party")
        browser = Browserish()
        base = server.url + "/oauth/authorize?" + urllib.parse.urlencode(
            {"client_id": client["client_id"], "redirect_uri": REDIRECT, "response_type": "code", "scope": "openid", "state": "s1"})
        # An unknown client or an unregistered redirect never redirects.
        for bad in (base.replace(client["client_id"], "nobody"), base.replace(urllib.parse.quote(REDIRECT, safe=""), urllib.parse.quote("https://evil.example/cb", safe=""))):
            page = browser.get(bad, allow_redirects=False)
            assert page.status_code == 400 and "Location" not in page.headers
        # Without PKCE (not registered --pkce optional): back to the client with the error, the state and iss.
        missing = browser.get(base, allow_redirects=False)
        assert missing.status_code == 302
        back = urllib.parse.parse_qs(urllib.parse.urlparse(missing.headers["Location"]).query)
        assert back["error"] == ["invalid_request"] and back["state"] == ["s1"] and back["iss"] == [server.url]
        # prompt=none without a signed-in browser: login_required.
        challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        silent = browser.get(base + "&code_challenge=" + challenge + "&code_challenge_method=S256&prompt=none", allow_redirects=False)
        assert urllib.parse.parse_qs(urllib.parse.urlparse(silent.headers["Location"]).query)["error"] == ["login_required"]

        # A wrong verifier and a wrong secret are refused.
        verifier = generate_token(48)
        rp = OAuth2Session(client["client_id"], client["client_secret"], scope="openid", redirect_uri=REDIRECT, code_challenge_method="S256")
        url, _ = rp.create_authorization_url(server.url + "/oauth/authorize", code_verifier=verifier, nonce="n")
        code = urllib.parse.parse_qs(urllib.parse.urlparse(authorize(browser, server, url)).query)["code"][0]
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "code_verifier": verifier}
        wrong_secret = requests.post(server.url + "/oauth/token", data=form, auth=(client["client_id"], "authd_cs_wrong"))
        assert wrong_secret.status_code == 401 and wrong_secret.json()["error"] == "invalid_client"
        wrong_verifier = requests.post(server.url + "/oauth/token", data={**form, "code_verifier": generate_token(48)},
                                       auth=(client["client_id"], client["client_secret"]))
        assert wrong_verifier.status_code == 400 and wrong_verifier.json()["error"] == "invalid_grant"


def test_the_consent_page_can_say_no():
    with running_server(PAGES) as server:
        client = register_client(server, name='Acme <script>')
        rp = OAuth2Session(client["client_id"], client["client_secret"], scope="openid email", redirect_uri=REDIRECT, code_challenge_method="S256")
        url, state = rp.create_authorization_url(server.url + "/oauth/authorize", code_verifier=generate_token(48), nonce="n")
        browser = Browserish()
        first = browser.get(url, allow_redirects=False)
        back = sign_in_on_the_page(browser, server, server.url + first.headers["Location"], "sam@example.com")
        consent = browser.get(server.url + back)
        assert "Acme &lt;script&gt;" in consent.text and "your email address" in consent.text
        assert consent.headers["X-Frame-Options"] == "DENY"
        csrf = re.search(r'name="csrf" value="([^"]+)"', consent.text).group(1)
        sealed = re.search(r'name="request" value="([^"]+)"', consent.text).group(1)
        foreign = browser.post(server.url + "/oauth/authorize/consent", data={"csrf": csrf, "request": sealed, "decision": "allow"},
                               headers={"Origin": "https://evil.example"}, allow_redirects=False)
        assert foreign.status_code == 403
        denied = browser.post(server.url + "/oauth/authorize/consent", data={"csrf": csrf, "request": sealed, "decision": "deny"},
                              headers={"Origin": server.url}, allow_redirects=False)
        query = urllib.parse.parse_qs(urllib.parse.urlparse(denied.headers["Location"]).query)
        assert query["error"] == ["access_denied"] and query["state"] == [state]


@pytest.mark.parametrize("alg", ["EdDSA", "Ed25519"])
def test_a_client_may_ask_for_ed25519_id_tokens(alg):
    with running_server(PAGES) as server:
        client = register_client(server, "--first-party", "--id-token-alg", alg)
        verifier = generate_token(48)
        rp = OAuth2Session(client["client_id"], client["client_secret"], scope="openid", redirect_uri=REDIRECT, code_challenge_method="S256")
        url, _ = rp.create_authorization_url(server.url + "/oauth/authorize", code_verifier=verifier, nonce="n")
        token = rp.fetch_token(server.url + "/oauth/token", authorization_response=authorize(Browserish(), server, url), code_verifier=verifier)
        jwks = requests.get(server.url + "/.well-known/jwks.json").json()
        header = json.loads(base64url(token["id_token"].split(".")[0]))
        assert header["alg"] == alg
        entry = next(k for k in jwks["keys"] if k["kid"] == header["kid"])
        assert entry["alg"] == alg and entry["kty"] == "OKP" and entry["crv"] == "Ed25519"
        if alg == "EdDSA":
            assert jwt.decode(token["id_token"], KeySet.import_key_set(jwks), algorithms=["EdDSA"]).claims["aud"] == client["client_id"]
        else:
            # RFC 9864's name for the same signature: checked with the key the entry names.
            from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
            signing_input, signature = token["id_token"].rsplit(".", 1)
            Ed25519PublicKey.from_public_bytes(base64url(entry["x"])).verify(base64url(signature), signing_input.encode())
        assert requests.get(server.url + "/oauth/userinfo", headers={"Authorization": "Bearer " + token["access_token"]}).status_code == 200


def base64url(text):
    import base64
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def test_offline_access_gives_a_refresh_token_that_rotates_and_revocation_ends_it():
    with running_server({**PAGES, "tokens": {"refresh_reuse_grace": 0}}) as server:
        client = register_client(server, "--first-party")
        verifier = generate_token(48)
        rp = OAuth2Session(client["client_id"], client["client_secret"], scope="openid email offline_access", redirect_uri=REDIRECT,
                           code_challenge_method="S256")
        url, _ = rp.create_authorization_url(server.url + "/oauth/authorize", code_verifier=verifier, nonce="first")
        token = rp.fetch_token(server.url + "/oauth/token", authorization_response=authorize(Browserish(), server, url), code_verifier=verifier)
        assert "refresh_token" in token and "offline_access" in token["scope"].split()
        keys = KeySet.import_key_set(requests.get(server.url + "/.well-known/jwks.json").json())
        first = jwt.decode(token["id_token"], keys, algorithms=["RS256"]).claims

        old_refresh = token["refresh_token"]
        refreshed = rp.refresh_token(server.url + "/oauth/token", refresh_token=old_refresh)
        assert refreshed["refresh_token"] != old_refresh
        second = jwt.decode(refreshed["id_token"], keys, algorithms=["RS256"]).claims
        assert second["sub"] == first["sub"] and second["auth_time"] == first["auth_time"] and "nonce" not in second

        # An authd session's refresh token is not a client's, and a client's needs its client.
        app = server.sign_in("other@example.com")
        mixed = requests.post(server.url + "/oauth/token", data={"grant_type": "refresh_token", "refresh_token": app["refresh_token"]},
                              auth=(client["client_id"], client["client_secret"]))
        assert mixed.status_code == 400 and mixed.json()["error"] == "invalid_grant"
        bare = requests.post(server.url + "/oauth/token", data={"grant_type": "refresh_token", "refresh_token": refreshed["refresh_token"]})
        assert bare.status_code == 400 and bare.json()["error"] == "invalid_grant"

        # The rotated-out token again is reuse: that grant ends (its newest token too).
        reused = requests.post(server.url + "/oauth/token", data={"grant_type": "refresh_token", "refresh_token": old_refresh},
                               auth=(client["client_id"], client["client_secret"]))
        assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
        gone = requests.post(server.url + "/oauth/token", data={"grant_type": "refresh_token", "refresh_token": refreshed["refresh_token"]},
                             auth=(client["client_id"], client["client_secret"]))
        assert gone.status_code == 400

        # Revocation (RFC 7009) of a fresh grant's refresh token ends its access token too.
        verifier = generate_token(48)
        url, _ = rp.create_authorization_url(server.url + "/oauth/authorize", code_verifier=verifier, nonce="again")
        token = rp.fetch_token(server.url + "/oauth/token", authorization_response=authorize(Browserish(), server, url, email="rhea@example.com"),
                               code_verifier=verifier)
        bearer = {"Authorization": "Bearer " + token["access_token"]}
        assert requests.get(server.url + "/oauth/userinfo", headers=bearer).status_code == 200
        revoked = requests.post(server.url + "/oauth/revoke", data={"token": token["refresh_token"]}, auth=(client["client_id"], client["client_secret"]))
        assert revoked.status_code == 200
        assert requests.get(server.url + "/oauth/userinfo", headers=bearer).status_code == 401
        # Unknown tokens are answered 200 too; a wrong client secret is not.
        assert requests.post(server.url + "/oauth/revoke", data={"token": "nothing"}, auth=(client["client_id"], client["client_secret"])).status_code == 200
        assert requests.post(server.url + "/oauth/revoke", data={"token": "nothing"}, auth=(client["client_id"], "wrong")).status_code == 401


def test_a_password_reset_ends_every_client_token():
    with running_server(PAGES) as server:
        client = register_client(server, "--first-party")
        from test_pages import register_password
        register_password(server, "tess@example.com", "correct horse battery")
        verifier = generate_token(48)
        rp = OAuth2Session(client["client_id"], client["client_secret"], scope="openid offline_access", redirect_uri=REDIRECT,
                           code_challenge_method="S256")
        url, _ = rp.create_authorization_url(server.url + "/oauth/authorize", code_verifier=verifier, nonce="n")
        browser = Browserish()
        first = browser.get(url, allow_redirects=False)
        page = browser.get(server.url + first.headers["Location"])
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        done = browser.post(server.url + "/login/password/login", data={"csrf": csrf, "email": "tess@example.com", "password": "correct horse battery"},
                            headers={"Origin": server.url}, allow_redirects=False)
        callback = browser.get(server.url + done.headers["Location"], allow_redirects=False).headers["Location"]
        token = rp.fetch_token(server.url + "/oauth/token", authorization_response=callback, code_verifier=verifier)
        bearer = {"Authorization": "Bearer " + token["access_token"]}
        assert requests.get(server.url + "/oauth/userinfo", headers=bearer).status_code == 200
        server.call("POST", "/api/v1/auth/password/reset/email/initiate", {"email": "tess@example.com"})
        code = server.mailed_code("tess@example.com", about="reset")
        status, body, _ = server.call("POST", "/api/v1/auth/password/reset/email/verify",
                                      {"email": "tess@example.com", "code": code, "new_password": "a new horse battery"})
        assert status in (200, 204), body
        assert requests.get(server.url + "/oauth/userinfo", headers=bearer).status_code == 401
        after = requests.post(server.url + "/oauth/token", data={"grant_type": "refresh_token", "refresh_token": token["refresh_token"]},
                              auth=(client["client_id"], client["client_secret"]))
        assert after.status_code == 400


def test_a_person_sees_and_ends_the_apps_they_allowed():
    with running_server(PAGES) as server:
        client = register_client(server, name="Photo frame web")
        verifier = generate_token(48)
        rp = OAuth2Session(client["client_id"], client["client_secret"], scope="openid email", redirect_uri=REDIRECT, code_challenge_method="S256")
        url, _ = rp.create_authorization_url(server.url + "/oauth/authorize", code_verifier=verifier, nonce="n")
        browser = Browserish()
        token = rp.fetch_token(server.url + "/oauth/token", authorization_response=authorize(browser, server, url, email="gail@example.com"),
                               code_verifier=verifier)
        app = server.sign_in("gail@example.com")
        status, listed, _ = server.call("GET", "/api/v1/auth/grants", token=app["access_token"])
        assert status == 200 and [(g["client_id"], g["name"], sorted(g["scopes"])) for g in listed["grants"]] == [
            (client["client_id"], "Photo frame web", ["email", "openid"])]
        assert listed["grants"][0]["last_used_at"] is not None
        # The account page shows it too.
        account = browser.get(server.url + "/account")
        assert "Photo frame web" in account.text and "Apps you allowed" in account.text

        assert server.call("DELETE", "/api/v1/auth/grants/" + client["client_id"], token=app["access_token"])[0] == 204
        assert server.call("DELETE", "/api/v1/auth/grants/" + client["client_id"], token=app["access_token"])[0] == 404
        assert requests.get(server.url + "/oauth/userinfo", headers={"Authorization": "Bearer " + token["access_token"]}).status_code == 401
        # Consent is asked again.
        again, _ = rp.create_authorization_url(server.url + "/oauth/authorize", code_verifier=generate_token(48), nonce="n2")
        page = browser.get(again, allow_redirects=False)
        assert page.status_code == 200 and "consent" in page.text
