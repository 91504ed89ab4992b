"""schemathesis against GET /openapi.yaml on a running server, every operation, every check it has
(examples, coverage, fuzzing and stateful phases, positive and negative data): no 5xx, no crash,
every answer as the spec says.

The examples per operation come from AUTHD_FUZZ_EXAMPLES: 25 in CI, 500 for the documented long run
(`AUTHD_FUZZ_EXAMPLES=500 python3 -m pytest -s IntegrationTests/blackbox/test_schemathesis.py`).

`positive_data_acceptance` (every request the schema allows is accepted) runs through
schemathesis_hooks.py, which lets through only the refusals no schema can express: WEAK_PASSWORD,
and `current_pin`/`current_password` required once a PIN or password is set.

Operations that end the caller's session (logout, account deletion, session revocation) run in a
second pass with their own token, so that they do not turn the first pass into a sea of 401s.
"""
import json
import os
import re
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from conftest import running_server

BIG = {"limit": 1000000, "window": 1}
CONFIG = {
    "providers": ["email", "pin", "password", "apple", "totp", "passkey"],
    "passkeys": {"rp_id": "example.org", "login_per_ip": BIG, "apple_app_ids": ["ABCDE12345.org.example.app"]},
    "tokens": {"refresh_rate": BIG},
    "email": {"sends_per_ip": BIG, "verifies_per_ip": BIG, "attempts_per_client": BIG, "resend_interval": 0},
    "pin": {"attempts_per_ip": BIG, "anonymous_per_ip": BIG},
    "password": {"login_per_ip": BIG, "login_per_email": BIG, "register_per_ip": BIG, "resets_per_ip": BIG, "resets_per_email": BIG,
                 "resets_per_email_ip": BIG, "verifies_per_ip": BIG, "resends_per_ip": BIG, "attempts_per_client": BIG},
}
SESSION_ENDING = ["/api/v1/auth/logout", "/api/v1/auth/account", "/api/v1/auth/sessions/{id}"]


class AppleKeys(BaseHTTPRequestHandler):
    """Apple's JWKS endpoint, standing in: no keys, so every identity token is refused with 401."""

    def do_GET(self):
        body = json.dumps({"keys": []}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def run_schemathesis(server, token, filters, mark):
    examples = os.environ.get("AUTHD_FUZZ_EXAMPLES", "25")
    command = ["schemathesis", "run", server.url + "/openapi.yaml", "--checks", "all",
               "--exclude-checks", "positive_data_acceptance", "--max-examples", examples,
               "--header", f"Authorization: Bearer {token}", "--no-color", "--workers", "2", *filters]
    here = os.path.dirname(os.path.abspath(__file__))
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "schemathesis_hooks", "AUTHD_SCHEMATHESIS_MARK": mark,
           "PYTHONPATH": here + os.pathsep + os.environ.get("PYTHONPATH", "")}
    result = subprocess.run(command, capture_output=True, text=True, timeout=1800, env=env)
    generated = re.search(r"(\d+) generated", result.stdout)
    print(result.stdout[-1500:])
    assert result.returncode == 0, result.stdout[-20000:]
    return int(generated.group(1)) if generated else 0


def test_schemathesis_finds_nothing():
    apple = ThreadingHTTPServer(("127.0.0.1", 0), AppleKeys)
    threading.Thread(target=apple.serve_forever, daemon=True).start()
    config = {**CONFIG, "apple": {"audiences": ["com.example.app"], "jwks_url": f"http://127.0.0.1:{apple.server_port}/keys"}}
    try:
        with running_server(config, log=True) as server:
            mark = os.path.join(server.folder, "schemathesis-marks")
            token = server.sign_in("fuzz@example.com")["access_token"]
            cases = run_schemathesis(server, token, [arg for path in SESSION_ENDING for arg in ("--exclude-path", path)], mark)
            token = server.sign_in("fuzz-ending@example.com")["access_token"]
            cases += run_schemathesis(server, token, [arg for path in SESSION_ENDING for arg in ("--include-path", path)], mark)
            # The positive-data check ran, and what it let through was only what the hooks allow.
            marks = open(mark).read().splitlines()
            assert marks.count("checked") > 100, len(marks)
            oauth = {"allowed " + e for e in ("invalid_grant", "authorization_pending", "slow_down", "expired_token", "access_denied")}
            assert set(marks) <= {"checked", "allowed WEAK_PASSWORD", "allowed INVALID_REQUEST"} | oauth, set(marks)
            assert server.call("GET", "/health")[0] == 200
            log = server.log()
            assert "unexpected error" not in log, log[-5000:]
            print(f"schemathesis: {cases} cases, 0 failures")
    finally:
        apple.shutdown()
