"""The admin commands against the real binary: over the admin socket while `authd serve` runs, and
on the data folder itself when it does not, with the same output."""
import base64
import json
import os
import stat
import subprocess
import tempfile
import threading
import time

import pytest

from conftest import Server, running_server

BINARY = os.environ.get("AUTHD_BINARY", ".build/debug/authd")


def authd(*args, folder, check=True):
    result = subprocess.run([BINARY, *args, "--data", folder], capture_output=True, text=True, timeout=60)
    if check:
        assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result


def kid_of(token):
    return json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))["kid"]


def test_the_socket_is_private_and_the_output_is_the_same_with_and_without_a_server():
    with running_server() as server:
        session = server.sign_in("anna@example.com")
        mode = stat.S_IMODE(os.stat(os.path.join(server.folder, "admin.sock")).st_mode)
        assert mode == 0o600
        commands = [("users", "list"), ("users", "list", "--json"), ("users", "show", "anna@example.com"),
                    ("users", "show", session["user"]["id"], "--json"), ("sessions", "list", "anna@example.com"),
                    ("sessions", "list", "anna@example.com", "--json"), ("keys", "list"), ("keys", "list", "--json")]
        running = [authd(*c, folder=server.folder).stdout for c in commands]
        assert "anna@example.com" in running[0] and "1 user" in running[0]
        listed = json.loads(running[1])[0]
        assert listed["email"] == "anna@example.com" and listed["auth_providers"] == ["email"]
        assert listed["sessions"] == 1 and listed["disabled_at"] is None
        assert "served by     a running authd" in authd("check", folder=server.folder).stdout
        server.stop()
        stopped = [authd(*c, folder=server.folder).stdout for c in commands]
        assert stopped == running
        assert "served by     no running server" in authd("check", folder=server.folder).stdout


def test_no_secret_is_shown():
    with running_server() as server:
        session = server.sign_in("secret@example.com")
        _, anon, _ = server.call("POST", "/api/v1/auth/anonymous", {})
        server.call("PUT", "/api/v1/auth/pin", {"pin": "4821"}, token=anon["access_token"])
        everything = "".join(authd(*c, folder=server.folder).stdout for c in
                             [("users", "list", "--json"), ("users", "show", anon["user"]["id"], "--json"),
                              ("sessions", "list", "secret@example.com", "--json"), ("keys", "list", "--json")])
        for secret in (session["refresh_token"], session["access_token"], "4821", "hash", "seed"):
            assert secret not in everything


def test_a_disabled_user_loses_its_sessions_and_cannot_sign_in_until_enabled():
    with running_server() as server:
        session = server.sign_in("carl@example.com")
        out = authd("users", "disable", "carl@example.com", folder=server.folder).stdout
        assert "disabled" in out
        assert server.call("GET", "/api/v1/auth/me", token=session["access_token"])[0] == 401
        assert server.call("POST", "/api/v1/auth/refresh", {"refresh_token": session["refresh_token"]})[0] == 401
        time.sleep(1)  # the address's resend interval (BASE_CONFIG), which outlives the sign-in above
        server.call("POST", "/api/v1/auth/email/send-code", {"email": "carl@example.com"})
        status, body, _ = server.call("POST", "/api/v1/auth/email/verify", {"email": "carl@example.com", "code": server.mailed_code("carl@example.com")})
        assert status == 403 and body["error"]["code"] == "ACCOUNT_DISABLED"
        assert "disabled" in authd("users", "list", folder=server.folder).stdout
        authd("users", "enable", "carl@example.com", folder=server.folder)
        assert server.sign_in("carl@example.com")["user"]["email"] == "carl@example.com"


def test_delete_and_revoke():
    with running_server() as server:
        first = server.sign_in("dora@example.com")
        second = server.sign_in("dora@example.com")
        sessions = json.loads(authd("sessions", "list", "dora@example.com", "--json", folder=server.folder).stdout)
        assert len(sessions) == 2
        authd("sessions", "revoke", sessions[0]["id"], folder=server.folder)
        assert server.call("GET", "/api/v1/auth/me", token=first["access_token"])[0] == 401
        assert server.call("GET", "/api/v1/auth/me", token=second["access_token"])[0] == 200
        third = server.sign_in("dora@example.com")
        assert "2 sessions" in authd("sessions", "revoke", "--all-for", "dora@example.com", folder=server.folder).stdout
        assert server.call("GET", "/api/v1/auth/me", token=third["access_token"])[0] == 401
        kept = server.sign_in("dora@example.com")
        authd("users", "delete", "dora@example.com", folder=server.folder)
        assert server.call("GET", "/api/v1/auth/me", token=kept["access_token"])[0] == 401
        assert "0 users" in authd("users", "list", folder=server.folder).stdout


