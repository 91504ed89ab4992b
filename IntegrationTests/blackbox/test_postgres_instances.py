"""Two `authd serve` processes on one PostgreSQL database: what one does, the other sees.

Needs AUTHD_TEST_POSTGRES_URL (a server where the test may create databases; `make test` starts a
throwaway one with IntegrationTests/postgres/cluster). Skipped without it, unless AUTHD_REQUIRE_POSTGRES=1 (make test on Debian, so CI).
"""
import concurrent.futures
import contextlib
import json
import os
import secrets
import subprocess
import tempfile
import time
import urllib.parse

import pytest

from conftest import BASE_CONFIG, Server, next_event, running_server

SERVER_URL = os.environ.get("AUTHD_TEST_POSTGRES_URL")
if not SERVER_URL:
    if os.environ.get("AUTHD_REQUIRE_POSTGRES") == "1":
        raise RuntimeError("AUTHD_REQUIRE_POSTGRES=1 but AUTHD_TEST_POSTGRES_URL is not set")
    pytest.skip("no PostgreSQL server (AUTHD_TEST_POSTGRES_URL)", allow_module_level=True)

BINARY = os.environ.get("AUTHD_BINARY", ".build/debug/authd")


def fresh_database():
    name = "authd_bb_" + secrets.token_hex(6)
    subprocess.run(["psql", SERVER_URL, "-qc", f"CREATE DATABASE {name}"], check=True)
    return urllib.parse.urlunparse(urllib.parse.urlparse(SERVER_URL)._replace(path="/" + name))


@contextlib.contextmanager
def cluster(config=None, migrate=True, count=2, before_start=None, ports=None):
    """`count` servers, each with its own data folder, on one new database (on `ports`, when given)."""
    url = fresh_database()
    kek = secrets.token_hex(32)
    full = {**BASE_CONFIG, **(config or {}), "storage": {"backend": "postgres", "postgres": {"url": url, "tls": "disable"}}}
    old = os.environ.get("AUTHD_KEY_ENCRYPTION_KEY")
    os.environ["AUTHD_KEY_ENCRYPTION_KEY"] = kek
    with contextlib.ExitStack() as stack:
        folders = [stack.enter_context(tempfile.TemporaryDirectory()) for _ in range(count)]
        for folder in folders:
            with open(os.path.join(folder, "authd.json"), "w") as f:
                json.dump(full, f)
        if migrate:
            out = subprocess.run([BINARY, "migrate", "--data", folders[0]], capture_output=True, text=True)
            assert out.returncode == 0, out.stderr
            assert f"schema version" in out.stdout and "applied migration" in out.stdout, out.stdout
        if before_start:
            before_start(folders[0])
        servers = []
        try:
            for i, folder in enumerate(folders):
                servers.append(Server(folder, port=ports[i] if ports else 0))
            yield servers
        finally:
            for s in servers:
                if s.proc.poll() is None:
                    s.stop()
            if old is None:
                os.environ.pop("AUTHD_KEY_ENCRYPTION_KEY", None)
            else:
                os.environ["AUTHD_KEY_ENCRYPTION_KEY"] = old


def sign_in_across(a, b, email):
    """Asks for the code on `a`, signs in with it on `b`."""
    assert a.call("POST", "/api/v1/auth/email/send-code", {"email": email})[0] == 200
    status, session, _ = b.call("POST", "/api/v1/auth/email/verify", {"email": email, "code": a.mailed_code(email)})
    assert status == 200, session
    return session


def test_sign_in_on_one_refresh_on_the_other():
    with cluster() as (a, b):
        session = sign_in_across(a, b, "ann@example.com")
        for s in (a, b):
            status, me, _ = s.call("GET", "/api/v1/auth/me", token=session["access_token"])
            assert status == 200 and me["email"] == "ann@example.com"
        status, refreshed, _ = b.call("POST", "/api/v1/auth/refresh", {"refresh_token": session["refresh_token"]})
        assert status == 200
        assert a.call("GET", "/api/v1/auth/me", token=refreshed["access_token"])[0] == 200
        # A code is single use on every instance.
        assert a.call("POST", "/api/v1/auth/email/send-code", {"email": "once@example.com"})[0] == 200
        code = a.mailed_code("once@example.com")
        assert b.call("POST", "/api/v1/auth/email/verify", {"email": "once@example.com", "code": code})[0] == 200
        assert a.call("POST", "/api/v1/auth/email/verify", {"email": "once@example.com", "code": code})[0] == 401


def test_concurrent_refreshes_split_across_instances_keep_one_session_and_reuse_is_detected():
    # A minute's grace, so the ten refreshes are inside it however slow the machine is.
    with cluster({"tokens": {"refresh_reuse_grace": 60}}) as (a, b):
        session = sign_in_across(a, b, "race@example.com")
        token = session["refresh_token"]

        def refresh(i):
            return (a, b)[i % 2].call("POST", "/api/v1/auth/refresh", {"refresh_token": token})

        with concurrent.futures.ThreadPoolExecutor(max_workers=10) as pool:
            results = list(pool.map(refresh, range(10)))
        assert [r[0] for r in results] == [200] * 10, results
        status, sessions, _ = b.call("GET", "/api/v1/auth/sessions", token=results[0][1]["access_token"])
        assert status == 200 and len(sessions["sessions"]) == 1
    # After the grace (a second, waited past), the first token is a reuse: the session ends on both instances.
    with cluster({"tokens": {"refresh_reuse_grace": 1}}) as (a, b):
        session = sign_in_across(a, b, "race@example.com")
        token = session["refresh_token"]
        status, rotated, _ = b.call("POST", "/api/v1/auth/refresh", {"refresh_token": token})
        assert status == 200, rotated
        time.sleep(1.5)  # more is the same
        status, body, _ = a.call("POST", "/api/v1/auth/refresh", {"refresh_token": token})
        assert status == 401 and body["error"]["code"] == "REFRESH_TOKEN_REUSED"
        status, body, _ = b.call("POST", "/api/v1/auth/refresh", {"refresh_token": rotated["refresh_token"]})
        assert status == 401 and body["error"]["code"] == "INVALID_REFRESH_TOKEN"
        assert b.call("GET", "/api/v1/auth/me", token=rotated["access_token"])[0] == 401


