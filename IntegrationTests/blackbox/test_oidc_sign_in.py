"""Sign-in with another OpenID Provider (contract §16), tested with two authd processes: one is the
upstream OpenID Provider (§13), with apps registered for each ID-token algorithm; the other lists it
in `oidc.providers`. Authlib runs the code flow on the upstream as an app would, and the ID token it
gets is what a native app hands the second authd."""
import contextlib

import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from joserfc import jwt
from joserfc.jwk import KeySet

from conftest import running_server
from test_openid_provider import REDIRECT, authorize, register_client
from test_pages import PAGES, Browserish


@contextlib.contextmanager
def upstream_and_downstream(trusted=False, extra_providers=None):
    """The upstream authd with three apps (RS256, EdDSA, Ed25519), and a downstream authd whose
    `upstream` (and `trusted`, with trust_email) is it."""
    with running_server({**PAGES, "email": {"resend_interval": 0}}) as up:
        apps = {alg: register_client(up, "--first-party", "--id-token-alg", alg, name=f"Downstream {alg}") for alg in ("RS256", "EdDSA", "Ed25519")}
        ids = [app["client_id"] for app in apps.values()]
        entry = {"issuer": up.url, "client_id": ids[0], "audiences": ids[1:]}
        providers = {"upstream": entry, "trusted": {**entry, "trust_email": True}, **(extra_providers or {})}
        with running_server({"providers": ["email", "oidc"], "email": {"resend_interval": 0}, "oidc": {"providers": providers}}) as down:
            yield up, down, apps


def id_token(up, app, email, browser=None, nonce=None):
    """The ID token the upstream gives `app` for `email`, after a sign-in on its pages (Authlib, PKCE)."""
    rp = OAuth2Session(app["client_id"], app["client_secret"], scope="openid email profile", redirect_uri=REDIRECT, code_challenge_method="S256")
    verifier, nonce = generate_token(48), nonce or generate_token(20)
    url, _ = rp.create_authorization_url(up.url + "/oauth/authorize", code_verifier=verifier, nonce=nonce)
    callback = authorize(browser or Browserish(), up, url, email=email)
    token = rp.fetch_token(up.url + "/oauth/token", authorization_response=callback, code_verifier=verifier)
    return token["id_token"], nonce


def exchange(down, token, nonce, name="upstream", bearer=None):
    headers = {"Authorization": "Bearer " + bearer} if bearer else {}
    return requests.post(down.url + f"/api/v1/auth/oidc/{name}", json={"id_token": token, "nonce": nonce, "device_name": "phone"}, headers=headers)


def test_a_first_sign_in_makes_an_account_for_each_algorithm_and_a_token_works_once():
    with upstream_and_downstream() as (up, down, apps):
        keys = KeySet.import_key_set(requests.get(up.url + "/.well-known/jwks.json").json())
        users = set()
        for alg, app in apps.items():
            token, nonce = id_token(up, app, f"{alg.lower()}@example.com")
            assert jwt.decode(token, keys, algorithms=[alg]).header["alg"] == alg  # what joserfc reads is what authd takes
            answer = exchange(down, token, nonce)
            assert answer.status_code == 200, (alg, answer.text)
            session = answer.json()
            assert session["user"]["email"] is None, "an upstream not trusted for email gives the account none"
            claims = jwt.decode(session["access_token"], KeySet.import_key_set(requests.get(down.url + "/.well-known/jwks.json").json()), algorithms=["EdDSA"]).claims
            assert claims["amr"] == ["oidc"] and claims["sub"] == session["user"]["id"]
            users.add(session["user"]["id"])
            replay = exchange(down, token, nonce)
            assert replay.status_code == 401 and replay.json()["error"]["code"] == "INVALID_ID_TOKEN", "accepted once"
        assert len(users) == 3
        # The same upstream person signs in to the same account the next time.
        token, nonce = id_token(up, apps["RS256"], "rs256@example.com")
        assert exchange(down, token, nonce).json()["user"]["id"] in users


def test_a_trusted_upstream_joins_the_verified_account_and_its_owner_is_told():
    with upstream_and_downstream() as (up, down, apps):
        rita = down.sign_in("rita@example.com")
        token, nonce = id_token(up, apps["RS256"], "rita@example.com")
        before = len(down.outbox() or [])
        joined = exchange(down, token, nonce, name="trusted")
        assert joined.status_code == 200 and joined.json()["user"]["id"] == rita["user"]["id"]
        notice = down.mailed("rita@example.com", after=before)
        assert "/not-me" in notice["text"], "a new way to sign in was added: the owner is told, with a way to take it back"
        # Untrusted, the same person's token makes an account of its own.
        token, nonce = id_token(up, apps["EdDSA"], "rita@example.com")
        other = exchange(down, token, nonce)
        assert other.status_code == 200 and other.json()["user"]["id"] != rita["user"]["id"]


def test_a_signed_in_user_links_the_identity_and_one_linked_elsewhere_answers_409():
    with upstream_and_downstream() as (up, down, apps):
        bea = down.sign_in("bea@example.com")
        browser = Browserish()
        token, nonce = id_token(up, apps["RS256"], "bea-upstream@example.com", browser=browser)
        linked = exchange(down, token, nonce, bearer=bea["access_token"])
        assert linked.status_code == 200 and linked.json()["user"]["id"] == bea["user"]["id"]
        assert "upstream" in requests.get(down.url + "/api/v1/auth/me", headers={"Authorization": "Bearer " + bea["access_token"]}).json()["auth_providers"]
        carl = down.sign_in("carl@example.com")
        token, nonce = id_token(up, apps["RS256"], "bea-upstream@example.com", browser=browser)
        taken = exchange(down, token, nonce, bearer=carl["access_token"])
        assert taken.status_code == 409 and taken.json()["error"]["code"] == "IDENTITY_IN_USE"


def test_wrong_audience_nonce_or_signature_is_refused():
    with upstream_and_downstream() as (up, down, apps):
        stranger = register_client(up, "--first-party", name="Not the downstream")
        token, nonce = id_token(up, stranger, "dan@example.com")
        assert exchange(down, token, nonce).json()["error"]["code"] == "INVALID_ID_TOKEN", "another app's token"
        token, nonce = id_token(up, apps["RS256"], "dan@example.com")
        assert exchange(down, token, "another nonce").json()["error"]["code"] == "INVALID_ID_TOKEN"
        head, body, signature = token.split(".")
        forged = ".".join([head, body, signature[:-6] + ("AAAAAA" if not signature.endswith("AAAAAA") else "BBBBBB")])
        assert exchange(down, forged, nonce).json()["error"]["code"] == "INVALID_ID_TOKEN"
        assert exchange(down, token, nonce).status_code == 200, "the real one, after all that"
        assert requests.post(down.url + "/api/v1/auth/oidc/nobody", json={"id_token": token, "nonce": nonce}).status_code == 404


def test_an_upstream_that_cannot_be_reached_answers_503_for_itself_only():
    gone = {"gone": {"issuer": "http://127.0.0.1:1", "client_id": "x"}}
    with upstream_and_downstream(extra_providers=gone) as (up, down, apps):
        assert requests.get(down.url + "/health").status_code == 200, "authd starts"
        token, nonce = id_token(up, apps["RS256"], "eve@example.com")
        refused = requests.post(down.url + "/api/v1/auth/oidc/gone", json={"id_token": token, "nonce": nonce})
        assert refused.status_code == 503 and refused.json()["error"]["code"] == "UNAVAILABLE"
        assert exchange(down, token, nonce).status_code == 200, "the reachable upstream still signs people in"
