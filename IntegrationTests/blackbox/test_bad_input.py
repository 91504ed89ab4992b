"""Bad input over a raw socket: every malformed request gets a clear 4xx in the contract's error
format, and the server stays up and serves the next request."""
import json
import os
import socket
from urllib.parse import urlparse

import pytest

from conftest import running_server


@pytest.fixture(scope="module")
def server():
    with running_server({"http": {"idle_timeout": 2}, "email": {"sends_per_ip": {"limit": 1000000, "window": 1}}}) as s:
        yield s


def raw(server, data, read_timeout=10):
    """Sends raw bytes on a fresh connection; returns (status, headers, body bytes)."""
    url = urlparse(server.url)
    with socket.create_connection((url.hostname, url.port), timeout=read_timeout) as sock:
        sock.sendall(data)
        response = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            response += chunk
            head, sep, rest = response.partition(b"\r\n\r\n")
            if sep:
                length = [int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")]
                if length and len(rest) >= length[0]:
                    break
    head, _, body = response.partition(b"\r\n\r\n")
    status_line, *header_lines = head.split(b"\r\n")
    headers = {k.strip().lower().decode(): v.strip().decode() for k, v in (l.split(b":", 1) for l in header_lines)}
    return int(status_line.split()[1]), headers, body, status_line


def post(server, path, body, content_type="application/json", extra=b""):
    url = urlparse(server.url)
    head = (f"POST {path} HTTP/1.1\r\nHost: {url.hostname}\r\nConnection: close\r\n"
            f"Content-Length: {len(body)}\r\n").encode()
    if content_type is not None:
        head += f"Content-Type: {content_type}\r\n".encode()
    return raw(server, head + extra + b"\r\n" + body)


def error(response):
    status, headers, body, _ = response
    assert headers["content-type"].startswith("application/json"), headers
    payload = json.loads(body)
    assert set(payload) == {"error"} and payload["error"]["message"], payload
    return status, payload["error"]["code"]


SEND = "/api/v1/auth/email/send-code"


def test_a_body_of_64_KiB_plus_one_is_413(server):
    body = b'{"email":"' + b"a" * (65536 + 1 - 12) + b'"}'
    assert len(body) == 65537
    assert error(post(server, SEND, body)) == (413, "PAYLOAD_TOO_LARGE")


def test_a_body_of_64_KiB_is_read(server):
    body = b'{"email":"' + b"a" * (65536 - 12) + b'"}'
    assert len(body) == 65536
    assert error(post(server, SEND, body)) == (400, "INVALID_EMAIL")


@pytest.mark.parametrize("depth", [64, 10_000, 32_000])
def test_deeply_nested_json_is_400(server, depth):
    body = b"[" * depth + b"]" * depth
    assert error(post(server, SEND, body)) == (400, "INVALID_REQUEST")
    depth = min(depth, 10_000)  # within 64 KiB
    body = b'{"email":' + b'{"a":' * depth + b"1" + b"}" * depth + b"}"
    assert error(post(server, SEND, body)) == (400, "INVALID_REQUEST")


def test_invalid_utf8_is_400(server):
    assert error(post(server, SEND, b'{"email":"\xff\xfe@example.com"}')) == (400, "INVALID_REQUEST")
    assert error(post(server, SEND, b'{"email":"\xc3(@example.com"}')) == (400, "INVALID_REQUEST")


def test_nul_bytes_are_refused(server):
    assert error(post(server, SEND, b'{"email":"a\\u0000b@example.com"}')) == (400, "INVALID_EMAIL")
    assert error(post(server, SEND, b'{"email":"a@example.com"}\x00')) == (400, "INVALID_REQUEST")


def test_a_10000_character_email_is_400(server):
    email = "a" * 10_000 + "@example.com"
    assert error(post(server, SEND, json.dumps({"email": email}).encode())) == (400, "INVALID_EMAIL")


def test_emoji_in_names_round_trip(server):
    session = server.sign_in("emoji@example.com")
    name = "Zoë 🦊‍🔥 李"
    status, user, _ = server.call("PATCH", "/api/v1/auth/me", {"display_name": name}, token=session["access_token"])
    assert status == 200 and user["display_name"] == name
    assert server.call("GET", "/api/v1/auth/me", token=session["access_token"])[1]["display_name"] == name


@pytest.mark.parametrize("value", [42, 4.2, True, None, [], {}])
def test_other_types_where_strings_belong_are_400(server, value):
    status, code = error(post(server, SEND, json.dumps({"email": value}).encode()))
    assert (status, code) == (400, "INVALID_REQUEST")


def test_a_body_that_is_not_an_object_is_400(server):
    for body in (b'"a@example.com"', b"[]", b"42", b"null", b"{", b"", b"{}"):
        assert error(post(server, SEND, body)) == (400, "INVALID_REQUEST"), body


def test_duplicate_keys_are_400(server):
    # Two parsers may pick different copies; an auth server must not guess.
    body = b'{"email":"first@example.com","email":"second@example.com"}'
    assert error(post(server, SEND, body)) == (400, "INVALID_REQUEST")


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml"])
def test_a_wrong_content_type_is_415(server, content_type):
    assert error(post(server, SEND, b'{"email":"type@example.com"}', content_type=content_type)) == (415, "INVALID_REQUEST")


@pytest.mark.parametrize("content_type", [None, "application/json", "application/json; charset=utf-8", "APPLICATION/JSON"])
def test_json_content_types_and_none_are_accepted(server, content_type):
    email = f"fine{abs(hash(content_type))}@example.com"
    status, _, body, _ = post(server, SEND, json.dumps({"email": email}).encode(), content_type=content_type)
    assert status == 200, body


def test_http_1_0_is_served_and_closed(server):
    url = urlparse(server.url)
    status, headers, body, status_line = raw(server, f"GET /health HTTP/1.0\r\nHost: {url.hostname}\r\n\r\n".encode())
    assert status == 200 and json.loads(body) == {"status": "ok"}


def test_garbage_instead_of_http_gets_400_or_a_closed_connection(server):
    url = urlparse(server.url)
    with socket.create_connection((url.hostname, url.port), timeout=10) as sock:
        sock.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 100)  # a TLS ClientHello
        data = sock.recv(65536)
        assert data == b"" or data.startswith(b"HTTP/1.1 400")
    assert server.call("GET", "/health")[0] == 200