def test_a_rate_limit_holds_across_instances():
    with cluster({"email": {"sends_per_ip": {"limit": 4, "window": 3600}}}) as (a, b):
        statuses = [(a, b)[i % 2].call("POST", "/api/v1/auth/email/send-code", {"email": f"r{i}@example.com"})[0] for i in range(8)]
        assert statuses.count(200) == 4 and statuses.count(429) == 4, statuses


def test_key_rotation_reaches_every_instance():
    with cluster() as (a, b):
        def kids(s, alg="EdDSA"):
            return sorted(k["kid"] for k in s.call("GET", "/.well-known/jwks.json")[1]["keys"] if k["alg"] == alg)

        assert kids(a) == kids(b) and len(kids(a)) == 1
        assert kids(a, "RS256") == kids(b, "RS256") and len(kids(a, "RS256")) == 1
        out = subprocess.run([BINARY, "keys", "rotate", "--data", a.folder], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        deadline = time.time() + 120  # generous for a loaded machine; it goes on as soon as it happens
        while (kids(b) != kids(a) or kids(b, "RS256") != kids(a, "RS256")) and time.time() < deadline:
            time.sleep(0.1)
        assert kids(b) == kids(a) and len(kids(a)) == 2
        # The RSA key of ID tokens rotates with them, on every instance.
        assert kids(b, "RS256") == kids(a, "RS256") and len(kids(a, "RS256")) == 2
        # A token signed with the new key on a works on b.
        session = sign_in_across(b, a, "rotated@example.com")
        assert b.call("GET", "/api/v1/auth/me", token=session["access_token"])[0] == 200


def test_a_server_refuses_an_unmigrated_database_and_says_what_to_do():
    with pytest.raises(AssertionError) as failed:
        with cluster(migrate=False, count=1):
            pass
    assert "authd migrate" in str(failed.value)


def test_admin_commands_see_the_shared_users():
    with cluster() as (a, b):
        sign_in_across(a, b, "listed@example.com")
        with tempfile.TemporaryDirectory() as elsewhere:
            # A third host without a running server: the command opens the database directly.
            with open(os.path.join(a.folder, "authd.json")) as f, open(os.path.join(elsewhere, "authd.json"), "w") as g:
                g.write(f.read())
            out = subprocess.run([BINARY, "users", "list", "--data", elsewhere], capture_output=True, text=True)
            assert out.returncode == 0, out.stderr
            assert "listed@example.com" in out.stdout
            out = subprocess.run([BINARY, "check", "--data", elsewhere], capture_output=True, text=True)
            assert "postgres: 1 users" in out.stdout


def test_a_data_folder_moves_into_postgres_and_back_with_its_credentials():
    from conftest import running_server

    password = "a long enough moving password"
    with running_server() as single:
        email_session = single.sign_in("mover@example.com")
        assert single.call("POST", "/api/v1/auth/password/register", {"email": "pw@example.com", "password": password, "display_name": "P"})[0] == 202
        status, _, _ = single.call("POST", "/api/v1/auth/password/verify-email", {"email": "pw@example.com", "code": single.mailed_code("pw@example.com"), "password": password})
        assert status == 200
        _, anon, _ = single.call("POST", "/api/v1/auth/anonymous", {})
        assert single.call("PUT", "/api/v1/auth/pin", {"pin": "4821"}, token=anon["access_token"])[0] in (200, 204)
        export = os.path.join(single.folder, "export.json")
        # Exported while the server runs (over its admin socket).
        out = subprocess.run([BINARY, "export", "--to", export, "--data", single.folder], capture_output=True, text=True)
        assert out.returncode == 0 and "3 users" in out.stdout, out.stdout + out.stderr
        assert oct(os.stat(export).st_mode & 0o777) == "0o600"
        with open(export) as f:
            moved = f.read()

    with tempfile.TemporaryDirectory() as keep:
        with open(os.path.join(keep, "export.json"), "w") as f:
            f.write(moved)
        with cluster(count=2, before_start=lambda folder: subprocess.run(
                [BINARY, "import", "--from", os.path.join(keep, "export.json"), "--data", folder], capture_output=True, text=True, check=True)) as (a, b):
            # Still signed in: the refresh token works on either instance, the access token verifies.
            assert a.call("GET", "/api/v1/auth/me", token=email_session["access_token"])[0] == 200
            assert b.call("POST", "/api/v1/auth/refresh", {"refresh_token": email_session["refresh_token"]})[0] == 200
            # Credentials made before the move: the password hash and the peppered PIN hash.
            assert a.call("POST", "/api/v1/auth/password/login", {"email": "pw@example.com", "password": password})[0] == 200
            status, _, _ = b.call("POST", "/api/v1/auth/pin/verify", {"user_id": anon["user"]["id"], "pin": "4821"})
            assert status == 200
            # A second import into the now-used database is refused.
            out = subprocess.run([BINARY, "import", "--from", os.path.join(keep, "export.json"), "--data", os.path.join(keep, "third"),
                                  "--config", os.path.join(a.folder, "authd.json")], capture_output=True, text=True)
            assert out.returncode == 1 and "empty" in out.stdout + out.stderr
            # And back into a new data folder.
            back = os.path.join(keep, "back.json")
            assert subprocess.run([BINARY, "export", "--to", back, "--data", a.folder], capture_output=True, text=True).returncode == 0
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, "authd.json"), "w") as f:
                json.dump(BASE_CONFIG, f)
            out = subprocess.run([BINARY, "import", "--from", back, "--data", folder], capture_output=True, text=True)
            assert out.returncode == 0, out.stdout + out.stderr
            s = Server(folder)
            try:
                assert s.call("POST", "/api/v1/auth/password/login", {"email": "pw@example.com", "password": password})[0] == 200
                assert s.call("POST", "/api/v1/auth/pin/verify", {"user_id": anon["user"]["id"], "pin": "4821"})[0] == 200
            finally:
                s.stop()


