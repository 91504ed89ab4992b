"""Review findings: attacks an outside security review ran against the real binary on 127.0.0.1,
each replayed here against `authd serve` (issue #24). The Swift suites named `ReviewFindings…`
cover the findings that need the kernel's clock or store; these need a real process, sockets,
its memory or its log file.
"""
import base64
import http.client
import json
import os
import secrets
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from conftest import BASE_CONFIG, Server, running_server
from test_smtp import make_cert, free_port


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def claims_of(token):
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def rss_kib(server):
    with open(f"/proc/{server.proc.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def raw_post(server, path, body):
    """POST bytes as they are (urllib would refuse nothing, but a raw socket shows exactly what is sent)."""
    host, port = urllib.parse.urlparse(server.url).hostname, urllib.parse.urlparse(server.url).port
    with socket.create_connection((host, port), timeout=10) as s:
        s.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                  "Connection: close\r\n\r\n".encode() + body)
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    return int(answer.split(b" ", 2)[1])


# 16. `--port 0` issuer

def test_port_zero_issuer_names_the_bound_port():
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "authd.json"), "w") as f:
            json.dump({"mail": {"transport": "outbox"}}, f)  # no issuer: the default one
        server = Server(folder)
        try:
            status, session, _ = server.call("POST", "/api/v1/auth/anonymous", {})
            assert status == 200
            port = urllib.parse.urlparse(server.url).port
            assert port != 0
            assert claims_of(session["access_token"])["iss"] == f"http://127.0.0.1:{port}"
            # The server accepts its own tokens under that issuer.
            assert server.call("GET", "/api/v1/auth/me", token=session["access_token"])[0] == 200
        finally:
            server.stop()


# 10. Log forgery

def test_a_newline_in_an_apple_token_header_cannot_forge_a_log_line():
    config = {"providers": ["email", "apple"],
              "apple": {"audiences": ["com.example.app"], "jwks_url": "http://127.0.0.1:9/keys"}}
    with running_server(config, log=True) as server:
        forged = "authd : [ critical ] FORGED admin signed in"
        header = b64(json.dumps({"alg": f"RS256x\n{forged}", "kid": "k"}).encode())
        token = f"{header}.{b64(b'{}')}.{b64(b'sig')}"
        status, body, _ = server.call("POST", "/api/v1/auth/apple", {"identity_token": token})
        assert status == 401 and body["error"]["code"] == "INVALID_APPLE_TOKEN"
        log = server.log()
        assert "is not RS256" in log
        assert not any(line.startswith(forged) for line in log.splitlines()), log[-2000:]
        assert "RS256x\\nauthd : [ critical ]" in log  # the newline is there, escaped, on the same line


# 3. Memory from refused sign-ins

def test_refused_pin_sign_ins_with_huge_names_keep_nothing():
    config = {"pin": {"attempts_per_ip": {"limit": 100000, "window": 60}}}
    with running_server(config) as server:
        filler = b"x" * 60_000
        # Warm up with bodies of the same size that are refused before anything is looked up, so
        # the allocator has grown to what serving such bodies costs.
        for i in range(400):
            assert raw_post(server, "/api/v1/auth/pin/verify", b'{"pin":"1234","username":' + filler + b"}") == 400
        before = rss_kib(server)
        for i in range(400):
            name = (str(i).encode() + filler)[:60_000]
            status = raw_post(server, "/api/v1/auth/pin/verify", b'{"pin":"1234","username":"' + name + b'"}')
            assert status in (400, 401)
        for i in range(400):
            name = (str(i).encode() + filler)[:60_000]
            assert raw_post(server, "/api/v1/auth/pin/verify", b'{"pin":"1234","user_id":"' + name + b'"}') in (400, 401)
        grown = rss_kib(server) - before
        assert grown < 6 * 1024, f"RSS grew {grown} KiB over 800 refused sign-ins"


# 7. Per-IP limits and IPv6

def call_from(server, address, path, body):
    req = urllib.request.Request(server.url + path, data=json.dumps(body).encode(), method="POST")
    req.add_header("Content-Type", "application/json")
    req.add_header("X-Forwarded-For", address)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as err:
        return err.code


def test_ipv6_clients_are_limited_by_their_slash_64_not_per_address():
    config = {"http": {"trusted_proxies": ["127.0.0.1"]}, "pin": {"attempts_per_ip": {"limit": 5, "window": 600}}}
    with running_server(config) as server:
        def body(i):
            return {"username": f"nobody{i}", "pin": "1234"}  # a name each, so no account's own lock is reached
        statuses = [call_from(server, f"2001:db8:1:2::{i:x}", "/api/v1/auth/pin/verify", body(i)) for i in range(1, 9)]
        assert statuses[:5] == [401] * 5 and statuses[5:] == [429] * 3, statuses
        # Another /64 has its own budget; IPv4 counts by address.
        assert call_from(server, "2001:db8:1:3::1", "/api/v1/auth/pin/verify", body(10)) == 401
        assert call_from(server, "198.51.100.7", "/api/v1/auth/pin/verify", body(11)) == 401


