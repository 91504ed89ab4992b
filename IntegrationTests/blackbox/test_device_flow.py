"""Device sign-in (RFC 8628) driven by third-party OAuth clients against the real binary: Authlib's
OAuth2Session runs the RFC's polling loop, oauthlib's DeviceClient builds and parses the token
requests. They see OAuth's wire format, the interval the server enforces (slow_down adds 5 s),
expired_token, access_denied, and a session once a signed-in person approves."""
import threading
import time

import pytest
from authlib.integrations.requests_client import OAuth2Session
from authlib.integrations.base_client.errors import OAuthError
from oauthlib.oauth2 import DeviceClient
from oauthlib.oauth2.rfc6749.errors import OAuth2Error
import requests

from conftest import running_server

GRANT = "urn:ietf:params:oauth:grant-type:device_code"
# Polled every second; the codes live ten minutes, so a loaded machine cannot let one expire mid-test.
FAST = {"device": {"interval": 1, "code_ttl": 600}}


def start(server, client):
    r = client.post(server.url + "/oauth/device_authorization", data={"client_id": "frame", "device_name": "Frame"}, withhold_token=True)
    assert r.status_code == 200 and r.headers["Cache-Control"] == "no-store", r.text
    return r.json()


def poll_until_done(server, client, started, deadline=120):
    """RFC 8628 §3.5's loop: wait `interval`, poll, on slow_down wait 5 s longer from then on."""
    interval, seen = started["interval"], []
    end = time.time() + deadline
    while time.time() < end:
        time.sleep(interval)
        try:
            return client.fetch_token(server.url + "/oauth/token", grant_type=GRANT, device_code=started["device_code"]), seen
        except OAuthError as error:
            seen.append(error.error)
            if error.error == "slow_down":
                interval += 5
            elif error.error != "authorization_pending":
                return None, seen
    raise AssertionError(f"no answer in {deadline} s: {seen}")


def test_a_generic_client_polls_until_a_person_approves():
    with running_server(FAST) as server:
        approver = server.sign_in("owner@example.com")
        client = OAuth2Session(client_id="frame", token_endpoint_auth_method="none")
        started = start(server, client)
        assert started["verification_uri"] == "https://auth.example.test/device"
        assert started["verification_uri_complete"].endswith("?user_code=" + started["user_code"])

        def approve():
            time.sleep(2.5)
            status, shown, _ = server.call("GET", "/api/v1/auth/device/" + started["user_code"], token=approver["access_token"])
            assert status == 200 and shown["device_name"] == "Frame", shown
            assert server.call("POST", f"/api/v1/auth/device/{started['user_code']}/approve", token=approver["access_token"])[0] == 204

        t = threading.Thread(target=approve)
        t.start()
        token, seen = poll_until_done(server, client, started)
        t.join()
        assert token is not None and "authorization_pending" in seen, seen
        assert token["token_type"] == "Bearer" and token["refresh_token"] and token["user"]["email"] == "owner@example.com"
        me = requests.get(server.url + "/api/v1/auth/me", headers={"Authorization": "Bearer " + token["access_token"]})
        assert me.status_code == 200
        # The device's session is limited: it cannot approve another device.
        other = start(server, client)
        status, body, _ = server.call("POST", f"/api/v1/auth/device/{other['user_code']}/approve", token=token["access_token"])
        assert status == 403 and body["error"]["code"] == "FORBIDDEN"
        # The refresh grant in OAuth's format, through the same library.
        refreshed = client.refresh_token(server.url + "/oauth/token", refresh_token=token["refresh_token"])
        assert refreshed["access_token"] != token["access_token"]
        with pytest.raises(OAuthError) as err:
            client.refresh_token(server.url + "/oauth/token", refresh_token="not-a-refresh-token")
        assert err.value.error == "invalid_grant"


def test_polling_too_fast_is_slowed_down_and_a_late_device_is_told_it_expired():
    device = DeviceClient("frame")
    headers = {"Content-Type": "application/x-www-form-urlencoded"}

    def poll(server, started):
        body = device.prepare_request_body(device_code=started["device_code"], include_client_id=True)
        r = requests.post(server.url + "/oauth/token", data=body, headers=headers)
        assert r.headers["Cache-Control"] == "no-store"
        try:
            device.parse_request_body_response(r.text)
            return "token"
        except OAuth2Error as error:
            assert r.status_code == 400 and error.status_code == 400
            return error.error

    # A minute's interval: polls right after each other are too fast however slow the machine is.
    with running_server({"device": {"interval": 60, "code_ttl": 600}}) as server:
        started = requests.post(server.url + "/oauth/device_authorization", data={"client_id": "frame"}).json()
        assert poll(server, started) == "authorization_pending"
        assert poll(server, started) == "slow_down"
        assert poll(server, started) == "slow_down"  # still within the interval, now 65 s then 70 s
    # The shortest lifetime, waited past (more waiting is the same).
    with running_server({"device": {"interval": 1, "code_ttl": 5}}) as server:
        started = requests.post(server.url + "/oauth/device_authorization", data={"client_id": "frame"}).json()
        time.sleep(5.5)
        assert poll(server, started) == "expired_token"


def test_a_denied_device_gets_access_denied():
    with running_server(FAST) as server:
        owner = server.sign_in("denier@example.com")
        client = OAuth2Session(client_id="frame", token_endpoint_auth_method="none")
        started = start(server, client)
        assert server.call("POST", f"/api/v1/auth/device/{started['user_code'].lower()}/deny", token=owner["access_token"])[0] == 204
        token, seen = poll_until_done(server, client, started)
        assert token is None and seen[-1] == "access_denied"
