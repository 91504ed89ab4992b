"""deploy/Containerfile and deploy/compose.yaml, as far as these machines allow (contract §14).

Containers cannot run here and no registry serves base images, so: a minimal Debian is
debootstrapped from the machine's own mirror and imported into podman as the runtime base; the
image's runtime stage is built from the binary built on this host (statically linked against the
Swift runtime, as the builder stage links it); the image's filesystem is exported and its binary
run with chroot as the image's user (`--version`, `check`, `serve` answered by `health`).
compose.yaml is validated against the Compose specification (docker-compose's schema), and the
environment it gives authd is checked by `authd check` against a real PostgreSQL when there is one.
"""
import json
import os
import re
import shutil
import signal
import socket
import time
import subprocess
import tempfile
import urllib.parse

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CONTAINERFILE = os.path.join(ROOT, "deploy", "Containerfile")
COMPOSE = os.path.join(ROOT, "deploy", "compose.yaml")
SWIFT_STATIC = ["--static-swift-stdlib", "-Xlinker", "-lCoreFoundation", "-Xlinker", "-l_FoundationICU",
                "-Xlinker", "-l_FoundationCShims", "-Xlinker", "-l_FoundationCollections"]

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="debootstrap and chroot need root (CI runs as root)")


def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, f"{command[:4]}… exited {result.returncode}: {result.stdout[-2000:]} {result.stderr[-3000:]}"
    return result


def mirror():
    """The Debian mirror and suite this machine installs from."""
    suite = re.search(r"^VERSION_CODENAME=(\S+)", open("/etc/os-release").read(), re.M).group(1)
    for path in ["/etc/apt/sources.list.d/debian.sources", "/etc/apt/sources.list"]:
        if os.path.exists(path):
            found = re.search(r"^(?:URIs:|deb(?:\s+\[[^\]]*\])?)\s+(https?://\S+/debian)/?\s", open(path).read(), re.M)
            if found:
                return found.group(1), suite
    return "http://deb.debian.org/debian", suite