def test_a_password_lockout_counts_wrong_tries_on_every_instance():
    big = {"limit": 1000, "window": 60}
    with cluster({"password": {"lockout_after": 4, "login_per_email": big, "login_per_ip": big}}) as (a, b):
        password = "the right password for lockouts"
        assert a.call("POST", "/api/v1/auth/password/register", {"email": "lock@example.com", "password": password, "display_name": "L"})[0] == 202
        assert b.call("POST", "/api/v1/auth/password/verify-email", {"email": "lock@example.com", "code": a.mailed_code("lock@example.com"), "password": password})[0] == 200

        def wrong(i):
            return (a, b)[i % 2].call("POST", "/api/v1/auth/password/login", {"email": "lock@example.com", "password": f"wrong guess {i}"})[0]

        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            statuses = list(pool.map(wrong, range(4)))
        assert set(statuses) <= {401, 429}, statuses
        # Four wrong tries, two on each instance, lock the account everywhere (counted per instance,
        # neither would have reached four). Wrong tries are counted just after the answer: allow a moment
        # (asking with the right password earlier would reset the count).
        time.sleep(1)
        answers = [s.call("POST", "/api/v1/auth/password/login", {"email": "lock@example.com", "password": password})[0] for s in (a, b)]
        assert answers == [429, 429]

        # An email without an account locks after as many tries, however they are spread: its decoy is
        # shared too, so the lock does not tell which accounts exist.
        def unknown(i):
            return (a, b)[i % 2].call("POST", "/api/v1/auth/password/login", {"email": "ghost@example.com", "password": f"guess {i}"})[0]

        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            statuses = list(pool.map(unknown, range(4)))
        assert set(statuses) <= {401, 429}, statuses
        assert [unknown(i) for i in range(2)] == [429, 429]


def test_an_approval_requested_on_one_instance_reaches_the_event_stream_on_the_other():
    import http.client
    import threading

    with cluster() as (a, b):
        password = "an approvals password"
        assert a.call("POST", "/api/v1/auth/password/register", {"email": "sse@example.com", "password": password, "display_name": "S"})[0] == 202
        status, session, _ = a.call("POST", "/api/v1/auth/password/verify-email", {"email": "sse@example.com", "code": a.mailed_code("sse@example.com"), "password": password})
        assert status == 200
        # The signed-in device listens on b.
        url = urllib.parse.urlparse(b.url)
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=20)
        conn.request("GET", "/api/v1/auth/approvals/stream", headers={"Authorization": "Bearer " + session["access_token"]})
        resp = conn.getresponse()
        assert resp.status == 200 and resp.readline().startswith(b"retry:")
        # The request is made on a; b's listener may still be connecting: ask again (at most twice
        # per the reset limits) until one arrives.
        answers = []

        def initiate():
            for _ in range(2):
                answers.append(a.call("POST", "/api/v1/auth/password/reset/device/initiate",
                                      {"email": "sse@example.com", "new_password": "a new good secret", "device_name": "laptop"}))
                time.sleep(1)

        t = threading.Thread(target=initiate)
        t.start()
        event = next_event(resp)
        t.join()
        conn.close()
        assert event.get("event") == "approval", "no approval event reached the other instance"
        assert event["event"] == "approval" and event["data"]["kind"] == "password_reset"
        assert event["data"]["id"] in [body["request_id"] for status, body, _ in answers if status == 202]
        assert "match_code" not in event["data"]


def test_text_postgresql_cannot_store_is_answered_as_on_the_file_store():
    # PostgreSQL text refuses NUL: a lookup by such a name finds nothing (401), it does not fail (503).
    with cluster(count=1) as (a,):
        status, body, _ = a.call("POST", "/api/v1/auth/pin/verify", {"username": "ghost\u0000name", "pin": "1234"})
        assert status == 401 and body["error"]["code"] == "INVALID_CREDENTIALS", body
        status, body, _ = a.call("POST", "/api/v1/auth/pin/verify", {"user_id": "ghost\u0000", "pin": "1234"})
        assert status in (400, 401), body


