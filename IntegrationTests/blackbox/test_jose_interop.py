"""A standard JOSE library (joserfc) verifies authd's access tokens with the published JWKS alone."""
import time

import pytest

# The contract fixes `alg: EdDSA` (RFC 8037); joserfc flags it since RFC 9864 added `Ed25519`.
pytestmark = pytest.mark.filterwarnings("ignore:EdDSA is deprecated")
from joserfc import jwt
from joserfc.errors import BadSignatureError
from joserfc.jwk import KeySet


def test_access_token_verifies_with_jwks(server):
    session = server.sign_in("jose@example.com")
    status, jwks, headers = server.call("GET", "/.well-known/jwks.json")
    assert status == 200
    keys = KeySet.import_key_set(jwks)
    token = jwt.decode(session["access_token"], keys, algorithms=["EdDSA"])
    assert token.header["alg"] == "EdDSA"
    assert token.header["typ"] == "at+jwt"
    assert token.header["kid"] == jwks["keys"][0]["kid"]
    claims = token.claims
    assert claims["iss"] == "https://auth.example.test"
    assert claims["aud"] == "my-app"
    assert claims["sub"] == session["user"]["id"]
    assert claims["amr"] == ["email"]
    assert claims["is_anonymous"] is False
    assert claims["exp"] - claims["iat"] == session["expires_in"] == 3600
    assert abs(claims["iat"] - time.time()) < 60
    for name in ("sid", "jti"):
        assert isinstance(claims[name], str) and claims[name]
    jwt.JWTClaimsRegistry(iss={"essential": True, "value": "https://auth.example.test"},
                          aud={"essential": True, "value": "my-app"}).validate(claims)


def test_jwks_has_no_private_parts(server):
    _, jwks, _ = server.call("GET", "/.well-known/jwks.json")
    ed = [k for k in jwks["keys"] if k["kty"] == "OKP"]
    rsa = [k for k in jwks["keys"] if k["kty"] == "RSA"]
    assert len(ed) + len(rsa) == len(jwks["keys"]) and len(rsa) == 1
    for key in ed:
        assert set(key) == {"kty", "crv", "x", "kid", "alg", "use"} and key["crv"] == "Ed25519"
    # Each Ed25519 key twice (contract §13): EdDSA under its kid, Ed25519 under KID-ed25519.
    assert sorted(k["alg"] for k in ed) == ["Ed25519", "EdDSA"]
    assert {k["kid"] for k in ed if k["alg"] == "Ed25519"} == {k["kid"] + "-ed25519" for k in ed if k["alg"] == "EdDSA"}
    # The RSA key of ID tokens: public modulus and exponent only (no d, p, q…).
    assert set(rsa[0]) == {"kty", "n", "e", "kid", "alg", "use"} and rsa[0]["alg"] == "RS256"


def test_a_token_signed_by_another_key_is_refused_by_both(server):
    from joserfc.jwk import OKPKey
    forged_key = OKPKey.generate_key("Ed25519", parameters={"kid": "forged"})
    session = server.sign_in("victim@example.com")
    claims = jwt.decode(session["access_token"], KeySet.import_key_set(server.call("GET", "/.well-known/jwks.json")[1]),
                        algorithms=["EdDSA"]).claims
    _, jwks, _ = server.call("GET", "/.well-known/jwks.json")
    real_kid = jwks["keys"][0]["kid"]
    forged = jwt.encode({"alg": "EdDSA", "typ": "at+jwt", "kid": real_kid}, claims, forged_key, algorithms=["EdDSA"])
    with pytest.raises(BadSignatureError):
        jwt.decode(forged, KeySet.import_key_set(jwks), algorithms=["EdDSA"])
    status, body, headers = server.call("GET", "/api/v1/auth/me", token=forged)
    assert status == 401 and body["error"]["code"] == "UNAUTHORIZED"


def test_errors_follow_the_contract(server):
    status, body, headers = server.call("POST", "/api/v1/auth/email/send-code", {"email": "nope"})
    assert status == 400 and body["error"]["code"] == "INVALID_EMAIL" and body["error"]["message"]
    server.call("POST", "/api/v1/auth/email/send-code", {"email": "a@b.co"})
    status, body, headers = server.call("POST", "/api/v1/auth/email/send-code", {"email": "a@b.co"})
    assert status == 429
    assert body["error"]["details"]["retry_after"] >= 1
    assert headers["Retry-After"] == str(body["error"]["details"]["retry_after"])
