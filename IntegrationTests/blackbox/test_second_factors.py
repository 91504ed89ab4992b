"""Second factors against the real binary (contract §10), driven by third-party clients: `pyotp`
makes the authenticator app's codes from the `otpauth://` URI the server returns. Password + TOTP,
email code + recovery code, the two-step reset with sign-in, replays and the lockout; on the file
store here and on PostgreSQL (two instances) in test_postgres_instances.py."""
import base64
import json
import time

import pyotp

from conftest import running_server

CONFIG = {"providers": ["email", "password", "totp"], "totp": {"issuer": "Photo Sync"}}
PASSWORD = "a long enough secret"


def claims(token):
    part = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def register(app, email):
    assert app.call("POST", "/api/v1/auth/password/register", {"email": email, "password": PASSWORD})[0] == 202
    status, session, _ = app.call("POST", "/api/v1/auth/password/verify-email", {"email": email, "code": app.mailed_code(email), "password": PASSWORD})
    assert status == 200, session
    return session


def totp_flow(a, b):
    """Enrols on `a`, signs in on `b` (the same server, or another instance on the same database)."""
    email = "two-factors@example.com"
    session = register(a, email)
    token = session["access_token"]
    status, enrolment, _ = a.call("POST", "/api/v1/auth/mfa/totp/enroll", token=token)
    assert status == 200, enrolment
    app = pyotp.parse_uri(enrolment["otpauth_uri"])
    assert isinstance(app, pyotp.TOTP) and app.secret == enrolment["secret"] and app.issuer == "Photo Sync" and app.name == email
    assert app.digits == 6 and app.interval == 30

    status, confirmed, _ = a.call("POST", "/api/v1/auth/mfa/totp/confirm", {"code": app.now()}, token=token)
    assert status == 200 and len(confirmed["recovery_codes"]) == 10, confirmed
    codes = confirmed["recovery_codes"]
    status, listed, _ = b.call("GET", "/api/v1/auth/mfa", token=token)
    assert status == 200 and [f["type"] for f in listed["factors"]] == ["totp"] and listed["recovery_codes_left"] == 10, listed

    # Password, then the app's code: the confirming step is used, the next one (within the drift) is not.
    status, challenge, _ = b.call("POST", "/api/v1/auth/password/login", {"email": email, "password": PASSWORD, "deviceName": "iPhone"})
    assert status == 202 and challenge["status"] == "second_factor_required" and challenge["factors"] == ["totp", "recovery_code"], challenge
    assert challenge["expires_in"] == 300
    next_code = app.at(time.time() + 30)
    status, signed_in, _ = a.call("POST", "/api/v1/auth/mfa/verify", {"challenge": challenge["challenge"], "totp": next_code})
    assert status == 200 and claims(signed_in["access_token"])["amr"] == ["password", "totp", "mfa"], signed_in
    status, refreshed, _ = b.call("POST", "/api/v1/auth/refresh", {"refresh_token": signed_in["refresh_token"]})
    assert status == 200 and claims(refreshed["access_token"])["amr"] == ["password", "totp", "mfa"]

    # The same code again, on a new challenge: refused (a step is used once).
    _, again, _ = b.call("POST", "/api/v1/auth/password/login", {"email": email, "password": PASSWORD})
    status, error, _ = a.call("POST", "/api/v1/auth/mfa/verify", {"challenge": again["challenge"], "totp": next_code})
    assert status == 401 and error["error"]["code"] == "INVALID_CODE" and error["error"]["details"]["attempts_remaining"] == 4, error

    # An emailed code is a first factor like the password; a recovery code completes it, once.
    assert b.call("POST", "/api/v1/auth/email/send-code", {"email": email})[0] == 200
    status, challenge, _ = b.call("POST", "/api/v1/auth/email/verify", {"email": email, "code": b.mailed_code(email)})
    assert status == 202, challenge
    status, by_code, _ = a.call("POST", "/api/v1/auth/mfa/verify", {"challenge": challenge["challenge"], "recovery_code": codes[0]})
    assert status == 200 and claims(by_code["access_token"])["amr"] == ["email", "recovery_code", "mfa"], by_code
    _, challenge, _ = b.call("POST", "/api/v1/auth/password/login", {"email": email, "password": PASSWORD})
    status, error, _ = a.call("POST", "/api/v1/auth/mfa/verify", {"challenge": challenge["challenge"], "recovery_code": codes[0]})
    assert status == 401 and error["error"]["code"] == "INVALID_CODE"
    assert b.call("GET", "/api/v1/auth/mfa", token=token)[1]["recovery_codes_left"] == 9

    # A reset with sign-in meets the second factor too.
    assert a.call("POST", "/api/v1/auth/password/reset/email/initiate", {"email": email})[0] == 200
    reset_code = a.mailed_code(email, about="reset")  # mailed after the answer: waits for it
    status, step, _ = b.call("POST", "/api/v1/auth/password/reset/email/verify", {"email": email, "code": reset_code})
    assert status == 200, step
    status, challenge, _ = a.call("POST", "/api/v1/auth/password/reset/complete",
                                  {"reset_token": step["reset_token"], "new_password": "another long secret", "sign_in": True})
    assert status == 202 and challenge["factors"] == ["totp", "recovery_code"], challenge
    status, after_reset, _ = b.call("POST", "/api/v1/auth/mfa/verify", {"challenge": challenge["challenge"], "recovery_code": codes[1]})
    assert status == 200, after_reset
    return email, app


