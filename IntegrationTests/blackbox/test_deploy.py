"""deploy/authd.service: a unit systemd accepts, with the hardening the README promises."""
import os
import shutil
import subprocess
import tempfile

UNIT = os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "authd.service")


def test_the_unit_is_hardened():
    text = open(UNIT).read()
    for directive in ("DynamicUser=yes", "ProtectSystem=strict", "ReadWritePaths=/var/lib/authd", "NoNewPrivileges=yes",
                      "Restart=on-failure", "StateDirectoryMode=0700", "UMask=0077", "KillSignal=SIGTERM", "CapabilityBoundingSet="):
        assert directive + "\n" in text, directive


def test_systemd_accepts_the_unit():
    analyze = shutil.which("systemd-analyze")
    assert analyze, "systemd-analyze is needed (Debian: apt-get install systemd)"
    binary = os.path.abspath(os.environ.get("AUTHD_BINARY", ".build/debug/authd"))
    with tempfile.TemporaryDirectory() as folder:
        unit = os.path.join(folder, "authd.service")
        with open(unit, "w") as f:
            f.write(open(UNIT).read().replace("/usr/local/bin/authd", binary))
        result = subprocess.run([analyze, "verify", unit], capture_output=True, text=True)
        problems = [line for line in (result.stdout + result.stderr).splitlines() if "authd.service" in line]
        assert result.returncode == 0 and not problems, result.stdout + result.stderr