def test_mistakes_are_clear():
    with running_server() as server:
        result = authd("users", "show", "nobody@example.com", folder=server.folder, check=False)
        assert result.returncode == 1 and "no user nobody@example.com" in result.stderr and result.stdout == ""
        result = authd("sessions", "revoke", "not-a-session", folder=server.folder, check=False)
        assert result.returncode == 1 and "no session" in result.stderr
        result = authd("sessions", "revoke", folder=server.folder, check=False)
        assert result.returncode != 0 and "--all-for" in result.stderr
        result = authd("restore", "--from", "/nonexistent", folder=server.folder, check=False)
        assert result.returncode == 1 and "stop it first" in result.stderr
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "authd.json"), "w") as f:
            f.write('{"tokens": {"access_ttl": "soon"}}')
        result = authd("check", folder=folder, check=False)
        assert result.returncode == 1 and "configuration error" in result.stderr and "access_ttl" in result.stderr
        with open(os.path.join(folder, "junk.json"), "w") as f:
            f.write('{"format": "something else"}')
        result = authd("restore", "--from", os.path.join(folder, "junk.json"), folder=os.path.join(folder, "new"), check=False)
        assert result.returncode == 1 and "not an authd backup" in result.stderr


def test_key_rotation_while_serving():
    with running_server({"tokens": {"access_ttl": 3, "clock_skew": 0}}) as server:
        old = server.sign_in("keys@example.com")
        old_kid = kid_of(old["access_token"])
        authd("keys", "rotate", folder=server.folder)
        # The old key's token still verifies; new tokens use the new key; the JWKS has both.
        assert server.call("GET", "/api/v1/auth/me", token=old["access_token"])[0] == 200
        new = server.sign_in("keys@example.com")
        new_kid = kid_of(new["access_token"])
        assert new_kid != old_kid
        assert {k["kid"] for k in server.call("GET", "/.well-known/jwks.json")[1]["keys"] if k["alg"] == "EdDSA"} == {old_kid, new_kid}
        keys = {k["kid"]: k["state"] for k in json.loads(authd("keys", "list", "--json", folder=server.folder).stdout)}
        assert keys == {old_kid: "verifying", new_kid: "signing"}
        # Once the old key's last token has expired, the JWKS drops it.
        time.sleep(3.5)
        assert {k["kid"] for k in server.call("GET", "/.well-known/jwks.json")[1]["keys"] if k["alg"] == "EdDSA"} == {new_kid}
        assert json.loads(authd("keys", "list", "--json", folder=server.folder).stdout)[0]["state"] == "expired"
        # And a restart keeps it that way.
        server.stop()
        again = Server(server.folder)
        assert kid_of(again.sign_in("keys@example.com")["access_token"]) == new_kid
        again.stop()