# 8. A stranger can block the owner's reset

def test_a_stranger_cannot_spend_the_owners_reset_budget():
    config = {"http": {"trusted_proxies": ["127.0.0.1"]}}
    with running_server(config) as server:
        server.sign_in("owner@example.com")
        # From four networks, until every one of them is refused.
        for network in ["203.0.113.5", "203.0.113.6", "2001:db8:7::1", "2001:db8:8::1"]:
            for _ in range(4):
                call_from(server, network, "/api/v1/auth/password/reset/device/initiate",
                          {"email": "owner@example.com", "new_password": "a stranger's choice"})
                call_from(server, network, "/api/v1/auth/password/reset/email/initiate", {"email": "owner@example.com"})
            assert call_from(server, network, "/api/v1/auth/password/reset/email/initiate", {"email": "owner@example.com"}) == 429
        # The owner, from their own address, still gets a reset code.
        assert call_from(server, "198.51.100.9", "/api/v1/auth/password/reset/email/initiate", {"email": "owner@example.com"}) == 200


def test_wrong_reset_codes_from_a_stranger_do_not_lock_the_owner_out():
    config = {"http": {"trusted_proxies": ["127.0.0.1"]}, "password": {"resend_interval": 0}}
    with running_server(config) as server:
        server.sign_in("owner@example.com")
        assert call_from(server, "198.51.100.9", "/api/v1/auth/password/reset/email/initiate", {"email": "owner@example.com"}) == 200
        code = server.mailed_code("owner@example.com", about="reset")  # mailed after the answer: waits for it
        wrong = "000000" if code != "000000" else "111111"
        body = {"email": "owner@example.com", "code": wrong, "new_password": "a stranger's choice"}
        statuses = [call_from(server, "203.0.113.5", "/api/v1/auth/password/reset/email/verify", body) for _ in range(12)]
        assert statuses[-1] == 429, statuses  # the stranger's own budget runs out...
        # ...before the email's: the owner asks for a new code (their first was killed by the wrong
        # tries, as any code is after max_attempts) and it works.
        mails = len(server.outbox())
        assert call_from(server, "198.51.100.9", "/api/v1/auth/password/reset/email/initiate", {"email": "owner@example.com"}) == 200
        ok = call_from(server, "198.51.100.9", "/api/v1/auth/password/reset/email/verify",
                       {"email": "owner@example.com", "code": server.mailed_code("owner@example.com", about="reset", after=mails),
                        "new_password": "the owner's new secret"})
        assert ok == 200


# 9. Timing reveals a pending registration

def test_a_pending_registration_does_not_show_in_answer_times():
    """Resending to a pending registration mails, to an unknown email does not: the answer must not
    wait for the mail. Shown by order, not by timing: the mail transport is held until the answers
    are in, so a server that waited for it could not answer (and the call would fail at its timeout).
    That a wrong password costs one Argon2id verification whether or not a registration is pending is
    counted in Swift (RegistrationAndLoginTests.unknownEmailAndWrongPasswordLookTheSameAndDoTheSameWork)."""
    with tempfile.TemporaryDirectory() as scratch:
        first, held, release = (os.path.join(scratch, name) for name in ("first", "held", "release"))
        transport = os.path.join(scratch, "held-sendmail")
        with open(transport, "w") as f:
            # The registration's own mail goes through (registering answers after it); later ones are held.
            f.write(f"#!/bin/sh\ncat > /dev/null\n[ -e {first} ] || {{ touch {first}; exit 0; }}\n"
                    f"touch {held}\nwhile [ ! -e {release} ]; do sleep 0.05; done\n")
        os.chmod(transport, 0o755)
        big = {"limit": 1000000, "window": 1}
        config = {"mail": {"transport": "sendmail", "sendmail": {"path": transport}},
                  "password": {"login_per_ip": big, "login_per_email": big, "resends_per_ip": big, "resend_interval": 0,
                               "lockout_after": 1000}}
        with running_server(config) as server:
            try:
                assert server.call("POST", "/api/v1/auth/password/register",
                                   {"email": "pending@example.com", "password": "the pending password"})[0] == 202
                resend = "/api/v1/auth/password/resend-verification"
                pending = server.call("POST", resend, {"email": "pending@example.com"})
                nothing = server.call("POST", resend, {"email": "nothing@example.com"})
                assert pending[:2] == nothing[:2] and pending[0] == 200, (pending, nothing)
                # Both answered; only now is the pending side's mail seen in the transport, still held.
                deadline = time.time() + 60  # an event, waited for
                while time.time() < deadline and not os.path.exists(held):
                    time.sleep(0.05)
                assert os.path.exists(held), "the resend never reached the mail transport"
            finally:
                open(release, "w").close()


