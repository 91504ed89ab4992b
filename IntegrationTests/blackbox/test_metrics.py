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
        time.sleep(1.5)  # the job runner reports the queue each second
        text = scrape(port)
        assert value(text, "authd_sign_ins_total", provider="email", outcome="success") == 1
        assert value(text, "authd_sign_ins_total", provider="email", outcome="failure") >= 2
        assert value(text, "authd_rate_limit_rejections_total") >= 1
        assert value(text, "hb_requests", http_route="/api/v1/auth/refresh", http_response_status_code="200") == 1
        assert value(text, "http_server_request_duration_count", http_route="/api/v1/auth/me", http_request_method="PATCH") == 30
        assert value(text, "authd_store_fsync_seconds_count") >= 30
        assert value(text, "authd_store_snapshot_seconds_count") >= 1
        assert value(text, "authd_store_journal_bytes") is not None
        assert value(text, "authd_jobs_pending", kind="mail") == 0
        # Not on the public port.
        assert server.call("GET", "/metrics")[0] == 404
        # No secret in it.
        assert session["refresh_token"] not in text and session["access_token"] not in text


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
