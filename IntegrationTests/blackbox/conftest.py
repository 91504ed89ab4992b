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

from mailtext import code_in, read_mail


class Server:
    def __init__(self, folder, log=False, level_from_env=True, port=0, env=None):
        self.folder = folder
        binary = os.environ.get("AUTHD_BINARY", ".build/debug/authd")
        # `log` is True (a log file in the data folder) or the path of one. The server writes its log
        # into a pipe that this process copies to the file, so limits on the server's own file writes
        # (test_disk_full) do not cost log lines.
        self.log_path = (log if isinstance(log, str) else os.path.join(folder, "server.log")) if log else None
        self._stderr = tempfile.TemporaryFile()  # warnings and start-up errors, shown when start-up fails
        self.proc = subprocess.Popen(
            [binary, "serve", "--data", folder, "--port", str(port)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE if log else self._stderr, text=True,
            # The tests' own AUTHD_* variables (AUTHD_BINARY, AUTHD_REQUIRE_POSTGRES…) would be read as
            # configuration keys (contract §14); a test's `env` sets the ones it means.
            env={**{k: v for k, v in os.environ.items() if not k.startswith("AUTHD_") or k == "AUTHD_KEY_ENCRYPTION_KEY"},
                 **({"AUTHD_LOG_LEVEL": "info" if log else "warning"} if level_from_env else {}), **(env or {})},
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
        """The outbox's complete lines (the server may be writing the next one: no newline yet), each
        checked as a mail a person reads: no `{{…}}` left in it (mailtext.check_filled). None before
        the first mail."""
        try:
            with open(os.path.join(self.folder, "outbox.jsonl")) as f:
                lines = f.read().split("\n")[:-1]
        except FileNotFoundError:
            return []
        for line in lines:
            read_mail(line)
        return lines

    def mails(self, to=None, about=None, after=0):
        """The mails sent, oldest first, from the `after`-th line on; only those to `to` and with
        `about` in the subject (any case), when given. Each is checked like outbox()'s lines."""
        return [mail for mail in map(read_mail, self.outbox()[after:])
                if (to is None or mail["to"] == to) and (about is None or about.lower() in mail["subject"].lower())]

    def mailed(self, to, about=None, after=0, timeout=60):
        """The newest of mails(to, about, after), waiting up to `timeout` seconds for one (generous for a
        loaded machine; it returns as soon as the mail is there): some mail (reset codes, notices) goes
        out after the answer."""
        deadline = time.time() + timeout
        while True:
            found = self.mails(to, about, after)
            if found:
                return found[-1]
            if time.time() >= deadline:
                raise AssertionError(f"no mail to {to}" + (f" about {about!r}" if about else "") + f" after line {after}")
            time.sleep(0.02)

    def mailed_code(self, to, about=None, after=0, timeout=60):
        """The code of the newest mail to `to` (see mailed), read from the mail as a person reads it
        (mailtext.code_in): the one code in its subject and text, also in its HTML, no `{{…}}` left.
        Safe while other threads mail other addresses."""
        return code_in(self.mailed(to, about, after, timeout))

    def sign_in(self, email):
        sent = len(self.outbox())
        status, body, _ = self.call("POST", "/api/v1/auth/email/send-code", {"email": email})
        if status == 429:
            # The address's resend interval outlives its last sign-in (contract §12): wait it out, as a
            # person would (BASE_CONFIG makes it a second).
            time.sleep(body["error"]["details"]["retry_after"])
            status, body, _ = self.call("POST", "/api/v1/auth/email/send-code", {"email": email})
        assert status == 200, body
        status, session, _ = self.call("POST", "/api/v1/auth/email/verify", {"email": email, "code": self.mailed_code(email, after=sent)})
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
        code = self.proc.wait(timeout=120)
        if code != 0 and not self.log_path:
            self._stderr.seek(0)
            text = self._stderr.read().decode(errors="replace")
            # Where the runtime's crash report starts, not the warnings before it.
            at = max(0, min((i for i in (text.find("💣"), text.find("Fatal error"), text.find("Crash")) if i >= 0), default=max(0, len(text) - 4000)))
            raise AssertionError(f"authd exited {code} on SIGTERM: {text[at:at + 5000]}")
        assert code == 0, f"authd exited {code} on SIGTERM"
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


# A second between codes to one address (not a minute): tests sign one address in again and again.
BASE_CONFIG = {"issuer": "https://auth.example.test", "audience": "my-app", "mail": {"transport": "outbox"}, "email": {"resend_interval": 1}}


@contextlib.contextmanager
def running_server(config=None, log=False, level_from_env=True, port=0, env=None):
    """A server on a fresh data folder; `config` entries are merged over BASE_CONFIG (None removes one).
    `port` 0 takes any free one; `env` adds environment variables."""
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "authd.json"), "w") as f:
            json.dump({k: v for k, v in {**BASE_CONFIG, **(config or {})}.items() if v is not None}, f)
        s = Server(folder, log=log, level_from_env=level_from_env, port=port, env=env)
        try:
            yield s
        finally:
            if s.proc.poll() is None:
                s.stop()


@pytest.fixture
def server():
    with running_server() as s:
        yield s
