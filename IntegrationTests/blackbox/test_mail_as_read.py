"""Every mail a test can make the server send, read as the person who gets it reads it (contract §12,
"Mail is read by people"; issue #34): the code or link the mail exists for is in its subject or text
and in its HTML, no `{{…}}` is left in it, and each flow completes with nothing but what the mail
shows. The outbox's side field that repeats the code is never read (mailtext.py).

The email, password (asking for an emailed code after a right password) and device-page mail run
together, in both orders of the providers: two providers' mail once shared a template name, and
which wording won depended on the order (the email sign-in mail spoke of a password sign-in, or the
second factor's mail showed `{{code}}` instead of its code)."""
import re
import time
import urllib.parse

import pytest
import requests

from conftest import BASE_CONFIG, running_server
from mailtext import check_filled, code_in, has_code, links_in

PASSWORD = "a long enough secret"
GRANT = "urn:ietf:params:oauth:grant-type:device_code"


def config(providers):
    return {"providers": providers, "password": {"login_requires_email_code": True}, "device": {"interval": 1}}


@pytest.fixture(params=[["email", "password"], ["password", "email"]], ids=["email-first", "password-first"])
def server(request):
    with running_server(config(request.param)) as s:
        yield s


def everything(mail):
    return "\n".join(mail.get(part) or "" for part in ("subject", "text", "html"))


def every_mail_is_readable(server):
    """Each mail this server sent: nothing left unfilled, its code (if it shows one) in text and HTML,
    its links in its HTML."""
    for mail in server.mails():
        links_in(mail)
        if has_code(mail):
            code_in(mail)


def register(server, email):
    """A password account with a verified email, from the code the verification mail shows."""
    sent = len(server.outbox())
    assert server.call("POST", "/api/v1/auth/password/register", {"email": email, "password": PASSWORD})[0] == 202
    code = server.mailed_code(email, after=sent)
    status, session, _ = server.call("POST", "/api/v1/auth/password/verify-email", {"email": email, "code": code, "password": PASSWORD})
    assert status == 200, session
    return session


def test_the_email_sign_in_mail_shows_its_code_and_says_nothing_of_a_password(server):
    email = "letters@example.com"
    sent = len(server.outbox())
    assert server.call("POST", "/api/v1/auth/email/send-code", {"email": email})[0] == 200
    mail = server.mailed(email, after=sent)
    code = code_in(mail)
    # Someone who asked for a code by email did not type a password: a mail saying "someone signed
    # in with its password" would send them changing a password they may not have.
    assert "password" not in everything(mail).lower(), f"the email sign-in mail speaks of a password: {mail}"
    status, session, _ = server.call("POST", "/api/v1/auth/email/verify", {"email": email, "code": code})
    assert status == 200 and session["user"]["email"] == email, session
    every_mail_is_readable(server)


def test_the_registration_mail_shows_its_code(server):
    email = "new@example.com"
    sent = len(server.outbox())
    assert server.call("POST", "/api/v1/auth/password/register", {"email": email, "password": PASSWORD})[0] == 202
    mail = server.mailed(email, after=sent)
    code = code_in(mail)
    status, session, _ = server.call("POST", "/api/v1/auth/password/verify-email", {"email": email, "code": code, "password": PASSWORD})
    assert status == 200 and session["user"]["email"] == email, session
    every_mail_is_readable(server)


def test_a_password_sign_in_completes_with_the_code_its_mail_shows(server):
    email = "two-steps@example.com"
    register(server, email)
    sent = len(server.outbox())
    status, challenge, _ = server.call("POST", "/api/v1/auth/password/login", {"email": email, "password": PASSWORD})
    assert status == 202 and challenge["factors"] == ["email_code"], challenge
    mail = server.mailed(email, after=sent)
    code = code_in(mail)  # the mail once said "enter {{code}}"
    status, session, _ = server.call("POST", "/api/v1/auth/mfa/verify", {"challenge": challenge["challenge"], "emailCode": code})
    assert status == 200 and session["user"]["email"] == email, session
    every_mail_is_readable(server)


