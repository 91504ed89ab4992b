"""Push for approvals (contract §9) against a local APNs stand-in: hypercorn serving HTTP/2 over TLS
with a throwaway CA. It checks the provider token (ES256, verified with the .p8 key's public half),
the topic, the expiry and the payload, and answers 410 for a token it calls gone. The client is a
photo-sync style app: camelCase bodies, a device reset approved from the other phone."""
import asyncio
import base64
import json
import os
import socket
import tempfile
import threading
import time

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from hypercorn.asyncio import serve
from hypercorn.config import Config

from conftest import running_server
from test_transport import issue, make_ca

TEAM, KEY_ID, TOPIC = "TEAM123456", "KEY1234567", "com.example.photos"
GONE = "ab" * 32


def b64d(part):
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


class FakeAPNs:
    def __init__(self, folder, public_key):
        ca_key, ca_cert, self.ca_path = make_ca(folder)
        issue(ca_key, ca_cert, folder, "127.0.0.1")
        self.public_key, self.received, self.problems = public_key, [], []
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        config = Config()
        config.bind = [f"127.0.0.1:{self.port}"]
        config.certfile, config.keyfile = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
        config.alpn_protocols = ["h2"]
        config.loglevel = "WARNING"
        self.loop = asyncio.new_event_loop()
        self.stop = asyncio.Event()
        ready = threading.Event()

        async def run():
            self.stop = asyncio.Event()
            ready.set()
            await serve(self.app, config, shutdown_trigger=self.stop.wait)

        threading.Thread(target=lambda: self.loop.run_until_complete(run()), daemon=True).start()
        ready.wait(5)
        time.sleep(0.5)

    def check_token(self, authorization):
        scheme, token = authorization.split(" ", 1)
        assert scheme.lower() == "bearer"
        header, claims, signature = token.split(".")
        h, c = json.loads(b64d(header)), json.loads(b64d(claims))
        assert h["alg"] == "ES256" and h["kid"] == KEY_ID, h
        assert c["iss"] == TEAM and abs(c["iat"] - time.time()) < 120, c
        raw = b64d(signature)
        der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
        self.public_key.verify(der, f"{header}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))

    async def app(self, scope, receive, send):
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        token = scope["path"].rsplit("/", 1)[-1]
        try:
            assert scope["http_version"] == "2", scope["http_version"]
            assert scope["method"] == "POST" and scope["path"].startswith("/3/device/")
            self.check_token(headers["authorization"])
            assert headers["apns-topic"] == TOPIC and headers["apns-push-type"] == "alert"
            assert int(headers["apns-expiration"]) > time.time()
            self.received.append((token, json.loads(body), headers))
        except Exception as error:  # a wrong request is a failed test, reported by the test itself
            self.problems.append(repr(error))
            await send({"type": "http.response.start", "status": 403, "headers": []})
            await send({"type": "http.response.body", "body": b'{"reason":"InvalidProviderToken"}'})
            return
        status = 410 if token == GONE else 200
        await send({"type": "http.response.start", "status": status, "headers": [(b"apns-id", b"x")]})
        await send({"type": "http.response.body", "body": b'{"reason":"Unregistered"}' if status == 410 else b""})

    def pushes(self, count, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline and len(self.received) < count and not self.problems:
            time.sleep(0.05)
        assert not self.problems, self.problems
        return list(self.received)

    def close(self):
        self.loop.call_soon_threadsafe(self.stop.set)


def fake_apns(folder):
    """A new APNs key (.p8) in `folder`, the stand-in that verifies it, and the `push` section pointing there."""
    p8 = ec.generate_private_key(ec.SECP256R1())
    key_path = os.path.join(folder, "AuthKey.p8")
    with open(key_path, "wb") as f:
        f.write(p8.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    apns = FakeAPNs(folder, p8.public_key())
    push = {"apns": {"team_id": TEAM, "key_id": KEY_ID, "private_key_path": key_path, "topics": [TOPIC],
                     "endpoint": f"https://127.0.0.1:{apns.port}", "ca_file": apns.ca_path}}
    return apns, push


def test_an_approval_request_pushes_the_other_phones_and_a_gone_token_is_dropped():
    with tempfile.TemporaryDirectory() as folder:
        apns, push = fake_apns(folder)
        with running_server({"push": push, "password": {"approval_ttl": 120}}, log=True) as s:
            email = "photos@example.com"
            assert s.call("POST", "/api/v1/auth/password/register", {"email": email, "password": "first good secret"})[0] == 202
            status, first, _ = s.call("POST", "/api/v1/auth/password/verify-email",
                                      {"email": email, "code": s.mailed_code(email), "password": "first good secret", "deviceName": "Anna's iPhone"})
            assert status == 200, first
            status, second, _ = s.call("POST", "/api/v1/auth/password/login",
                                       {"email": email, "password": "first good secret", "deviceName": "Anna's old iPhone", "platform": "ios"})
            assert status == 200, second
            phone_token = "cd" * 32
            assert s.call("PUT", "/api/v1/auth/sessions/current/push", {"apnsToken": phone_token, "environment": "sandbox"}, first["access_token"])[0] == 204
            assert s.call("PUT", "/api/v1/auth/sessions/current/push", {"apns_token": GONE, "topic": TOPIC}, second["access_token"])[0] == 204
            for bad in ({"apns_token": "not hex!"}, {"apns_token": phone_token, "environment": "staging"}, {"apns_token": phone_token, "topic": "com.other"}):
                status, error, _ = s.call("PUT", "/api/v1/auth/sessions/current/push", bad, first["access_token"])
                assert status == 400 and error["error"]["code"] == "INVALID_REQUEST", (bad, error)

            # The new phone asks for a reset in camelCase; both signed-in phones are pushed.
            status, request, _ = s.call("POST", "/api/v1/auth/password/reset/device/initiate",
                                        {"email": email, "newPassword": "second good secret", "deviceName": "Anna's new iPhone"})
            assert status == 202, request
            pushes = apns.pushes(2)
            assert sorted(token for token, _, _ in pushes) == sorted([phone_token, GONE])
            for _, payload, headers in pushes:
                assert payload["authd"] == {"approval_id": request["request_id"], "kind": "password_reset"}
                assert set(payload["aps"]["alert"]) == {"title", "body"}
                text = json.dumps(payload)
                assert email not in text and request["match_code"] not in text, "generic text only"

            status, waiting, _ = s.call("GET", "/api/v1/auth/approvals", token=first["access_token"])
            assert status == 200 and [a["id"] for a in waiting["approvals"]] == [request["request_id"]]
            assert s.call("POST", f"/api/v1/auth/approvals/{request['request_id']}/approve",
                          {"matchCode": request["match_code"]}, first["access_token"])[0] == 204
            status, done, _ = s.call("POST", f"/api/v1/auth/password/reset/device/{request['request_id']}/complete")
            assert status == 200, done
            assert s.call("POST", "/api/v1/auth/password/login", {"email": email, "password": "second good secret"})[0] == 200

            # The 410 made authd forget that token; and a second request within a minute pushes nobody.
            assert s.logged("APNs token gone; forgotten")
            assert s.call("POST", "/api/v1/auth/password/reset/device/initiate", {"email": email, "new_password": "third good secret"})[0] == 202
            time.sleep(1.5)
            assert len(apns.received) == 2, "at most one push per user per minute"
        apns.close()
