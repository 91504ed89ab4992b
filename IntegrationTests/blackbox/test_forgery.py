"""Forgery and replay: tokens an attacker could build, and credentials replayed after they should
have stopped working. Built with independent implementations (Python's hmac, `cryptography`'s
Ed25519, joserfc) rather than authd's own code.

Tokens that need a valid signature (expired, wrong issuer, ...) are signed with authd's real key,
read from the data folder, so that each is refused for the one thing wrong with it; a control token
from the same builder with nothing wrong must be accepted.
"""
import base64
import glob
import hashlib
import hmac
import json
import os
import time
import uuid

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from joserfc import jwt
from joserfc.jwk import KeySet

from conftest import running_server

pytestmark = pytest.mark.filterwarnings("ignore:EdDSA is deprecated")

# Windows that must not pass during a test are long, so a loaded machine cannot close them between
# two calls; the tests of expiry have servers of their own with short ones, and wait past them.
CONFIG = {
    "tokens": {"refresh_reuse_grace": 60},
    "email": {"code_ttl": 600, "max_attempts": 3, "resend_interval": 0},
}


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def compact(header, claims, sign):
    signing_input = b64(json.dumps(header).encode()) + "." + b64(json.dumps(claims).encode())
    return signing_input + "." + b64(sign(signing_input.encode()))


class Forge:
    def __init__(self, server):
        self.server = server
        self.session = server.sign_in("victim@example.com")
        token = self.session["access_token"]
        self.header = json.loads(unb64(token.split(".")[0]))
        self.claims = json.loads(unb64(token.split(".")[1]))
        [key_file] = glob.glob(os.path.join(server.folder, "keys", "signing-*.json"))
        with open(key_file) as f:
            self.real_key = Ed25519PrivateKey.from_private_bytes(unb64(json.load(f)["seed"]))
        self.jwks = server.call("GET", "/.well-known/jwks.json")[1]
        self.public = unb64(self.jwks["keys"][0]["x"])

    def signed(self, header=None, **claims):
        """A token signed with authd's real key; `claims` replace or (with None) remove claims."""
        body = {**self.claims, **claims}
        body = {k: v for k, v in body.items() if v is not None}
        return compact({**self.header, **(header or {})}, body, self.real_key.sign)


@pytest.fixture(scope="module")
def forge():
    with running_server(CONFIG) as server:
        yield Forge(server)


def now():
    return int(time.time())


def other_key_sign(data):
    return Ed25519PrivateKey.generate().sign(data)


