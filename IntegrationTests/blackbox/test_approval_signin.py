"""Sign-in approved from another device, with number matching (contract §15, issue #38), against the
real binary: a new device (B) asks with the email alone, a signed-in device (A) sees the request
without its number, types the two digits B shows, and B collects one session whose `amr` is
["approval"] and whose `auth_time` is A's. Also: a wrong number, deny, expiry, "not me" (decoys, the
owner's mail, webhooks, no pushes), unknown accounts, the §12 proof rule, a password reset racing an
approved request, concurrent approvers and collectors, the limits, approval as a second factor, the
APNs stand-in, and the /login page in headless Chromium (with and without JavaScript).

Everything is read as a person or a client reads it: codes from the mail's text (mailtext), tokens
verified with joserfc against the JWKS, webhooks with the Standard Webhooks verifier. No test checks
how long anything takes; expiry waits out a short `approval.ttl` (3 s; there is no
clock to move from outside) by polling for the state it leads to.
`approval_flow(a, b)` takes two servers so that test_postgres_instances.py can run it on two
instances of one database.
"""
import base64
import datetime
import html.parser
import http.client
import json
import os
import re
import subprocess
import tempfile
import threading
import time
import urllib.parse
from collections import Counter

import pyotp
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from standardwebhooks.webhooks import Webhook

from chromium import chromium
from conftest import next_event, running_server
from mailtext import check_filled, has_code
from test_concurrency import concurrently
from test_pages import PAGES, Browserish, accessible, click, login_form, shots

# The contract fixes `alg: EdDSA` (RFC 8037); joserfc flags it since RFC 9864 added `Ed25519`.
pytestmark = pytest.mark.filterwarnings("ignore:EdDSA is deprecated")
from joserfc import jwt  # noqa: E402
from joserfc.jwk import KeySet  # noqa: E402

BINARY = os.environ.get("AUTHD_BINARY", ".build/debug/authd")
CONFIG = {"providers": ["email", "password", "totp", "approval"]}
PASSWORD = "an approvals password"
START = "/api/v1/auth/approval/start"
APPROVALS = "/api/v1/auth/approvals"
START_KEYS = {"request_id", "request_token", "match_code", "expires_in", "interval"}
ITEM_KEYS = {"id", "kind", "created_at", "expires_at", "device_name", "platform", "network"}
SESSION_KEYS = {"access_token", "refresh_token", "expires_in", "token_type", "user"}
# B's device as it reports itself; A sees these words.
NEW_DEVICE = {"device_name": "Anna's new laptop", "platform": "macos"}
# Loopback is 127.0.0.0/8 on Linux: a client bound to 127.0.1.x comes from another /24 (another network).
ELSEWHERE = "127.0.1.7"
SHORTEST_TTL = 3


# -- helpers ---------------------------------------------------------------------------------------

def call_from(server, source, method, path, body=None, token=None):
    """server.call from the local address `source` (another client network than 127.0.0.1's)."""
    url = urllib.parse.urlparse(server.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60, source_address=(source, 0))
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    try:
        conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        resp = conn.getresponse()
        raw = resp.read()
        return resp.status, (json.loads(raw) if raw else None), dict(resp.getheaders())
    finally:
        conn.close()


def start(server, email, source=None, **device):
    """B asks to be let in: (status, body, headers)."""
    body = {"email": email, **(device or NEW_DEVICE)}
    if source:
        return call_from(server, source, "POST", START, body)
    return server.call("POST", START, body)


def started(server, email, source=None, **device):
    """B's request, checked for the contract's shape (start answered 200)."""
    status, request, _ = start(server, email, source, **device)
    assert status == 200, request
    return started_body(request)


def started_body(request):
    assert set(request) == START_KEYS, request
    assert re.fullmatch(r"[0-9]{2}", request["match_code"]), request
    return request


def complete(server, request):
    return server.call("POST", f"/api/v1/auth/approval/{request['request_id']}/complete", {"request_token": request["request_token"]})


def error_code(body):
    return (body or {}).get("error", {}).get("code")


def refused(answer, status, code):
    """`answer` (status, body, headers) is the error `status`/`code` of the contract."""
    got, body, _ = answer
    assert (got, error_code(body)) == (status, code), (got, body)
    return body


def listed(server, session):
    status, body, _ = server.call("GET", APPROVALS, token=session["access_token"])
    assert status == 200, body
    return body["approvals"]


def approve(server, session, request_id, match_code, proof=False):
    body = {"match_code": match_code}
    if proof:
        body["refresh_token"] = session["refresh_token"]
    return server.call("POST", f"{APPROVALS}/{request_id}/approve", body, session["access_token"])


def deny(server, session, request_id, reason=None):
    return server.call("POST", f"{APPROVALS}/{request_id}/deny", {"reason": reason} if reason else {}, session["access_token"])


def other_number(code):
    """A two-digit number that is not `code`."""
    return f"{(int(code) + 1) % 100:02d}"


