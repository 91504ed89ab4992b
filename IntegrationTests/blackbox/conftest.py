"""Starts a real `authd serve` on a fresh data folder and a free port for black-box tests."""
import contextlib
import json
import os
import signal
import subprocess
import tempfile
import threading
import time
import urllib.request

import pytest


class Server:
    def __init__(self, folder, log=False, level_from_env=True):
        self.folder = folder
        binary = os.environ.get("AUTHD_BINARY", ".build/debug/authd")
        # `log` is True (a log file in the data folder) or the path of one. The server writes its log
        # into a pipe that this process copies to the file, so limits on the server's own file writes
        # (test_disk_full) do not cost log lines.
        self.log_path = (log if isinstance(log, str) else os.path.join(folder, "server.log")) if log else None
        self._stderr = tempfile.TemporaryFile()  # warnings and start-up errors, shown when start-up fails
        self.proc = subprocess.Popen(
            [binary, "serve", "--data", folder, "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE if log else self._stderr, text=True,
            env={**{k: v for k, v in os.environ.items() if k != "AUTHD_LOG_LEVEL"},
                 **({"AUTHD_LOG_LEVEL": "info" if log else "warning"} if level_from_env else {})},
        )
        if log:
            self.log_copier = threading.Thread(target=self._copy_log, daemon=True)
            self.log_copier.start()
        line = self.proc.stdout.readline()
        if "authd listening on " not in line:
            self.proc.wait(timeout=30)
            self._stderr.seek(0)
            raise AssertionError(f"authd did not start: {line!r} {self._stderr.read().decode(errors='replace')[-2000:]}")
        self.url = line.split("authd listening on ", 1)[1].strip()

    def _copy_log(self):
        with open(self.log_path, "a") as out:
            for line in self.proc.stderr:
                out.write(line)
                out.flush()

    def call(self, method, path, body=None, token=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        if token:
            req.add_header("Authorization", "Bearer " + token)
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:  # generous: a loaded machine is slow, not broken
                raw = resp.read()
                return resp.status, (json.loads(raw) if raw else None), dict(resp.headers)
        except urllib.error.HTTPError as err:
            raw = err.read()
            return err.code, (json.loads(raw) if raw else None), dict(err.headers)

    def outbox(self):
        """The outbox's complete lines: the server may be writing the next one (no newline yet)."""
        with open(os.path.join(self.folder, "outbox.jsonl")) as f:
            return f.read().split("\n")[:-1]

    def last_code(self):
        return json.loads(self.outbox()[-1])["code"]

    def code_for(self, email):
        """The newest code mailed to `email` (safe while other threads send codes to other addresses)."""
        for line in reversed(self.outbox()):
            message = json.loads(line)
            if message["to"] == email:
                return message["code"]
        raise AssertionError(f"no code mailed to {email}")

    def sign_in(self, email):
        assert self.call("POST", "/api/v1/auth/email/send-code", {"email": email})[0] == 200
        status, session, _ = self.call("POST", "/api/v1/auth/email/verify", {"email": email, "code": self.code_for(email)})
        assert status == 200, session
        return session

    def log(self):
        time.sleep(0.05)  # let the copier catch up
        with open(self.log_path) as f:
            return f.read()

    def logged(self, text, timeout=60):
        """Whether a line containing `text` is in the log, waiting for it (up to `timeout` seconds, generous
        for a loaded machine) when it is logged after the answer that prompted it, or by another task."""
        deadline = time.time() + timeout
        while text not in self.log():
            if time.time() >= deadline:
                return False
        return True

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(timeout=120) == 0
        self.proc.stdout.close()
        self._stderr.close()


def next_event(resp, timeout=60):
    """The next event on an open event stream: {"event": name, "data": parsed JSON}, or what was read
    of it when `timeout` seconds pass (keep-alive comments come every 15 s, so the wait is bounded)."""
    event, deadline = {}, time.time() + timeout
    while "data" not in event and time.time() < deadline:
        line = resp.readline().decode().rstrip("\n")
        if line.startswith("event:"):
            event["event"] = line.split(":", 1)[1].strip()
        elif line.startswith("data:"):
            event["data"] = json.loads(line.split(":", 1)[1])
    return event


BASE_CONFIG = {"issuer": "https://auth.example.test", "audience": "my-app", "mail": {"transport": "outbox"}}


@contextlib.contextmanager
def running_server(config=None, log=False, level_from_env=True):
    """A server on a fresh data folder; `config` entries are merged over BASE_CONFIG (None removes one)."""
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "authd.json"), "w") as f:
            json.dump({k: v for k, v in {**BASE_CONFIG, **(config or {})}.items() if v is not None}, f)
        s = Server(folder, log=log, level_from_env=level_from_env)
        try:
            yield s
        finally:
            if s.proc.poll() is None:
                s.stop()


@pytest.fixture
def server():
    with running_server() as s:
        yield s