def test_api_keys_and_device_sign_in_work_across_instances():
    with cluster({"device": {"interval": 1}}) as (a, b):
        session = sign_in_across(a, b, "devices@example.com")
        status, key, _ = a.call("POST", "/api/v1/auth/api-keys", {"name": "NAS"}, token=session["access_token"])
        assert status == 201, key
        status, exchanged, _ = b.call("POST", "/api/v1/auth/api-keys/exchange", {"api_key": key["api_key"]})
        assert status == 200 and a.call("GET", "/api/v1/auth/me", token=exchanged["access_token"])[0] == 200
        assert b.call("DELETE", f"/api/v1/auth/api-keys/{key['id']}", token=session["access_token"])[0] == 204
        status, body, _ = a.call("POST", "/api/v1/auth/api-keys/exchange", {"api_key": key["api_key"]})
        assert status == 401 and body["error"]["details"]["reason"] == "revoked"

        # A device starts on one instance, a person approves on the other, the device polls the first.
        status, started, _ = a.call("POST", "/oauth/device_authorization", {"device_name": "Frame"})
        assert status == 200, started
        grant = {"grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": started["device_code"]}
        assert a.call("POST", "/oauth/token", grant)[1]["error"] == "authorization_pending"
        assert b.call("POST", "/oauth/token", grant)[1]["error"] == "slow_down", "the interval holds across instances"
        status, shown, _ = b.call("GET", "/api/v1/auth/device/" + started["user_code"], token=session["access_token"])
        assert status == 200 and shown["device_name"] == "Frame"
        assert b.call("POST", f"/api/v1/auth/device/{started['user_code']}/approve", token=session["access_token"])[0] == 204
        time.sleep(6.1)  # the interval grew to 6 s with the slow_down
        status, device, _ = a.call("POST", "/oauth/token", grant)
        assert status == 200 and device["user"]["email"] == "devices@example.com", device
        assert b.call("POST", "/oauth/token", grant)[1]["error"] == "invalid_grant"


def test_the_apps_flows_on_postgres():
    # test_app_flows.py's flows, an instance each: the admin API on one, the app on the other.
    from test_app_flows import couple_flow, service_key, two_step_reset_flow
    with cluster() as (a, b):
        couple_flow(a, service_key(b.folder))
        two_step_reset_flow(b)


def test_imported_users_sign_in_on_postgres():
    # test_import_users.py's hashes, imported through one instance, signed in on the other.
    from test_import_users import PASSWORD, hashes, import_users
    made = hashes()
    with cluster() as (a, b), tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "users.jsonl")
        with open(path, "w") as f:
            f.write("\n".join(json.dumps({"email": email, "email_verified": True, "password_hash": h}) for email, h in made.items()))
        done = import_users(a.folder, path)
        assert done.returncode == 0 and f"{len(made)} users imported" in done.stdout, done.stdout + done.stderr
        for email in made:
            status, session, _ = b.call("POST", "/api/v1/auth/password/login", {"email": email, "password": PASSWORD})
            assert status == 200, (email, session)
            assert a.call("POST", "/api/v1/auth/password/login", {"email": email, "password": PASSWORD})[0] == 200, "and with the Argon2id that replaced it"


def test_webhooks_from_two_instances_on_postgres():
    # Events happen on both instances; the shared job queue delivers each once it is answered 2xx.
    from standardwebhooks.webhooks import Webhook
    from test_webhooks import Receiver, config as hook_config, secret_file
    receiver = Receiver(script=("fail",))
    with tempfile.TemporaryDirectory() as keys:
        secret, path = secret_file(keys)
        with cluster(hook_config(receiver, path)) as (a, b):
            session = sign_in_across(a, b, "hooks@example.com")
            assert b.call("POST", "/api/v1/auth/logout", token=session["access_token"])[0] == 204
            delivered = receiver.events(3)
        types = sorted(Webhook(secret).verify(body, headers)["type"] for body, headers in delivered)
        assert types == ["session.created", "session.ended", "user.created"], types
    receiver.close()


def test_approval_push_on_postgres():
    # A phone registers its token on one instance; the reset is asked on the other, which pushes.
    from test_push import fake_apns
    with tempfile.TemporaryDirectory() as folder:
        apns, push = fake_apns(folder)
        with cluster({"push": push}) as (a, b):
            email = "pushed@example.com"
            assert a.call("POST", "/api/v1/auth/password/register", {"email": email, "password": "first good secret"})[0] == 202
            status, phone, _ = a.call("POST", "/api/v1/auth/password/verify-email",
                                      {"email": email, "code": a.mailed_code(email), "password": "first good secret"})
            assert status == 200, phone
            assert a.call("PUT", "/api/v1/auth/sessions/current/push", {"apns_token": "ef" * 32}, phone["access_token"])[0] == 204
            status, request, _ = b.call("POST", "/api/v1/auth/password/reset/device/initiate", {"email": email, "new_password": "second good secret"})
            assert status == 202, request
            [(token, payload, _)] = apns.pushes(1)
            assert token == "ef" * 32 and payload["authd"]["approval_id"] == request["request_id"]
        apns.close()


def test_second_factors_across_instances_on_postgres():
    # test_second_factors.py's flow: enrolled on one instance, signed in on the other, each code used once across both.
    from test_second_factors import CONFIG, totp_flow
    with cluster(CONFIG) as (a, b):
        totp_flow(a, b)