FORGERIES = {
    "alg none, no signature": lambda f: compact({**f.header, "alg": "none"}, f.claims, lambda _: b""),
    "alg none, the real signature kept": lambda f: compact({**f.header, "alg": "none"}, f.claims, f.real_key.sign),
    "HS256 keyed with the raw public key": lambda f: compact(
        {**f.header, "alg": "HS256"}, f.claims, lambda d: hmac.new(f.public, d, hashlib.sha256).digest()),
    "HS256 keyed with the JWK's x": lambda f: compact(
        {**f.header, "alg": "HS256"}, f.claims, lambda d: hmac.new(f.jwks["keys"][0]["x"].encode(), d, hashlib.sha256).digest()),
    "HS256 keyed with the JWKS document": lambda f: compact(
        {**f.header, "alg": "HS256"}, f.claims, lambda d: hmac.new(json.dumps(f.jwks).encode(), d, hashlib.sha256).digest()),
    "EdDSA by another key with our kid": lambda f: compact(f.header, f.claims, other_key_sign),
    "tampered sub, original signature": lambda f: ".".join([
        f.session["access_token"].split(".")[0], b64(json.dumps({**f.claims, "sub": str(uuid.uuid4())}).encode()),
        f.session["access_token"].split(".")[2]]),
    "tampered exp, original signature": lambda f: ".".join([
        f.session["access_token"].split(".")[0], b64(json.dumps({**f.claims, "exp": f.claims["exp"] + 86400}).encode()),
        f.session["access_token"].split(".")[2]]),
    "expired": lambda f: f.signed(iat=now() - 7200, exp=now() - 3600),
    "not yet valid (nbf)": lambda f: f.signed(nbf=now() + 3600),
    "issued in the future (iat)": lambda f: f.signed(iat=now() + 3600, exp=now() + 7200),
    "no exp": lambda f: f.signed(exp=None),
    "wrong iss": lambda f: f.signed(iss="https://evil.example"),
    "no iss": lambda f: f.signed(iss=None),
    "wrong aud": lambda f: f.signed(aud="another-app"),
    "aud list without ours": lambda f: f.signed(aud=["another-app", "third-app"]),
    "unknown kid": lambda f: f.signed(header={"kid": "not-a-key"}),
    "no kid": lambda f: compact({k: v for k, v in f.header.items() if k != "kid"}, f.claims, f.real_key.sign),
    "typ JWT instead of at+jwt": lambda f: f.signed(header={"typ": "JWT"}),
    "crit header": lambda f: f.signed(header={"crit": ["exp"]}),
    "session that does not exist": lambda f: f.signed(sid=str(uuid.uuid4())),
    "user that does not exist": lambda f: f.signed(sub=str(uuid.uuid4())),
    "truncated signature": lambda f: f.session["access_token"][:-10],
    "no signature segment": lambda f: f.session["access_token"].rsplit(".", 1)[0],
    "empty signature segment": lambda f: f.session["access_token"].rsplit(".", 1)[0] + ".",
    "an extra segment": lambda f: f.session["access_token"] + ".e30",
    "JWE-shaped (five segments)": lambda f: f.session["access_token"] + ".e30.e30",
    "signature of another token": lambda f: f.signed(jti="other").rsplit(".", 1)[0] + "." + f.session["access_token"].split(".")[2],
    "padding in base64url": lambda f: f.session["access_token"].split(".")[0] + "==." + ".".join(f.session["access_token"].split(".")[1:]),
    "not base64": lambda f: "!!!.???.***",
    "empty": lambda f: "",
}


def test_the_builder_makes_tokens_authd_accepts(forge):
    # The control: without it every refusal below could be the builder's fault.
    status, me, _ = forge.server.call("GET", "/api/v1/auth/me", token=forge.signed(jti="control"))
    assert status == 200 and me["id"] == forge.claims["sub"]
    keys = KeySet.import_key_set(forge.jwks)
    assert jwt.decode(forge.signed(jti="control"), keys, algorithms=["EdDSA"]).claims["sub"] == forge.claims["sub"]


@pytest.mark.parametrize("case", sorted(FORGERIES))
def test_a_forged_token_is_refused(forge, case):
    token = FORGERIES[case](forge)
    for method, path in (("GET", "/api/v1/auth/me"), ("GET", "/api/v1/auth/sessions")):
        status, body, headers = forge.server.call(method, path, token=token)
        assert status == 401, (case, body)
        assert body["error"]["code"] == "UNAUTHORIZED"
        assert headers.get("WWW-Authenticate", "").startswith("Bearer")


def test_after_logout_the_session_is_over_but_offline_verifiers_accept_the_token_until_exp():
    with running_server(CONFIG) as server:
        session = server.sign_in("logout@example.com")
        assert server.call("POST", "/api/v1/auth/logout", token=session["access_token"])[0] == 204
        status, body, _ = server.call("GET", "/api/v1/auth/me", token=session["access_token"])
        assert status == 401 and body["error"]["code"] == "UNAUTHORIZED"
        status, body, _ = server.call("POST", "/api/v1/auth/refresh", {"refresh_token": session["refresh_token"]})
        assert status == 401 and body["error"]["code"] == "INVALID_REFRESH_TOKEN"
        # Documented: a resource server verifying offline with the JWKS knows nothing of the logout.
        jwks = KeySet.import_key_set(server.call("GET", "/.well-known/jwks.json")[1])
        assert jwt.decode(session["access_token"], jwks, algorithms=["EdDSA"]).claims["sub"] == session["user"]["id"]