def test_password_and_totp_email_code_and_recovery_codes_on_the_file_store():
    with running_server(CONFIG) as app:
        totp_flow(app, app)


def test_wrong_codes_lock_the_second_factor_until_the_lock_ends():
    with running_server({**CONFIG, "totp": {"max_attempts": 3, "lockout": 2}}) as app:
        email = "locked@example.com"
        token = register(app, email)["access_token"]
        enrolment = app.call("POST", "/api/v1/auth/mfa/totp/enroll", token=token)[1]
        otp = pyotp.parse_uri(enrolment["otpauth_uri"])
        assert app.call("POST", "/api/v1/auth/mfa/totp/confirm", {"code": otp.now()}, token=token)[0] == 200
        challenge = app.call("POST", "/api/v1/auth/password/login", {"email": email, "password": PASSWORD})[1]["challenge"]
        wrong = "000000" if otp.at(time.time() + 30) != "000000" else "111111"
        answers = [app.call("POST", "/api/v1/auth/mfa/verify", {"challenge": challenge, "totp": wrong}) for _ in range(3)]
        assert [a[0] for a in answers] == [401, 401, 429], answers
        assert answers[2][1]["error"]["details"]["retry_after"] == 2 and answers[2][2]["Retry-After"] == "2"
        status, _, _ = app.call("POST", "/api/v1/auth/mfa/verify", {"challenge": challenge, "totp": otp.at(time.time() + 30)})
        assert status == 429, "locked: even the right code waits"
        time.sleep(2.1)
        status, session, _ = app.call("POST", "/api/v1/auth/mfa/verify", {"challenge": challenge, "totp": otp.at(time.time() + 30)})
        assert status == 200, session


def test_an_emailed_code_after_the_password_when_the_server_asks_for_one():
    with running_server({"providers": ["email", "password", "totp"], "password": {"login_requires_email_code": True}}) as app:
        email = "mailed@example.com"
        register(app, email)
        sent = len(app.outbox())
        status, challenge, _ = app.call("POST", "/api/v1/auth/password/login", {"email": email, "password": PASSWORD})
        assert status == 202 and challenge["factors"] == ["email_code"], challenge
        # The code as the mail shows it to the person signing in.
        code = app.mailed_code(email, after=sent)
        status, session, _ = app.call("POST", "/api/v1/auth/mfa/verify", {"challenge": challenge["challenge"], "emailCode": code})
        assert status == 200 and claims(session["access_token"])["amr"] == ["password", "email_code", "mfa"], session
