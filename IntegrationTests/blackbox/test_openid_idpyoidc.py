"""authd as an OpenID Provider for a second, independent relying-party library: idpyoidc (the IdentityPython
OIDC client) runs the authorization-code flow against the real binary with its own machinery — discovery,
the authorization request with PKCE S256, nonce and state, the authorization response's state and RFC 9207
`iss` checks, the token request with client_secret_basic or client_secret_post, the ID token checked
against authd's JWKS (RS256, EdDSA and Ed25519: signature, alg, iss, aud, nonce), userinfo, the refresh grant and
RP-initiated logout. Authlib's view is test_openid_provider.py; a second library catches what one
library's leniency would hide. Only the sign-in and consent on authd's pages are driven by hand (the
shared `authorize` helper, as a browser would). The last tests are idpyoidc's own refusals: a tampered
state, a foreign `iss`, an ID token whose signature or nonce is not the one it asked for, an unexpected
algorithm."""
import base64
import hashlib
import json
import urllib.parse

import pytest
import requests
from cryptojwt.exception import BadSignature
from cryptojwt.jws.exception import SignerAlgError
from cryptojwt.key_jar import KeyJar
from idpyoidc.client.exception import ParameterError
from idpyoidc.client.rp_handler import RPHandler
from idpyoidc.exception import VerificationError

from conftest import running_server
from test_openid_provider import REDIRECT, authorize, register_client
from test_pages import PAGES, Browserish

BYE = "http://127.0.0.1:9/signed-out"
SERVICES = {
    "discovery": {"class": "idpyoidc.client.oidc.provider_info_discovery.ProviderInfoDiscovery"},
    "authorization": {"class": "idpyoidc.client.oidc.authorization.Authorization"},
    "access_token": {"class": "idpyoidc.client.oidc.access_token.AccessToken"},
    "refresh_access_token": {"class": "idpyoidc.client.oidc.refresh_access_token.RefreshAccessToken"},
    "userinfo": {"class": "idpyoidc.client.oidc.userinfo.UserInfo"},
    "end_session": {"class": "idpyoidc.client.oidc.end_session.EndSession"},
}


def relying_party(server, client, scopes=("openid", "email"), auth="client_secret_basic", alg="RS256", httpc=None):
    """An idpyoidc RPHandler for a client registered with `authd clients create` (authd has no dynamic
    registration), set up by discovery. The registration facts idpyoidc would have learnt from dynamic
    registration are given as its registration response: the ID token's `alg`, which it then insists on."""
    config = {
        "issuer": server.url, "client_id": client["client_id"], "client_secret": client["client_secret"],
        "client_type": "oidc", "redirect_uris": [REDIRECT], "post_logout_redirect_uris": [BYE],
        # Every token-endpoint service (the refresh one too) authenticates the client the same way.
        "client_authn_methods": [auth],
        "preference": {"response_types": ["code"], "scopes_supported": list(scopes), "token_endpoint_auth_method": auth},
        "add_ons": {"pkce": {"function": "idpyoidc.client.oauth2.add_on.pkce.add_support",
                             "kwargs": {"code_challenge_length": 64, "code_challenge_method": "S256"}}},
        "services": SERVICES,
    }
    # A KeyJar of its own: the RP signs nothing, and idpyoidc's default would write key files into the cwd.
    rph = RPHandler(base_url="http://127.0.0.1:9", client_configs={server.url: config}, keyjar=KeyJar(), httpc=httpc)
    rp = rph.client_setup(server.url)  # discovery: endpoints and the JWKS address from authd
    rp.get_context().registration_response = {"id_token_signed_response_alg": alg}
    return rph, rp


def start(rph, server, browser, email="ivy@example.com"):
    """idpyoidc's authorization request, followed through authd's pages; the redirect back, as the dict
    a web framework would hand the callback, and the request's query."""
    url = rph.begin(issuer_id=server.url)
    callback = authorize(browser, server, url, email=email)
    assert callback.startswith(REDIRECT + "?")
    return dict(urllib.parse.parse_qsl(urllib.parse.urlparse(callback).query)), dict(urllib.parse.parse_qsl(urllib.parse.urlparse(url).query))


def s256(verifier):
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


