"""A failover, for real (contract §19): Debian's PostgreSQL primary with a synchronous streaming
replica, three `authd serve` instances, and HAProxy in front of both the instances (HTTP) and the
database (TCP, the replica as its backup server), all started here.

Clients sign in and refresh through HAProxy while one instance is killed with SIGKILL and then the
primary is stopped and the replica promoted behind authd's database address. Every write an
instance acknowledged must be on the promoted database, a refresh token used before the switch must
be caught as reused after it, requests in the gap must answer 503 quickly, and service must resume
without restarting authd. The bounds are generous: they catch hangs, not slowness.

Run with `make test-failover` (AUTHD_BINARY names the binary); skipped without PostgreSQL or HAProxy.
"""
import contextlib
import glob
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "blackbox"))
from conftest import Server  # noqa: E402

BIN = sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1:] or [None]
BIN = BIN[0]
HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"
if not BIN or not os.path.exists(HAPROXY):
    if os.environ.get("AUTHD_REQUIRE_POSTGRES") == "1":
        raise RuntimeError("the failover test needs PostgreSQL and HAProxy (make test-deps installs them)")
    pytest.skip("PostgreSQL or HAProxy is not installed", allow_module_level=True)

AS_POSTGRES = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg(*args, **kw):
    return subprocess.run(AS_POSTGRES + list(args), check=True, capture_output=True, text=True, **kw)


def sql(port, statement):
    out = subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(port), "-U", "authd", "-d", "authd", "-Atqc", statement],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@contextlib.contextmanager
def database_pair(folder):
    """A primary and a synchronous streaming replica of it; yields their ports."""
    os.chmod(folder, 0o755)
    if AS_POSTGRES:
        shutil.chown(folder, "postgres")
    primary, replica = os.path.join(folder, "primary"), os.path.join(folder, "replica")
    p1, p2 = free_port(), free_port()
    pg(f"{BIN}/initdb", "-D", primary, "-U", "authd", "--auth=trust", "-E", "UTF8")
    # In postgresql.conf, so the replica's copy holds them too: promoted, it must drop
    # synchronous_standby_names or every commit would wait for a standby that is not there.
    with open(os.path.join(primary, "postgresql.conf"), "a") as f:
        f.write("listen_addresses = '127.0.0.1'\nwal_level = replica\nmax_wal_senders = 5\nfsync = off\n"
                "synchronous_commit = on\nmax_connections = 200\n")
    started = []
    try:
        pg(f"{BIN}/pg_ctl", "-D", primary, "-l", os.path.join(folder, "primary.log"), "-w", "-o", f"-p {p1} -k {folder}", "start")
        started.append(primary)
        pg(f"{BIN}/createdb", "-h", "127.0.0.1", "-p", str(p1), "-U", "authd", "authd")
        # From now on every commit waits for the replica (the database above was made before it existed).
        with open(os.path.join(primary, "postgresql.conf"), "a") as f:
            f.write("synchronous_standby_names = 'replica1'\n")
        pg(f"{BIN}/pg_ctl", "-D", primary, "reload")
        pg(f"{BIN}/pg_basebackup", "-h", "127.0.0.1", "-p", str(p1), "-U", "authd", "-D", replica, "-R", "-X", "stream", "-c", "fast")
        with open(os.path.join(replica, "postgresql.auto.conf"), "a") as f:
            f.write(f"primary_conninfo = 'host=127.0.0.1 port={p1} user=authd application_name=replica1'\n")
        pg(f"{BIN}/pg_ctl", "-D", replica, "-l", os.path.join(folder, "replica.log"), "-w", "-o", f"-p {p2} -k {folder}", "start")
        started.append(replica)
        deadline = time.monotonic() + 60
        while sql(p1, "SELECT coalesce(string_agg(sync_state, ','), '') FROM pg_stat_replication") != "sync":
            assert time.monotonic() < deadline, "the replica never became synchronous"
            time.sleep(0.2)
        yield p1, p2, primary, replica
    finally:
        for data in started:
            subprocess.run(AS_POSTGRES + [f"{BIN}/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"], capture_output=True)


