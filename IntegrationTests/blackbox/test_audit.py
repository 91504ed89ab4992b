"""The audit log (DATA/audit.jsonl), `authd audit tail`, and JSON logs with request ids: every
security event is recorded with who, from where and which request, and no secret reaches either file."""
import json
import os
import re
import select
import subprocess
import time

from conftest import running_server
from mailtext import code_in, has_code

BINARY = os.environ.get("AUTHD_BINARY", ".build/debug/authd")
BIG = {"limit": 1000000, "window": 1}
CONFIG = {
    "log": {"format": "json"},
    "tokens": {"refresh_reuse_grace": 0},
    "password": {"resets_per_email": BIG, "resend_interval": 0},
}


def audit_events(folder):
    with open(os.path.join(folder, "audit.jsonl")) as f:
        return [json.loads(line) for line in f]


def all_codes(server):
    """Every code mailed so far, as the mails show them (notices show none)."""
    return [code_in(mail) for mail in server.mails() if has_code(mail)]


def register(server, email, password):
    assert server.call("POST", "/api/v1/auth/password/register", {"email": email, "password": password, "display_name": "X"})[0] == 202
    status, session, _ = server.call("POST", "/api/v1/auth/password/verify-email", {"email": email, "code": server.mailed_code(email), "password": password})
    assert status == 200, session
    return session


def test_every_security_event_is_audited_without_secrets():
    secrets = []
    with running_server(CONFIG, log=True) as server:
        anna = server.sign_in("anna@example.com")
        secrets += [anna["access_token"], anna["refresh_token"]]
        status, _, _ = server.call("POST", "/api/v1/auth/email/verify", {"email": "bob@example.com", "code": "000000"})
        assert status == 401

        carl_password = "carl's long password"
        carl = register(server, "carl@example.com", carl_password)
        secrets += [carl_password, carl["refresh_token"]]
        for attempt in range(10):
            wrong = f"wrong password number {attempt}"
            secrets.append(wrong)
            status, _, _ = server.call("POST", "/api/v1/auth/password/login", {"email": "carl@example.com", "password": wrong})
        assert status == 429

        dan_password, dan_new, dan_reset = "dan's first password", "dan's second password", "dan's third password"
        dan = register(server, "dan@example.com", dan_password)
        secrets += [dan_password, dan_new, dan_reset]
        assert server.call("POST", "/api/v1/auth/password/change", {"current_password": dan_password, "new_password": dan_new},
                           token=dan["access_token"])[0] == 204
        assert server.call("POST", "/api/v1/auth/password/reset/email/initiate", {"email": "dan@example.com"})[0] == 200
        reset_code = server.mailed_code("dan@example.com", about="reset")  # mailed after the answer: waits for it
        status, body, _ = server.call("POST", "/api/v1/auth/password/reset/email/verify",
                                      {"email": "dan@example.com", "code": reset_code, "new_password": dan_reset})
        assert status == 200, body

        # Device resets of dan's password, answered on dan's signed-in device: one approved, one denied.
        dan_device = server.call("POST", "/api/v1/auth/password/login", {"email": "dan@example.com", "password": dan_reset})[1]
        status, reset, _ = server.call("POST", "/api/v1/auth/password/reset/device/initiate",
                                       {"email": "dan@example.com", "new_password": "dan's device password", "device_name": "new phone"})
        assert status == 202
        secrets.append("dan's device password")
        assert server.call("POST", f"/api/v1/auth/approvals/{reset['request_id']}/approve", {"match_code": reset["match_code"]},
                           token=dan_device["access_token"])[0] == 204
        assert server.call("POST", f"/api/v1/auth/password/reset/device/{reset['request_id']}/complete")[0] == 200
        dan_device = server.call("POST", "/api/v1/auth/password/login", {"email": "dan@example.com", "password": "dan's device password"})[1]
        status, other, _ = server.call("POST", "/api/v1/auth/password/reset/device/initiate",
                                       {"email": "dan@example.com", "new_password": "someone else's try"})
        secrets.append("someone else's try")
        assert server.call("POST", f"/api/v1/auth/approvals/{other['request_id']}/deny", token=dan_device["access_token"])[0] == 204

        _, anon, _ = server.call("POST", "/api/v1/auth/anonymous", {})
        server.call("PUT", "/api/v1/auth/pin", {"pin": "4821"}, token=anon["access_token"])
        server.call("PUT", "/api/v1/auth/pin", {"pin": "7395", "current_pin": "4821"}, token=anon["access_token"])
        secrets += ["4821", "7395", anon["access_token"], anon["refresh_token"]]

        status, rotated, _ = server.call("POST", "/api/v1/auth/refresh", {"refresh_token": anna["refresh_token"]})
        time.sleep(1.1)
        status, body, _ = server.call("POST", "/api/v1/auth/refresh", {"refresh_token": anna["refresh_token"]})
        assert body["error"]["code"] == "REFRESH_TOKEN_REUSED"
        secrets += [rotated["access_token"], rotated["refresh_token"]]

        erin = server.sign_in("erin@example.com")
        assert server.call("POST", "/api/v1/auth/logout", token=erin["access_token"])[0] == 204
        erin = server.sign_in("erin@example.com")
        assert server.call("DELETE", "/api/v1/auth/account", token=erin["access_token"])[0] == 204
        secrets += [erin["access_token"], erin["refresh_token"]]
        subprocess.run([BINARY, "users", "disable", "anna@example.com", "--data", server.folder], check=True, capture_output=True)

        events = audit_events(server.folder)
        names = {e["event"] for e in events}
        for expected in ("sign_in", "sign_in_failed", "lockout", "password_changed", "reset_requested", "reset_completed",
                         "reset_approved", "reset_denied", "pin_changed", "refresh_reuse", "logout", "account_deleted", "admin"):
            assert expected in names, (expected, sorted(names))
        failed = [e for e in events if e["event"] == "sign_in_failed" and e.get("account") == "bob@example.com"]
        assert failed and failed[0]["reason"] == "INVALID_CODE" and failed[0]["ip"] == "127.0.0.1" and failed[0]["provider"] == "email"
        signed_in = [e for e in events if e["event"] == "sign_in" and e.get("user_id") == anna["user"]["id"]]
        assert signed_in and signed_in[0]["request_id"] and signed_in[0]["ip"] == "127.0.0.1"
        assert [e for e in events if e["event"] == "admin" and e.get("reason") == "users disable"]
        for e in events:
            assert e["time"] and e["event"]
            if e["event"] != "admin":
                assert e.get("request_id"), e

        log = server.log()
        audit_text = open(os.path.join(server.folder, "audit.jsonl")).read()
        secrets += all_codes(server)
        for secret in secrets:
            # Not next to other hex characters or a hyphen: a PIN or code may be a whole group of
            # some UUID by chance (a version-4 UUID's third group is 4xxx, as the PIN 4821 is).
            pattern = re.compile(r"(?<![0-9A-Za-z-])" + re.escape(secret) + r"(?![0-9A-Za-z-])")
            assert not pattern.search(audit_text), secret
            assert not pattern.search(log), secret
        # JSON logs: every line an object; every line written inside a request carries its id.
        lines = [json.loads(line) for line in log.splitlines() if line.strip()]
        assert lines and all("message" in l and "level" in l for l in lines)
        assert all("request.id" in l for l in lines if "hb.request.id" in l)
        assert any(l.get("message") == "signed in" and "request.id" in l for l in lines)


