"""Grafana, Gitea/Forgejo, Immich and Nextcloud as relying parties of authd, each played by Authlib
configured the way that app's documentation configures its client (docs/openid-apps.md): the
`authd clients create` line of the guide, the app's scopes, client authentication, PKCE or none,
and the claims it reads for the user and their role. The real apps cannot run on these machines."""
import json
import re
import subprocess
import urllib.parse

import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from joserfc import jwt
from joserfc.jwk import KeySet

from conftest import running_server
from test_app_flows import service_key
from test_openid_provider import BINARY, authorize
from test_pages import PAGES, Browserish

CONFIG = {**PAGES, "email": {"resend_interval": 0}}


def create(server, *args):
    """The guide's `authd clients create …` line."""
    out = subprocess.run([BINARY, "clients", "create", *args, "--data", server.folder], capture_output=True, text=True, check=True).stdout
    return json.loads(out[: out.rindex("}") + 1])


def person(server, email, fields):
    """A user, signed in once, whose groups (their own field) and other app_metadata keys an operator
    set with a service key."""
    session = server.sign_in(email)
    user_id = server.call("GET", "/api/v1/auth/me", token=session["access_token"])[1]["id"]
    body = {"groups": fields["groups"]} if "groups" in fields else {}
    if any(k != "groups" for k in fields):
        body["app_metadata"] = {k: v for k, v in fields.items() if k != "groups"}
    answer = requests.patch(server.url + "/api/v1/admin/users/" + user_id, data=json.dumps(body),
                            headers={"Authorization": "Bearer " + service_key(server.folder, "ops-" + generate_token(6).lower()),
                                     "Content-Type": "application/json"})
    assert answer.status_code == 200, answer.text
    return user_id


def discovery(server):
    return requests.get(server.url + "/.well-known/openid-configuration").json()


def id_claims(server, token):
    keys = KeySet.import_key_set(requests.get(server.url + "/.well-known/jwks.json").json())
    return jwt.decode(token["id_token"], keys, algorithms=["RS256"]).claims


def test_grafana_generic_oauth():
    with running_server(CONFIG) as server:
        redirect = "http://127.0.0.1:3000/login/generic_oauth"
        client = create(server, "Grafana", "--first-party", "--claims", "groups", "--redirect-uri", redirect,
                        "--post-logout-redirect-uri", "http://127.0.0.1:3000/login")
        person(server, "gina@example.com", {"groups": ["admin", "editor"]})
        # grafana.ini: scopes, auth_url/token_url/api_url by hand (no discovery), use_pkce = true.
        rp = OAuth2Session(client["client_id"], client["client_secret"], scope="openid email profile offline_access", redirect_uri=redirect,
                           code_challenge_method="S256", token_endpoint_auth_method="client_secret_post")
        verifier = generate_token(48)
        url, state = rp.create_authorization_url(server.url + "/oauth/authorize", code_verifier=verifier)
        browser = Browserish()
        token = rp.fetch_token(server.url + "/oauth/token", authorization_response=authorize(browser, server, url, email="gina@example.com"),
                               code_verifier=verifier)
        assert "refresh_token" in token, "use_refresh_token = true"
        claims = id_claims(server, token)
        info = rp.get(server.url + "/oauth/userinfo").json()
        # email_attribute_path = email, login_attribute_path = preferred_username, role_attribute_path on groups.
        assert info["email"] == "gina@example.com" and claims["groups"] == ["admin", "editor"] == info["groups"]
        # signout_redirect_url with the id_token_hint Grafana adds.
        out = browser.get(server.url + "/oauth/logout?" + urllib.parse.urlencode(
            {"post_logout_redirect_uri": "http://127.0.0.1:3000/login", "id_token_hint": token["id_token"]}), allow_redirects=False)
        assert out.status_code == 302 and out.headers["Location"] == "http://127.0.0.1:3000/login"