def claims(token):
    part = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def verified_claims(server, token):
    """The access token's claims, its signature checked by joserfc against the published JWKS."""
    status, jwks, _ = server.call("GET", "/.well-known/jwks.json")
    assert status == 200
    decoded = jwt.decode(token, KeySet.import_key_set(jwks), algorithms=["EdDSA"])
    assert decoded.header["typ"] == "at+jwt"
    return decoded.claims


def keys_in(value):
    """Every object key anywhere in a JSON value."""
    if isinstance(value, dict):
        return set(value) | set().union(*(keys_in(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(keys_in(v) for v in value)) if value else set()
    return set()


def strings_in(value):
    """Every string value anywhere in a JSON value."""
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings_in(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings_in(v)]
    return [value] if isinstance(value, str) else []


def shape(body):
    """Keys and value types, recursively: what a known and an unknown account must share."""
    if isinstance(body, dict):
        return {k: shape(v) for k, v in body.items()}
    return type(body).__name__


def timestamp(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def register(server, email, password=PASSWORD):
    """A password account with a verified email; its first session (amr ["password"])."""
    status, body, _ = server.call("POST", "/api/v1/auth/password/register", {"email": email, "password": password})
    assert status == 202, body
    status, session, _ = server.call("POST", "/api/v1/auth/password/verify-email",
                                     {"email": email, "code": server.mailed_code(email), "password": password})
    assert status == 200, session
    return session


def wait_for_state(server, request, timeout=SHORTEST_TTL + 90):
    """Polls complete (as B does, every `interval`) until the request is no longer pending; its last answer."""
    deadline = time.time() + timeout
    while True:
        answer = complete(server, request)
        if error_code(answer[1]) != "PENDING" or time.time() >= deadline:
            return answer
        time.sleep(0.2)


# -- the whole flow --------------------------------------------------------------------------------

def approval_flow(a, b, email="anna@example.com"):
    """Device A signs in by email code on `a`; device B asks on `b` (the same server, or another
    instance on the same database). Returns A's session and B's."""
    phone = a.sign_in(email)
    request = started(b, email)
    assert request["expires_in"] == 120 and request["interval"] == 2, request
    assert len(request["request_token"]) >= 43, "at least 256 bits"

    # A sees who asks, from where, and never the number.
    status, body, _ = a.call("GET", APPROVALS, token=phone["access_token"])
    assert status == 200, body
    [item] = body["approvals"]
    assert set(item) == ITEM_KEYS, item
    assert item["id"] == request["request_id"] and item["kind"] == "sign_in"
    assert item["device_name"] == NEW_DEVICE["device_name"] and item["platform"] == NEW_DEVICE["platform"]
    assert item["network"] == "127.0.0.0/24", item
    assert (timestamp(item["expires_at"]) - timestamp(item["created_at"])).total_seconds() == request["expires_in"], item
    assert "match_code" not in keys_in(body) and request["request_token"] not in json.dumps(body)

    # Not approved yet: B waits.
    refused(complete(b, request), 400, "PENDING")

    # A types B's number, showing its refresh token as the proof of §12.
    status, answer, _ = approve(a, phone, request["request_id"], request["match_code"], proof=True)
    assert status == 204, answer
    status, session, _ = complete(b, request)
    assert status == 200, session
    assert SESSION_KEYS <= set(session) and session["token_type"] == "Bearer", session
    assert session["user"]["id"] == phone["user"]["id"] and session["user"]["email"] == email

    # The token verifies with the published keys; it says how B got in and when A signed in.
    mine, theirs = verified_claims(a, phone["access_token"]), verified_claims(b, session["access_token"])
    assert theirs["sub"] == phone["user"]["id"]
    assert theirs["amr"] == ["approval"], theirs
    assert theirs["auth_time"] == mine["auth_time"], (theirs, mine)
    assert theirs["sid"] != mine["sid"], "a session of its own"

    # A full session: it works and refreshes.
    assert a.call("GET", "/api/v1/auth/me", token=session["access_token"])[0] == 200
    status, refreshed, _ = a.call("POST", "/api/v1/auth/refresh", {"refresh_token": session["refresh_token"]})
    assert status == 200 and claims(refreshed["access_token"])["amr"] == ["approval"], refreshed

    # Collected once; nothing is left to approve.
    refused(complete(b, request), 409, "INVALID_STATE")
    assert listed(a, phone) == []
    return phone, session


def test_a_new_device_is_let_in_by_the_number_typed_on_a_signed_in_one():
    with running_server(CONFIG) as server:
        phone, session = approval_flow(server, server)
        # A sees B among its sessions, as B named itself: exactly one more.
        status, sessions, _ = server.call("GET", "/api/v1/auth/sessions", token=phone["access_token"])
        assert status == 200 and len(sessions["sessions"]) == 2, sessions
        [new] = [s for s in sessions["sessions"] if not s["current"]]
        assert (new["device_name"], new["platform"], new["kind"]) == (NEW_DEVICE["device_name"], NEW_DEVICE["platform"], "session"), new


def test_a_sign_in_request_arrives_on_the_event_stream_without_its_number():
    with running_server(CONFIG) as server:
        phone = server.sign_in("stream@example.com")
        url = urllib.parse.urlparse(server.url)
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        conn.request("GET", APPROVALS + "/stream", headers={"Authorization": "Bearer " + phone["access_token"]})
        resp = conn.getresponse()
        assert resp.status == 200 and resp.getheader("Content-Type").startswith("text/event-stream")
        assert resp.readline().startswith(b"retry:")
        answer = {}
        t = threading.Thread(target=lambda: answer.update(r=start(server, "stream@example.com")))
        t.start()
        event = next_event(resp)
        t.join()
        conn.close()
        status, request, _ = answer["r"]
        assert status == 200, request
        assert event.get("event") == "approval", event
        assert event["data"]["id"] == request["request_id"] and event["data"]["kind"] == "sign_in"
        assert set(event["data"]) == ITEM_KEYS and event["data"]["network"] == "127.0.0.0/24", event
        assert request["match_code"] not in strings_in(event["data"]) and "match_code" not in event["data"]


# -- a wrong number, deny, expiry ------------------------------------------------------------------

def test_one_wrong_number_denies_the_request():
    with running_server(CONFIG) as server:
        phone = server.sign_in("wrong@example.com")
        request = started(server, "wrong@example.com")
        status, body, _ = approve(server, phone, request["request_id"], other_number(request["match_code"]))
        assert (status, error_code(body)) == (401, "INVALID_CODE"), body
        assert body["error"]["details"]["attempts_remaining"] == 0, body
        refused(complete(server, request), 403, "DENIED")
        # The right number now comes too late: the first write won.
        refused(approve(server, phone, request["request_id"], request["match_code"]), 409, "INVALID_STATE")
        refused(complete(server, request), 403, "DENIED")
        assert listed(server, phone) == []


def test_a_denied_request_is_told_so_and_stays_denied():
    with running_server(CONFIG) as server:
        phone = server.sign_in("deny@example.com")
        request = started(server, "deny@example.com")
        assert deny(server, phone, request["request_id"])[0] == 204
        refused(complete(server, request), 403, "DENIED")
        refused(approve(server, phone, request["request_id"], request["match_code"]), 409, "INVALID_STATE")
        refused(deny(server, phone, request["request_id"]), 409, "INVALID_STATE")
        refused(complete(server, request), 403, "DENIED")
        assert listed(server, phone) == []


def test_an_unanswered_request_expires_and_cannot_be_approved_after():
    # A 3 s `approval.ttl`: there is no clock to move from outside.
    with running_server({**CONFIG, "approval": {"ttl": SHORTEST_TTL}}) as server:
        phone = server.sign_in("late@example.com")
        request = started(server, "late@example.com")
        assert request["expires_in"] == SHORTEST_TTL, request
        assert [a["id"] for a in listed(server, phone)] == [request["request_id"]]
        refused(wait_for_state(server, request), 410, "EXPIRED")
        assert listed(server, phone) == []
        refused(approve(server, phone, request["request_id"], request["match_code"]), 409, "INVALID_STATE")
        refused(complete(server, request), 410, "EXPIRED")


# -- not me ----------------------------------------------------------------------------------------

def test_not_me_mails_the_owner_turns_that_network_into_decoys_and_webhooks_never_carry_the_number():
    from test_webhooks import Receiver, config as hook_config, secret_file

    receiver = Receiver(script=())
    with tempfile.TemporaryDirectory() as keys:
        secret, path = secret_file(keys)
        hooks = hook_config(receiver, path, events=["approval.requested", "approval.resolved"])
        with running_server({**CONFIG, **hooks}) as server:
            email = "owner@example.com"
            phone = server.sign_in(email)
            request = started(server, email)
            assert [a["id"] for a in listed(server, phone)] == [request["request_id"]]
            receiver.events(1)  # its approval.requested is out before it is answered
            before = len(server.outbox())
            assert deny(server, phone, request["request_id"], reason="not_me")[0] == 204
            refused(complete(server, request), 403, "DENIED")

            # The owner is told, in words they can check: which device, from where; no code, nothing left unfilled.
            notice = check_filled(server.mailed(email, about="sign-in", after=before))
            assert "refused" in notice["subject"].lower(), notice["subject"]
            assert not has_code(notice), notice
            assert NEW_DEVICE["device_name"] in notice["text"] and "127.0.0.0/24" in notice["text"], notice["text"]
            assert request["match_code"] not in re.findall(r"(?<![0-9])[0-9]{2}(?![0-9])", notice["subject"]), notice["subject"]

            # From that network, the next start looks the same but is a decoy: never listed, never approvable.
            decoy = started(server, email)
            assert shape(decoy) == shape(request) and decoy["expires_in"] == request["expires_in"]
            assert listed(server, phone) == []
            refused(complete(server, decoy), 400, "PENDING")
            assert approve(server, phone, decoy["request_id"], decoy["match_code"])[0] != 204
            refused(complete(server, decoy), 400, "PENDING")
            assert len(server.mails(email, about="sign-in", after=before)) == 1, "one notice, not one per decoy"

            # From another network the user can still be asked (the block is per network).
            elsewhere = started(server, email, source=ELSEWHERE)
            [item] = listed(server, phone)
            assert item["id"] == elsewhere["request_id"] and item["network"] == "127.0.1.0/24", item

            # Webhooks: the first request's two events, the one from elsewhere; nothing about the decoy
            # (deliveries go out in order: by the time the last arrives, one for the decoy would have too).
            receiver.events(3)
            time.sleep(1)
            delivered = receiver.events(3)
        verifier = Webhook(secret)
        messages = [verifier.verify(body, headers) for body, headers in delivered]
        by_approval = {}
        for message in messages:
            assert message["data"]["kind"] == "sign_in", message
            assert message["data"]["user_id"] == phone["user"]["id"], message
            assert not {"match_code", "request_token"} & keys_in(message), message
            for secret_value in (request["match_code"], elsewhere["match_code"], request["request_token"], elsewhere["request_token"]):
                assert secret_value not in strings_in(message["data"]), message
            by_approval.setdefault(message["data"]["approval_id"], []).append(message)
        assert decoy["request_id"] not in by_approval, "a decoy emits nothing"
        first = sorted(by_approval[request["request_id"]], key=lambda m: m["type"])
        assert [m["type"] for m in first] == ["approval.requested", "approval.resolved"], first
        requested, resolved = first
        assert requested["data"]["device_name"] == NEW_DEVICE["device_name"] and requested["data"]["platform"] == NEW_DEVICE["platform"]
        assert requested["data"]["network"] == "127.0.0.0/24" and "expires_at" in requested["data"], requested
        assert resolved["data"]["status"] == "denied", resolved
        assert [m["type"] for m in by_approval[elsewhere["request_id"]]] == ["approval.requested"]
        assert len(messages) == 3, [m["type"] for m in messages]
    receiver.close()


# -- unknown accounts and bad input ----------------------------------------------------------------

def test_an_unknown_account_gets_the_same_answer_and_is_never_approvable():
    with running_server(CONFIG) as server:
        phone = server.sign_in("known@example.com")
        known_status, known, known_headers = start(server, "known@example.com")
        unknown_status, unknown, unknown_headers = start(server, "nobody@example.com")
        assert known_status == unknown_status == 200, (known, unknown)
        known, unknown = started_body(known), started_body(unknown)
        assert shape(unknown) == shape(known)
        assert unknown_headers["Content-Length"] == known_headers["Content-Length"]
        assert (unknown["expires_in"], unknown["interval"]) == (known["expires_in"], known["interval"])
        assert len(unknown["request_token"]) == len(known["request_token"]) and len(unknown["request_id"]) == len(known["request_id"])
        refused(complete(server, unknown), 400, "PENDING")
        # Nobody sees it, nobody can approve it: not even a signed-in user who guesses its id and number.
        assert [a["id"] for a in listed(server, phone)] == [known["request_id"]]
        assert approve(server, phone, unknown["request_id"], unknown["match_code"])[0] != 204
        refused(complete(server, unknown), 400, "PENDING")


def test_bad_starts_and_completes_are_refused():
    with running_server(CONFIG) as server:
        phone = server.sign_in("bad@example.com")
        refused(server.call("POST", START, {"device_name": "x"}), 400, "INVALID_REQUEST")
        refused(server.call("POST", START, {"email": "bad@example.com", "username": "bad"}), 400, "INVALID_REQUEST")
        refused(server.call("POST", START, {"email": "not an address"}), 400, "INVALID_EMAIL")
        request = started(server, "bad@example.com")
        refused(server.call("POST", f"/api/v1/auth/approval/{request['request_id']}/complete", {"request_token": "x" * 43}), 404, "NOT_FOUND")
        refused(complete(server, {**request, "request_id": "no-such-request"}), 404, "NOT_FOUND")
        # A wrong token says nothing and changes nothing.
        refused(complete(server, request), 400, "PENDING")
        # A deny names no reason but "not me".
        refused(deny(server, phone, request["request_id"], reason="other"), 400, "INVALID_REQUEST")
        assert [a["id"] for a in listed(server, phone)] == [request["request_id"]]


# -- the proof rule (§12) --------------------------------------------------------------------------

def test_a_stale_access_token_alone_cannot_let_a_device_in():
    with running_server({**CONFIG, "auth": {"fresh_auth": 1}}) as server:
        email = "stale@example.com"
        phone = server.sign_in(email)
        other = server.sign_in(email)  # a second session of the same user
        request = started(server, email)
        time.sleep(2.1)  # past auth.fresh_auth (1 s): the sessions are no longer fresh
        refused(approve(server, phone, request["request_id"], request["match_code"]), 403, "REAUTH_REQUIRED")
        # Another session's refresh token is no proof for this one.
        status, body, _ = server.call("POST", f"{APPROVALS}/{request['request_id']}/approve",
                                      {"match_code": request["match_code"], "refresh_token": other["refresh_token"]}, phone["access_token"])
        assert (status, error_code(body)) == (403, "REAUTH_REQUIRED"), body
        # Nothing was spent: still listed, still pending.
        assert [a["id"] for a in listed(server, phone)] == [request["request_id"]]
        refused(complete(server, request), 400, "PENDING")
        assert approve(server, phone, request["request_id"], request["match_code"], proof=True)[0] == 204
        status, session, _ = complete(server, request)
        assert status == 200, session
        # B's sign-in is as old as A's, not as new as B's token (here they are seconds apart).
        mine, theirs = verified_claims(server, phone["access_token"]), verified_claims(server, session["access_token"])
        assert theirs["auth_time"] == mine["auth_time"] < theirs["iat"], (theirs, mine)
        # The proof was checked, not rotated: A's refresh token still works.
        assert server.call("POST", "/api/v1/auth/refresh", {"refresh_token": phone["refresh_token"]})[0] == 200


# -- recovery reaches an approved request not yet collected ----------------------------------------

def change_password(server, email, phone):
    status, body, _ = server.call("POST", "/api/v1/auth/password/change",
                                  {"current_password": PASSWORD, "new_password": "a changed approvals password"}, token=phone["access_token"])
    assert status in (200, 204), body


def reset_password(server, email, phone):
    before = len(server.outbox())
    assert server.call("POST", "/api/v1/auth/password/reset/email/initiate", {"email": email})[0] == 200
    code = server.mailed_code(email, about="reset", after=before)
    status, step, _ = server.call("POST", "/api/v1/auth/password/reset/email/verify", {"email": email, "code": code})
    assert status == 200, step
    status, body, _ = server.call("POST", "/api/v1/auth/password/reset/complete",
                                  {"reset_token": step["reset_token"], "new_password": "a reset approvals password"})
    assert status in (200, 204), body


@pytest.mark.parametrize("recovery", [change_password, reset_password], ids=["change", "reset"])
def test_a_password_change_or_reset_ends_an_approved_request_not_yet_collected(recovery):
    """Contract §12: an approval sign-in approved but not collected is bound to the credentials the
    approver saw. The contract names no status for B; authd answers 403 DENIED (after a change and
    after a reset alike), which the set below admits with the other "no session" answers."""
    with running_server(CONFIG) as server:
        email = f"race-{recovery.__name__}@example.com"
        phone = register(server, email)
        request = started(server, email)
        assert approve(server, phone, request["request_id"], request["match_code"])[0] == 204
        recovery(server, email, phone)
        status, body, _ = complete(server, request)
        assert status != 200 and "access_token" not in (body or {}), body
        assert (status, error_code(body)) in {(403, "DENIED"), (410, "EXPIRED"), (409, "INVALID_STATE")}, body
        # And it stays so.
        assert complete(server, request)[0] != 200


# -- concurrency -----------------------------------------------------------------------------------

def test_two_approvers_at_once_one_wins_and_concurrent_collectors_get_one_session():
    with running_server(CONFIG) as server:
        email = "race@example.com"
        first, second = server.sign_in(email), server.sign_in(email)
        for _ in range(3):  # three rounds: the pending limit per identifier is 3
            request = started(server, email)
            path = f"{APPROVALS}/{request['request_id']}/approve"
            results = concurrently(server, [("POST", path, {"match_code": request["match_code"]}, s["access_token"]) for s in (first, second)])
            assert Counter(status if status < 400 else error_code(body) for status, body in results) == {204: 1, "INVALID_STATE": 1}, results
            collect = ("POST", f"/api/v1/auth/approval/{request['request_id']}/complete", {"request_token": request["request_token"]}, None)
            results = concurrently(server, [collect] * 8)
            assert Counter(status if status < 400 else error_code(body) for status, body in results) == {200: 1, "INVALID_STATE": 7}, results
        # Exactly one new session per request.
        status, sessions, _ = server.call("GET", "/api/v1/auth/sessions", token=first["access_token"])
        assert status == 200 and len(sessions["sessions"]) == 2 + 3, sessions


# -- limits ----------------------------------------------------------------------------------------

def test_the_fourth_start_for_one_identifier_is_refused_alike_for_known_and_unknown_accounts():
    with running_server(CONFIG) as server:
        server.sign_in("limited@example.com")
        fourth = {}
        for who in ("limited@example.com", "nobody-limited@example.com"):
            # Counted as typed, lower-cased.
            spellings = [who, who.upper(), who.capitalize()]
            for spelled in spellings:
                started(server, spelled)
            status, body, headers = start(server, who)
            assert (status, error_code(body)) == (429, "RATE_LIMIT_EXCEEDED"), body
            assert body["error"]["details"]["retry_after"] >= 1 and headers["Retry-After"] == str(body["error"]["details"]["retry_after"])
            fourth[who] = (status, shape(body))
        assert fourth["limited@example.com"] == fourth["nobody-limited@example.com"]
        # Per identifier: another one from the same network still starts.
        started(server, "someone-else@example.com")


# -- as a second factor ----------------------------------------------------------------------------

def totp_user(server, email):
    """A password account with an authenticator app; its first session (amr ["password"]), the app and
    the recovery codes."""
    phone = register(server, email)
    status, enrolment, _ = server.call("POST", "/api/v1/auth/mfa/totp/enroll", token=phone["access_token"])
    assert status == 200, enrolment
    otp = pyotp.parse_uri(enrolment["otpauth_uri"])
    status, confirmed, _ = server.call("POST", "/api/v1/auth/mfa/totp/confirm", {"code": otp.now()}, token=phone["access_token"])
    assert status == 200, confirmed
    return phone, otp, confirmed["recovery_codes"]


def password_challenge(server, email):
    status, challenge, _ = server.call("POST", "/api/v1/auth/password/login", {"email": email, "password": PASSWORD})
    assert status == 202 and challenge["status"] == "second_factor_required", challenge
    return challenge


def ask_approval(server, challenge):
    status, asked, _ = server.call("POST", "/api/v1/auth/mfa/approval", {"challenge": challenge["challenge"]})
    assert status == 200, asked
    assert {"request_id", "match_code"} <= set(asked) and re.fullmatch(r"[0-9]{2}", asked["match_code"]), asked
    return asked


def verify(server, challenge, **answer):
    return server.call("POST", "/api/v1/auth/mfa/verify", {"challenge": challenge["challenge"], **answer})


def test_approval_as_a_second_factor_waits_without_spending_anything_and_then_signs_in():
    with running_server(CONFIG) as server:
        email = "second@example.com"
        phone, otp, _ = totp_user(server, email)

        # Offered after a password and after an emailed code: the user has another full session.
        challenge = password_challenge(server, email)
        assert "approval" in challenge["factors"] and "totp" in challenge["factors"], challenge
        before = len(server.outbox())
        assert server.call("POST", "/api/v1/auth/email/send-code", {"email": email})[0] == 200
        status, by_email, _ = server.call("POST", "/api/v1/auth/email/verify", {"email": email, "code": server.mailed_code(email, after=before)})
        assert status == 202 and "approval" in by_email["factors"], by_email

        # Pending: asked again and again, nothing is spent.
        asked = ask_approval(server, challenge)
        assert [a["id"] for a in listed(server, phone)] == [asked["request_id"]]
        assert "match_code" not in keys_in(listed(server, phone))
        for _ in range(3):
            refused(verify(server, challenge, approval=asked["request_id"]), 400, "PENDING")
        wrong = "000000" if "000000" not in (otp.now(), otp.at(time.time() + 30)) else "111111"
        status, body, _ = verify(server, challenge, totp=wrong)
        assert (status, error_code(body)) == (401, "INVALID_CODE") and body["error"]["details"]["attempts_remaining"] == 4, \
            ("the pending answers took a wrong-answer slot", body)
        # The same challenge still takes the app's code (the current one confirmed the app; a code is used once).
        status, session, _ = verify(server, challenge, totp=otp.at(time.time() + 30))
        assert status == 200, session
        assert "totp" in claims(session["access_token"])["amr"]

        # Approved on the phone: the challenge is met by the approval.
        challenge = password_challenge(server, email)
        asked = ask_approval(server, challenge)
        assert approve(server, phone, asked["request_id"], asked["match_code"])[0] == 204
        status, session, _ = verify(server, challenge, approval=asked["request_id"])
        assert status == 200, session
        amr = verified_claims(server, session["access_token"])["amr"]
        assert "password" in amr and "approval" in amr and "totp" not in amr, amr
        assert verify(server, challenge, approval=asked["request_id"])[0] != 200, "a challenge is met once"

        # Denied on the phone: said so.
        challenge = password_challenge(server, email)
        asked = ask_approval(server, challenge)
        assert deny(server, phone, asked["request_id"])[0] == 204
        refused(verify(server, challenge, approval=asked["request_id"]), 403, "DENIED")


def test_approval_is_a_factor_only_with_another_session_and_an_approver_without_mfa_leaves_a_challenge():
    with running_server(CONFIG) as server:
        email = "factor@example.com"
        phone, otp, _ = totp_user(server, email)
        # With no other session, nobody could approve: not offered.
        assert server.call("POST", "/api/v1/auth/logout", token=phone["access_token"])[0] == 204
        challenge = password_challenge(server, email)
        assert "approval" not in challenge["factors"], challenge
        refused(server.call("POST", "/api/v1/auth/mfa/approval", {"challenge": challenge["challenge"]}), 400, "INVALID_REQUEST")
        status, phone, _ = verify(server, challenge, totp=otp.at(time.time() + 30))
        assert status == 200, phone
        assert "approval" in password_challenge(server, email)["factors"]

        # An approver whose session has "mfa" (password + app) lets B straight in, with "mfa" in amr.
        assert "mfa" in claims(phone["access_token"])["amr"], claims(phone["access_token"])
        request = started(server, email)
        assert approve(server, phone, request["request_id"], request["match_code"])[0] == 204
        status, session, _ = complete(server, request)
        assert status == 200, session
        assert verified_claims(server, session["access_token"])["amr"] == ["approval", "mfa"]

        # An approver whose session has no "mfa" (signed in before the app was added) lets B in only
        # up to the second factor: complete answers a challenge, which the app's recovery code meets.
        other = "factor-b@example.com"
        first, _, codes = totp_user(server, other)
        assert "mfa" not in claims(first["access_token"])["amr"], claims(first["access_token"])
        request = started(server, other)
        assert approve(server, first, request["request_id"], request["match_code"])[0] == 204
        status, step, _ = complete(server, request)
        assert status == 202 and step["status"] == "second_factor_required" and step["challenge"], step
        assert "totp" in step["factors"], step
        status, session, _ = verify(server, step, recovery_code=codes[0])
        assert status == 200, session
        amr = verified_claims(server, session["access_token"])["amr"]
        assert "approval" in amr and "mfa" in amr, amr
        refused(complete(server, request), 409, "INVALID_STATE")


# -- push ------------------------------------------------------------------------------------------

def test_a_sign_in_request_pushes_a_generic_alert_and_not_me_stops_the_users_pushes():
    from test_push import fake_apns

    with tempfile.TemporaryDirectory() as folder:
        apns, push = fake_apns(folder)
        with running_server({**CONFIG, "push": push}) as server:
            # P says "not me" before its phone can be pushed (a push per user per minute: P's budget stays unspent).
            p_email, q_email = "pushed-p@example.com", "pushed-q@example.com"
            p, q = server.sign_in(p_email), server.sign_in(q_email)
            first = started(server, p_email)
            assert deny(server, p, first["request_id"], reason="not_me")[0] == 204
            p_token, q_token = "ab" * 31 + "01", "cd" * 32
            assert server.call("PUT", "/api/v1/auth/sessions/current/push", {"apns_token": p_token}, p["access_token"])[0] == 204
            assert server.call("PUT", "/api/v1/auth/sessions/current/push", {"apns_token": q_token}, q["access_token"])[0] == 204

            # A real request for P from another network: listed, but not pushed (24 h after not_me).
            elsewhere = started(server, p_email, source=ELSEWHERE)
            assert [a["id"] for a in listed(server, p)] == [elsewhere["request_id"]]
            # Q's request, made after P's, is pushed: by then P's would have been.
            request = started(server, q_email)
            apns.pushes(1)
            time.sleep(1)  # anything still under way for P arrives too
            pushes = apns.pushes(1)
            assert [token for token, _, _ in pushes] == [q_token], [(t, p) for t, p, _ in pushes]
            _, payload, _ = pushes[0]
            assert payload["authd"] == {"approval_id": request["request_id"], "kind": "sign_in"}, payload
            alert = payload["aps"]["alert"]
            assert set(alert) == {"title", "body"}
            assert request["match_code"] not in alert["title"] + alert["body"], alert
            assert not re.search(r"[0-9]", alert["title"] + alert["body"]), ("generic text only", alert)
            text = json.dumps(payload)
            assert q_email not in text and "127.0.0" not in text and NEW_DEVICE["device_name"] not in text, payload
        apns.close()


# -- the /login page in Chromium -------------------------------------------------------------------

def ask_my_phone(driver, email):
    """Types only the email into /login's one address form and clicks "Approve from another device" (contract §18)."""
    driver.find_element(By.ID, "email-address").send_keys(email)
    [button] = driver.find_elements(By.CSS_SELECTOR, "button[formaction='/login/approval/start']")
    assert button.text.strip() == "Approve from another device", button.text
    click(driver, "button[formaction='/login/approval/start']")


def phone_approves(server, phone, number):
    [item] = listed(server, phone)
    assert item["kind"] == "sign_in" and "match_code" not in item, item
    status, body, _ = approve(server, phone, item["id"], number, proof=True)
    assert status == 204, body


def browser_sessions(server, email):
    out = subprocess.run([BINARY, "sessions", "list", email, "--json", "--data", server.folder], capture_output=True, text=True, check=True)
    return [s for s in json.loads(out.stdout) if s.get("kind") == "browser"]


def signed_in_page(driver, email):
    assert urllib.parse.urlparse(driver.current_url).path == "/account", driver.current_url
    assert f"Signed in as {email}" in driver.find_element(By.TAG_NAME, "main").text



def waiting_number(driver):
    """The two digits the waiting page shows, and that it says what to do with them."""
    number = driver.find_element(By.ID, "approval-match-code").text.strip()
    assert re.fullmatch(r"[0-9]{2}", number), number
    assert "type this number" in driver.find_element(By.TAG_NAME, "main").text.lower()
    return number


def test_the_login_page_asks_the_phone_and_lands_signed_in_when_the_phone_approves():
    email = "page@example.com"
    with running_server({**CONFIG, **PAGES}) as server, chromium(375, 900) as browser:
        phone = server.sign_in(email)
        browser.get(server.url + "/login?return_to=/account")
        accessible(browser)
        shots(browser, "approval-login")
        ask_my_phone(browser, email)
        number = waiting_number(browser)
        scripts = [urllib.parse.urlparse(e.get_attribute("src")).path for e in browser.find_elements(By.TAG_NAME, "script")]
        assert scripts == ["/assets/poll.js"], scripts
        accessible(browser)
        shots(browser, "approval-wait")
        assert browser.find_element(By.ID, "approval-match-code").text.strip() == number, "still waiting: nothing approved it"

        # The phone types the number; the page, polling, signs the browser in.
        phone_approves(server, phone, number)
        WebDriverWait(browser, 60).until(lambda d: urllib.parse.urlparse(d.current_url).path == "/account")
        signed_in_page(browser, email)
        accessible(browser)
        shots(browser, "approval-signed-in")
        [session] = browser_sessions(server, email)
        assert session["amr"] == ["approval"], session
        kinds = [s["kind"] for s in server.call("GET", "/api/v1/auth/sessions", token=phone["access_token"])[1]["sessions"]]
        assert sorted(kinds).count("browser") == 1, kinds


def test_without_javascript_the_person_clicks_continue_once_the_phone_approves():
    email = "nojs@example.com"
    with running_server({**CONFIG, **PAGES}) as server, chromium(javascript=False) as browser:
        phone = server.sign_in(email)
        browser.get(server.url + "/login?return_to=/account")
        ask_my_phone(browser, email)
        number = waiting_number(browser)
        continue_button = browser.find_element(By.CSS_SELECTOR, "form[action='/login/approval/check'] button")
        assert continue_button.text.strip() == "Continue", continue_button.text
        # Too early: the page still waits, with the same number; nobody is signed in.
        click(browser, "form[action='/login/approval/check'] button")
        assert waiting_number(browser) == number
        assert "not approved yet" in browser.find_element(By.ID, "page-error").text.lower()
        assert browser_sessions(server, email) == []
        shots(browser, "approval-wait-no-js")

        phone_approves(server, phone, number)
        time.sleep(3)  # more than the poll interval (2 s): without JavaScript nothing moves by itself
        assert waiting_number(browser) == number, "the page moved on its own: JavaScript was not off"
        click(browser, "form[action='/login/approval/check'] button")
        signed_in_page(browser, email)
        [session] = browser_sessions(server, email)
        assert session["amr"] == ["approval"], session


class Forms(html.parser.HTMLParser):
    """The fields (name → value) of each form of a page, by action."""

    def __init__(self, page):
        super().__init__()
        self.forms, self._current = {}, None
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self._current = self.forms.setdefault(attrs.get("action"), {})
        elif tag in ("input", "button") and self._current is not None and attrs.get("name"):
            self._current[attrs["name"]] = attrs.get("value") or ""

    def handle_endtag(self, tag):
        if tag == "form":
            self._current = None


@pytest.mark.parametrize("ending", ["denied", "expired"])
def test_a_denied_or_expired_request_takes_the_page_back_to_the_login_with_an_error(ending):
    email = f"{ending}-page@example.com"
    config = {**CONFIG, **PAGES, **({"approval": {"ttl": SHORTEST_TTL}} if ending == "expired" else {})}
    with running_server(config) as server:
        phone = server.sign_in(email)
        s = Browserish()
        origin = {"Origin": server.url}
        csrf = login_form(s, server.url)
        waiting = s.post(server.url + "/login/approval/start", data={"csrf": csrf, "email": email}, headers=origin)
        assert waiting.status_code == 200 and 'id="approval-match-code"' in waiting.text, waiting.text
        fields = Forms(waiting.text).forms["/login/approval/check"]
        assert "csrf" in fields, fields
        status = s.post(server.url + "/login/approval/status", data=fields, headers=origin)
        assert status.status_code == 202, status.text

        if ending == "denied":
            [item] = listed(server, phone)
            assert deny(server, phone, item["id"])[0] == 204
        deadline = time.time() + SHORTEST_TTL + 90
        while status.status_code == 202 and time.time() < deadline:
            time.sleep(0.2)
            status = s.post(server.url + "/login/approval/status", data=fields, headers=origin)
        assert status.status_code != 202, "still pending"

        # The sign-in page again (answered where the form posted), saying why; nobody signed in.
        done = s.post(server.url + "/login/approval/check", data=fields, headers=origin)
        assert done.status_code == {"denied": 403, "expired": 410}[ending], (done.status_code, done.text)
        assert 'id="page-error"' in done.text and 'action="/login/approval/start"' in done.text, done.text
        assert 'id="approval-match-code"' not in done.text
        assert s.get(server.url + "/account", allow_redirects=False).status_code in (302, 303), "not signed in"
        assert browser_sessions(server, email) == []
