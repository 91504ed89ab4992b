"""Passkeys against the real binary (contract §10), with a software authenticator built on
`cryptography` and `cbor2`, and every verdict cross-checked with the `webauthn` package's own
verifier (py_webauthn): each ceremony the server accepts, it accepts; each forgery the server
refuses (wrong origin, wrong RP ID, missing user verification, a counter going back), it refuses
too. A replayed challenge is refused by the server alone (the library keeps no state).
On the file store here; on PostgreSQL in test_postgres_instances.py."""
import base64
import copy
import hashlib
import json
import os
import struct

import cbor2
import pytest
import webauthn
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from conftest import running_server

RP_ID = "passkeys.example"
ORIGIN = "https://passkeys.example"
CONFIG = {"providers": ["email", "password", "totp", "passkey"], "passkeys": {"rp_id": RP_ID, "origins": [ORIGIN]}}
PASSWORD = "a long enough secret"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def claims(token):
    return json.loads(unb64url(token.split(".")[1]))


class Authenticator:
    """A passkey: its key (ES256 or EdDSA), credential id and counter."""

    def __init__(self, algorithm=-7, sign_count=0):
        self.algorithm = algorithm
        self.key = ec.generate_private_key(ec.SECP256R1()) if algorithm == -7 else ed25519.Ed25519PrivateKey.generate()
        self.credential_id = os.urandom(32)
        self.sign_count = sign_count
        self.user_handle = None

    def cose_key(self):
        if self.algorithm == -7:
            numbers = self.key.public_key().public_numbers()
            return {1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")}
        raw = self.key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        return {1: 1, 3: -8, -1: 6, -2: raw}

    def sign(self, data):
        if self.algorithm == -7:
            return self.key.sign(data, ec.ECDSA(hashes.SHA256()))
        return self.key.sign(data)

    def auth_data(self, rp_id, flags, attested):
        data = hashlib.sha256(rp_id.encode()).digest() + bytes([flags | (0x40 if attested else 0)]) + struct.pack(">I", self.sign_count)
        if attested:
            data += bytes(16) + struct.pack(">H", len(self.credential_id)) + self.credential_id + cbor2.dumps(self.cose_key())
        return data

    def register(self, options, origin=ORIGIN, flags=0x1D, fmt="none"):
        self.user_handle = options["user"]["id"]
        client = json.dumps({"type": "webauthn.create", "challenge": options["challenge"], "origin": origin, "crossOrigin": False}).encode()
        auth_data = self.auth_data(options["rp"]["id"], flags, attested=True)
        statement = {}
        if fmt == "packed":
            statement = {"alg": self.algorithm, "sig": self.sign(auth_data + hashlib.sha256(client).digest())}
        attestation = cbor2.dumps({"fmt": fmt, "attStmt": statement, "authData": auth_data})
        cid = b64url(self.credential_id)
        return {"id": cid, "rawId": cid, "type": "public-key", "clientExtensionResults": {}, "authenticatorAttachment": "platform",
                "response": {"clientDataJSON": b64url(client), "attestationObject": b64url(attestation), "transports": ["internal"]}}

    def assert_(self, options, origin=ORIGIN, flags=0x1D, rp_id=None, step=1):
        self.sign_count += step
        client = json.dumps({"type": "webauthn.get", "challenge": options["challenge"], "origin": origin, "crossOrigin": False}).encode()
        auth_data = self.auth_data(rp_id or options["rpId"], flags, attested=False)
        signature = self.sign(auth_data + hashlib.sha256(client).digest())
        cid = b64url(self.credential_id)
        return {"id": cid, "rawId": cid, "type": "public-key", "clientExtensionResults": {},
                "response": {"clientDataJSON": b64url(client), "authenticatorData": b64url(auth_data), "signature": b64url(signature),
                             "userHandle": self.user_handle}}


def library_accepts_registration(credential, challenge):
    try:
        webauthn.verify_registration_response(credential=copy.deepcopy(credential), expected_challenge=unb64url(challenge),
                                              expected_rp_id=RP_ID, expected_origin=ORIGIN, require_user_verification=True)
        return True
    except Exception:
        return False


def library_accepts_assertion(credential, challenge, authenticator, stored_count):
    public_key = cbor2.dumps(authenticator.cose_key())
    try:
        webauthn.verify_authentication_response(credential=copy.deepcopy(credential), expected_challenge=unb64url(challenge),
                                                expected_rp_id=RP_ID, expected_origin=ORIGIN, credential_public_key=public_key,
                                                credential_current_sign_count=stored_count, require_user_verification=True)
        return True
    except Exception:
        return False


def register_user(app, email):
    assert app.call("POST", "/api/v1/auth/password/register", {"email": email, "password": PASSWORD})[0] == 202
    status, session, _ = app.call("POST", "/api/v1/auth/password/verify-email", {"email": email, "code": app.mailed_code(email), "password": PASSWORD})
    assert status == 200, session
    return session


def add_passkey(app, token, authenticator, fmt="none", name="Test key"):
    status, options, _ = app.call("POST", "/api/v1/auth/passkeys/register/options", token=token)
    assert status == 200 and options["rp"]["id"] == RP_ID and options["authenticatorSelection"]["userVerification"] == "required", options
    credential = authenticator.register(options, fmt=fmt)
    assert library_accepts_registration(credential, options["challenge"])
    status, added, _ = app.call("POST", "/api/v1/auth/passkeys/register", {"credential": credential, "name": name}, token=token)
    assert status == 201 and added["id"] == credential["id"], added
    return added


def login_options(app):
    status, options, _ = app.call("POST", "/api/v1/auth/passkeys/login/options")
    assert status == 200 and options["rpId"] == RP_ID and options["userVerification"] == "required", options
    return options


def passkey_flow(a, b):
    """Registers on `a`, signs in on `b` (the same server, or another instance on the same database)."""
    email = "passkey-user@example.com"
    session = register_user(a, email)
    es256, eddsa = Authenticator(-7), Authenticator(-8)
    add_passkey(a, session["access_token"], es256)
    add_passkey(a, session["access_token"], eddsa, fmt="packed", name="Security key")
    status, listed, _ = b.call("GET", "/api/v1/auth/passkeys", token=session["access_token"])
    assert status == 200 and {p["name"] for p in listed["passkeys"]} == {"Test key", "Security key"}, listed

    # A passkey alone signs in (user verification is the second factor), with either algorithm.
    for key in (es256, eddsa):
        options = login_options(b)
        stored = key.sign_count
        credential = key.assert_(options)
        assert library_accepts_assertion(credential, options["challenge"], key, stored)
        status, signed_in, _ = a.call("POST", "/api/v1/auth/passkeys/login", {"credential": credential, "deviceName": "iPhone"})
        assert status == 200 and claims(signed_in["access_token"])["amr"] == ["passkey", "mfa"], signed_in
        assert signed_in["user"]["email"] == email
        # Replayed: the challenge is used.
        assert b.call("POST", "/api/v1/auth/passkeys/login", {"credential": credential})[0] == 401

    # After a password, the passkey is the second factor, with options in the 202.
    status, challenge, _ = b.call("POST", "/api/v1/auth/password/login", {"email": email, "password": PASSWORD})
    assert status == 202 and challenge["factors"] == ["passkey"], challenge
    allowed = {c["id"] for c in challenge["passkey_options"]["allowCredentials"]}
    assert allowed == {b64url(es256.credential_id), b64url(eddsa.credential_id)}
    status, second, _ = a.call("POST", "/api/v1/auth/mfa/verify", {"challenge": challenge["challenge"], "credential": es256.assert_(challenge["passkey_options"])})
    assert status == 200 and claims(second["access_token"])["amr"] == ["password", "passkey", "mfa"], second
    return email, es256


def test_passkeys_register_sign_in_and_second_factor_on_the_file_store():
    with running_server(CONFIG) as app:
        passkey_flow(app, app)


def test_forgeries_are_refused_by_the_server_and_by_the_library_alike():
    with running_server(CONFIG) as app:
        session = register_user(app, "forger-target@example.com")
        key = Authenticator(-7, sign_count=50)
        add_passkey(app, session["access_token"], key)

        forgeries = {
            "wrong origin": dict(origin="https://evil.example"),
            "wrong rp id": dict(rp_id="evil.example"),
            "no user verification": dict(flags=0x01),
            "no user presence": dict(flags=0x04),
            "counter going back": dict(step=-10),
        }
        for name, how in forgeries.items():
            options = login_options(app)
            stored = key.sign_count
            credential = key.assert_(options, **how)
            assert not library_accepts_assertion(credential, options["challenge"], key, stored), name
            status, error, _ = app.call("POST", "/api/v1/auth/passkeys/login", {"credential": credential})
            assert status == 401 and error["error"]["code"] == "INVALID_CREDENTIALS", (name, error)
            key.sign_count = stored  # the refused assertion did not count

        # Registration forgeries.
        for name, how in {"wrong origin": dict(origin="https://evil.example"), "no user verification": dict(flags=0x01)}.items():
            status, options, _ = app.call("POST", "/api/v1/auth/passkeys/register/options", token=session["access_token"])
            credential = Authenticator().register(options, **how)
            assert not library_accepts_registration(credential, options["challenge"]), name
            status, error, _ = app.call("POST", "/api/v1/auth/passkeys/register", {"credential": credential}, token=session["access_token"])
            assert status == 400 and error["error"]["code"] == "INVALID_REQUEST", (name, error)

        # And the genuine one still works afterwards.
        options = login_options(app)
        stored = key.sign_count
        credential = key.assert_(options)
        assert library_accepts_assertion(credential, options["challenge"], key, stored)
        assert app.call("POST", "/api/v1/auth/passkeys/login", {"credential": credential})[0] == 200


def test_password_plus_totp_or_recovery_code_and_passkey_alone_for_one_user():
    """The issue's "done when": TOTP and a passkey enrolled; passkey alone; password + TOTP; password + recovery code."""
    import pyotp
    import time
    with running_server(CONFIG) as app:
        email = "both@example.com"
        token = register_user(app, email)["access_token"]
        enrolment = app.call("POST", "/api/v1/auth/mfa/totp/enroll", token=token)[1]
        otp = pyotp.parse_uri(enrolment["otpauth_uri"])
        codes = app.call("POST", "/api/v1/auth/mfa/totp/confirm", {"code": otp.now()}, token=token)[1]["recovery_codes"]
        key = Authenticator()
        add_passkey(app, token, key)
        status, listed, _ = app.call("GET", "/api/v1/auth/mfa", token=token)
        assert sorted(f["type"] for f in listed["factors"]) == ["passkey", "totp"] and listed["recovery_codes_left"] == 10, listed

        assert app.call("POST", "/api/v1/auth/passkeys/login", {"credential": key.assert_(login_options(app))})[0] == 200
        status, challenge, _ = app.call("POST", "/api/v1/auth/password/login", {"email": email, "password": PASSWORD})
        assert status == 202 and challenge["factors"] == ["totp", "recovery_code", "passkey"], challenge
        status, s, _ = app.call("POST", "/api/v1/auth/mfa/verify", {"challenge": challenge["challenge"], "totp": otp.at(time.time() + 30)})
        assert status == 200 and claims(s["access_token"])["amr"] == ["password", "totp", "mfa"], s
        challenge = app.call("POST", "/api/v1/auth/password/login", {"email": email, "password": PASSWORD})[1]
        status, s, _ = app.call("POST", "/api/v1/auth/mfa/verify", {"challenge": challenge["challenge"], "recovery_code": codes[0]})
        assert status == 200 and claims(s["access_token"])["amr"] == ["password", "recovery_code", "mfa"], s


def test_the_apple_app_site_association_names_the_apps():
    with running_server({**CONFIG, "passkeys": {"rp_id": RP_ID, "apple_app_ids": ["ABCDE12345.example.photos"]}}) as app:
        status, body, headers = app.call("GET", "/.well-known/apple-app-site-association")
        assert status == 200 and body == {"webcredentials": {"apps": ["ABCDE12345.example.photos"]}}
        assert headers["Content-Type"].startswith("application/json")