def test_audit_tail_filters_and_follows():
    with running_server() as server:
        anna = server.sign_in("anna@example.com")
        server.sign_in("bert@example.com")
        result = subprocess.run([BINARY, "audit", "tail", "--user", anna["user"]["id"], "--data", server.folder],
                                capture_output=True, text=True, check=True)
        events = [json.loads(line) for line in result.stdout.splitlines()]
        assert events and all(e["user_id"] == anna["user"]["id"] for e in events)
        follow = subprocess.Popen([BINARY, "audit", "tail", "--follow", "-n", "0", "--data", server.folder],
                                  stdout=subprocess.PIPE, text=True)
        try:
            # The follower may start after an event: keep making events until one shows (or 20 s pass).
            line = ""
            for _ in range(40):
                session = server.sign_in("carla@example.com")
                server.call("POST", "/api/v1/auth/logout", token=session["access_token"])
                if select.select([follow.stdout], [], [], 0.5)[0]:
                    line = follow.stdout.readline()
                    break
            assert json.loads(line)["event"] in ("sign_in", "logout")
        finally:
            follow.kill()
            follow.wait()


def test_audit_tail_takes_only_declared_events_and_filters_by_one():
    with running_server() as server:
        server.sign_in("anna@example.com")
        session = server.sign_in("bert@example.com")
        server.call("POST", "/api/v1/auth/logout", token=session["access_token"])
        result = subprocess.run([BINARY, "audit", "tail", "--event", "logout", "--data", server.folder],
                                capture_output=True, text=True, check=True)
        events = [json.loads(line) for line in result.stdout.splitlines()]
        assert [e["event"] for e in events] == ["logout"]
        typo = subprocess.run([BINARY, "audit", "tail", "--event", "log_out", "--data", server.folder],
                              capture_output=True, text=True)
        assert typo.returncode != 0
        assert "no audit event is named log_out" in typo.stderr and "logout" in typo.stderr
        listed = subprocess.run([BINARY, "audit", "events"], capture_output=True, text=True, check=True).stdout
        names = [line.split()[0] for line in listed.splitlines()]
        # The kernel's and every built-in provider's, each once, with what it means.
        assert {"sign_in", "logout", "password_changed", "totp_enabled", "passkey_added", "pin_changed"} <= set(names)
        assert len(names) == len(set(names)) and all(len(line.split()) > 2 for line in listed.splitlines())


def test_the_audit_log_rotates_by_size():
    config = {"audit": {"max_bytes": 4096, "keep": 2}, "email": {"sends_per_ip": BIG, "verifies_per_ip": BIG, "attempts_per_client": BIG}}
    with running_server(config) as server:
        for n in range(60):
            server.call("POST", "/api/v1/auth/email/verify", {"email": f"guess{n}@example.com", "code": "000000"})
        files = sorted(f for f in os.listdir(server.folder) if f.startswith("audit"))
        assert files == ["audit-1.jsonl", "audit-2.jsonl", "audit.jsonl"], files
        for name in files:
            assert os.path.getsize(os.path.join(server.folder, name)) <= 4096
        assert all(json.loads(l) for l in open(os.path.join(server.folder, "audit-1.jsonl")))
