"""The smtp transport against a real SMTP server (aiosmtpd): STARTTLS with a test certificate and AUTH,
implicit TLS, both MIME parts, retries after 4xx, the 5xx failure path, and a queue that survives a restart."""
import datetime
import email
import email.policy
import json
import os
import socket
import ssl
import subprocess
import tempfile
import threading
import time

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from conftest import Server


def make_cert(folder):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return cert_path, key_path


class Inbox:
    """An aiosmtpd handler that keeps messages and can answer DATA with scripted replies."""

    def __init__(self, replies=()):
        self.messages = []
        self.replies = list(replies)
        self.arrived = threading.Event()

    async def handle_DATA(self, server, session, envelope):
        if self.replies:
            return self.replies.pop(0)
        self.messages.append(envelope)
        self.arrived.set()
        return "250 OK"

    def wait(self, timeout=60):  # generous for a loaded machine; returns as soon as a message arrives
        assert self.arrived.wait(timeout), "no message arrived"
        return email.message_from_bytes(self.messages[-1].content, policy=email.policy.default)


def server_tls(cert, key):
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


def authenticator(server, session, envelope, mechanism, auth_data):
    ok = isinstance(auth_data, LoginPassword) and auth_data.login == b"mailer" and auth_data.password == b"s3cret pass"
    return AuthResult(success=ok)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def tls_files():
    with tempfile.TemporaryDirectory() as folder:
        yield make_cert(folder)


def start_authd(folder, smtp, mail_extra=None):
    config = {"mail": {"transport": "smtp", "from": "Ünïcode App <no-reply@example.com>", "product_name": "Acme",
                       "retry_delay": 1, "smtp": smtp, **(mail_extra or {})}}
    with open(os.path.join(folder, "authd.json"), "w") as f:
        json.dump(config, f)
    return Server(folder, log=True)


def send_code(server, address="reader@example.com"):
    status, body, _ = server.call("POST", "/api/v1/auth/email/send-code", {"email": address})
    assert status == 200, body


def test_starttls_auth_and_both_mime_parts(tls_files):
    cert, key = tls_files
    context = server_tls(cert, key)
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port(), tls_context=context, require_starttls=True,
                            authenticator=authenticator, auth_require_tls=True)
    controller.start()
    try:
        with tempfile.TemporaryDirectory() as folder:
            server = start_authd(folder, {"host": "localhost", "port": controller.port, "security": "starttls",
                                          "username": "mailer", "password": "s3cret pass", "ca_file": cert, "helo": "authd.test"})
            try:
                send_code(server)
                message = inbox.wait()
                envelope = inbox.messages[-1]
                assert envelope.mail_from == "no-reply@example.com"
                assert envelope.rcpt_tos == ["reader@example.com"]
                for header in ("Date", "Message-ID", "From", "To", "Subject"):
                    assert message[header], header
                assert message["To"] == "reader@example.com"
                assert str(message["From"]).startswith("Ünïcode App")  # RFC 2047, decoded
                assert b"=?UTF-8?B?" in envelope.content
                assert message.get_content_type() == "multipart/alternative"
                parts = {p.get_content_type(): p.get_content() for p in message.iter_parts()}
                code = str(message["Subject"]).rsplit(" ", 1)[-1]
                assert code.isdigit() and len(code) == 6
                assert "Acme" in str(message["Subject"])
                assert code in parts["text/plain"] and "5 minutes" in parts["text/plain"]
                assert code in parts["text/html"]
            finally:
                server.stop()
    finally:
        controller.stop()


def test_implicit_tls(tls_files):
    cert, key = tls_files
    context = server_tls(cert, key)
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port(), ssl_context=context)
    controller.start()
    try:
        with tempfile.TemporaryDirectory() as folder:
            server = start_authd(folder, {"host": "localhost", "port": controller.port, "security": "tls", "ca_file": cert})
            try:
                send_code(server)
                assert inbox.wait()["To"] == "reader@example.com"
            finally:
                server.stop()
    finally:
        controller.stop()


def test_an_untrusted_certificate_is_not_accepted(tls_files):
    cert, key = tls_files
    context = server_tls(cert, key)
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port(), tls_context=context, require_starttls=True)
    controller.start()
    try:
        with tempfile.TemporaryDirectory() as folder:
            server = start_authd(folder, {"host": "localhost", "port": controller.port, "security": "starttls"})
            try:
                send_code(server)
                time.sleep(2)
                assert not inbox.messages
            finally:
                server.stop()
            assert "certificate" in server.log().lower() or "ssl" in server.log().lower()
    finally:
        controller.stop()


def test_a_4xx_is_retried_then_delivered():
    inbox = Inbox(replies=["451 4.3.0 try again later"])
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        with tempfile.TemporaryDirectory() as folder:
            server = start_authd(folder, {"host": "127.0.0.1", "port": controller.port, "security": "none"})
            try:
                send_code(server)
                message = inbox.wait(timeout=60)
                assert message["To"] == "reader@example.com"
                assert not inbox.replies
            finally:
                server.stop()
            assert server.logged("will retry")
    finally:
        controller.stop()


def test_a_5xx_is_logged_and_not_retried():
    inbox = Inbox(replies=["550 5.1.1 no such mailbox", "550 5.1.1 no such mailbox"])
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        with tempfile.TemporaryDirectory() as folder:
            server = start_authd(folder, {"host": "127.0.0.1", "port": controller.port, "security": "none"})
            try:
                send_code(server)
                time.sleep(3)
                assert len(inbox.replies) == 1  # one attempt only
                assert not inbox.messages
            finally:
                server.stop()
            log = server.log()
            assert "550" in log and "not retrying" in log
    finally:
        controller.stop()


def test_a_message_queued_across_a_restart_is_delivered():
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        smtp = {"host": "127.0.0.1", "port": port, "security": "none", "timeout": 2}
        server = start_authd(folder, smtp)
        send_code(server)  # nobody listens yet: queued
        server.stop()
        inbox = Inbox()
        controller = Controller(inbox, hostname="127.0.0.1", port=port)
        controller.start()
        try:
            restarted = start_authd(folder, smtp)
            try:
                assert inbox.wait(timeout=60)["To"] == "reader@example.com"
            finally:
                restarted.stop()
        finally:
            controller.stop()
