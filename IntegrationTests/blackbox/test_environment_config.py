"""Configuration from the environment (contract §14), as a container runs authd: every key as
AUTHD_<SECTION>__<KEY> over the file, secrets from files, the platform's own AUTHD_* variables
ignored with a warning, `authd check` naming where each value came from with secrets redacted."""
import json
import os
import signal
import subprocess
import tempfile
import time

import requests

from conftest import running_server

BINARY = os.environ.get("AUTHD_BINARY", ".build/debug/authd")


def clean_env(**variables):
    return {**{k: v for k, v in os.environ.items() if not k.startswith("AUTHD_")}, **variables}


def test_the_environment_sets_keys_over_the_file_and_the_platforms_variables_are_ignored():
    with tempfile.TemporaryDirectory() as folder:
        secret = os.path.join(folder, "smtp-password")
        with open(secret, "w") as f:
            f.write("hunter2-smtp\n")
        env = {
            "AUTHD_ISSUER": "https://auth.env.test",
            "AUTHD_TOKENS__ACCESS_TTL": "120",
            "AUTHD_EMAIL__SENDS_PER_IP": '{"limit": 1, "window": 3600}',
            "AUTHD_MAIL__SMTP__HOST": "smtp.env.test", "AUTHD_MAIL__SMTP__USERNAME": "authd",
            "AUTHD_MAIL__SMTP__PASSWORD_FILE": secret,
            # Kubernetes, for a service named authd: not keys of ours.
            "AUTHD_SERVICE_HOST": "10.0.0.7", "AUTHD_PORT_8080_TCP": "tcp://10.0.0.7:8080",
        }
        log = os.path.join(folder, "server.log")
        with running_server({"issuer": "https://auth.file.test", "tokens": {"access_ttl": 600, "refresh_ttl": 86400}}, log=log, env=env) as server:
            discovery = requests.get(server.url + "/.well-known/openid-configuration").json()
            assert discovery["issuer"] == "https://auth.env.test"
            # The environment's rate limit is in force, and stays so across a reload (SIGHUP).
            assert server.call("POST", "/api/v1/auth/email/send-code", {"email": "a@example.com"})[0] == 200
            assert server.call("POST", "/api/v1/auth/email/send-code", {"email": "b@example.com"})[0] == 429
            server.proc.send_signal(signal.SIGHUP)
            deadline = time.monotonic() + 30
            while "configuration reloaded" not in open(log).read() and time.monotonic() < deadline:
                time.sleep(0.05)
            text = open(log).read()
            assert "configuration reloaded" in text and "rate limits" not in text.split("configuration reloaded", 1)[1].split("\n", 1)[0]
            assert server.call("POST", "/api/v1/auth/email/send-code", {"email": "c@example.com"})[0] == 429

            check = subprocess.run([BINARY, "check", "--data", server.folder], capture_output=True, text=True, env=clean_env())
            assert check.returncode == 0, check.stdout + check.stderr
            # The running server answers: its values and where they came from.
            lines = check.stdout.splitlines()
            assert '  issuer = "https://auth.env.test"  (AUTHD_ISSUER)' in lines
            assert "  tokens.access_ttl = 120  (AUTHD_TOKENS__ACCESS_TTL)" in lines
            assert "  tokens.refresh_ttl = 86400  (file)" in lines
            assert "  tokens.refresh_reuse_grace = 10  (default)" in lines
            assert '  mail.smtp.password_file = "[redacted]"  (AUTHD_MAIL__SMTP__PASSWORD_FILE)' not in lines  # a path, not a secret
            assert f'  mail.smtp.password_file = "{secret}"  (AUTHD_MAIL__SMTP__PASSWORD_FILE)' in lines
            assert "  setting     email.sends_per_ip = 1 per 3600 s (AUTHD_EMAIL__SENDS_PER_IP)" in lines
            assert "warning       AUTHD_SERVICE_HOST names no configuration key in use; ignored" in lines
            assert "hunter2" not in check.stdout
        text = open(log).read()
        assert "AUTHD_SERVICE_HOST names no configuration key in use; ignored" in text
        assert "AUTHD_PORT_8080_TCP names no configuration key in use; ignored" in text
        assert "hunter2" not in text