def test_passkeys_across_instances_on_postgres():
    # test_passkeys.py's flow: registered on one instance, signed in on the other; a challenge is used once across both.
    from test_passkeys import CONFIG, passkey_flow
    with cluster(CONFIG) as (a, b):
        passkey_flow(a, b)


def test_a_browser_signs_in_on_one_instance_and_a_code_made_there_is_redeemed_on_the_other():
    """Pages and the OpenID Provider across two instances: the browser's session, the pre-sign-in
    cookie, consent and authorization codes live in the shared database (or in sealed cookies every
    instance opens), so a load balancer may send each request anywhere."""
    import base64
    import hashlib
    import re

    import requests

    from test_pages import Browserish

    with cluster() as (a, b):
        out = subprocess.run([BINARY, "clients", "create", "Shared app", "--redirect-uri", "http://127.0.0.1:9/cb", "--data", a.folder],
                             capture_output=True, text=True, check=True).stdout
        client = json.loads(out[: out.rindex("}") + 1])
        # Both instances answer for the issuer's host, as behind a load balancer.
        issuer = BASE_CONFIG["issuer"]
        host = {"Host": urllib.parse.urlparse(issuer).netloc}
        post = {**host, "Origin": issuer}
        browser = Browserish()
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        query = urllib.parse.urlencode({"client_id": client["client_id"], "redirect_uri": "http://127.0.0.1:9/cb", "response_type": "code",
                                        "scope": "openid email", "state": "s", "nonce": "n", "code_challenge": challenge,
                                        "code_challenge_method": "S256"})
        first = browser.get(a.url + "/oauth/authorize?" + query, headers=host, allow_redirects=False)
        assert first.status_code == 302 and first.headers["Location"].startswith("/login?")
        page = browser.get(b.url + first.headers["Location"], headers=host)
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        assert browser.post(a.url + "/login/email/send", data={"csrf": csrf, "email": "multi@example.com"}, headers=post).status_code == 200
        done = browser.post(b.url + "/login/email/verify", data={"csrf": csrf, "code": a.mailed_code("multi@example.com")}, headers=post,
                            allow_redirects=False)
        assert done.status_code == 303
        assert "Your account" in browser.get(a.url + "/account", headers=host).text, "the browser's session is every instance's"
        consent = browser.get(b.url + done.headers["Location"], headers=host)
        token = re.search(r'name="csrf" value="([^"]+)"', consent.text).group(1)
        sealed = re.search(r'name="request" value="([^"]+)"', consent.text).group(1)
        back = browser.post(a.url + "/oauth/authorize/consent", data={"csrf": token, "request": sealed, "decision": "allow"}, headers=post,
                            allow_redirects=False)
        code = urllib.parse.parse_qs(urllib.parse.urlparse(back.headers["Location"]).query)["code"][0]
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": "http://127.0.0.1:9/cb", "code_verifier": verifier}
        auth = (client["client_id"], client["client_secret"])
        tokens = requests.post(b.url + "/oauth/token", data=form, auth=auth)
        assert tokens.status_code == 200, tokens.text
        bearer = {"Authorization": "Bearer " + tokens.json()["access_token"]}
        assert requests.get(a.url + "/oauth/userinfo", headers=bearer).json()["email"] == "multi@example.com"
        # One RSA key for every instance: b's ID token verifies with a's JWKS.
        from joserfc import jwt as jose
        from joserfc.jwk import KeySet
        keys = KeySet.import_key_set(requests.get(a.url + "/.well-known/jwks.json").json())
        assert jose.decode(tokens.json()["id_token"], keys, algorithms=["RS256"]).claims["email"] == "multi@example.com"
        # The code's replay, on the other instance, ends what it issued everywhere.
        replay = requests.post(a.url + "/oauth/token", data=form, auth=auth)
        assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
        assert requests.get(b.url + "/oauth/userinfo", headers=bearer).status_code == 401


def test_a_person_signs_in_to_an_app_with_a_passkey_in_chromium_and_the_other_instance_redeems_the_code():
    """The browser suite's critical flow on PostgreSQL: Chromium adds a passkey and signs in with it on
    one instance (issuer http://localhost:PORT, as on a laptop), allows the app; the app redeems the
    code and reads userinfo on the other instance."""
    import requests
    from authlib.common.security import generate_token
    from authlib.integrations.requests_client import OAuth2Session
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from chromium import chromium
    from test_openid_browser import APP, arrived_at
    from test_page_methods import account_with_passkey, free_port
    from test_pages import click

    port = free_port()
    issuer = f"http://localhost:{port}"
    config = {"issuer": issuer, "providers": ["email", "passkey"], "passkeys": {"rp_id": "localhost", "origins": [issuer]},
              "email": {"resend_interval": 0}}
    with cluster(config, ports=[port, 0]) as (a, b), chromium(1280, 900) as browser:
        out = subprocess.run([BINARY, "clients", "create", "Grafana", "--redirect-uri", APP, "--data", a.folder],
                             capture_output=True, text=True, check=True).stdout
        client = json.loads(out[: out.rindex("}") + 1])
        account_with_passkey(browser, a, "paz@example.com")

        rp = OAuth2Session(client["client_id"], client["client_secret"], scope="openid email", redirect_uri=APP, code_challenge_method="S256")
        verifier = generate_token(48)
        url, _ = rp.create_authorization_url(issuer + "/oauth/authorize", code_verifier=verifier, nonce="n")
        browser.get(url)
        click(browser, "form[action='/login/passkey/begin'] button")
        WebDriverWait(browser, 10).until(lambda d: "Allow" in d.page_source)
        browser.find_element(By.CSS_SELECTOR, "button[value='allow']").click()
        callback = arrived_at(browser, APP)
        token = rp.fetch_token(b.url + "/oauth/token", authorization_response=callback, code_verifier=verifier)
        info = requests.get(b.url + "/oauth/userinfo", headers={"Authorization": "Bearer " + token["access_token"]}).json()
        assert info["email"] == "paz@example.com"


