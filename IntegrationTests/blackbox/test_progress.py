"""The long admin commands (`import-users`, `import`, `export`, `backup`) draw their progress on a
terminal — counts, share, rate, time left — and stay silent when standard error is not one. Run
under a pseudo-terminal, on the data folder itself and over a running server's admin socket."""
import json
import os
import pty
import re
import shutil
import subprocess
import tempfile

from conftest import BASE_CONFIG, running_server

BINARY = os.environ.get("AUTHD_BINARY", ".build/debug/authd")
USERS = 30_000
RATE = re.compile(r", [\d,]+/s, ")


def on_terminal(*args):
    """Runs authd with standard error on a pseudo-terminal: (exit code, stdout, what was drawn)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([BINARY, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    drawn = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the last writer closed the terminal
            break
        if not chunk:
            break
        drawn += chunk
    out = proc.stdout.read()
    proc.wait(timeout=120)
    os.close(master)
    return proc.returncode, out.decode(), drawn.decode()


def piped(*args):
    result = subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=120)
    return result.returncode, result.stdout, result.stderr


def lines(drawn):
    """The states of the redrawn line, in order."""
    return [part for part in drawn.split("\r\x1b[K") if part]


def write_users(path, prefix):
    with open(path, "w") as f:
        for i in range(USERS):
            f.write(json.dumps({"email": f"{prefix}{i}@example.com", "display_name": f"User {i}"}) + "\n")


def expect_progress(drawn, phase, done, unit):
    states = lines(drawn)
    ours = [s for s in states if s.startswith(phase + ":")]
    assert ours, drawn
    # Counts only go up, and the last state says all of it is done.
    counts = [int(re.match(re.escape(phase) + r": ([\d,]+)", s).group(1).replace(",", "")) for s in ours]
    assert counts == sorted(counts), ours
    assert ours[-1].startswith(f"{phase}: {done:,}") and "(100%)" in ours[-1] and unit in ours[-1], ours
    # Erased at the end: the command's output starts on a clean line.
    assert drawn.endswith("\r\x1b[K"), repr(drawn[-80:])
    return ours


def test_import_users_draws_lines_rate_and_time_left_on_a_terminal_and_nothing_otherwise():
    with tempfile.TemporaryDirectory() as tmp:
        folder, other = os.path.join(tmp, "data"), os.path.join(tmp, "other")
        path = os.path.join(tmp, "users.jsonl")
        write_users(path, "u")

        code, out, drawn = on_terminal("import-users", path, "--data", folder)
        assert code == 0, (out, drawn)
        assert out == f"{USERS} lines: {USERS} users imported, 0 skipped (already there), 0 refused\n"
        ours = expect_progress(drawn, "importing users", USERS, "lines")
        # A run of a second or more shows the rate and the time left on the way.
        assert any(RATE.search(s) and s.endswith(" left") for s in ours), ours

        # Not a terminal: the same output, nothing on standard error.
        code, plain_out, plain_err = piped("import-users", path, "--data", other)
        assert code == 0 and plain_out == out and plain_err == ""
        code, _, err = piped("import-users", path, "--data", other, "--dry-run")
        assert code == 0 and err == ""


def test_over_the_admin_socket_backup_export_and_import_users_stream_their_progress():
    with running_server() as server:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "users.jsonl")
            write_users(path, "s")
            code, out, drawn = on_terminal("import-users", path, "--data", server.folder)
            assert code == 0 and f"{USERS} users imported" in out, (out, drawn)
            expect_progress(drawn, "importing users", USERS, "lines")

            code, out, drawn = on_terminal("backup", "--to", os.path.join(tmp, "backup.json"), "--data", server.folder)
            assert code == 0 and out.startswith("backup written to"), (out, drawn)
            expect_progress(drawn, "writing the backup", USERS, f"of {USERS:,} records")

            export = os.path.join(tmp, "export.json")
            code, out, drawn = on_terminal("export", "--to", export, "--data", server.folder)
            assert code == 0 and out.startswith("exported to"), (out, drawn)
            expect_progress(drawn, "exporting", USERS, "records")

            # Not a terminal: silent.
            code, _, err = piped("backup", "--to", os.path.join(tmp, "b2.json"), "--data", server.folder)
            assert code == 0 and err == ""

            # The export into a new data folder: reading, then storing, counted.
            fresh = os.path.join(tmp, "fresh")
            os.makedirs(fresh, mode=0o700)
            with open(os.path.join(fresh, "authd.json"), "w") as f:
                json.dump(BASE_CONFIG, f)
            code, out, drawn = on_terminal("import", "--from", export, "--data", fresh)
            assert code == 0 and f"{USERS} users, 0 sessions" in out, (out, drawn)
            assert lines(drawn)[0].startswith("checking export.json…"), drawn
            expect_progress(drawn, "storing", USERS, "records")
            shutil.rmtree(fresh)


def test_a_failing_command_erases_its_line_and_says_why():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "users.jsonl")
        with open(path, "w") as f:
            f.write('{"email":"fine@example.com"}\n{"email":"not an address"}\n')
        code, out, drawn = on_terminal("import-users", path, "--data", os.path.join(tmp, "data"))
        assert code == 1
        assert "1 user imported" in out and "line 2: email is not a valid address" in out
        assert drawn.endswith("\r\x1b[K"), repr(drawn)