# 4. Slow bodies

def test_a_body_trickled_a_byte_at_a_time_is_cut_at_the_request_timeout():
    with running_server({"http": {"idle_timeout": 2, "request_timeout": 3}}) as server:
        url = urllib.parse.urlparse(server.url)
        s = socket.create_connection((url.hostname, url.port), timeout=15)
        s.sendall(b"POST /api/v1/auth/email/send-code HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 100\r\n\r\n")
        # The behaviour, not its timing: the server ends the request while bytes still arrive, each
        # within the idle timeout, so only the request timeout can have ended it (with a 408 when it
        # answers). The trickle goes on for up to 90 s, generous for a loaded machine; a server that
        # ends it sooner is never waited for, and one that never does fails below.
        closed, trickled, answer = False, 0, b""
        for _ in range(60):  # a byte every 1.5 s (under the 2 s idle timeout); 100 are never sent
            time.sleep(1.5)
            try:
                s.sendall(b" ")
                trickled += 1
            except OSError:
                closed = True
                break
            s.setblocking(False)
            try:
                chunk = s.recv(4096)
                if chunk == b"" or chunk:
                    answer += chunk
                    closed = True
                    break
            except BlockingIOError:
                pass
            finally:
                s.setblocking(True)
        s.close()
        assert closed, f"the trickled request stayed open through {trickled} bytes"
        assert answer == b"" or answer.startswith(b"HTTP/1.1 408"), answer[:100]
        if answer:
            assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"]["code"] == "REQUEST_TIMEOUT"
        # The server still serves others.
        assert server.call("GET", "/health")[0] == 200


def test_connections_beyond_max_connections_wait_while_established_ones_work():
    with running_server({"http": {"max_connections": 8}}) as server:
        url = urllib.parse.urlparse(server.url)
        held = [socket.create_connection((url.hostname, url.port), timeout=10) for _ in range(8)]
        time.sleep(0.3)
        request = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
        # An established connection keeps working at the limit.
        held[0].sendall(request)
        assert held[0].recv(4096).startswith(b"HTTP/1.1 200")
        # A new one is not served while the limit is reached...
        extra = socket.create_connection((url.hostname, url.port), timeout=10)
        extra.sendall(request)
        extra.settimeout(1.5)
        with pytest.raises((socket.timeout, TimeoutError)):
            extra.recv(4096)
        # ...and is served once a place frees up.
        held.pop().close()
        extra.settimeout(10)
        assert extra.recv(4096).startswith(b"HTTP/1.1 200")
        extra.close()
        for s in held:
            s.close()


# 11. The approvals event stream outlives its session

