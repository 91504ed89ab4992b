"""Secrets stay out of logs and `check` (contract §17, issue #46). At AUTHD_LOG_LEVEL=debug the
server logged the service holding the parsed configuration file whole, the SMTP password with it;
`authd check` hid values only by their key's name. Here the real binary runs at debug level with a
secret of every kind the configuration holds (the SMTP password in the file or a variable, an
identity provider's client secret and a webhook's signing secret read from files, Apple's key) and
no line of its log, of `authd check` or of `authd settings` holds one."""
import base64
import os
import signal
import subprocess
import tempfile
import time

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from conftest import running_server

BINARY = os.environ.get("AUTHD_BINARY", ".build/debug/authd")

SMTP_PASSWORD = "smtp-password-b1a7c3"
UPSTREAM_SECRET = "upstream-client-secret-4e9d0f"
WEBHOOK_KEY = bytes(range(101, 133))


def clean_env(**variables):
    return {**{k: v for k, v in os.environ.items() if not k.startswith("AUTHD_")}, **variables}


def secrets_in(text, pem):
    """The secrets `text` holds: each whole, the base64 lines of the key, the webhook secret as text
    and as any run of four of its bytes written the way Swift writes an array."""
    whsec = "whsec_" + base64.b64encode(WEBHOOK_KEY).decode()
    runs = [", ".join(str(b) for b in WEBHOOK_KEY[i:i + 4]) for i in range(len(WEBHOOK_KEY) - 3)]
    lines = [line for line in pem.splitlines() if line and not line.startswith("-----")]
    return [s for s in [SMTP_PASSWORD, UPSTREAM_SECRET, whsec, whsec[6:22]] + lines + runs if s in text]


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_no_secret_reaches_a_debug_log_line_check_or_settings(log_format):
    with tempfile.TemporaryDirectory() as secrets:
        def write(name, text):
            path = os.path.join(secrets, name)
            with open(path, "w") as f:
                f.write(text)
            return path

        upstream = write("upstream-secret", UPSTREAM_SECRET + "\n")
        webhook = write("webhook-secret", "whsec_" + base64.b64encode(WEBHOOK_KEY).decode() + "\n")
        pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
        key = write("AuthKey.p8", pem)
        smtp = {"host": "smtp.example.test", "username": "authd"}
        env = {"AUTHD_LOG_LEVEL": "debug"}
        if log_format == "text":
            smtp["password"] = SMTP_PASSWORD
        else:
            env["AUTHD_MAIL__SMTP__PASSWORD"] = SMTP_PASSWORD  # a variable's secret, as a container sets it
        config = {
            "log": {"format": log_format},
            "mail": {"transport": "outbox", "smtp": smtp},
            "providers": ["email", "password", "oidc", "apple"],
            "oidc": {"providers": {"corp": {"issuer": "http://127.0.0.1:9", "client_id": "authd", "client_secret_file": upstream}}},
            "apple": {"audiences": ["com.example.app"], "jwks_url": "http://127.0.0.1:9/keys", "team_id": "TEAM1", "key_id": "KEY1",
                      "private_key_path": key, "client_id": "com.example.app"},
            "webhooks": [{"url": "http://127.0.0.1:9/hook", "secret_file": webhook}],
        }
        with running_server(config, log=True, level_from_env=False, env=env) as server:
            assert server.call("POST", "/api/v1/auth/email/send-code", {"email": "someone@example.com"})[0] == 200
            server.proc.send_signal(signal.SIGHUP)
            assert server.logged("configuration reloaded")

            check = subprocess.run([BINARY, "check", "--data", server.folder], capture_output=True, text=True, env=clean_env())
            assert check.returncode == 0, check.stdout + check.stderr
            assert secrets_in(check.stdout + check.stderr, pem) == []
            lines = check.stdout.splitlines()
            source = "file" if log_format == "text" else "AUTHD_MAIL__SMTP__PASSWORD"
            assert f'  mail.smtp.password = "[redacted]"  ({source})' in lines, check.stdout
            assert '  apple.private_key_path = "[redacted]"  (file)' in lines
            assert '  setting     apple.private_key_path = "[redacted]" (set)' in lines
            assert f'  oidc.providers.corp.client_secret_file = "{upstream}"  (file)' in lines
            assert f'  webhooks[0].secret_file = "{webhook}"  (file)' in lines
            assert "  password.min_length = 8  (default)" in lines
            assert "  setting     password.min_length = 8 (default)" in lines

            settings = subprocess.run([BINARY, "settings"], capture_output=True, text=True, env=clean_env())
            assert settings.returncode == 0
            assert any(line.startswith("apple.private_key_path") and "string, secret" in line for line in settings.stdout.splitlines())
            server.stop()
            log = server.log()
        # The service group's debug lines are there, naming each service by its type alone.
        assert "Starting service" in log and "ConfigReloader" in log
        assert "configuration reloaded" in log
        leaked = [line for line in log.splitlines() if secrets_in(line, pem)]
        assert leaked == [], "\n".join(leaked)[:4000]
