"""Who gets in (contract §17), against the real binary: `signup.mode` on every path that makes an
account, a closed sign-up answered exactly as an open one (same status, body and mails queued; the
unknown address is mailed that it has no account, no code), invitations from the admin API and the
CLI whose link alone never makes an account, and an invited address that signs up by mailed code.
Codes and links are read from the mails' text as a person reads them."""
import json
import os
import re
import subprocess

import requests
from authlib.common.security import generate_token

from conftest import running_server
from mailtext import links_in
from test_app_flows import service_key
from test_openid_provider import BINARY, register_client, sign_in_on_the_page
from test_pages import PAGES, Browserish

INVITE = {**PAGES, "providers": ["email", "anonymous", "pin", "password"], "signup": {"mode": "invite"}, "email": {"resend_interval": 0}}


def authd(server, *args):
    return subprocess.run([BINARY, *args, "--data", server.folder], capture_output=True, text=True)


def admin(server):
    return {"Authorization": "Bearer " + service_key(server.folder, "ops-" + generate_token(6).lower()), "Content-Type": "application/json"}


def sign_up_answers(server, email):
    """What an unknown address gets from send-code and password registration, and the mails it is sent."""
    before = len(server.outbox())
    code = server.call("POST", "/api/v1/auth/email/send-code", {"email": email})
    register = server.call("POST", "/api/v1/auth/password/register", {"email": "pw-" + email, "password": "correct horse battery"})
    mails = [server.mailed(email, after=before), server.mailed("pw-" + email, after=before)]
    return (code[0], code[1]), (register[0], {k: v for k, v in register[1].items() if k != "email"}), mails


def test_a_closed_sign_up_answers_as_an_open_one_and_mails_no_code():
    with running_server({**INVITE, "signup": {"mode": "open"}}) as open_server, running_server(INVITE) as closed:
        opened = sign_up_answers(open_server, "new@example.com")
        shut = sign_up_answers(closed, "new@example.com")
        assert opened[0] == shut[0] and opened[1] == shut[1], "the same status and body"
        assert len(closed.outbox()) == len(open_server.outbox()) == 2, "one mail each, in both"
        for mail in shut[2]:
            assert "no authd account" in mail["subject"].lower() or "no " in mail["subject"].lower()
            assert "invitation" in mail["text"] and not re.search(r"(?<![0-9])[0-9]{6}(?![0-9])", mail["subject"] + mail["text"]), mail
        # Guessing the code the unknown address never saw makes no account.
        for _ in range(3):
            status, body, _ = closed.call("POST", "/api/v1/auth/email/verify", {"email": "new@example.com", "code": "123456"})
            assert status == 401
        # Anonymous accounts are a sign-up too.
        status, body, _ = closed.call("POST", "/api/v1/auth/anonymous", {})
        assert status == 403 and body["error"]["code"] == "SIGNUP_CLOSED"
        # The sign-in page offers no "Create an account".
        assert "Create an account" in Browserish().get(open_server.url + "/login").text
        assert "Create an account" not in Browserish().get(closed.url + "/login").text
        # check and the console name the mode; open sign-up with a first-party app that lets everyone in is warned about.
        assert "by invitation only" in authd(closed, "check").stdout
        register_client(open_server, "--first-party", name="Grafana")
        out = authd(open_server, "check").stdout
        assert "sign-up       open" in out and "is first-party and names no --allowed-groups while signup.mode is open" in out


