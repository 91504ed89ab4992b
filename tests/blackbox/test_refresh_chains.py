"""bench/refresh_chains.c, scenario (c)'s load generator, against a real server: every answer's new
refresh token goes back into the chains, and a failed rotation is counted, not hidden."""
import importlib.util
import json
import os
import subprocess
import urllib.parse

from conftest import running_server

_spec = importlib.util.spec_from_file_location("bench_driver", os.path.join(os.path.dirname(__file__), "..", "..", "bench", "driver.py"))
driver = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(driver)

BIG = {"limit": 1000000, "window": 1}
# No grace: a token sent twice ends its session with 401, so a generator that lost the new token
# and sent the old one again would show errors.
CONFIG = {"tokens": {"refresh_rate": BIG, "refresh_reuse_grace": 0}, "pin": {"anonymous_per_ip": BIG}}


def run_chains(tmp_path, server, tokens, connections):
    path = tmp_path / "tokens.txt"
    path.write_text("\n".join(tokens) + "\n")
    url = urllib.parse.urlparse(server.url)
    out = subprocess.run([driver.compile_chains(str(tmp_path)), url.hostname, str(url.port), str(connections), "1", str(path)],
                         capture_output=True, text=True, check=True, timeout=30).stdout
    return json.loads(out)


def refresh_tokens(server, n):
    tokens = []
    for _ in range(n):
        status, body, _ = server.call("POST", "/api/v1/auth/anonymous", {})
        assert status == 200, body
        tokens.append(body["refresh_token"])
    return tokens


def test_chains_rotate_without_reusing_a_token(tmp_path):
    with running_server(CONFIG) as server:
        tokens = refresh_tokens(server, 4)
        r = run_chains(tmp_path, server, tokens, 2)
        assert r["errors"] == 0, r
        assert r["requests"] > 4 * 5, r  # every chain rotated several times
        assert 0 < r["p50_ms"] <= r["p99_ms"] <= r["p999_ms"], r
        # The chains' first tokens were rotated away (and, after 16 rotations, forgotten).
        status, body, _ = server.call("POST", "/api/v1/auth/refresh", {"refresh_token": tokens[0]})
        assert status == 401 and body["error"]["code"] in ("REFRESH_TOKEN_REUSED", "INVALID_REFRESH_TOKEN"), body


def test_a_failed_rotation_is_an_error_and_the_other_chains_go_on(tmp_path):
    with running_server(CONFIG) as server:
        tokens = refresh_tokens(server, 3) + ["not-a-refresh-token"]
        r = run_chains(tmp_path, server, tokens, 2)
        # The bad token goes back into the ring after each 401 and fails again each time it comes round.
        assert r["errors"] >= 2, r
        assert r["requests"] - r["errors"] > 3 * 5, r
