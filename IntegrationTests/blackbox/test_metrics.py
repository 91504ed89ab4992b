"""GET /metrics (Prometheus text format) on the listener `metrics.listen` names, never on the API port."""
import os
import socket
import time
import urllib.request

from conftest import running_server


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        assert resp.headers["Content-Type"].startswith("text/plain")
        return resp.read().decode()


def value(text, name, **labels):
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            if all(f'{k}="{v}"' in line for k, v in labels.items()):
                return float(line.rsplit(" ", 1)[1])
    return None


def test_metrics_count_what_an_operator_watches():
    port = free_port()
    config = {"metrics": {"listen": f"127.0.0.1:{port}"}, "storage": {"compact_after_bytes": 4096},
              "email": {"verifies_per_ip": {"limit": 3, "window": 3600}}}
    with running_server(config) as server:
        session = server.sign_in("metrics@example.com")
        server.call("POST", "/api/v1/auth/refresh", {"refresh_token": session["refresh_token"]})
        for _ in range(4):
            server.call("POST", "/api/v1/auth/email/verify", {"email": "guess@example.com", "code": "000000"})
        for n in range(30):  # enough journal to pass 4 KiB and write a snapshot
            server.call("PATCH", "/api/v1/auth/me", {"display_name": f"name {n}"}, token=session["access_token"])
        # The snapshot is written, and the job runner reports the queue, by other tasks: waited for.
        for _ in range(600):
            text = scrape(port)
            if value(text, "authd_store_snapshot_seconds_count") and value(text, "authd_jobs_pending", kind="mail") == 0:
                break
            time.sleep(0.1)
        assert value(text, "authd_sign_ins_total", provider="email", outcome="success") == 1
        assert value(text, "authd_sign_ins_total", provider="email", outcome="failure") >= 2
        assert value(text, "authd_rate_limit_rejections_total") >= 1
        assert value(text, "authd_http_requests_total", route="/api/v1/auth/refresh", method="POST", status="200") == 1
        assert value(text, "authd_http_request_duration_seconds_count", route="/api/v1/auth/me", method="PATCH") == 30
        assert value(text, "authd_sign_ins_total", provider="email", outcome="failure", reason="INVALID_CODE") >= 1
        assert value(text, "authd_store_fsync_seconds_count") >= 30
        assert value(text, "authd_store_snapshot_seconds_count") >= 1
        assert value(text, "authd_store_journal_bytes") is not None
        assert value(text, "authd_jobs_pending", kind="mail") == 0
        # Every audit event by name: those that happened, and every declared one from 0.
        assert value(text, "authd_audit_events_total", event="sign_in") == 1
        assert value(text, "authd_audit_events_total", event="sign_in_failed") >= 2
        assert value(text, "authd_audit_events_total", event="password_changed") == 0
        assert value(text, "authd_audit_events_total", event="refresh_reuse") == 0
        # Not on the public port.
        assert server.call("GET", "/metrics")[0] == 404
        # No secret in it.
        assert session["refresh_token"] not in text and session["access_token"] not in text


def test_every_metric_the_grafana_dashboard_queries_exists():
    """deploy/grafana-dashboard.json queries only metrics authd exports (seen after traffic that
    makes each appear: a reused refresh token, a webhook receiver that is down, …)."""
    import base64
    import json
    import re
    import tempfile
    dashboard = json.load(open(os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "grafana-dashboard.json")))
    queried = {name for panel in dashboard["panels"] for target in panel["targets"] for name in re.findall(r"authd_[a-z_]+", target["expr"])}
    assert len(queried) >= 10, queried
    port, down = free_port(), free_port()
    with tempfile.TemporaryDirectory() as tmp:
        secret = os.path.join(tmp, "webhook-secret")
        with open(secret, "w") as f:
            f.write("whsec_" + base64.b64encode(os.urandom(32)).decode())
        config = {"metrics": {"listen": f"127.0.0.1:{port}"}, "tokens": {"refresh_reuse_grace": 0},
                  "email": {"verifies_per_ip": {"limit": 2, "window": 3600}},
                  "webhooks": [{"url": f"http://127.0.0.1:{down}/hook", "secret_file": secret, "events": ["user.created"]}],
                  "webhook_delivery": {"retry_delay": 1, "timeout": 1}}
        with running_server(config) as server:
            session = server.sign_in("dashboard@example.com")
            assert server.call("POST", "/api/v1/auth/refresh", {"refresh_token": session["refresh_token"]})[0] == 200
            assert server.call("POST", "/api/v1/auth/refresh", {"refresh_token": session["refresh_token"]})[1]["error"]["code"] == "REFRESH_TOKEN_REUSED"
            for _ in range(3):
                server.call("POST", "/api/v1/auth/email/verify", {"email": "guess@example.com", "code": "000000"})
            for _ in range(40):  # the webhook's first delivery fails; the job runner reports each second
                text = scrape(port)
                if "authd_job_failures_total" in text and "authd_users" in text:
                    break
                time.sleep(0.25)
            exported = set(re.findall(r"^(authd_[a-z_]+)", text, re.M))
            assert queried <= exported, sorted(queried - exported)


def listening_tcp_sockets(pid):
    """TCP sockets in LISTEN state that process `pid` holds."""
    listening = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for row in f.readlines()[1:]:
                fields = row.split()
                if fields[3] == "0A":
                    listening.add(fields[9])
    held = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            held.add(target[8:-1])
    return len(listening & held)


def test_no_metrics_listener_unless_configured():
    with running_server() as server:
        assert server.call("GET", "/metrics")[0] == 404
        assert listening_tcp_sockets(server.proc.pid) == 1  # the API only
    port = free_port()
    with running_server({"metrics": {"listen": f"127.0.0.1:{port}"}}) as server:
        # The server announces itself once every listener accepts connections: no retry.
        scrape(port)
        assert listening_tcp_sockets(server.proc.pid) == 2
