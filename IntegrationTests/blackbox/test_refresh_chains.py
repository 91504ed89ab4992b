"""bench/refresh_chains.c, scenario (c)'s load generator, against a real server: every answer's new
refresh token goes back into the chains, and a failed rotation is counted, not hidden."""
import importlib.util
import json
import os
import socket
import subprocess
import threading
import urllib.parse

from conftest import running_server

_spec = importlib.util.spec_from_file_location("bench_driver", os.path.join(os.path.dirname(__file__), "..", "..", "bench", "driver.py"))
driver = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(driver)

BIG = {"limit": 1000000, "window": 1}
# No grace: a token sent twice ends its session with 401, so a generator that lost the new token
# and sent the old one again would show errors.
CONFIG = {"tokens": {"refresh_rate": BIG, "refresh_reuse_grace": 0}, "pin": {"anonymous_per_ip": BIG}}


def chains_process(tmp_path, host, port, tokens, connections):
    path = tmp_path / "tokens.txt"
    path.write_text("\n".join(tokens) + "\n")
    return subprocess.run([driver.compile_chains(str(tmp_path)), host, str(port), str(connections), "1", str(path)],
                          capture_output=True, text=True, timeout=30)


def run_chains(tmp_path, server, tokens, connections):
    url = urllib.parse.urlparse(server.url)
    done = chains_process(tmp_path, url.hostname, url.port, tokens, connections)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


class FakeServer:
    """Answers each request on 127.0.0.1 with `answer(n)` (n counts requests), then closes the
    connection if `close` is set: what a server that drops keep-alive connections does."""

    def __init__(self, answer, close):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.answer, self.close, self.count = answer, close, 0
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.handle, args=(conn,), daemon=True).start()

    def handle(self, conn):
        with conn:
            data = b""
            while True:
                while b"\r\n\r\n" not in data or not data.endswith(b"}"):
                    chunk = conn.recv(4096)
                    if not chunk:
                        return
                    data += chunk
                self.count += 1
                try:
                    conn.sendall(self.answer(self.count))
                except OSError:
                    return
                data = b""
                if self.close:
                    return


def new_token_answer(n):
    body = json.dumps({"refresh_token": f"token-{n}"}).encode()
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body


def refresh_tokens(server, n):
    tokens = []
    for _ in range(n):
        status, body, _ = server.call("POST", "/api/v1/auth/anonymous", {})
        assert status == 200, body
        tokens.append(body["refresh_token"])
    return tokens


def test_chains_rotate_without_reusing_a_token(tmp_path):
    with running_server(CONFIG) as server:
        tokens = refresh_tokens(server, 4)
        r = run_chains(tmp_path, server, tokens, 2)
        assert r["errors"] == 0, r
        assert r["requests"] > 4 * 5, r  # every chain rotated several times
        assert 0 < r["p50_ms"] <= r["p99_ms"] <= r["p999_ms"], r
        # The chains' first tokens were rotated away (and, after 16 rotations, forgotten).
        status, body, _ = server.call("POST", "/api/v1/auth/refresh", {"refresh_token": tokens[0]})
        assert status == 401 and body["error"]["code"] in ("REFRESH_TOKEN_REUSED", "INVALID_REFRESH_TOKEN"), body


def test_a_failed_rotation_is_an_error_and_the_other_chains_go_on(tmp_path):
    with running_server(CONFIG) as server:
        tokens = refresh_tokens(server, 3) + ["not-a-refresh-token"]
        r = run_chains(tmp_path, server, tokens, 2)
        # The bad token goes back into the ring after each 401 and fails again each time it comes round.
        assert r["errors"] >= 2, r
        assert r["requests"] - r["errors"] > 3 * 5, r


def test_a_connection_the_server_closes_is_an_error_and_a_new_one_takes_over(tmp_path):
    fake = FakeServer(new_token_answer, close=True)
    done = chains_process(tmp_path, "127.0.0.1", fake.port, ["a", "b", "c"], 2)
    assert done.returncode == 0, done.stderr
    r = json.loads(done.stdout)
    # Every answer is counted; the request each closed connection then carried was never answered.
    assert r["requests"] > 20, r
    assert r["errors"] >= r["requests"] - 2, r


def test_an_answer_without_content_length_stops_the_run(tmp_path):
    fake = FakeServer(lambda n: b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", close=False)
    done = chains_process(tmp_path, "127.0.0.1", fake.port, ["a", "b"], 1)
    assert done.returncode == 1 and "without Content-Length" in done.stderr, (done.returncode, done.stderr)


def test_more_connections_than_chains_is_refused(tmp_path):
    done = chains_process(tmp_path, "127.0.0.1", 9, ["a", "b"], 3)
    assert done.returncode == 2 and "need 1 to 2 connections" in done.stderr, done.stderr