def test_gitea_openid_connect_login_source():
    with running_server(CONFIG) as server:
        redirect = "http://127.0.0.1:3001/user/oauth2/authd/callback"
        client = create(server, "Gitea", "--first-party", "--claims", "groups", "--pkce", "optional", "--redirect-uri", redirect)
        person(server, "gus@example.com", {"groups": ["admin"]})
        meta = discovery(server)  # --auto-discover-url
        # goth's openidConnect: state only (no PKCE, no nonce), scopes openid + --scopes email profile, client_secret_basic.
        rp = OAuth2Session(client["client_id"], client["client_secret"], scope="openid email profile", redirect_uri=redirect)
        url, state = rp.create_authorization_url(meta["authorization_endpoint"])
        assert "code_challenge" not in url and "nonce" not in url
        token = rp.fetch_token(meta["token_endpoint"], authorization_response=authorize(Browserish(), server, url, email="gus@example.com"))
        claims = id_claims(server, token)
        # --group-claim-name groups --admin-group admin; USERNAME = nickname ← preferred_username (none set here).
        assert claims["email"] == "gus@example.com" and claims["groups"] == ["admin"] and "nonce" not in claims


def test_immich_oauth_web_and_mobile_redirects():
    with running_server(CONFIG) as server:
        client = create(server, "Immich", "--first-party", "--claims", "immich_role,immich_quota",
                        "--redirect-uri", "http://127.0.0.1:2283/auth/login", "--redirect-uri", "http://127.0.0.1:2283/user-settings",
                        "--redirect-uri", "app.immich:///oauth-callback")
        person(server, "ida@example.com", {"immich_role": "admin", "immich_quota": 50})
        meta = discovery(server)  # Issuer URL; Immich reads the discovery document
        for redirect in ("http://127.0.0.1:2283/auth/login", "app.immich:///oauth-callback"):
            rp = OAuth2Session(client["client_id"], client["client_secret"], scope="openid email profile", redirect_uri=redirect,
                               code_challenge_method="S256", token_endpoint_auth_method="client_secret_post")
            verifier, nonce = generate_token(48), generate_token(16)
            url, _ = rp.create_authorization_url(meta["authorization_endpoint"], code_verifier=verifier, nonce=nonce)
            callback = authorize(Browserish(), server, url, email="ida@example.com")
            assert callback.startswith(redirect + "?code=")
            token = rp.fetch_token(meta["token_endpoint"], authorization_response=callback, code_verifier=verifier)
            info = rp.get(meta["userinfo_endpoint"]).json()
            # Role Claim immich_role, Storage Quota Claim immich_quota, Storage Label Claim preferred_username.
            assert info["immich_role"] == "admin" and info["immich_quota"] == 50 and info["email"] == "ida@example.com"
            assert id_claims(server, token)["nonce"] == nonce


def test_nextcloud_user_oidc():
    with running_server(CONFIG) as server:
        redirect = "http://127.0.0.1:8081/apps/user_oidc/code"
        client = create(server, "Nextcloud", "--first-party", "--claims", "groups", "--redirect-uri", redirect,
                        "--post-logout-redirect-uri", "http://127.0.0.1:8081/")
        person(server, "nia@example.com", {"groups": ["family", "photos"]})
        meta = discovery(server)
        # --discoveryuri, --scope "openid email profile", PKCE on (S256 listed), a nonce, the client secret in the body.
        rp = OAuth2Session(client["client_id"], client["client_secret"], scope="openid email profile", redirect_uri=redirect,
                           code_challenge_method="S256", token_endpoint_auth_method="client_secret_post")
        verifier, nonce = generate_token(48), generate_token(16)
        url, _ = rp.create_authorization_url(meta["authorization_endpoint"], code_verifier=verifier, nonce=nonce,
                                             claims=json.dumps({"id_token": {"email": None}}))  # user_oidc sends a claims parameter
        browser = Browserish()
        token = rp.fetch_token(meta["token_endpoint"], authorization_response=authorize(browser, server, url, email="nia@example.com"),
                               code_verifier=verifier)
        claims = id_claims(server, token)
        # --mapping-uid sub, --mapping-groups groups (a JSON array of names).
        assert claims["sub"] and claims["groups"] == ["family", "photos"] and claims["nonce"] == nonce
        # --send-id-token-hint=1 --postlogouturi: ends the session without asking.
        out = browser.get(meta["end_session_endpoint"] + "?" + urllib.parse.urlencode(
            {"client_id": client["client_id"], "post_logout_redirect_uri": "http://127.0.0.1:8081/", "id_token_hint": token["id_token"]}),
            allow_redirects=False)
        assert out.status_code == 302 and out.headers["Location"] == "http://127.0.0.1:8081/"
        assert requests.get(meta["userinfo_endpoint"], headers={"Authorization": "Bearer " + token["access_token"]}).status_code == 401