@contextlib.contextmanager
def haproxy(folder, db_ports, web_ports):
    """HAProxy: TCP to the primary (the replica as backup), HTTP across the instances."""
    db, web, stats = free_port(), free_port(), os.path.join(folder, "haproxy.sock")
    config = f"""
global
    maxconn 4000
    stats socket {stats} mode 600 level admin
defaults
    timeout connect 2s
    timeout client 1h
    timeout server 1h
    timeout check 1s
frontend database
    mode tcp
    bind 127.0.0.1:{db}
    default_backend database
backend database
    mode tcp
    option pgsql-check user authd
    server primary 127.0.0.1:{db_ports[0]} check inter 300ms fall 1 rise 1 on-marked-down shutdown-sessions
    server replica 127.0.0.1:{db_ports[1]} check inter 300ms fall 1 rise 1 backup
frontend web
    mode http
    bind 127.0.0.1:{web}
    timeout http-request 30s
    default_backend authd
backend authd
    mode http
    option httpchk GET /health
    retries 3
    option redispatch
    retry-on conn-failure empty-response
""" + "".join(f"    server authd{i} 127.0.0.1:{port} check inter 300ms fall 1 rise 2\n" for i, port in enumerate(web_ports))
    path = os.path.join(folder, "haproxy.cfg")
    with open(path, "w") as f:
        f.write(config)
    proc = subprocess.Popen([HAPROXY, "-f", path, "-db"], stdout=subprocess.DEVNULL, stderr=open(os.path.join(folder, "haproxy.log"), "w"))
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", web), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None, open(os.path.join(folder, "haproxy.log")).read()
                time.sleep(0.1)
        yield db, web
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def call(base, method, path, body=None, timeout=60):
    """(status, body, seconds taken); a connection that fails is status 0."""
    started = time.monotonic()
    request = urllib.request.Request(base + path, data=json.dumps(body).encode() if body is not None else None, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            raw = answer.read()
            return answer.status, json.loads(raw) if raw else None, time.monotonic() - started
    except urllib.error.HTTPError as error:
        raw = error.read()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        return error.code, parsed, time.monotonic() - started
    except (urllib.error.URLError, OSError):
        return 0, None, time.monotonic() - started


class Clients:
    """Threads that sign in anonymously and refresh through HAProxy, noting what was acknowledged."""

    def __init__(self, base, threads=4):
        self.base, self.stop, self.lock = base, threading.Event(), threading.Lock()
        self.users, self.tokens, self.answers = [], {}, []  # acknowledged users; session → latest token; (when, status, seconds)
        self.threads = [threading.Thread(target=self.run, daemon=True) for _ in range(threads)]
        for t in self.threads:
            t.start()

    def run(self):
        while not self.stop.is_set():
            status, body, took = call(self.base, "POST", "/api/v1/auth/anonymous", {"device_name": "failover"})
            self.note(status, took)
            if status != 200:
                time.sleep(0.05)
                continue
            with self.lock:
                self.users.append(body["user"]["id"])
            token = body["refresh_token"]
            for _ in range(3):
                if self.stop.is_set():
                    break
                status, answer, took = call(self.base, "POST", "/api/v1/auth/refresh", {"refresh_token": token})
                self.note(status, took)
                if status != 200:
                    break
                token = answer["refresh_token"]
                with self.lock:
                    self.tokens[body["user"]["id"]] = token

    def note(self, status, took):
        with self.lock:
            self.answers.append((time.monotonic(), status, took))

    def since(self, moment):
        with self.lock:
            return [a for a in self.answers if a[0] >= moment]

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join(timeout=120)


def test_a_failover_loses_no_acknowledged_write_and_authd_comes_back_by_itself():
    binary = os.environ.get("AUTHD_BINARY", ".build/debug/authd")
    with tempfile.TemporaryDirectory() as folder, database_pair(folder) as (p1, p2, primary, replica):
        web_ports, metrics_ports = [free_port() for _ in range(3)], [free_port() for _ in range(3)]
        with haproxy(folder, (p1, p2), web_ports) as (db, web), contextlib.ExitStack() as stack:
            kek = secrets.token_hex(32)
            os.environ["AUTHD_KEY_ENCRYPTION_KEY"] = kek
            url = f"postgres://authd@127.0.0.1:{db}/authd"
            folders = []
            for i in range(3):
                data = stack.enter_context(tempfile.TemporaryDirectory())
                with open(os.path.join(data, "authd.json"), "w") as f:
                    json.dump({"issuer": "https://auth.example.test", "mail": {"transport": "outbox"},
                               "providers": ["email", "pin"], "tokens": {"refresh_reuse_grace": 1},
                               "pin": {"anonymous_per_ip": {"limit": 100000, "window": 60}},
                               "metrics": {"listen": f"127.0.0.1:{metrics_ports[i]}"},
                               "storage": {"backend": "postgres", "postgres": {"url": url, "tls": "disable"}}}, f)
                folders.append(data)
            out = subprocess.run([binary, "migrate", "--data", folders[0]], capture_output=True, text=True)
            assert out.returncode == 0, out.stderr
            servers = [Server(data, port=port) for data, port in zip(folders, web_ports)]
            for s in servers:
                stack.callback(lambda s=s: s.stop() if s.proc.poll() is None else None)
            base = f"http://127.0.0.1:{web}"
            deadline = time.monotonic() + 60
            while call(base, "GET", "/health")[0] != 200:
                assert time.monotonic() < deadline, "HAProxy never saw an instance up"
                time.sleep(0.2)

            # A token that will be reused after the switch: rotated once, before it.
            status, first, _ = call(base, "POST", "/api/v1/auth/anonymous", {"device_name": "reuse"})
            assert status == 200, first
            status, rotated, _ = call(base, "POST", "/api/v1/auth/refresh", {"refresh_token": first["refresh_token"]})
            assert status == 200, rotated

            clients = Clients(base)
            time.sleep(3)
            # One instance dies without a word; the other two carry on.
            servers[0].proc.kill()
            servers[0].proc.wait(timeout=30)
            time.sleep(3)
            assert any(status == 200 for _, status, _ in clients.since(time.monotonic() - 2)), "nothing answered after an instance died"

            # The primary goes; HAProxy sends new connections to the replica, still a standby.
            subprocess.run(AS_POSTGRES + [f"{BIN}/pg_ctl", "-D", primary, "-m", "immediate", "-w", "stop"], check=True, capture_output=True)
            gap = time.monotonic()
            time.sleep(4)
            # Promoted, and no longer waiting for a synchronous standby of its own (as docs/operations.md says).
            pg(f"{BIN}/pg_ctl", "-D", replica, "-w", "promote")
            sql(p2, "ALTER SYSTEM SET synchronous_standby_names = ''")
            sql(p2, "SELECT pg_reload_conf()")
            promoted = time.monotonic()
            # Service resumes without restarting authd.
            deadline = time.monotonic() + 90
            while not any(status == 200 for _, status, _ in clients.since(promoted)):
                assert time.monotonic() < deadline, "authd did not serve again after the promotion"
                time.sleep(0.1)
            clients_resumed = min(when for when, status, _ in clients.since(promoted) if status == 200)
            time.sleep(2)
            clients.finish()

            # In the gap, answers came fast and were 503s (or served from memory), never a hang.
            in_gap = [a for a in clients.answers if gap + 0.5 <= a[0] <= promoted]
            assert in_gap, "no request was made in the gap"
            assert all(took < 15 for _, _, took in in_gap), f"slow answers in the gap: {sorted(t for _, _, t in in_gap)[-5:]}"
            assert {status for _, status, _ in in_gap} <= {200, 503}, {status for _, status, _ in in_gap}
            assert any(status == 503 for _, status, _ in in_gap)

            # Every acknowledged write is on the promoted database.
            assert clients.users, "no sign-in was acknowledged"
            stored = set(sql(p2, "SELECT id FROM users").split())
            lost = [u for u in clients.users if u not in stored]
            assert not lost, f"{len(lost)} acknowledged sign-ins are missing after the failover"
            hashes = set(sql(p2, "SELECT token_hash FROM user_tokens WHERE rotated_at IS NULL").split())
            import hashlib
            missing = [u for u, t in clients.tokens.items() if hashlib.sha256(t.encode()).hexdigest() not in hashes]
            assert not missing, f"{len(missing)} acknowledged refreshes are missing after the failover"

            # The token rotated before the switch is still known as rotated: its reuse ends the session.
            time.sleep(1.5)  # past refresh_reuse_grace
            status, body, _ = call(base, "POST", "/api/v1/auth/refresh", {"refresh_token": first["refresh_token"]})
            assert status == 401 and body["error"]["code"] == "REFRESH_TOKEN_REUSED", (status, body)
            status, body, _ = call(base, "POST", "/api/v1/auth/refresh", {"refresh_token": rotated["refresh_token"]})
            assert status == 401, "the session survived the reuse of its token"

            # The refusals were counted.
            counted = 0.0
            for port in metrics_ports[1:]:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as answer:
                    for line in answer.read().decode().splitlines():
                        if line.startswith(("authd_store_unreachable_total", "authd_store_acquire_timeouts_total")):
                            counted += float(line.split()[-1])
            assert counted > 0, "no refusal was counted in /metrics"
            print(f"failover: {len(clients.users)} sign-ins and {len(clients.tokens)} refresh chains acknowledged; "
                  f"{sum(1 for a in in_gap if a[1] == 503)} of {len(in_gap)} answers in the gap were 503, "
                  f"the slowest {max(t for _, _, t in in_gap):.2f} s; served again {clients_resumed - promoted:.1f} s after the promotion")