def test_a_secret_set_directly_is_redacted_and_an_https_issuer_without_tls_or_proxies_is_warned_about():
    with tempfile.TemporaryDirectory() as folder:
        env = clean_env(AUTHD_ISSUER="https://auth.example.com", AUTHD_MAIL__SMTP__HOST="smtp.example.com",
                        AUTHD_MAIL__SMTP__USERNAME="authd", AUTHD_MAIL__SMTP__PASSWORD="hunter2-direct")
        check = subprocess.run([BINARY, "check", "--data", folder], capture_output=True, text=True, env=env)
        assert check.returncode == 0, check.stdout + check.stderr
        assert '  mail.smtp.password = "[redacted]"  (AUTHD_MAIL__SMTP__PASSWORD)' in check.stdout.splitlines()
        assert "hunter2" not in check.stdout + check.stderr
        assert "warning       the issuer is https:// but neither http.tls nor http.trusted_proxies is set" in check.stdout
        behind = subprocess.run([BINARY, "check", "--data", folder], capture_output=True, text=True,
                                env={**env, "AUTHD_HTTP__TRUSTED_PROXIES": '["10.0.0.0/8"]'})
        assert behind.returncode == 0 and "neither http.tls nor http.trusted_proxies" not in behind.stdout
        assert '  http.trusted_proxies = ["10.0.0.0/8"]  (AUTHD_HTTP__TRUSTED_PROXIES)' in behind.stdout.splitlines()


def test_a_non_numeric_authd_port_is_ignored_with_a_warning():
    """Kubernetes sets AUTHD_PORT=tcp://IP:PORT for a service named authd (contract §14)."""
    with tempfile.TemporaryDirectory() as folder:
        socket_path = os.path.join(folder, "authd.sock")
        env = clean_env(AUTHD_PORT="tcp://10.0.0.7:8080", AUTHD_HTTP__TCP="false", AUTHD_HTTP__UNIX_SOCKET=socket_path)
        proc = subprocess.Popen([BINARY, "serve", "--data", folder], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        try:
            line = proc.stdout.readline()
            assert line.strip() == f"authd listening on unix:{socket_path}", line
        finally:
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0
        assert "AUTHD_PORT is not a port number" in err


def test_a_malformed_value_stops_start_up_naming_the_variable():
    with tempfile.TemporaryDirectory() as folder:
        cases = {
            "AUTHD_TOKENS__ACCESS_TTL": ("ten minutes", "AUTHD_TOKENS__ACCESS_TTL must be a number (tokens.access_ttl)"),
            "AUTHD_HTTP__TCP": ("yes", "AUTHD_HTTP__TCP must be true or false (http.tcp)"),
            "AUTHD_PROVIDERS": ("email,totp", "AUTHD_PROVIDERS must be a JSON array (providers)"),
            "AUTHD_TOKENS__REFRESH_REUSE_GRACE": ("999", "tokens.refresh_reuse_grace (AUTHD_TOKENS__REFRESH_REUSE_GRACE) must be between 0 and 300, not 999"),
            "AUTHD_AUDIENCE_FILE": ("/nonexistent", "AUTHD_AUDIENCE_FILE: cannot read the file /nonexistent"),
        }
        for name, (value, expected) in cases.items():
            run = subprocess.run([BINARY, "serve", "--data", folder, "--port", "0"], capture_output=True, text=True,
                                 env=clean_env(**{name: value}), timeout=60)
            assert run.returncode == 1, (name, run.stdout)
            assert expected in run.stderr, (name, run.stderr)
            assert value not in run.stderr.replace(expected, ""), run.stderr
        both = subprocess.run([BINARY, "serve", "--data", folder, "--port", "0"], capture_output=True, text=True, timeout=60,
                              env=clean_env(AUTHD_TOKENS='{"access_ttl": 60}', AUTHD_TOKENS__REFRESH_TTL="60"))
        assert both.returncode == 1
        assert "AUTHD_TOKENS sets tokens and AUTHD_TOKENS__REFRESH_TTL sets tokens.refresh_ttl inside it" in both.stderr