def test_an_operator_manages_a_user_in_the_console_on_one_instance_and_the_other_sees_it():
    """The console's critical flow on PostgreSQL: the first operator by the invite and a passkey on one
    instance; a user signed in on the other; app_metadata edited and the account disabled in the
    console reach the user's tokens and sessions on the other instance."""
    from selenium.webdriver.common.by import By

    from chromium import chromium
    from test_console import claims, operator_with_passkey
    from test_page_methods import fill, free_port
    from test_pages import click

    port = free_port()
    issuer = f"http://localhost:{port}"
    config = {"issuer": issuer, "providers": ["email", "passkey", "totp"], "passkeys": {"rp_id": "localhost", "origins": [issuer]},
              "email": {"resend_interval": 0}}
    with cluster(config, ports=[port, 0]) as (a, b), chromium(1280, 900) as browser:
        ana = b.sign_in("ana@example.com")
        operator_with_passkey(browser, a, "root@example.com")
        listed = subprocess.run([BINARY, "admins", "list", "--data", b.folder], capture_output=True, text=True, check=True).stdout
        assert "root@example.com" in listed, "the role is in the database"
        browser.get(issuer + "/admin/users?query=ana")
        click(browser, "a[href^='/admin/users/']")
        fill(browser, "app_metadata", '{"tier": "gold"}')
        click(browser, "form[action$='/profile'] button")
        status, refreshed, _ = b.call("POST", "/api/v1/auth/refresh", {"refresh_token": ana["refresh_token"]})
        assert status == 200 and claims(b, refreshed["access_token"])["app_metadata"] == {"tier": "gold"}
        click(browser, "form[action$='/disable'] button")
        assert "disabled" in browser.find_element(By.CSS_SELECTOR, "dl.facts").text
        assert b.call("POST", "/api/v1/auth/refresh", {"refresh_token": refreshed["refresh_token"]})[0] == 401


def test_a_sign_in_requested_on_one_instance_is_approved_on_the_other_and_completed_on_the_first():
    # Contract §15 across instances: the request and its approval live in the shared store; the
    # approver's event stream on b hears of a request made on a; the new device collects on a, once.
    import http.client
    import threading

    with cluster({"providers": ["email", "approval"], "email": {"resend_interval": 0}}) as (a, b):
        phone = sign_in_across(a, b, "appr@example.com")
        url = urllib.parse.urlparse(b.url)
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=20)
        conn.request("GET", "/api/v1/auth/approvals/stream", headers={"Authorization": "Bearer " + phone["access_token"]})
        resp = conn.getresponse()
        assert resp.status == 200 and resp.readline().startswith(b"retry:")
        started = []

        def start():
            time.sleep(0.5)  # b's listener is registered by now; the event comes either way, listed below
            started.append(a.call("POST", "/api/v1/auth/approval/start", {"email": "appr@example.com", "device_name": "laptop", "platform": "linux"}))

        t = threading.Thread(target=start)
        t.start()
        event = next_event(resp)
        t.join()
        conn.close()
        status, request, _ = started[0]
        assert status == 200, request
        assert event.get("event") == "approval" and event["data"]["kind"] == "sign_in" and event["data"]["id"] == request["request_id"]
        assert "match_code" not in event["data"] and event["data"]["platform"] == "linux"
        path = f"/api/v1/auth/approval/{request['request_id']}/complete"
        assert a.call("POST", path, {"request_token": request["request_token"]})[1]["error"]["code"] == "PENDING"
        status, _, _ = b.call("POST", f"/api/v1/auth/approvals/{request['request_id']}/approve", {"match_code": request["match_code"]},
                              token=phone["access_token"])
        assert status == 204
        status, session, _ = a.call("POST", path, {"request_token": request["request_token"]})
        assert status == 200 and session["user"]["id"] == phone["user"]["id"], session
        assert b.call("POST", path, {"request_token": request["request_token"]})[1]["error"]["code"] == "INVALID_STATE"
        assert b.call("GET", "/api/v1/auth/me", token=session["access_token"])[0] == 200


def test_an_identity_providers_token_signs_in_on_one_instance_and_is_refused_on_the_other():
    # Contract §16 on PostgreSQL: a second authd is the upstream; the token used on one instance is
    # spent for both (its hash is in the shared store), and the account is the same on both.
    from test_oidc_sign_in import exchange, id_token
    from test_openid_provider import register_client
    from test_pages import PAGES

    with running_server({**PAGES, "email": {"resend_interval": 0}}) as up:
        app = register_client(up, "--first-party", name="Downstream")
        config = {"providers": ["email", "oidc"], "oidc": {"providers": {"upstream": {"issuer": up.url, "client_id": app["client_id"]}}}}
        with cluster(config) as (a, b):
            token, nonce = id_token(up, app, "pg@example.com")
            first = exchange(a, token, nonce)
            assert first.status_code == 200, first.text
            replay = exchange(b, token, nonce)
            assert replay.status_code == 401 and replay.json()["error"]["code"] == "INVALID_ID_TOKEN"
            token, nonce = id_token(up, app, "pg@example.com")
            assert exchange(b, token, nonce).json()["user"]["id"] == first.json()["user"]["id"]


