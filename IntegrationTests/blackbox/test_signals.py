"""Signals. SIGHUP re-reads the configuration file: log level, mail settings and rate limits change
while serving, other changes are named as needing a restart, and a file with an error changes
nothing. SIGTERM ends promptly (in-flight requests get http.shutdown_timeout) and flushes the store."""
import json
import os
import signal
import time

from conftest import running_server


def write_config(server, config):
    with open(os.path.join(server.folder, "authd.json"), "w") as f:
        json.dump({"issuer": "https://auth.example.test", "audience": "my-app", **config}, f)


def hangup(server, expect):
    before = server.log().count(expect)
    server.proc.send_signal(signal.SIGHUP)
    deadline = time.time() + 60  # generous for a loaded machine; it goes on as soon as the line is there
    while time.time() < deadline and server.log().count(expect) == before:
        time.sleep(0.05)
    return [line for line in server.log().splitlines() if expect in line][-1]


def send(server, email):
    return server.call("POST", "/api/v1/auth/email/send-code", {"email": email})[0]


def test_sighup_reloads_limits_mail_and_log_level_and_names_the_rest():
    limited = {"mail": {"transport": "outbox"}, "log": {"level": "info"}, "email": {"sends_per_ip": {"limit": 1, "window": 3600}}}
    with running_server(limited, log=True, level_from_env=False) as server:
        assert [send(server, "a@example.com"), send(server, "b@example.com")] == [200, 429]
        write_config(server, {"audience": "another-app", "mail": {"transport": "log"}, "log": {"level": "debug"},
                              "email": {"sends_per_ip": {"limit": 100, "window": 3600}}})
        line = hangup(server, "SIGHUP: configuration reloaded")
        assert "rate limits" in line and "mail" in line and "log level (debug)" in line and "needs_restart=audience" in line
        assert [send(server, "c@example.com"), send(server, "d@example.com")] == [200, 200]
        assert server.logged("mail.to=d@example.com")  # the log transport now, not the outbox
        assert server.logged(" debug authd:")  # debug lines appear now

        # A file with an error changes nothing.
        write_config(server, {"mail": {"transport": "outbox"}, "email": {"sends_per_ip": {"limit": 0, "window": 3600}}})
        assert "email.sends_per_ip" in hangup(server, "configuration was not reloaded")
        with open(os.path.join(server.folder, "authd.json"), "w") as f:
            f.write("{ not json")
        hangup(server, "configuration was not reloaded")
        assert send(server, "e@example.com") == 200
        assert server.logged("mail.to=e@example.com")

        # Removing a limit goes back to its built-in value (20 an hour).
        write_config(server, {"mail": {"transport": "outbox"}})
        hangup(server, "SIGHUP: configuration reloaded")
        statuses = [send(server, f"f{n}@example.com") for n in range(21)]
        assert statuses == [200] * 20 + [429]


def test_sigterm_ends_promptly_with_an_open_event_stream_and_flushes_the_store():
    import http.client
    from urllib.parse import urlparse
    with running_server({"http": {"shutdown_timeout": 1}}) as server:
        session = server.sign_in("term@example.com")
        url = urlparse(server.url)
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        conn.request("GET", "/api/v1/auth/approvals/stream", headers={"Authorization": "Bearer " + session["access_token"]})
        stream = conn.getresponse()
        assert stream.status == 200
        server.proc.send_signal(signal.SIGTERM)
        # It exits while this client still holds the stream open: in-flight requests get
        # shutdown_timeout (1 s), not the stream's half hour. Shown by order, not timed: the wait is
        # only bounded so that a server that waits for the stream fails instead of hanging the run.
        assert server.proc.wait(timeout=300) == 0
        conn.close()  # only now does this side let go
        # The store was flushed into a snapshot: the journal is empty and the session is there.
        assert os.path.exists(os.path.join(server.folder, "snapshot.json"))
        again = __import__("conftest").Server(server.folder)
        assert again.call("GET", "/api/v1/auth/me", token=session["access_token"])[0] == 200
        again.stop()