def test_a_backup_under_write_load_restores_every_write_acknowledged_before_it():
    config = {"email": {"sends_per_ip": {"limit": 1000000, "window": 1}, "verifies_per_ip": {"limit": 1000000, "window": 1}, "attempts_per_client": {"limit": 1000000, "window": 1}}}
    with running_server(config) as server, tempfile.TemporaryDirectory() as elsewhere:
        acknowledged = []  # (time the answer arrived, email, refresh token)
        failures = []  # a worker that dies would only thin the load: the test checks for it
        stop = threading.Event()

        def load(worker):
            n = 0
            try:
                while not stop.is_set():
                    n += 1
                    email = f"load{worker}-{n}@example.com"
                    session = server.sign_in(email)
                    acknowledged.append((time.time(), email, session["refresh_token"]))
            except Exception as error:  # noqa: BLE001 — reported by the assertion below
                failures.append(repr(error))

        workers = [threading.Thread(target=load, args=(i,)) for i in range(4)]
        for w in workers:
            w.start()
        time.sleep(1.0)
        began = time.time()
        backup = os.path.join(elsewhere, "backup.json")
        out = authd("backup", "--to", backup, folder=server.folder).stdout
        time.sleep(0.5)
        stop.set()
        for w in workers:
            w.join()
        assert failures == []
        before = [a for a in acknowledged if a[0] < began]
        assert len(before) >= 5 and "backup written" in out
        assert stat.S_IMODE(os.stat(backup).st_mode) == 0o600

        restored = os.path.join(elsewhere, "restored")
        out = subprocess.run([BINARY, "restore", "--from", backup, "--data", restored], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        with open(os.path.join(restored, "authd.json"), "w") as f:
            json.dump({"issuer": "https://auth.example.test", "audience": "my-app", "mail": {"transport": "outbox"}}, f)
        copy = Server(restored)
        try:
            for _, email, refresh in before:
                status, body, _ = copy.call("POST", "/api/v1/auth/refresh", {"refresh_token": refresh})
                assert status == 200, (email, body)
                assert body["user"]["email"] == email
        finally:
            copy.stop()


def test_a_backup_cannot_write_outside_the_keys_folder():
    with running_server() as server, tempfile.TemporaryDirectory() as elsewhere:
        server.sign_in("safe@example.com")
        backup = os.path.join(elsewhere, "backup.json")
        authd("backup", "--to", backup, folder=server.folder)
        bundle = json.load(open(backup))
        target = os.path.join(elsewhere, "restored")
        for name in ("../evil", "/tmp/evil", ".hidden"):
            tampered = dict(bundle, keys={**bundle["keys"], name: base64.b64encode(b"x").decode()})
            with open(backup, "w") as f:
                json.dump(tampered, f)
            result = subprocess.run([BINARY, "restore", "--from", backup, "--data", target], capture_output=True, text=True)
            assert result.returncode == 1 and "a key file entry is damaged" in result.stderr, (name, result.stderr)
            assert not os.path.exists(target), "nothing may be written before the backup is checked"
        assert not os.path.exists(os.path.join(elsewhere, "evil"))


def test_sessions_lists_api_keys_by_name_and_prefix_never_the_secret():
    with running_server() as server:
        session = server.sign_in("keys@example.com")
        status, key, _ = server.call("POST", "/api/v1/auth/api-keys", {"name": "Backup NAS"}, token=session["access_token"])
        assert status == 201, key
        table = authd("sessions", "list", "keys@example.com", folder=server.folder).stdout
        assert "api_key" in table and "Backup NAS (authd_ak_" + key["prefix"] + "…)" in table, table
        listed = json.loads(authd("sessions", "list", "keys@example.com", "--json", folder=server.folder).stdout)
        item = next(s for s in listed if s["kind"] == "api_key")
        assert item["device_name"] == "Backup NAS" and item["key_prefix"] == "authd_ak_" + key["prefix"] + "…"
        for text in (table, json.dumps(listed), open(os.path.join(server.folder, "audit.jsonl")).read()):
            assert key["api_key"] not in text and key["api_key"][9:] not in text
        audit = [json.loads(line) for line in open(os.path.join(server.folder, "audit.jsonl"))]
        assert any(e["event"] == "api_key_created" and e["device"] == f"Backup NAS (authd_ak_{key['prefix']}…)" for e in audit)


def test_service_keys_made_by_the_cli_let_a_backend_introspect_tokens():
    import urllib.parse
    import urllib.request

    def introspect(server, token, key):
        req = urllib.request.Request(server.url + "/oauth/introspect", data=urllib.parse.urlencode({"token": token}).encode(), method="POST")
        req.add_header("Authorization", "Bearer " + key)
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())

    with running_server() as server:
        out = authd("service-keys", "create", "photo-backend", folder=server.folder).stdout
        secret = out.splitlines()[0]
        assert secret.startswith("authd_sk_") and len(secret) >= 9 + 43
        listed = json.loads(authd("service-keys", "list", "--json", folder=server.folder).stdout)
        assert listed == [{"name": "photo-backend", "prefix": "authd_sk_" + secret[9:17] + "…", "created_at": listed[0]["created_at"]}]
        assert authd("service-keys", "create", "photo-backend", folder=server.folder, check=False).returncode == 1
        assert authd("service-keys", "create", "bad name", folder=server.folder, check=False).returncode == 1
        session = server.sign_in("resource@example.com")
        status, body = introspect(server, session["access_token"], secret)
        assert status == 200 and body["active"] is True and body["sub"] == session["user"]["id"], body
        for text in (authd("service-keys", "list", folder=server.folder).stdout, open(os.path.join(server.folder, "audit.jsonl")).read()):
            assert secret not in text and secret[9:] not in text
        assert "revoked" in authd("service-keys", "revoke", "photo-backend", folder=server.folder).stdout
        status, body = introspect(server, session["access_token"], secret)
        assert status == 401 and body["error"] == "invalid_client"
        assert authd("service-keys", "revoke", "photo-backend", folder=server.folder, check=False).returncode == 1
        folder = server.folder
        server.stop()
        # With no server running the same command works on the data folder itself.
        offline = authd("service-keys", "create", "offline", folder=folder).stdout.splitlines()[0]
        assert offline.startswith("authd_sk_")
        assert [k["name"] for k in json.loads(authd("service-keys", "list", "--json", folder=folder).stdout)] == ["offline"]


def test_authd_health_exits_zero_only_while_the_server_answers():
    """A container's healthcheck (contract §14): one line, exit 0 while `GET /health` answers."""
    import urllib.parse as parse
    with running_server() as server:
        port = str(parse.urlparse(server.url).port)
        up = subprocess.run([BINARY, "health", "--port", port], capture_output=True, text=True)
        assert up.returncode == 0 and up.stdout.startswith("ok: http://127.0.0.1:" + port + "/health"), up.stdout + up.stderr
        by_env = subprocess.run([BINARY, "health"], capture_output=True, text=True, env={**os.environ, "AUTHD_PORT": port, "AUTHD_HOST": "0.0.0.0"})
        assert by_env.returncode == 0, by_env.stdout
        assert subprocess.run([BINARY, "health", "--url", server.url + "/health"], capture_output=True).returncode == 0
        server.stop()
        down = subprocess.run([BINARY, "health", "--port", port], capture_output=True, text=True)
        assert down.returncode == 1 and "no answer" in down.stdout
    bad = subprocess.run([BINARY, "health", "--url", "ftp://x"], capture_output=True, text=True)
    assert bad.returncode == 1 and "--url" in bad.stdout