def test_the_pages_sign_in_through_an_identity_provider_across_instances_and_an_answer_counts_once():
    # Contract §16's web flow on PostgreSQL: started on one instance, answered on the other (the
    # state is in the browser's sealed cookie, its spending in the shared store), and the same
    # answer brought back to the first is refused.
    from test_openid_provider import authorize, register_client
    from test_pages import PAGES, Browserish

    host = {"Host": "auth.example.test"}  # the cluster's issuer: pages answer on its host only
    with tempfile.TemporaryDirectory() as folder, running_server({**PAGES, "email": {"resend_interval": 0}}) as up:
        app = register_client(up, "--first-party", name="Downstream", redirect="https://auth.example.test/login/oidc/upstream/callback")
        secret = os.path.join(folder, "secret")
        with open(secret, "w") as f:
            f.write(app["client_secret"])
        entry = {"issuer": up.url, "client_id": app["client_id"], "client_secret_file": secret}
        with cluster({"providers": ["email", "oidc"], "oidc": {"providers": {"upstream": entry}}}) as (a, b):
            browser = Browserish()
            start = browser.get(a.url + "/login/oidc/upstream", headers=host, allow_redirects=False)
            assert start.status_code == 302 and start.headers["Location"].startswith(up.url + "/oauth/authorize?"), start.text[:300]
            flow_cookie = browser.kept["__Host-authd-signin"]
            callback = authorize(Browserish(), up, start.headers["Location"], email="pg-web@example.com")
            assert callback.startswith("https://auth.example.test/login/oidc/upstream/callback?")
            path = callback[len("https://auth.example.test"):]
            done = browser.get(b.url + path, headers=host, allow_redirects=False)
            assert done.status_code == 303 and done.headers["Location"] == "/account", done.text[:300]
            assert "__Host-authd" in browser.kept
            account = browser.get(a.url + "/account", headers=host, allow_redirects=False)
            assert account.status_code == 200 and "Your account" in account.text, "the browser's session works on both"
            replay = Browserish().get(a.url + path, headers={**host, "Cookie": f"__Host-authd-signin={flow_cookie}"}, allow_redirects=False)
            assert replay.status_code == 400, "the answer was spent on the other instance"


