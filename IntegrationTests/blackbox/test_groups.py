"""Groups and apps limited to them (contract §17), as an operator and a relying party see them: a
user's groups are a field of their own (the admin API, `authd users groups`), the `groups` claim for
scope `groups` or `--claims groups`, checked by joserfc; an app registered `--allowed-groups` gives
no code to a person outside, and one removed from the group is refused at the app's next refresh,
userinfo and introspection; device codes naming such an app obey the same rule."""
import json
import os
import subprocess
import urllib.parse

import requests
from authlib.common.security import generate_token
from joserfc import jwt
from joserfc.jwk import KeySet

from conftest import running_server
from test_app_flows import service_key
from test_openid_provider import BINARY, REDIRECT, authorize, register_client
from test_pages import PAGES, Browserish
from test_third_review import CHALLENGE, VERIFIER, authorize_url, query

CONFIG = {**PAGES, "email": {"resend_interval": 0}}


def authd(server, *args):
    return subprocess.run([BINARY, *args, "--data", server.folder], capture_output=True, text=True)


def admin(server):
    key = service_key(server.folder, "ops-" + generate_token(6).lower())
    return {"Authorization": "Bearer " + key, "Content-Type": "application/json"}


def patch(server, headers, user_id, body):
    return requests.patch(server.url + "/api/v1/admin/users/" + user_id, data=json.dumps(body), headers=headers)


def test_groups_are_a_field_of_their_own_set_by_the_admin_api_and_the_cli():
    with running_server(CONFIG) as server:
        session = server.sign_in("ana@example.com")
        user_id = session["user"]["id"]
        assert session["user"]["groups"] == []
        headers = admin(server)
        done = patch(server, headers, user_id, {"groups": ["family", "admins", "family"]})
        assert done.status_code == 200 and done.json()["groups"] == ["admins", "family"], done.text
        # A backend replacing app_metadata never touches them.
        replaced = patch(server, headers, user_id, {"app_metadata": {"plan": "pro"}})
        assert replaced.json()["groups"] == ["admins", "family"] and replaced.json()["app_metadata"] == {"plan": "pro"}
        for bad in (["Family"], ["a b"], [""], ["x" * 65], [f"g{i}" for i in range(51)], "family", [1]):
            refused = patch(server, headers, user_id, {"groups": bad})
            assert refused.status_code == 400 and refused.json()["error"]["code"] == "INVALID_REQUEST", (bad, refused.text)
        me = server.call("GET", "/api/v1/auth/me", token=server.sign_in("ana@example.com")["access_token"])[1]
        assert me["groups"] == ["admins", "family"]

        out = authd(server, "users", "groups", "ana@example.com", "remove", "admins")
        assert out.returncode == 0 and "family" in out.stdout and "admins" not in out.stdout, out.stdout + out.stderr
        out = authd(server, "users", "groups", "ana@example.com", "add", "photos", "kids")
        assert out.returncode == 0, out.stderr
        shown = json.loads(authd(server, "users", "show", "ana@example.com", "--json").stdout)
        assert shown["groups"] == ["family", "kids", "photos"]
        assert authd(server, "users", "groups", "ana@example.com", "add", "Not_Valid").returncode != 0
        assert authd(server, "users", "groups", "ana@example.com", "join", "x").returncode != 0
        with open(os.path.join(server.folder, "audit.jsonl")) as f:
            reasons = [json.loads(line).get("reason", "") for line in f]
        assert "update user: groups [admins, family]" in reasons and "update user: groups [family, kids, photos]" in reasons