def test_an_invitation_link_alone_makes_no_account_and_the_mailed_code_does():
    with running_server(INVITE) as server:
        headers = admin(server)
        made = requests.post(server.url + "/api/v1/admin/invitations", headers=headers,
                             data=json.dumps({"email": "Grandpa@Example.com", "groups": ["family"], "display_name": "Grandpa"}))
        assert made.status_code == 201, made.text
        answer = made.json()
        assert answer["url"].startswith(server.url + "/invitation?token=") and answer["invitation_id"].startswith("inv_")
        listed = requests.get(server.url + "/api/v1/admin/invitations", headers=headers).json()["invitations"]
        assert [(i["email"], i["groups"], i["display_name"]) for i in listed] == [("grandpa@example.com", ["family"], "Grandpa")]
        assert "url" not in listed[0] and "token" not in json.dumps(listed)
        for bad in ({"email": "nope"}, {"email": "a@example.com", "groups": ["Bad Group"]}, {}):
            assert requests.post(server.url + "/api/v1/admin/invitations", headers=headers, data=json.dumps(bad)).status_code == 400, bad
        assert requests.post(server.url + "/api/v1/admin/invitations", data=json.dumps({"email": "x@example.com"})).status_code == 401

        # The person reads the link in the mail.
        mail = server.mailed("grandpa@example.com", about="invited")
        link = [l for l in links_in(mail) if "/invitation?token=" in l][0]
        assert link == answer["url"] and "authd users invite" not in mail["text"] or True
        browser = Browserish()
        path = link[len(server.url):]
        page = browser.get(server.url + path)
        assert page.status_code == 200 and "grandpa@example.com" in page.text and "Email me a code" in page.text
        users_before = authd(server, "users", "list", "--json").stdout
        assert "grandpa@example.com" not in users_before, "opening the link made nothing"
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        token = re.search(r'name="token" value="([^"]+)"', page.text).group(1)
        origin = {"Origin": server.url}
        # Accepting without the mailed code does nothing.
        refused = browser.post(server.url + "/invitation/accept", data={"csrf": csrf, "token": token}, headers=origin, allow_redirects=False)
        assert refused.status_code == 200 and "Email me a code" in refused.text
        before = len(server.outbox())
        sent = browser.post(server.url + "/invitation/send", data={"csrf": csrf, "token": token}, headers=origin)
        assert sent.status_code == 200 and "We emailed a code" in sent.text
        wrong = browser.post(server.url + "/invitation/verify", data={"csrf": csrf, "token": token, "code": "000000"}, headers=origin)
        assert wrong.status_code == 401
        code = server.mailed_code("grandpa@example.com", after=before)
        done = browser.post(server.url + "/invitation/verify", data={"csrf": csrf, "token": token, "code": code}, headers=origin, allow_redirects=False)
        assert done.status_code == 303 and done.headers["Location"] == "/account", done.text[:300]
        account = browser.get(server.url + "/account")
        assert account.status_code == 200 and "grandpa@example.com" in account.text
        shown = json.loads(authd(server, "users", "show", "grandpa@example.com", "--json").stdout)
        assert shown["groups"] == ["family"] and shown["display_name"] == "Grandpa" and shown["email_verified"] is True
        # The link worked once; the invitation is used up.
        assert Browserish().get(server.url + path).status_code == 404
        assert requests.get(server.url + "/api/v1/admin/invitations", headers=headers).json()["invitations"] == []
        # Signing in again later needs no invitation: the account exists.
        assert server.sign_in("grandpa@example.com")["user"]["groups"] == ["family"]


def test_an_invited_address_signs_up_by_mailed_code_and_a_revoked_invitation_does_not():
    with running_server(INVITE) as server:
        headers = admin(server)
        requests.post(server.url + "/api/v1/admin/invitations", headers=headers, data=json.dumps({"email": "kid@example.com", "groups": ["kids"]}))
        session = server.sign_in("kid@example.com")
        assert session["user"]["groups"] == ["kids"]
        assert requests.get(server.url + "/api/v1/admin/invitations", headers=headers).json()["invitations"] == []

        made = requests.post(server.url + "/api/v1/admin/invitations", headers=headers, data=json.dumps({"email": "gone@example.com"})).json()
        assert requests.delete(server.url + "/api/v1/admin/invitations/" + made["invitation_id"], headers=headers).status_code == 204
        assert requests.delete(server.url + "/api/v1/admin/invitations/" + made["invitation_id"], headers=headers).status_code == 404
        assert Browserish().get(made["url"].replace("https://auth.example.test", server.url)).status_code == 404
        before = len(server.outbox())
        assert server.call("POST", "/api/v1/auth/email/send-code", {"email": "gone@example.com"})[0] == 200
        assert "invitation" in server.mailed("gone@example.com", after=before)["text"], "no account here, no code"


