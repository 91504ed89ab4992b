"""Password hashes verify with an independent Argon2 implementation; approvals arrive over SSE."""
import http.client
import json
import os
import threading
import urllib.parse

import pytest

import argon2

from conftest import next_event

PASSWORD = "an independent check"


def register(server, email, password=PASSWORD):
    status, body, _ = server.call("POST", "/api/v1/auth/password/register", {"email": email, "password": password})
    assert status == 202, body
    status, session, _ = server.call("POST", "/api/v1/auth/password/verify-email", {"email": email, "code": server.mailed_code(email), "password": password})
    assert status == 200, session
    return session


def stored_password_hashes(folder):
    """Every password hash in the journal and snapshot, as the store wrote them."""
    hashes = []
    for name in sorted(os.listdir(folder)):
        if name.startswith("journal-") or name == "snapshot.json":
            with open(os.path.join(folder, name)) as f:
                text = f.read()
            for line in text.splitlines():
                if not line.strip("\x00"):
                    continue  # the journal's reserved space past its last line reads as zeros
                def walk(value):
                    if isinstance(value, dict):
                        if isinstance(value.get("password"), dict) and "hash" in value["password"]:
                            hashes.append(value["password"]["hash"])
                        for v in value.values():
                            walk(v)
                    elif isinstance(value, list):
                        for v in value:
                            walk(v)
                walk(json.loads(line))
    return hashes


def test_stored_hash_verifies_with_argon2_cffi(server):
    register(server, "cffi@example.com")
    hashes = stored_password_hashes(server.folder)
    assert hashes, "no password hash in the store"
    ph = argon2.PasswordHasher()
    for h in hashes:
        assert h.startswith("$argon2id$v=19$m=19456,t=2,p=1$")
        assert ph.verify(h, PASSWORD)
        with pytest.raises(argon2.exceptions.VerifyMismatchError):
            ph.verify(h, PASSWORD + "!")
    assert PASSWORD not in open(os.path.join(server.folder, sorted(n for n in os.listdir(server.folder) if n.startswith("journal-"))[-1])).read()


def test_a_device_reset_arrives_over_server_sent_events(server):
    session = register(server, "sse@example.com")
    url = urllib.parse.urlparse(server.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    conn.request("GET", "/api/v1/auth/approvals/stream", headers={"Authorization": "Bearer " + session["access_token"]})
    resp = conn.getresponse()
    assert resp.status == 200
    assert resp.getheader("Content-Type").startswith("text/event-stream")
    assert resp.readline().startswith(b"retry:")

    answer = {}
    def initiate():
        answer["r"] = server.call("POST", "/api/v1/auth/password/reset/device/initiate",
                                  {"email": "sse@example.com", "new_password": "a new good secret", "device_name": "laptop"})
    t = threading.Thread(target=initiate)
    t.start()
    event = next_event(resp)
    t.join()
    conn.close()
    status, body, _ = answer["r"]
    assert status == 202
    assert event["event"] == "approval"
    assert event["data"]["id"] == body["request_id"]
    assert event["data"]["kind"] == "password_reset"
    assert event["data"]["device_name"] == "laptop"
    assert "match_code" not in event["data"]