def test_an_app_limited_to_groups_gives_no_code_to_a_person_outside_and_the_groups_claim_says_who_is_in():
    with running_server(CONFIG) as server:
        app = register_client(server, "--first-party", "--allowed-groups", "family,admins", name="Family photos")
        open_app = register_client(server, "--first-party", name="Open app")
        shown = json.loads(authd(server, "clients", "show", app["client_id"], "--json").stdout)
        assert shown["allowed_groups"] == ["admins", "family"]
        headers = admin(server)
        browser = Browserish()
        callback = authorize(browser, server, authorize_url(server, open_app), email="olga@example.com")
        assert "code" in query(callback), "an app without --allowed-groups lets everyone in"

        refused = browser.get(authorize_url(server, app), allow_redirects=False)
        assert refused.status_code == 403 and "have access to Family photos" in refused.text and "Location" not in refused.headers
        silent = browser.get(authorize_url(server, app, prompt="none"), allow_redirects=False)
        assert query(silent.headers["Location"])["error"] == ["access_denied"]

        user_id = server.call("GET", "/api/v1/auth/me", token=server.sign_in("olga@example.com")["access_token"])[1]["id"]
        assert patch(server, headers, user_id, {"groups": ["family"]}).status_code == 200
        back = browser.get(authorize_url(server, app, scope="openid groups offline_access"), allow_redirects=False)
        code = query(back.headers["Location"])["code"][0]
        token = requests.post(server.url + "/oauth/token", data={"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
                                                                 "code_verifier": VERIFIER}, auth=(app["client_id"], app["client_secret"])).json()
        keys = KeySet.import_key_set(requests.get(server.url + "/.well-known/jwks.json").json())
        claims = jwt.decode(token["id_token"], keys, algorithms=["RS256"]).claims
        assert claims["groups"] == ["family"]
        info = requests.get(server.url + "/oauth/userinfo", headers={"Authorization": "Bearer " + token["access_token"]})
        assert info.json()["groups"] == ["family"]
        assert "groups" in requests.get(server.url + "/.well-known/openid-configuration").json()["scopes_supported"]

        # Removed from the group: the next refresh, userinfo and introspection refuse.
        assert patch(server, headers, user_id, {"groups": []}).status_code == 200
        refresh = requests.post(server.url + "/oauth/token", data={"grant_type": "refresh_token", "refresh_token": token["refresh_token"]},
                                auth=(app["client_id"], app["client_secret"]))
        assert refresh.status_code == 400 and refresh.json()["error"] == "invalid_grant", refresh.text
        assert requests.get(server.url + "/oauth/userinfo", headers={"Authorization": "Bearer " + token["access_token"]}).status_code == 401
        looked = requests.post(server.url + "/oauth/introspect", data={"token": token["access_token"]}, headers={"Authorization": headers["Authorization"]})
        assert looked.json() == {"active": False}
        # Back in the group, the ended grant stays ended: a new sign-in to the app starts a new one.
        assert patch(server, headers, user_id, {"groups": ["admins"]}).status_code == 200
        again = requests.post(server.url + "/oauth/token", data={"grant_type": "refresh_token", "refresh_token": token["refresh_token"]},
                              auth=(app["client_id"], app["client_secret"]))
        assert again.status_code == 400
        assert "code" in query(browser.get(authorize_url(server, app), allow_redirects=False).headers["Location"])


def test_a_code_issued_before_the_person_left_the_group_is_refused():
    with running_server(CONFIG) as server:
        app = register_client(server, "--first-party", "--allowed-groups", "family", name="Family photos")
        session = server.sign_in("ida@example.com")
        headers = admin(server)
        assert patch(server, headers, session["user"]["id"], {"groups": ["family"]}).status_code == 200
        code = query(authorize(Browserish(), server, authorize_url(server, app), email="ida@example.com"))["code"][0]
        assert patch(server, headers, session["user"]["id"], {"groups": ["other"]}).status_code == 200
        answer = requests.post(server.url + "/oauth/token", data={"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
                                                                  "code_verifier": VERIFIER}, auth=(app["client_id"], app["client_secret"]))
        assert answer.status_code == 400 and answer.json()["error"] == "invalid_grant"


def test_a_device_code_naming_an_app_limited_to_groups_is_approved_only_by_its_members():
    with running_server(CONFIG) as server:
        app = register_client(server, "--allowed-groups", "family", name="Photo frame")
        outsider = server.sign_in("out@example.com")
        started = requests.post(server.url + "/oauth/device_authorization", data={"client_id": app["client_id"]}).json()
        status, body, _ = server.call("POST", f"/api/v1/auth/device/{started['user_code']}/approve", token=outsider["access_token"])
        assert status == 403, body
        member = server.sign_in("mia@example.com")
        assert patch(server, admin(server), member["user"]["id"], {"groups": ["family"]}).status_code == 200
        assert server.call("POST", f"/api/v1/auth/device/{started['user_code']}/approve", token=member["access_token"])[0] == 204
        tokens = requests.post(server.url + "/oauth/token", data={"grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                                                                  "device_code": started["device_code"], "client_id": app["client_id"]}).json()
        assert "refresh_token" in tokens, tokens
        status, refreshed, _ = server.call("POST", "/api/v1/auth/refresh", {"refresh_token": tokens["refresh_token"]})
        assert status == 200
        # Removed from the group: the box's next refresh is refused, and its session ends.
        assert patch(server, admin(server), member["user"]["id"], {"groups": []}).status_code == 200
        status, body, _ = server.call("POST", "/api/v1/auth/refresh", {"refresh_token": refreshed["refresh_token"]})
        assert status == 401 and body["error"]["code"] == "INVALID_REFRESH_TOKEN", body
        # A free-form client id names no app: anyone approves it.
        free = requests.post(server.url + "/oauth/device_authorization", data={"client_id": "kitchen-radio"}).json()
        assert server.call("POST", f"/api/v1/auth/device/{free['user_code']}/approve", token=outsider["access_token"])[0] == 204


def test_clients_create_prints_only_its_json_on_stdout():
    """`authd clients create … | jq` works: the reminder to keep the secret goes to standard error."""
    with running_server(CONFIG) as server:
        out = authd(server, "clients", "create", "Piped", "--redirect-uri", REDIRECT)
        assert out.returncode == 0 and set(json.loads(out.stdout)) == {"client_id", "client_secret"}, out.stdout
        assert "not shown again" in out.stderr
        rotated = authd(server, "clients", "rotate-secret", json.loads(out.stdout)["client_id"])
        assert set(json.loads(rotated.stdout)) == {"client_id", "client_secret"} and "not shown again" in rotated.stderr