def test_refresh_reuse_inside_the_grace_works_and_after_it_ends_the_session():
    with running_server(CONFIG) as server:  # a minute's grace: the racing refresh is inside it
        first = server.sign_in("reuse@example.com")
        status, second, _ = server.call("POST", "/api/v1/auth/refresh", {"refresh_token": first["refresh_token"]})
        assert status == 200
        status, racing, _ = server.call("POST", "/api/v1/auth/refresh", {"refresh_token": first["refresh_token"]})
        assert status == 200, racing  # a racing refresh from the same device
        assert server.call("GET", "/api/v1/auth/me", token=second["access_token"])[0] == 200
    with running_server({**CONFIG, "tokens": {"refresh_reuse_grace": 1}}) as server:
        first = server.sign_in("reuse@example.com")
        status, second, _ = server.call("POST", "/api/v1/auth/refresh", {"refresh_token": first["refresh_token"]})
        assert status == 200
        time.sleep(2.2)  # past the grace (more is the same)
        status, body, _ = server.call("POST", "/api/v1/auth/refresh", {"refresh_token": first["refresh_token"]})
        assert status == 401 and body["error"]["code"] == "REFRESH_TOKEN_REUSED"
        # The whole session ended: its newest tokens are dead too.
        for latest in (second,):
            status, body, _ = server.call("POST", "/api/v1/auth/refresh", {"refresh_token": latest["refresh_token"]})
            assert status == 401 and body["error"]["code"] == "INVALID_REFRESH_TOKEN"
            assert server.call("GET", "/api/v1/auth/me", token=latest["access_token"])[0] == 401


@pytest.mark.parametrize("token", ["", "x", "A" * 43, "A" * 5000, "\u00e9t\u00e9", None, 42, ["a"]])
def test_made_up_refresh_tokens_are_refused(forge, token):
    status, body, _ = forge.server.call("POST", "/api/v1/auth/refresh", {"refresh_token": token})
    if isinstance(token, str) and token:
        assert status == 401 and body["error"]["code"] == "INVALID_REFRESH_TOKEN"
    else:
        assert status in (400, 401) and body["error"]["code"] in ("INVALID_REQUEST", "INVALID_REFRESH_TOKEN")


def send_code(server, email):
    assert server.call("POST", "/api/v1/auth/email/send-code", {"email": email})[0] == 200
    return server.mailed_code(email)


def verify(server, email, code):
    return server.call("POST", "/api/v1/auth/email/verify", {"email": email, "code": code})


def wrong(code):
    return str((int(code) + 1) % 10 ** len(code)).zfill(len(code))


def test_a_code_works_once(forge):
    code = send_code(forge.server, "once@example.com")
    assert verify(forge.server, "once@example.com", code)[0] == 200
    status, body, _ = verify(forge.server, "once@example.com", code)
    assert status == 401 and body["error"]["code"] == "INVALID_CODE"


def test_a_code_expires():
    with running_server({**CONFIG, "email": {**CONFIG["email"], "code_ttl": 1}}) as server:
        code = send_code(server, "late@example.com")
        time.sleep(1.5)  # past its lifetime (more is the same)
        status, body, _ = verify(server, "late@example.com", code)
        assert status == 401 and body["error"]["code"] == "INVALID_CODE"


def test_a_code_dies_after_max_attempts(forge):
    code = send_code(forge.server, "guess@example.com")
    for _ in range(3):
        status, body, _ = verify(forge.server, "guess@example.com", wrong(code))
        assert status == 401 and body["error"]["code"] == "INVALID_CODE"
    status, body, _ = verify(forge.server, "guess@example.com", code)
    assert status == 401 and body["error"]["code"] == "INVALID_CODE"


def test_a_code_for_one_email_does_not_sign_in_another(forge):
    code = send_code(forge.server, "alice@example.com")
    send_code(forge.server, "mallory@example.com")
    status, body, _ = verify(forge.server, "mallory@example.com", code)
    assert status == 401 and body["error"]["code"] == "INVALID_CODE"