@pytest.mark.parametrize("auth", ["client_secret_basic", "client_secret_post"])
def test_idpyoidc_signs_a_person_in_with_the_code_flow_pkce_and_an_rs256_id_token(auth):
    with running_server(PAGES) as server:
        client = register_client(server)
        rph, rp = relying_party(server, client, scopes=("openid", "email", "profile"), auth=auth)
        context = rp.get_context()
        assert context.issuer == server.url and context.provider_info["issuer"] == server.url
        assert rp.get_service("accesstoken").endpoint == server.url + "/oauth/token"
        assert rp.get_service("userinfo").endpoint == server.url + "/oauth/userinfo"

        response, request = start(rph, server, Browserish())
        session = rph.get_session_information(request["state"])
        assert request["client_id"] == client["client_id"] and request["redirect_uri"] == REDIRECT and request["response_type"] == "code"
        assert set(request["scope"].split()) == {"openid", "email", "profile"} and request["nonce"] == session["nonce"]
        assert request["code_challenge_method"] == "S256" and request["code_challenge"] == s256(session["code_verifier"])
        assert response["state"] == request["state"] and response["iss"] == server.url

        # finalize: the response's state and iss checked, the code redeemed with the verifier, the ID token
        # verified with authd's JWKS, userinfo asked with the access token.
        result = rph.finalize(server.url, response)
        assert "error" not in result, result
        id_token = result["id_token"]
        assert id_token.jws_header["alg"] == "RS256"
        jwks = requests.get(context.provider_info["jwks_uri"]).json()
        assert id_token.jws_header["kid"] in [k["kid"] for k in jwks["keys"] if k["kty"] == "RSA"]
        assert id_token.jws_header["kid"] in [k.kid for k in rp.keyjar.get_issuer_keys(server.url)], "the key idpyoidc fetched"
        assert id_token["iss"] == server.url and id_token["aud"] == [client["client_id"]] and id_token["nonce"] == request["nonce"]
        assert id_token["email"] == "ivy@example.com" and id_token["email_verified"] is True
        userinfo = result["userinfo"].to_dict()
        assert userinfo["sub"] == id_token["sub"] and userinfo["email"] == "ivy@example.com" and userinfo["email_verified"] is True
        assert result["token"] == rph.get_session_information(request["state"])["access_token"]
        assert "refresh_token" not in rph.get_session_information(request["state"]), "no offline_access asked"
        assert rph.has_active_authentication(request["state"])


@pytest.mark.parametrize("alg", ["EdDSA", "Ed25519"])
def test_idpyoidc_verifies_an_ed25519_id_token(alg):
    """RFC 8037's `EdDSA`, and RFC 9864's `Ed25519` for the same signature: cryptojwt knows both."""
    with running_server(PAGES) as server:
        client = register_client(server, "--id-token-alg", alg)
        rph, rp = relying_party(server, client, alg=alg)
        response, request = start(rph, server, Browserish())
        result = rph.finalize(server.url, response)
        assert "error" not in result, result
        id_token = result["id_token"]
        assert id_token.jws_header["alg"] == alg
        key = next(k for k in rp.keyjar.get_issuer_keys(server.url) if k.kid == id_token.jws_header["kid"])
        assert key.kty == "OKP" and key.crv == "Ed25519"
        assert id_token["aud"] == [client["client_id"]] and id_token["nonce"] == request["nonce"]
        assert result["userinfo"]["sub"] == id_token["sub"] and result["userinfo"]["email"] == "ivy@example.com"


def test_idpyoidc_refreshes_with_offline_access_and_the_new_id_token_keeps_the_person():
    with running_server(PAGES) as server:
        client = register_client(server)
        rph, rp = relying_party(server, client, scopes=("openid", "email", "offline_access"))
        response, request = start(rph, server, Browserish())
        assert request["prompt"] == "consent", "idpyoidc asks consent with offline_access; authd's consent page answered it"
        result = rph.finalize(server.url, response)
        state = result["state"]
        first = rph.get_session_information(state)
        assert "refresh_token" in first and set(first["scope"].split()) == {"openid", "email", "offline_access"}
        old_refresh, old_access = first["refresh_token"], first["access_token"]

        refreshed = rph.refresh_access_token(state)
        assert refreshed["refresh_token"] != old_refresh and refreshed["access_token"] != old_access, "refresh rotates"
        again = refreshed["__verified_id_token"]  # checked by idpyoidc: signature, iss, aud
        assert again["sub"] == result["id_token"]["sub"] and again["aud"] == [client["client_id"]]
        assert again["auth_time"] == result["id_token"]["auth_time"]
        # idpyoidc keeps the rotated token: a second refresh goes through with the new one.
        assert rph.get_session_information(state)["refresh_token"] == refreshed["refresh_token"]
        second = rph.refresh_access_token(state)
        assert second["__verified_id_token"]["sub"] == again["sub"] and second["refresh_token"] != refreshed["refresh_token"]
        assert rph.get_user_info(state)["sub"] == again["sub"]


