"""The apps' flows of issue #27 against the real binary (file store; test_postgres_instances.py runs
them on PostgreSQL): an app backend that keeps `couple_id` in `app_metadata` with a service key,
camelCase bodies, and the two-step password reset of a TOTP-app style client."""
import base64
import json
import os
import subprocess

from conftest import running_server

BINARY = os.environ.get("AUTHD_BINARY", ".build/debug/authd")


def claims(token):
    part = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def service_key(folder, name="couples-backend"):
    out = subprocess.run([BINARY, "service-keys", "create", name, "--data", folder], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.split("\n")[0]


def couple_flow(app, backend_key):
    """Anonymous + PIN; the app's backend sets couple_id; the app's next refresh carries it."""
    status, session, _ = app.call("POST", "/api/v1/auth/anonymous", {"deviceName": "Anna's phone", "platform": "ios"})
    assert status == 200 and session["user"]["is_anonymous"], session
    assert app.call("PUT", "/api/v1/auth/pin", {"pin": "4821"}, session["access_token"])[0] == 204
    assert "app_metadata" not in claims(session["access_token"])
    user_id = session["user"]["id"]
    status, user, _ = app.call("PATCH", f"/api/v1/admin/users/{user_id}", {"app_metadata": {"couple_id": "c-42"}}, backend_key)
    assert status == 200 and user["app_metadata"] == {"couple_id": "c-42"}, user
    status, refreshed, _ = app.call("POST", "/api/v1/auth/refresh", {"refreshToken": session["refresh_token"]})
    assert status == 200, refreshed
    assert claims(refreshed["access_token"])["app_metadata"] == {"couple_id": "c-42"}
    assert refreshed["user"]["app_metadata"] == {"couple_id": "c-42"}
    # The user cannot set it themselves, in either spelling.
    for body in ({"app_metadata": {"couple_id": "c-1"}}, {"appMetadata": {"couple_id": "c-1"}}):
        status, error, _ = app.call("PATCH", "/api/v1/auth/me", body, refreshed["access_token"])
        assert status == 400 and error["error"]["code"] == "INVALID_REQUEST", error
    status, mine, _ = app.call("PATCH", "/api/v1/auth/me", {"userMetadata": {"nickname": "Anna"}}, refreshed["access_token"])
    assert status == 200 and mine["user_metadata"] == {"nickname": "Anna"} and mine["app_metadata"] == {"couple_id": "c-42"}
    status, found, _ = app.call("GET", f"/api/v1/admin/users/{user_id}", token=backend_key)
    assert status == 200 and found["user_metadata"] == {"nickname": "Anna"}


def two_step_reset_flow(app):
    """A TOTP-app style client: code, then reset_token, then the new password, signed in."""
    email = "totp-user@example.com"
    assert app.call("POST", "/api/v1/auth/password/register", {"email": email, "password": "first good secret"})[0] == 202
    status, session, _ = app.call("POST", "/api/v1/auth/password/verify-email",
                                  {"email": email, "code": app.mailed_code(email), "password": "first good secret"})
    assert status == 200, session
    assert app.call("POST", "/api/v1/auth/password/reset/email/initiate", {"email": email})[0] == 200
    code = app.mailed_code(email, about="reset")  # mailed after the answer: waits for it
    wrong = "111111" if code == "000000" else "000000"
    status, error, _ = app.call("POST", "/api/v1/auth/password/reset/email/verify", {"email": email, "code": wrong})
    assert status == 401 and error["error"]["details"]["attempts_remaining"] == 4, error
    status, step1, _ = app.call("POST", "/api/v1/auth/password/reset/email/verify", {"email": email, "code": code})
    assert status == 200 and step1["expires_in"] == 600, step1
    status, signed_in, _ = app.call("POST", "/api/v1/auth/password/reset/complete",
                                    {"resetToken": step1["reset_token"], "newPassword": "second good secret", "signIn": True, "deviceName": "iPad"})
    assert status == 200 and signed_in["user"]["email"] == email, signed_in
    assert app.call("GET", "/api/v1/auth/me", token=session["access_token"])[0] == 401, "older sessions ended"
    status, login, _ = app.call("POST", "/api/v1/auth/password/login", {"email": email, "password": "second good secret"})
    assert status == 200, login
    # Logout by refresh token, as a client whose access token expired does.
    assert app.call("POST", "/api/v1/auth/logout", {"refresh_token": login["refresh_token"]})[0] == 204
    assert app.call("POST", "/api/v1/auth/refresh", {"refresh_token": login["refresh_token"]})[0] == 401


def test_couple_flow_on_the_file_store():
    with running_server() as app:
        couple_flow(app, service_key(app.folder))


def test_two_step_reset_on_the_file_store():
    with running_server() as app:
        two_step_reset_flow(app)