def test_the_approvals_stream_closes_instead_of_delivering_once_its_session_ended(server):
    session = server.sign_in("stream@example.com")
    url = urllib.parse.urlparse(server.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    conn.request("GET", "/api/v1/auth/approvals/stream", headers={"Authorization": "Bearer " + session["access_token"]})
    resp = conn.getresponse()
    assert resp.status == 200 and resp.readline().startswith(b"retry:")
    assert server.call("POST", "/api/v1/auth/logout", token=session["access_token"])[0] == 204
    status, _, _ = server.call("POST", "/api/v1/auth/password/reset/device/initiate",
                               {"email": "stream@example.com", "new_password": "a new good secret", "device_name": "thief"})
    assert status == 202
    rest, closed = b"", False
    try:
        while line := resp.readline():
            rest += line
        closed = True  # the server ended the stream
    except (socket.timeout, TimeoutError):
        pass
    conn.close()
    assert b"event: approval" not in rest, rest
    assert closed, "the stream stayed open after logout"


def test_one_client_cannot_take_every_connection():
    with running_server({"http": {"max_connections_per_client": 4}}) as server:
        url = urllib.parse.urlparse(server.url)
        held = [socket.create_connection((url.hostname, url.port), timeout=10) for _ in range(4)]
        time.sleep(0.3)
        request = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
        extra = socket.create_connection((url.hostname, url.port), timeout=10)
        try:
            extra.sendall(request)
            answer = extra.recv(4096)
        except ConnectionResetError:
            answer = b""
        assert answer == b""  # closed at once
        extra.close()
        # Another client (another loopback address) is served, and so are the ones held.
        other = socket.create_connection((url.hostname, url.port), timeout=10, source_address=("127.0.0.2", 0))
        other.sendall(request)
        assert other.recv(4096).startswith(b"HTTP/1.1 200")
        other.close()
        held[0].sendall(request)
        assert held[0].recv(4096).startswith(b"HTTP/1.1 200")
        for s in held:
            s.close()


# 15. SMTP reply injection

class PipeliningSMTPServer:
    """A minimal SMTP server that, on STARTTLS, sends a forged reply in the same write as its 220,
    before the TLS handshake (what a man in the middle can do), then speaks TLS honestly."""

    def __init__(self, cert, key):
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.context.load_cert_chain(cert, key)
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(5)
        self.port = self.listener.getsockname()[1]
        self.commands = []
        self.delivered = threading.Event()
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            try:
                self.session(conn)
            except (OSError, ssl.SSLError):
                pass
            finally:
                conn.close()

    def session(self, conn):
        reader = conn.makefile("rb")
        conn.sendall(b"220 localhost ESMTP\r\n")
        tls = False
        while True:
            line = reader.readline()
            if not line:
                return
            command = line.decode().strip()
            self.commands.append((tls, command.split(" ")[0].upper()))
            verb = command.split(" ")[0].upper()
            if verb == "EHLO":
                conn.sendall(b"250-localhost\r\n250 STARTTLS\r\n" if not tls else b"250-localhost\r\n250 8BITMIME\r\n")
            elif verb == "STARTTLS":
                conn.sendall(b"220 go ahead\r\n250-injected\r\n250 AUTH PLAIN\r\n")
                conn = self.context.wrap_socket(conn, server_side=True)
                reader = conn.makefile("rb")
                tls = True
            elif verb in ("MAIL", "RCPT"):
                conn.sendall(b"250 OK\r\n")
            elif verb == "DATA":
                conn.sendall(b"354 go on\r\n")
                while (data := reader.readline()) not in (b".\r\n", b""):
                    pass
                if data == b"":
                    return
                conn.sendall(b"250 queued\r\n")
                self.delivered.set()
            elif verb == "QUIT":
                conn.sendall(b"221 bye\r\n")
                return
            else:
                conn.sendall(b"502 no\r\n")


def test_smtp_replies_sent_before_the_tls_handshake_are_discarded():
    with tempfile.TemporaryDirectory() as folder:
        cert, key = make_cert(folder)
        smtp = PipeliningSMTPServer(cert, key)
        with open(os.path.join(folder, "authd.json"), "w") as f:
            json.dump({"mail": {"transport": "smtp", "from": "no-reply@example.com", "retry_delay": 1,
                                "smtp": {"host": "localhost", "port": smtp.port, "security": "starttls", "ca_file": cert}}}, f)
        server = Server(folder, log=True)
        try:
            assert server.call("POST", "/api/v1/auth/email/send-code", {"email": "reader@example.com"})[0] == 200
            assert smtp.delivered.wait(60), server.log()[-3000:]
            # After STARTTLS the client said EHLO again over TLS, and every command got its own reply.
            assert (True, "EHLO") in smtp.commands
            assert smtp.commands.index((True, "EHLO")) < smtp.commands.index((True, "MAIL"))
        finally:
            smtp.listener.close()
            server.stop()


# 14. Admin socket mode; the data folder with PostgreSQL

PG_URL = os.environ.get("AUTHD_TEST_POSTGRES_URL")


@pytest.mark.skipif(not PG_URL and os.environ.get("AUTHD_REQUIRE_POSTGRES") != "1", reason="no PostgreSQL server")
def test_with_postgres_the_data_folder_is_made_private_before_the_admin_socket_binds():
    binary = os.environ.get("AUTHD_BINARY", ".build/debug/authd")
    name = "authd_rf_" + secrets.token_hex(6)
    subprocess.run(["psql", PG_URL, "-qc", f"CREATE DATABASE {name}"], check=True)
    url = urllib.parse.urlunparse(urllib.parse.urlparse(PG_URL)._replace(path="/" + name))
    with tempfile.TemporaryDirectory() as parent:
        config = os.path.join(parent, "authd.json")
        with open(config, "w") as f:
            json.dump({**BASE_CONFIG, "storage": {"backend": "postgres", "postgres": {"url": url, "tls": "disable"}}}, f)
        env = {**os.environ, "AUTHD_KEY_ENCRYPTION_KEY": secrets.token_hex(32)}
        folder = os.path.join(parent, "not-yet")
        out = subprocess.run([binary, "migrate", "--data", folder, "--config", config], capture_output=True, text=True, env=env)
        assert out.returncode == 0, out.stderr
        # A loose umask must not loosen anything authd makes.
        proc = subprocess.Popen([binary, "serve", "--data", folder, "--config", config, "--port", "0"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                preexec_fn=lambda: os.umask(0))
        try:
            line = proc.stdout.readline()
            assert "authd listening on" in line, proc.stderr.read()[-2000:] if proc.poll() is not None else line
            assert os.stat(folder).st_mode & 0o777 == 0o700
            assert os.stat(os.path.join(folder, "admin.sock")).st_mode & 0o777 == 0o600
        finally:
            proc.terminate()
            proc.wait(timeout=30)