def test_idpyoidc_logs_out_with_the_id_token_hint_and_authd_returns_its_state():
    with running_server(PAGES) as server:
        client = register_client(server, "--post-logout-redirect-uri", BYE)
        rph, rp = relying_party(server, client)
        browser = Browserish()
        response, _ = start(rph, server, browser)
        result = rph.finalize(server.url, response)
        assert rp.get_service("end_session").endpoint == server.url + "/oauth/logout"

        logout = rph.logout(result["state"])
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(logout["url"]).query))
        assert query["id_token_hint"] == rph.get_session_information(result["state"])["id_token"] and query["post_logout_redirect_uri"] == BYE
        out = browser.get(logout["url"], allow_redirects=False)
        assert out.status_code == 302 and out.headers["Location"] == BYE + "?" + urllib.parse.urlencode({"state": query["state"]})
        # idpyoidc bound its logout state to the session it ends.
        assert rp.get_context().cstate.get_base_key(query["state"]) == result["state"]
        assert requests.get(server.url + "/oauth/userinfo", headers={"Authorization": "Bearer " + result["token"]}).status_code == 401


def test_idpyoidc_refuses_a_tampered_state_and_a_foreign_issuer():
    with running_server(PAGES) as server:
        client = register_client(server)
        rph, _ = relying_party(server, client)
        browser = Browserish()
        response, _ = start(rph, server, browser)
        with pytest.raises(KeyError, match="Unknown state value"):
            rph.finalize(server.url, {**response, "state": response["state"][:-2] + "xx"})
        response, _ = start(rph, server, browser)
        with pytest.raises(VerificationError, match="Issuer mismatch"):
            rph.finalize(server.url, {**response, "iss": "https://evil.example"})
        # The untouched response is still good.
        assert "error" not in rph.finalize(server.url, response)


class Meddler:
    """idpyoidc's HTTP client, with one change to the ID token in authd's token answer: as a
    man in the middle (or a mix-up) would make it."""

    def __init__(self, change):
        self.change = change

    def __call__(self, method, url, data=None, headers=None, **kwargs):
        answer = requests.request(method, url, data=data, headers=headers, **kwargs)
        if url.endswith("/oauth/token") and answer.status_code == 200:
            body = answer.json()
            body["id_token"] = self.change(body["id_token"])
            answer._content = json.dumps(body).encode()
        return answer


def flipped(token):
    head, body, sig = token.split(".")
    return ".".join([head, body, ("A" if sig[0] != "A" else "B") + sig[1:]])


@pytest.mark.parametrize("alg", ["RS256", "EdDSA", "Ed25519"])
def test_idpyoidc_refuses_an_id_token_whose_signature_was_altered(alg):
    with running_server(PAGES) as server:
        client = register_client(server, "--id-token-alg", alg)
        rph, _ = relying_party(server, client, alg=alg, httpc=Meddler(flipped))
        response, _ = start(rph, server, Browserish())
        with pytest.raises(BadSignature):
            rph.finalize(server.url, response)


def test_idpyoidc_refuses_a_genuine_id_token_from_another_flow():
    """An earlier flow's ID token, validly signed for this client, put in the place of this flow's one:
    its nonce is not the one this authorization request sent."""
    with running_server(PAGES) as server:
        client = register_client(server)
        browser = Browserish()
        earlier = {}
        rph, _ = relying_party(server, client, httpc=Meddler(lambda token: earlier.setdefault("token", token)))
        response, _ = start(rph, server, browser)
        assert "error" not in rph.finalize(server.url, response)
        response, _ = start(rph, server, browser)
        with pytest.raises(ParameterError, match="nonce"):
            rph.finalize(server.url, response)


def test_idpyoidc_refuses_an_id_token_signed_with_another_algorithm_than_registered():
    with running_server(PAGES) as server:
        client = register_client(server, "--id-token-alg", "EdDSA")
        rph, _ = relying_party(server, client, alg="RS256")
        response, _ = start(rph, server, Browserish())
        with pytest.raises(SignerAlgError, match="expected RS256 got EdDSA"):
            rph.finalize(server.url, response)
