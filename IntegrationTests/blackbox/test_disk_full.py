"""Disk trouble on a real file system: a full disk answers writes with 503 and a clear log line,
acknowledges nothing it did not persist, and recovers once space returns, without a restart.

The data folder lives on a 4 MiB tmpfs that a filler file fills up; writes into the journal's
reserved space (1 MiB at a time) go on, durably, until it is used up, then the store refuses. Where mounting is not
permitted (an unprivileged container), the same failure comes from a file-size limit (RLIMIT_FSIZE
set with prlimit on the running server), which makes write(2) fail with EFBIG instead of ENOSPC.
"""
import json
import os
import subprocess
import tempfile
import time

import pytest

from conftest import Server

CONFIG = {"issuer": "https://auth.example.test", "audience": "my-app", "mail": {"transport": "outbox"}}


class FullDisk:
    """Fills and empties the disk under `folder`, with a tmpfs when possible, else with a size limit."""

    def __init__(self, folder, mechanism):
        self.folder = folder
        self.tmpfs = mechanism == "tmpfs" and subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", folder], capture_output=True).returncode == 0
        self.server = None

    def fill(self):
        if self.tmpfs:
            with open(os.path.join(self.folder, "filler"), "wb", buffering=0) as f:
                try:
                    while True:
                        f.write(b"\0" * 4096)
                except OSError:
                    pass
        else:
            subprocess.run(["prlimit", "--pid", str(self.server.proc.pid), "--fsize=1:"], check=True)

    def free(self):
        if self.tmpfs:
            os.unlink(os.path.join(self.folder, "filler"))
        else:
            subprocess.run(["prlimit", "--pid", str(self.server.proc.pid), "--fsize=unlimited:"], check=True)

    def close(self):
        if self.tmpfs:
            subprocess.run(["umount", "-l", self.folder])


def use_up_reserved_space(server, token):
    """The journal reserves space ahead of its lines (1 MiB at a time), so writes go on for a while
    after the disk fills, durably. Change the display name until the store refuses one."""
    for i in range(20000):
        status, body, _ = server.call("PATCH", "/api/v1/auth/me", {"display_name": f"Name {i:05d} " + "x" * 40}, token=token)
        if status == 503:
            assert body["error"]["code"] == "UNAVAILABLE"
            return i
        assert status == 200, body
    raise AssertionError("the store never refused a write on the full disk")


def wait_for(predicate, seconds=120):  # generous for a loaded machine; returns as soon as it holds
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("mechanism", ["tmpfs", "fsize"])
def test_a_full_disk_refuses_writes_with_503_and_recovers_without_restart(mechanism):
    with tempfile.TemporaryDirectory() as parent:
        folder = os.path.join(parent, "data")
        os.mkdir(folder)
        disk = FullDisk(folder, mechanism)
        try:
            with open(os.path.join(folder, "authd.json"), "w") as f:
                json.dump(CONFIG, f)
            # The log lives off the full disk, as it would on a real system.
            server = disk.server = Server(folder, log=os.path.join(parent, "server.log"))
            before = server.sign_in("before@example.com")
            status, _, _ = server.call("POST", "/api/v1/auth/email/send-code", {"email": "during@example.com"})
            assert status == 200
            code = server.mailed_code("during@example.com")

            disk.fill()
            accepted = use_up_reserved_space(server, before["access_token"])
            assert accepted < 20000
            # A refresh is a write: refused, and the old refresh token is not used up by it.
            status, body, _ = server.call("POST", "/api/v1/auth/refresh", {"refresh_token": before["refresh_token"]})
            assert status == 503, body
            assert body["error"]["code"] == "UNAVAILABLE"
            status, body, _ = server.call("POST", "/api/v1/auth/email/verify", {"email": "during@example.com", "code": code})
            assert status == 503, body
            # Reads go on.
            status, me, _ = server.call("GET", "/api/v1/auth/me", token=before["access_token"])
            assert status == 200 and me["email"] == "before@example.com"
            assert server.logged("refusing writes (503) until the disk accepts them again")

            disk.free()
            assert wait_for(lambda: server.call("POST", "/api/v1/auth/refresh",
                                                {"refresh_token": before["refresh_token"]})[0] == 200), server.log()
            assert server.logged("the disk accepts writes again; writes resumed")
            # The verify answered 503 did not use the code up: the code signs in now.
            status, during, _ = server.call("POST", "/api/v1/auth/email/verify", {"email": "during@example.com", "code": code})
            assert status == 200, during
            server.stop()

            again = Server(folder)
            status, me, _ = again.call("GET", "/api/v1/auth/me", token=during["access_token"])
            assert status == 200 and me["email"] == "during@example.com"
            again.stop()
        finally:
            if disk.server and disk.server.proc.poll() is None:
                disk.server.proc.kill()
            disk.close()