def test_the_password_reset_mail_shows_its_code_and_the_notice_after_it_is_filled(server):
    email = "forgetful@example.com"
    register(server, email)
    sent = len(server.outbox())
    assert server.call("POST", "/api/v1/auth/password/reset/email/initiate", {"email": email})[0] == 200
    mail = server.mailed(email, after=sent)  # mailed after the answer: waits for it
    code = code_in(mail)
    sent = len(server.outbox())
    status, body, _ = server.call("POST", "/api/v1/auth/password/reset/email/verify",
                                  {"email": email, "code": code, "new_password": "a brand new secret"})
    assert status == 200, body
    notice = server.mailed(email, after=sent)
    check_filled(notice)
    links_in(notice)
    assert "password" in notice["subject"].lower(), notice
    every_mail_is_readable(server)


def password_changed_notice(server, email):
    """Registers `email`, changes its password, and returns the notice that follows (mailed after the answer)."""
    session = register(server, email)
    sent = len(server.outbox())
    assert server.call("POST", "/api/v1/auth/password/change", {"current_password": PASSWORD, "new_password": "another good secret"},
                       token=session["access_token"])[0] == 204
    return server.mailed(email, after=sent)


def test_the_password_changed_notice_is_filled(server):
    email = "changer@example.com"
    notice = password_changed_notice(server, email)
    check_filled(notice)
    links_in(notice)
    assert "password" in notice["subject"].lower() and "changed" in everything(notice).lower(), notice
    every_mail_is_readable(server)


def test_the_new_sign_in_method_notice_is_filled(server):
    email = "adder@example.com"
    session = server.sign_in(email)  # an email account: the password is a new way in
    sent = len(server.outbox())
    assert server.call("POST", "/api/v1/auth/password/change", {"new_password": "a first good secret"}, token=session["access_token"])[0] == 204
    notice = server.mailed(email, about="new way", after=sent)
    check_filled(notice)
    links_in(notice)
    assert "password" in notice["text"].lower(), notice
    every_mail_is_readable(server)


def test_the_device_pages_approval_notice_is_filled(server):
    """Signed in on the pages with the mailed code (read as a person reads it), a person approves a
    device on /device; the notice mailed says which device, every placeholder filled."""
    from test_pages import Browserish
    email = "viewer@example.com"
    started = requests.post(server.url + "/oauth/device_authorization",
                            data={"client_id": "frame", "device_name": "Kitchen frame", "platform": "linux"}, timeout=10).json()
    browser = Browserish()
    host = {"Host": urllib.parse.urlparse(BASE_CONFIG["issuer"]).netloc}
    post = {**host, "Origin": BASE_CONFIG["issuer"]}
    login = browser.get(server.url + "/login?return_to=" + urllib.parse.quote("/device?user_code=" + started["user_code"], safe=""), headers=host)
    csrf = re.search(r'name="csrf" value="([^"]*)"', login.text).group(1)
    sent = len(server.outbox())
    browser.post(server.url + "/login/email/send", data={"csrf": csrf, "email": email}, headers=post, timeout=10)
    code = code_in(server.mailed(email, after=sent))
    done = browser.post(server.url + "/login/email/verify", data={"csrf": csrf, "code": code}, headers=post, allow_redirects=False, timeout=10)
    assert done.status_code == 303, done.text
    shown = browser.get(server.url + done.headers["Location"], headers=host)
    assert 'id="device-name"' in shown.text and "Kitchen frame" in shown.text, shown.text
    csrf = re.search(r'name="csrf" value="([^"]*)"', shown.text).group(1)
    sent = len(server.outbox())
    approved = browser.post(server.url + "/device/approve", data={"csrf": csrf, "user_code": started["user_code"]}, headers=post, timeout=10)
    assert "Device approved" in approved.text, approved.text
    notice = server.mailed(email, after=sent)
    check_filled(notice)
    links_in(notice)
    assert "a device signed in with a code (Kitchen frame, linux)" in notice["text"], notice
    time.sleep(1.1)
    token = requests.post(server.url + "/oauth/token", data={"grant_type": GRANT, "device_code": started["device_code"], "client_id": "frame"},
                          timeout=10)
    assert token.status_code == 200 and token.json()["user"]["email"] == email, token.text
    every_mail_is_readable(server)


def test_every_mail_carries_its_html(server):
    # A code mail and a notice: the outbox line holds what the person's mail program shows.
    email = "html@example.com"
    password_changed_notice(server, email)
    for mail in server.mails(email):
        assert (mail.get("html") or "").strip(), f"the outbox line of {mail['subject']!r} has no html"