def test_a_slow_loris_request_times_out_and_does_not_pin_the_connection(server):
    url = urlparse(server.url)
    # The server, not this client, ends the connection: our own timeout is only there so that a server
    # that never gives up fails the test (socket.timeout) instead of hanging it, and is generous.
    with socket.create_connection((url.hostname, url.port), timeout=120) as sock:
        sock.sendall(f"POST {SEND} HTTP/1.1\r\nHost: {url.hostname}\r\nContent-Length: 100\r\n".encode())
        sock.sendall(b"X-Slow: 1\r\n")
        data = sock.recv(65536)  # the server gives up (idle_timeout 2 s) and closes
        while data and not data.endswith(b"\r\n\r\n") and b"}" not in data:
            data += sock.recv(65536)
    assert data == b"" or data.startswith(b"HTTP/1.1 408"), data[:100]
    assert server.call("GET", "/health")[0] == 200


def test_an_unknown_method_and_route_are_clear(server):
    assert error(post(server, "/api/v1/auth/nothing", b"{}")) == (404, "NOT_FOUND")
    url = urlparse(server.url)
    response = raw(server, f"DELETE /api/v1/auth/refresh HTTP/1.1\r\nHost: {url.hostname}\r\nConnection: close\r\n\r\n".encode())
    assert error(response) == (405, "INVALID_REQUEST")
    assert response[1]["allow"] == "POST"
    response = raw(server, f"OPTIONS /api/v1/auth/password/reset/device/initiate HTTP/1.1\r\nHost: {url.hostname}\r\nConnection: close\r\n\r\n".encode())
    assert error(response) == (405, "INVALID_REQUEST") and response[1]["allow"] == "POST"  # not the GET of .../{request_id}


def test_header_injection_in_a_value_cannot_reach_mail(server):
    for email in ("a@example.com\r\nBcc: victim@example.com", "a@example.com\nBcc: x@y.z", "\"a\r\nb\"@example.com"):
        assert error(post(server, SEND, json.dumps({"email": email}).encode())) == (400, "INVALID_EMAIL")


def test_x_forwarded_for_counts_only_from_a_trusted_proxy():
    from conftest import running_server as start
    limit = {"email": {"sends_per_ip": {"limit": 1, "window": 3600}}}
    for trusted, separate in (([], False), (["127.0.0.1"], True)):
        with start({**limit, "http": {"trusted_proxies": trusted}}) as s:
            def send(email, forwarded):
                url = urlparse(s.url)
                body = json.dumps({"email": email}).encode()
                return raw(s, (f"POST {SEND} HTTP/1.1\r\nHost: {url.hostname}\r\nConnection: close\r\nContent-Type: application/json\r\n"
                               f"X-Forwarded-For: {forwarded}\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body)[0]
            assert send("a@example.com", "198.51.100.1") == 200
            # Another forwarded client: its own limit only when the header comes from a trusted proxy.
            assert send("b@example.com", "198.51.100.2") == (200 if separate else 429)
            # And the audit log records the address the rate limiter used.
            url = urlparse(s.url)
            body = json.dumps({"email": "a@example.com", "code": "000000"}).encode()
            raw(s, (f"POST /api/v1/auth/email/verify HTTP/1.1\r\nHost: {url.hostname}\r\nConnection: close\r\n"
                    f"Content-Type: application/json\r\nX-Forwarded-For: 198.51.100.3\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body)
            with open(os.path.join(s.folder, "audit.jsonl")) as f:
                event = json.loads(f.read().splitlines()[-1])
            assert event["ip"] == ("198.51.100.3" if separate else "127.0.0.1")