def test_a_person_removed_from_an_apps_group_on_one_instance_is_refused_at_the_next_refresh_on_the_other():
    """Contract §17 across instances: the group rule is read from the shared store in the refresh's
    own write; a closed sign-up refuses on every instance and an invitation made on one is used on
    the other."""
    import base64
    import hashlib
    import re

    import requests

    from test_pages import Browserish

    with cluster({"signup": {"mode": "invite"}, "email": {"resend_interval": 0}}) as (a, b):
        out = subprocess.run([BINARY, "clients", "create", "Photos", "--first-party", "--allowed-groups", "family", "--redirect-uri",
                              "http://127.0.0.1:9/cb", "--data", a.folder], capture_output=True, text=True, check=True).stdout
        client = json.loads(out[: out.rindex("}") + 1])
        # Closed on both: an unknown address is mailed no code by either.
        for s in (a, b):
            before = len(s.outbox())
            assert s.call("POST", "/api/v1/auth/email/send-code", {"email": "stranger@example.com"})[0] == 200
            assert "invitation" in s.mailed("stranger@example.com", after=before)["text"]
            assert s.call("POST", "/api/v1/auth/anonymous", {})[1]["error"]["code"] == "SIGNUP_CLOSED"
        # Invited on one instance, signed up by mailed code on the other, with the invitation's group.
        invited = subprocess.run([BINARY, "users", "invite", "fam@example.com", "--group", "family", "--data", a.folder],
                                 capture_output=True, text=True)
        assert invited.returncode == 0, invited.stderr
        assert b.sign_in("fam@example.com")["user"]["groups"] == ["family"]

        issuer = BASE_CONFIG["issuer"]
        host, post = {"Host": urllib.parse.urlparse(issuer).netloc}, {"Host": urllib.parse.urlparse(issuer).netloc, "Origin": issuer}
        browser = Browserish()
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        query = urllib.parse.urlencode({"client_id": client["client_id"], "redirect_uri": "http://127.0.0.1:9/cb", "response_type": "code",
                                        "scope": "openid offline_access", "state": "s", "nonce": "n", "code_challenge": challenge,
                                        "code_challenge_method": "S256"})
        first = browser.get(a.url + "/oauth/authorize?" + query, headers=host, allow_redirects=False)
        page = browser.get(b.url + first.headers["Location"], headers=host)
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        before = len(a.outbox())
        browser.post(a.url + "/login/email/send", data={"csrf": csrf, "email": "fam@example.com"}, headers=post)
        done = browser.post(b.url + "/login/email/verify", data={"csrf": csrf, "code": a.mailed_code("fam@example.com", after=before)},
                            headers=post, allow_redirects=False)
        back = browser.get(a.url + done.headers["Location"], headers=host, allow_redirects=False)
        code = urllib.parse.parse_qs(urllib.parse.urlparse(back.headers["Location"]).query)["code"][0]
        auth = (client["client_id"], client["client_secret"])
        tokens = requests.post(b.url + "/oauth/token", data={"grant_type": "authorization_code", "code": code, "redirect_uri": "http://127.0.0.1:9/cb",
                                                             "code_verifier": verifier}, auth=auth).json()
        refreshed = requests.post(a.url + "/oauth/token", data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]}, auth=auth)
        assert refreshed.status_code == 200, refreshed.text
        # Removed from the group on instance b: instance a refuses the next refresh.
        out = subprocess.run([BINARY, "users", "groups", "fam@example.com", "remove", "family", "--data", b.folder], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        refused = requests.post(a.url + "/oauth/token", data={"grant_type": "refresh_token", "refresh_token": refreshed.json()["refresh_token"]},
                                auth=auth)
        assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant", refused.text
        assert requests.get(b.url + "/oauth/userinfo", headers={"Authorization": "Bearer " + refreshed.json()["access_token"]}).status_code == 401
        outside = browser.get(b.url + "/oauth/authorize?" + query, headers=host, allow_redirects=False)
        assert outside.status_code == 403 and "have access to Photos" in outside.text


def imported_into_postgres(work, users):
    """A data folder of `users` users with a session each, exported and imported into a new database,
    checked to hold them all, written by one transaction, then exported again and restored into a
    data folder: (peak memory of the import and of the export in MB, the statements the database ran
    for the import, from pg_stat_statements)."""
    # `authd-bench` (built with the tests) fills the data folder; beside the binary, else in the debug build.
    bench = os.environ.get("AUTHD_BENCH_BINARY", os.path.join(os.path.dirname(BINARY), "authd-bench"))
    if not os.path.exists(bench):
        bench = ".build/debug/authd-bench"
    data, bundle, target = (os.path.join(work, f"{name}-{users}") for name in ("data", "bundle", "db"))
    subprocess.run([bench, "store-fill", "--folder", data, "--users", str(users), "--sessions-per-user", "1"], check=True, capture_output=True)
    subprocess.run([BINARY, "export", "--to", bundle, "--data", data], check=True, capture_output=True)
    url = fresh_database()
    os.makedirs(target, mode=0o700)
    with open(os.path.join(target, "authd.json"), "w") as f:
        json.dump({**BASE_CONFIG, "storage": {"backend": "postgres", "postgres": {"url": url, "tls": "disable"}}}, f)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("AUTHD_")}, "AUTHD_KEY_ENCRYPTION_KEY": secrets.token_hex(32)}
    subprocess.run([BINARY, "migrate", "--data", target], check=True, capture_output=True, env=env)
    subprocess.run(["psql", url, "-qc", "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()"],
                   check=True, capture_output=True)
    proc = subprocess.Popen([BINARY, "import", "--from", bundle, "--data", target], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, proc.stderr.read().decode()[-2000:]
    statements = subprocess.run(
        ["psql", url, "-Atc", "SELECT calls, regexp_replace(query, '\\s+', ' ', 'g') FROM pg_stat_statements "
                              "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"],
        check=True, capture_output=True, text=True).stdout.splitlines()
    # Every row written by one transaction: they all carry its id (xmin).
    counted = subprocess.run(["psql", url, "-Atc", "SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM sessions), "
                                                   "(SELECT count(DISTINCT x) FROM (SELECT xmin::text AS x FROM users UNION SELECT xmin::text FROM sessions) t)"],
                             check=True, capture_output=True, text=True).stdout.strip()
    assert counted == f"{users}|{users}|1", counted
    # And out again, through cursors: the bundle restores into a data folder whole.
    back = os.path.join(work, f"back-{users}.json")
    proc = subprocess.Popen([BINARY, "export", "--to", back, "--data", target], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    _, status, exported = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, proc.stderr.read().decode()[-2000:]
    restored = subprocess.run([BINARY, "restore", "--from", back, "--data", os.path.join(work, f"restored-{users}")], capture_output=True, text=True)
    assert restored.returncode == 0 and f"{users} users" in restored.stdout + restored.stderr, restored.stdout + restored.stderr
    return (usage.ru_maxrss / 1024, exported.ru_maxrss / 1024,
            [(int(line.split("|", 1)[0]), line.split("|", 1)[1]) for line in statements if "|" in line])


def test_an_import_into_postgres_is_copied_in_one_transaction_and_both_ways_keep_memory_flat():
    with tempfile.TemporaryDirectory() as work:
        small, small_export, _ = imported_into_postgres(work, 5000)
        large, large_export, statements = imported_into_postgres(work, 20000)

    def calls(prefix):
        return sum(n for n, query in statements if query.lstrip().upper().startswith(prefix))

    # The records by COPY, at most a thousand at a time per table; none by a statement of its own.
    assert 20 <= calls('COPY "USERS"') <= 30 and 20 <= calls('COPY "SESSIONS"') <= 30, statements
    assert calls("INSERT INTO USERS") == 0 and calls("INSERT INTO SESSIONS") == 0 and calls("SELECT AUTHD_APPLY") == 0, statements
    # Four times the records, about the same memory: the import streams (a store held whole grows ~3 KB a user).
    assert large - small < 25, f"import peak {small:.0f} MB at 5k, {large:.0f} MB at 20k"
    # The export streams too.
    assert large_export - small_export < 25, f"export peak {small_export:.0f} MB at 5k, {large_export:.0f} MB at 20k"
