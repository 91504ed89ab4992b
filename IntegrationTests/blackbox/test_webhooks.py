"""Webhooks (contract §9) checked with the Standard Webhooks reference verifier (`standardwebhooks`
from PyPI) against a local receiver that fails, hangs past the timeout, then recovers; and a server
killed with events still queued delivers them after its restart."""
import base64
import http.server
import json
import os
import re
import signal
import tempfile
import threading
import time

import pytest
from standardwebhooks.webhooks import Webhook

from conftest import BASE_CONFIG, Server, running_server


class Receiver:
    """Answers each message 500 on its first attempt, hangs past authd's timeout on its second,
    and 204 from then on (`script`); keeps what it accepted."""

    def __init__(self, script=("fail", "hang")):
        self.script, self.attempts, self.accepted, self.lock = script, {}, [], threading.Lock()
        self.down = False
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                headers = {k.lower(): v for k, v in self.headers.items()}
                with receiver.lock:
                    n = receiver.attempts.get(headers.get("webhook-id"), 0)
                    receiver.attempts[headers.get("webhook-id")] = n + 1
                    step = "fail" if receiver.down else (receiver.script[n] if n < len(receiver.script) else "ok")
                if step == "hang":
                    time.sleep(4)
                    return
                if step == "fail":
                    self.send_response(500)
                    self.end_headers()
                    return
                with receiver.lock:
                    receiver.accepted.append((body, headers))
                self.send_response(204)
                self.end_headers()

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hooks"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def events(self, count, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                unique = {h["webhook-id"]: (b, h) for b, h in self.accepted}
            if len(unique) >= count:
                return list(unique.values())
            time.sleep(0.1)
        raise AssertionError(f"{len(unique)} of {count} events arrived: {[json.loads(b)['type'] for b, _ in unique.values()]}")

    def close(self):
        self.httpd.shutdown()


def secret_file(folder):
    secret = "whsec_" + base64.b64encode(os.urandom(32)).decode()
    path = os.path.join(folder, "webhook-secret")
    with open(path, "w") as f:
        f.write(secret + "\n")
    return secret, path


def config(receiver, path, events=None):
    hook = {"url": receiver.url, "secret_file": path}
    if events:
        hook["events"] = events
    return {"webhooks": [hook], "webhook_delivery": {"retry_delay": 1, "timeout": 2}}


def test_every_event_arrives_signed_after_failures_and_a_timeout():
    receiver = Receiver()
    with tempfile.TemporaryDirectory() as keys:
        secret, path = secret_file(keys)
        with running_server(config(receiver, path)) as s:
            session = s.sign_in("hook@example.com")
            token = session["access_token"]
            assert s.call("PATCH", "/api/v1/auth/me", {"display_name": "Hook"}, token)[0] == 200
            assert s.call("POST", "/api/v1/auth/logout", token=token)[0] == 204
            delivered = receiver.events(4)
        verifier = Webhook(secret)
        types = []
        for body, headers in delivered:
            message = verifier.verify(body, headers)  # raises on a bad signature or a stale timestamp
            types.append(message["type"])
            assert set(message) == {"type", "timestamp", "data"}
            assert message["data"]["user_id"] == session["user"]["id"]
            for secret_value in (session["access_token"], session["refresh_token"]):
                assert secret_value not in body.decode(), "an event never carries a token"
        assert sorted(types) == ["session.created", "session.ended", "user.created", "user.updated"]
        # Each was refused once and timed out once before it went through: retried, not dropped.
        assert all(n >= 3 for n in receiver.attempts.values())
        forged = dict(delivered[0][1], **{"webhook-signature": "v1," + base64.b64encode(b"x" * 32).decode()})
        try:
            verifier.verify(delivered[0][0], forged)
            raise AssertionError("a forged signature verified")
        except AssertionError:
            raise
        except Exception:
            pass
    receiver.close()