def static_binary(folder):
    """authd linked statically against the Swift runtime, as the image's builder stage links it, copied
    into `folder`; the build is then put back as `swift build` leaves it."""
    bin_path = run(["swift", "build", "--show-bin-path"], cwd=ROOT).stdout.strip()
    started = time.time() - 1
    run(["swift", "build", "--product", "authd", *SWIFT_STATIC], cwd=ROOT, timeout=1800)
    linked = run(["ldd", os.path.join(bin_path, "authd")]).stdout
    assert "libswiftCore" not in linked and "libFoundation" not in linked, linked
    binary = os.path.join(folder, "authd")
    shutil.copy2(os.path.join(bin_path, "authd"), binary)
    # Every object compiled for the static link (the executable's, and any module that was out of
    # date) carries autolink entries naming the static libraries, and SwiftPM does not notice the
    # flags changed back: without them, the next plain build recompiles them.
    for folder_path, _, names in os.walk(bin_path):
        for name in names:
            path = os.path.join(folder_path, name)
            if name.endswith(".o") and os.path.getmtime(path) >= started:
                os.remove(path)
    run(["swift", "build", "--product", "authd"], cwd=ROOT, timeout=1800)
    assert "libswiftCore" in run(["ldd", os.path.join(bin_path, "authd")]).stdout
    return binary


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@needs_root
def test_the_image_builds_from_a_local_base_and_its_binary_runs_from_the_exported_filesystem():
    work = tempfile.mkdtemp(prefix="authd-image-")
    binary = static_binary(work)
    version = run([binary, "--version"]).stdout.strip()
    mounted = []
    podman = ["podman", "--storage-driver", "vfs", "--root", os.path.join(work, "storage"), "--runroot", os.path.join(work, "run")]
    try:
        url, suite = mirror()
        rootfs = os.path.join(work, "rootfs")
        run(["debootstrap", "--variant=minbase", suite, rootfs, url], timeout=1200)
        base = f"localhost/authd-test-base:{suite}"
        tar = subprocess.Popen(["tar", "-C", rootfs, "-c", "."], stdout=subprocess.PIPE)
        run(podman + ["import", "-", base], stdin=tar.stdout, timeout=600)
        tar.wait()
        shutil.rmtree(rootfs)

        # The builder stage is the host's build: its output tree stands in for the stage named `build`.
        built = os.path.join(work, "built")
        os.makedirs(os.path.join(built, "out", "usr", "local", "bin"))
        shutil.copy2(binary, os.path.join(built, "out", "usr", "local", "bin", "authd"))
        context = os.path.join(work, "context")
        os.makedirs(context)
        run(podman + ["build", "--isolation", "chroot", "--format", "docker", "-f", CONTAINERFILE, "--target", "runtime",
                      "--build-arg", f"RUNTIME_IMAGE={base}", "--build-arg", f"BUILDER_IMAGE={base}",
                      "--build-context", f"build={built}", "-t", "localhost/authd:test", context], timeout=1800)

        config = json.loads(run(podman + ["image", "inspect", "localhost/authd:test"]).stdout)[0]
        image = config["Config"]
        assert image["User"] == "authd"
        assert "/data" in image["Volumes"] and "8080/tcp" in image["ExposedPorts"]
        assert {"AUTHD_DATA=/data", "AUTHD_HOST=0.0.0.0", "AUTHD_PORT=8080"} <= set(image["Env"])
        assert image["Entrypoint"] == ["/usr/local/bin/authd"] and image["Cmd"] == ["serve"]
        assert config["Healthcheck"]["Test"] == ["CMD", "/usr/local/bin/authd", "health"]

        container = run(podman + ["create", "localhost/authd:test"]).stdout.strip()
        fs = os.path.join(work, "fs")
        os.makedirs(fs)
        export = subprocess.Popen(podman + ["export", container], stdout=subprocess.PIPE)
        run(["tar", "-C", fs, "-x"], stdin=export.stdout, timeout=600)
        assert export.wait() == 0
        data = os.stat(os.path.join(fs, "data"))
        assert data.st_uid == 10001 and data.st_mode & 0o777 == 0o700
        assert not os.path.exists(os.path.join(fs, "usr", "bin", "swift"))

        # As the image runs it: its user, its environment, nothing of the host's; /proc as a container
        # has it (the Swift runtime reads its arguments there).
        run(["mount", "-t", "proc", "proc", os.path.join(fs, "proc")])
        mounted.append(os.path.join(fs, "proc"))
        as_image = ["chroot", "--userspec=10001:10001", fs, "/usr/bin/env", "-i", "PATH=/usr/local/bin:/usr/bin:/bin",
                    "AUTHD_DATA=/data", "AUTHD_HOST=0.0.0.0"]
        assert run(as_image + ["AUTHD_PORT=8080", "authd", "--version"]).stdout.strip() == version
        check = run(as_image + ["AUTHD_PORT=8080", "AUTHD_ISSUER=http://localhost:8080", "authd", "check"])
        assert "store         file: 0 users, 0 sessions, writable" in check.stdout
        assert '  issuer = "http://localhost:8080"  (AUTHD_ISSUER)' in check.stdout.splitlines()
        port = free_port()
        server = subprocess.Popen(as_image + [f"AUTHD_PORT={port}", "authd", "serve"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = server.stdout.readline()
            assert line.strip() == f"authd listening on http://0.0.0.0:{port}", line + server.stderr.read(2000)
            # The image's healthcheck, from inside it: 0.0.0.0 is asked on loopback.
            health = run(as_image + [f"AUTHD_PORT={port}", "authd", "health"])
            assert health.stdout.startswith(f"ok: http://127.0.0.1:{port}/health")
        finally:
            server.send_signal(signal.SIGTERM)
            server.communicate(timeout=60)
        assert server.returncode == 0
        keys = os.path.join(fs, "data", "keys")
        assert os.stat(keys).st_uid == 10001 and all(os.stat(os.path.join(keys, f)).st_mode & 0o077 == 0 for f in os.listdir(keys))
    finally:
        for path in mounted:
            subprocess.run(["umount", "--lazy", path], capture_output=True)
        subprocess.run(podman + ["rm", "--all", "--force"], capture_output=True)
        subprocess.run(podman + ["system", "reset", "--force"], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


def test_compose_yaml_is_valid_compose_and_gives_authd_only_keys_it_reads():
    run(["docker-compose", "-f", COMPOSE, "config", "--quiet"], cwd=ROOT)
    compose = yaml.safe_load(open(COMPOSE))
    authd = {name: service for name, service in compose["services"].items() if name.startswith("authd")}
    assert len(authd) == 2
    ports = {service["ports"][0] for service in authd.values()}
    assert ports == {"8080:8080", "8081:8080"}
    # The schema first: a server refuses an unmigrated database.
    assert compose["services"]["migrate"]["command"] == ["migrate"]
    for service in authd.values():
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert service["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
        assert set(service["secrets"]) <= set(compose["secrets"])
    env = next(iter(authd.values()))["environment"]
    assert all(name.startswith("AUTHD_") for name in env)
    # What the compose file gives authd, with its secrets in temporary files, read by authd itself.
    database = os.environ.get("AUTHD_TEST_POSTGRES_URL")
    if not database:
        if os.environ.get("AUTHD_REQUIRE_POSTGRES") == "1":
            pytest.fail("AUTHD_REQUIRE_POSTGRES=1 but no AUTHD_TEST_POSTGRES_URL")
        pytest.skip("no PostgreSQL server for authd check")
    name = "authd_compose_" + os.urandom(6).hex()
    run(["psql", database, "-qc", f"CREATE DATABASE {name}"])
    database = urllib.parse.urlunparse(urllib.parse.urlparse(database)._replace(path="/" + name))
    with tempfile.TemporaryDirectory() as folder:
        secrets = {"/run/secrets/authd_database_url": database + "\n", "/run/secrets/authd_key_encryption_key": os.urandom(32).hex() + "\n"}
        variables = {}
        for name, value in env.items():
            if value in secrets:
                path = os.path.join(folder, os.path.basename(value))
                with open(path, "w") as f:
                    f.write(secrets[value])
                value = path
            variables[name] = str(value)
        clean = {k: v for k, v in os.environ.items() if not k.startswith("AUTHD_")}
        binary = os.environ.get("AUTHD_BINARY", os.path.join(ROOT, ".build", "debug", "authd"))
        data = ["--data", os.path.join(folder, "data")]
        run([binary, "migrate", *data], env={**clean, **variables})
        check = subprocess.run([binary, "check", *data], capture_output=True, text=True, env={**clean, **variables})
        assert check.returncode == 0, check.stdout + check.stderr
        assert "names no configuration key" not in check.stdout
        assert "store         postgres:" in check.stdout
        for name in env:
            assert f"({name})" in check.stdout, name