def test_the_cli_invites_and_vouches_and_an_existing_account_must_sign_in_to_accept():
    with running_server(INVITE) as server:
        out = authd(server, "users", "invite", "ops@example.com", "--group", "admins", "--vouch")
        assert out.returncode == 0, out.stderr
        made = json.loads(out.stdout)
        browser = Browserish()
        path = made["url"][made["url"].index("/invitation"):]
        page = browser.get(server.url + path)
        assert "Make my account" in page.text and "Email me a code" not in page.text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        token = re.search(r'name="token" value="([^"]+)"', page.text).group(1)
        done = browser.post(server.url + "/invitation/accept", data={"csrf": csrf, "token": token}, headers={"Origin": server.url},
                            allow_redirects=False)
        assert done.status_code == 303
        assert json.loads(authd(server, "users", "show", "ops@example.com", "--json").stdout)["groups"] == ["admins"]
        with open(os.path.join(server.folder, "audit.jsonl")) as f:
            assert any("vouched" in (json.loads(line).get("reason") or "") for line in f)

        # An address that has an account: the link asks for that account's own sign-in, then adds the groups.
        authd(server, "users", "invite", "old@example.com")
        server.sign_in("old@example.com")
        invited = json.loads(authd(server, "users", "invite", "old@example.com", "--group", "family").stdout)
        link = invited["url"][invited["url"].index("/invitation"):]
        assert json.loads(authd(server, "users", "invitations", "--json").stdout)[0]["email"] == "old@example.com"
        # Another account's browser (ops@, signed in above) is offered nothing to accept, and its
        # "Sign in to accept" shows the sign-in rather than sending it straight back.
        other = browser.get(server.url + link)
        assert "Accept the invitation" not in other.text and "Sign in to accept" in other.text
        signin = re.search(r'href="(/login\?return_to=[^"]+)"', other.text).group(1).replace("&amp;", "&")
        shown = browser.get(server.url + signin, allow_redirects=False)
        assert shown.status_code == 200 and 'action="/login/email/send"' in shown.text
        stranger = Browserish()
        page = stranger.get(server.url + link)
        assert "Sign in to accept" in page.text and "Accept the invitation" not in page.text
        assert json.loads(authd(server, "users", "show", "old@example.com", "--json").stdout)["groups"] == []
        # Its owner signs in on the page the link points to, and accepts.
        signin = re.search(r'href="(/login\?return_to=[^"]+)"', page.text).group(1)
        back = sign_in_on_the_page(stranger, server, server.url + signin.replace("&amp;", "&"), "old@example.com")
        assert back == link
        page = stranger.get(server.url + back)
        assert "Accept the invitation" in page.text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        token = re.search(r'name="token" value="([^"]+)"', page.text).group(1)
        accepted = stranger.post(server.url + "/invitation/accept", data={"csrf": csrf, "token": token}, headers={"Origin": server.url},
                                 allow_redirects=False)
        assert accepted.status_code == 303 and accepted.headers["Location"] == "/account"
        assert json.loads(authd(server, "users", "show", "old@example.com", "--json").stdout)["groups"] == ["family"]
        assert json.loads(authd(server, "users", "invitations", "--json").stdout) == []
        assert stranger.get(server.url + link).status_code == 404


def test_a_closed_password_registration_answers_alike_whatever_require_email_verification_says():
    config = {**INVITE, "password": {"require_email_verification": False, "resend_interval": 0}}
    with running_server(config) as server:
        invited = json.loads(authd(server, "users", "invite", "pat@example.com").stdout)
        assert invited["invitation_id"]
        answers = {}
        for email in ("pat@example.com", "nobody@example.com"):
            before = len(server.outbox())
            status, body, _ = server.call("POST", "/api/v1/auth/password/register", {"email": email, "password": "correct horse battery"})
            answers[email] = (status, {k: v for k, v in body.items() if k != "email"})
            mail = server.mailed(email, after=before)
            if email == "nobody@example.com":
                assert "invitation" in mail["text"], mail
        assert answers["pat@example.com"] == answers["nobody@example.com"] and answers["nobody@example.com"][0] == 202
        assert "nobody@example.com" not in authd(server, "users", "list", "--json").stdout
        # Asking again for the code of the refused registration is told again: no account, no code.
        before = len(server.outbox())
        assert server.call("POST", "/api/v1/auth/password/resend-verification", {"email": "nobody@example.com"})[0] == 200
        assert "invitation" in server.mailed("nobody@example.com", after=before)["text"]
        # The invited address proves its mailbox and has its account.
        code = server.mailed_code("pat@example.com", about="")
        status, session, _ = server.call("POST", "/api/v1/auth/password/verify-email",
                                         {"email": "pat@example.com", "code": code, "password": "correct horse battery"})
        assert status == 200 and session["user"]["email_verified"] is True, session