class Redirector:
    """Answers every delivery 307 to `location`, counting the attempts per `webhook-id`."""

    def __init__(self, location):
        self.attempts, self.lock = {}, threading.Lock()
        redirector = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                with redirector.lock:
                    key = self.headers.get("webhook-id")
                    redirector.attempts[key] = redirector.attempts.get(key, 0) + 1
                self.send_response(307)
                self.send_header("Location", location)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hooks"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()


def test_a_redirect_is_a_failed_attempt_and_is_never_followed():
    """Finding 8 of the second review: a 307 took the signed event to another address (there a
    non-loopback http:// one the configuration would refuse). Contract §12: never followed; a 3xx
    is a failed attempt, retried like any other."""
    elsewhere = Receiver(script=())  # would accept anything it were sent
    redirector = Redirector(elsewhere.url)
    with tempfile.TemporaryDirectory() as keys:
        _, path = secret_file(keys)
        with running_server(config(redirector, path, events=["session.created"]), log=True) as s:
            s.sign_in("redirected@example.com")
            # retry_delay 1: the second attempt comes a second after the first.
            deadline = time.time() + 30
            while time.time() < deadline:
                with redirector.lock:
                    if redirector.attempts and max(redirector.attempts.values()) >= 2:
                        break
                time.sleep(0.1)
            with redirector.lock:
                attempts = dict(redirector.attempts)
            assert len(attempts) == 1 and list(attempts.values())[0] >= 2, f"the 307 was retried as a failure: {attempts}"
            assert "webhook refused" in s.log() and "307" in s.log(), "and logged as refused"
        with elsewhere.lock:
            assert elsewhere.attempts == {} and elsewhere.accepted == [], "the redirect's target got nothing"
    redirector.close()
    elsewhere.close()


def test_an_endpoint_gets_only_the_events_it_subscribed_to():
    receiver = Receiver(script=())
    with tempfile.TemporaryDirectory() as keys:
        _, path = secret_file(keys)
        with running_server(config(receiver, path, events=["session.ended"])) as s:
            token = s.sign_in("only@example.com")["access_token"]
            assert s.call("POST", "/api/v1/auth/logout", token=token)[0] == 204
            [(body, _)] = receiver.events(1)
            time.sleep(1.5)
            assert json.loads(body)["type"] == "session.ended" and len(receiver.accepted) == 1
    receiver.close()


def test_events_queued_before_a_kill_are_delivered_after_the_restart():
    receiver = Receiver(script=())
    receiver.down = True
    with tempfile.TemporaryDirectory() as keys, tempfile.TemporaryDirectory() as folder:
        secret, path = secret_file(keys)
        with open(os.path.join(folder, "authd.json"), "w") as f:
            json.dump({**BASE_CONFIG, **config(receiver, path)}, f)
        s = Server(folder)
        session = s.sign_in("kill@example.com")
        assert s.call("PATCH", "/api/v1/auth/me", {"display_name": "Before the kill"}, session["access_token"])[0] == 200
        s.proc.send_signal(signal.SIGKILL)
        s.proc.wait(timeout=10)
        receiver.down = False
        s = Server(folder)
        try:
            delivered = receiver.events(3)
            verifier = Webhook(secret)
            assert sorted(verifier.verify(b, h)["type"] for b, h in delivered) == ["session.created", "user.created", "user.updated"]
        finally:
            s.stop()
    receiver.close()


def test_bad_webhook_configuration_stops_start_up():
    with tempfile.TemporaryDirectory() as keys:
        _, path = secret_file(keys)
        bad_secret = os.path.join(keys, "bad")
        with open(bad_secret, "w") as f:
            f.write("not-a-secret")
        for hook, message in [
            ({"url": "http://example.com/hooks", "secret_file": path}, "https://"),
            ({"url": "https://example.com/hooks", "secret_file": bad_secret}, "whsec_"),
            ({"url": "https://example.com/hooks", "secret_file": path, "events": ["user.exploded"]}, "unknown event type"),
            ({"url": "https://example.com/hooks"}, "secret_file"),
        ]:
            # Start-up fails with the message naming the key (conftest raises AssertionError with it).
            with pytest.raises(AssertionError, match=re.escape(message)):
                with running_server({"webhooks": [hook]}):
                    pass
