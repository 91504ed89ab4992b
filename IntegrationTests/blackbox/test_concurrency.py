"""Concurrency: many clients racing for one thing over real sockets. Each client has its own
connection, opened before a barrier releases them all at once, so the requests really overlap."""
import http.client
import json
import threading
import time
from collections import Counter
from urllib.parse import urlparse

import pytest

from conftest import running_server

BIG = {"limit": 1000000, "window": 1}


def concurrently(server, requests):
    """Sends every (method, path, body, token) at once, one connection each; returns [(status, body)]."""
    url = urlparse(server.url)
    conns = [http.client.HTTPConnection(url.hostname, url.port, timeout=60) for _ in requests]
    for c in conns:
        c.connect()
    barrier = threading.Barrier(len(requests))
    results = [None] * len(requests)

    def run(i):
        method, path, body, token = requests[i]
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = "Bearer " + token
        barrier.wait()
        conns[i].request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        resp = conns[i].getresponse()
        raw = resp.read()
        results[i] = (resp.status, json.loads(raw) if raw else None)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(requests))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for c in conns:
        c.close()
    return results


def codes(results):
    return Counter(status if status < 400 else body["error"]["code"] for status, body in results)


def test_100_concurrent_verifies_of_one_code_make_exactly_one_session():
    with running_server({"email": {"verifies_per_ip": BIG, "attempts_per_client": BIG}}) as server:
        server.call("POST", "/api/v1/auth/email/send-code", {"email": "race@example.com"})
        code = server.mailed_code("race@example.com")
        results = concurrently(server, [("POST", "/api/v1/auth/email/verify", {"email": "race@example.com", "code": code}, None)] * 100)
        assert codes(results) == {200: 1, "INVALID_CODE": 99}
        [session] = [body for status, body in results if status == 200]
        status, sessions, _ = server.call("GET", "/api/v1/auth/sessions", token=session["access_token"])
        assert status == 200 and len(sessions["sessions"]) == 1


def test_100_concurrent_refreshes_inside_the_grace_all_succeed_and_the_session_survives():
    with running_server({"tokens": {"refresh_rate": BIG, "refresh_reuse_grace": 30}}) as server:
        session = server.sign_in("grace@example.com")
        results = concurrently(server, [("POST", "/api/v1/auth/refresh", {"refresh_token": session["refresh_token"]}, None)] * 100)
        assert codes(results) == {200: 100}
        for _, body in results[:10]:
            assert server.call("GET", "/api/v1/auth/me", token=body["access_token"])[0] == 200
        status, sessions, _ = server.call("GET", "/api/v1/auth/sessions", token=results[0][1]["access_token"])
        assert status == 200 and len(sessions["sessions"]) == 1
        # Every answer's refresh token carries the session on.
        status, _, _ = server.call("POST", "/api/v1/auth/refresh", {"refresh_token": results[-1][1]["refresh_token"]})
        assert status == 200


def test_100_concurrent_refreshes_after_the_grace_revoke_the_session():
    with running_server({"tokens": {"refresh_rate": BIG, "refresh_reuse_grace": 1}}) as server:
        session = server.sign_in("stale@example.com")
        status, rotated, _ = server.call("POST", "/api/v1/auth/refresh", {"refresh_token": session["refresh_token"]})
        assert status == 200
        time.sleep(2.2)
        results = concurrently(server, [("POST", "/api/v1/auth/refresh", {"refresh_token": session["refresh_token"]}, None)] * 100)
        # The first one seen ends the session; the rest find no session left.
        counts = codes(results)
        assert counts["REFRESH_TOKEN_REUSED"] >= 1
        assert counts["REFRESH_TOKEN_REUSED"] + counts["INVALID_REFRESH_TOKEN"] == 100
        status, body, _ = server.call("POST", "/api/v1/auth/refresh", {"refresh_token": rotated["refresh_token"]})
        assert status == 401 and body["error"]["code"] == "INVALID_REFRESH_TOKEN"
        assert server.call("GET", "/api/v1/auth/me", token=rotated["access_token"])[0] == 401


def test_50_concurrent_registrations_of_one_email_make_exactly_one_account():
    # Enough tries that the 49 superseded codes racing the live one cannot kill it first.
    config = {"password": {"register_per_ip": BIG, "resend_interval": 0, "max_attempts": 100, "max_failures": 1000,
                           "verifies_per_ip": BIG, "attempts_per_client": BIG}}
    with running_server({**config, "email": {"verifies_per_ip": BIG, "attempts_per_client": BIG}}) as server:
        email = "twins@example.com"
        registered = concurrently(server, [
            ("POST", "/api/v1/auth/password/register", {"email": email, "password": f"password number {i}", "display_name": f"Twin {i}"}, None)
            for i in range(50)])
        assert set(codes(registered)) <= {202, "RATE_LIMIT_EXCEEDED"} and codes(registered)[202] >= 1
        mailed = server.mailed_code(email)
        # The newest code with each registration's password: the code proves the inbox, the password
        # says whose registration it completes; only one of the racing answers can use the code.
        verified = concurrently(server, [("POST", "/api/v1/auth/password/verify-email",
                                          {"email": email, "code": mailed, "password": f"password number {i}"}, None) for i in range(50)])
        winners = [body for status, body in verified if status == 200]
        assert len(winners) == 1, codes(verified)
        assert set(codes(verified)) <= {200, "INVALID_CODE", "ACCOUNT_EXISTS"}
        # And registering again now meets the account.
        again = concurrently(server, [
            ("POST", "/api/v1/auth/password/register", {"email": email, "password": "another password", "display_name": "Late"}, None)] * 50)
        assert codes(again) == {"ACCOUNT_EXISTS": 50}


def test_50_concurrent_claims_of_one_username_give_it_to_exactly_one_user():
    with running_server({"pin": {"anonymous_per_ip": BIG}}) as server:
        tokens = [server.call("POST", "/api/v1/auth/anonymous", {})[1]["access_token"] for _ in range(50)]
        results = concurrently(server, [("PUT", "/api/v1/auth/username", {"username": "highlander"}, t) for t in tokens])
        assert codes(results) == {200: 1, "USERNAME_TAKEN": 49}


@pytest.mark.parametrize("limit", [1, 20])
def test_a_rate_limit_lets_exactly_the_configured_number_through_64_concurrent_clients(limit):
    with running_server({"email": {"sends_per_ip": {"limit": limit, "window": 3600}}}) as server:
        results = concurrently(server, [("POST", "/api/v1/auth/email/send-code", {"email": f"limit{i}@example.com"}, None)
                                        for i in range(64)])
        assert codes(results) == {200: limit, "RATE_LIMIT_EXCEEDED": 64 - limit}
