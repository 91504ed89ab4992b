"""The first start from the README (contract §18): `make serve` runs `authd serve --data ./data
--config dev/authd.json`. From exactly that configuration, the first-start log names the providers,
the mail transport and an `admins invite` command that works as printed; its link, a passkey made
on the page it opens (Chrome's virtual authenticator) and a sign-in with that passkey reach /admin.
Where neither a passkey nor an authenticator app is enabled, `admins invite` refuses, naming the
setting, and the first-start log says so too."""
import json
import os
import re
import shlex
import socket
import subprocess
import tempfile
import threading
import time

import pytest
import requests

from chromium import chromium
from conftest import running_server
from test_page_methods import add_authenticator
from test_pages import accessible, click, shots

BINARY = os.path.abspath(os.environ.get("AUTHD_BINARY", ".build/debug/authd"))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEV_CONFIG = os.path.join(ROOT, "dev", "authd.json")
MAKEFILE = os.path.join(ROOT, "Makefile")


def make_serve_arguments():
    """`make serve`'s command line, read from the Makefile: what the README tells a person to run."""
    line = next(l for l in open(MAKEFILE) if "run authd serve" in l)
    return shlex.split(line.split("run authd", 1)[1].strip())


def port_free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def wait_for(path, pattern, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(pattern, open(path).read())
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"{pattern!r} not in the log: {open(path).read()[-3000:]}")


def test_make_serves_configuration_gets_its_first_operator_from_the_command_its_log_names():
    arguments = make_serve_arguments()
    assert arguments[:1] == ["serve"] and "--config" in arguments, arguments
    config = json.load(open(os.path.join(ROOT, arguments[arguments.index("--config") + 1])))
    assert config["issuer"] == "http://localhost:8080" and {"passkey", "totp"} <= set(config["providers"])
    assert config["mail"]["transport"] == "log"
    # The configuration names port 8080 (the README's address): the test serves it there, as make serve does.
    assert port_free(8080), "port 8080 is taken: make serve could not start either"
    with tempfile.TemporaryDirectory() as folder:
        log_path = os.path.join(folder, "server.log")
        # Run from a fresh folder as make serve runs from the clone: ./data is made there.
        args = [a if a != "dev/authd.json" else DEV_CONFIG for a in arguments]
        env = {k: v for k, v in os.environ.items() if not k.startswith("AUTHD_")}
        with open(log_path, "w") as log:
            proc = subprocess.Popen([BINARY, *args], stdout=subprocess.PIPE, stderr=log, text=True, env=env, cwd=folder)
        try:
            line = proc.stdout.readline()
            assert "authd listening on http://127.0.0.1:8080" in line, line + open(log_path).read()
            threading.Thread(target=proc.stdout.read, daemon=True).start()
            # The log says what is on, and the command to type.
            serving = wait_for(log_path, r".*\] serving\b.*")
            assert "providers=email,pin,password,passkey,totp" in serving.group(0) and "mail_transport=log" in serving.group(0), serving.group(0)
            named = wait_for(log_path, r".*no operator yet: run `([^`]+)`.*")
            assert "console=http://localhost:8080/admin " in named.group(0), named.group(0)
            command = shlex.split(named.group(1).replace("EMAIL", "root@example.com"))
            assert command == [BINARY, "admins", "invite", "root@example.com"], command
            done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=folder)
            assert done.returncode == 0, done.stdout + done.stderr
            link = re.search(r"(http://localhost:8080/admin/setup\?token=\S+)", done.stdout).group(1)

            with chromium(1280, 900) as browser:
                add_authenticator(browser)
                browser.get(link)
                shots(browser, "first-start-setup")
                accessible(browser)
                click(browser, "form[action='/admin/setup'] button")
                assert "Add a passkey or an authenticator app" in browser.page_source
                shots(browser, "first-start-factor")
                click(browser, "form[action='/account/passkey/begin'] button")
                click(browser, "#passkey-button")
                browser.get("http://localhost:8080/admin")
                # The invite's own sign-in is a mailed-code kind; the console asks for the passkey now.
                click(browser, "form[action='/admin/reauth'] button")
                click(browser, "form[action='/login/passkey/begin'] button")
                assert browser.current_url == "http://localhost:8080/admin", browser.current_url
                assert "At a glance" in browser.page_source
                shots(browser, "first-start-console")
                accessible(browser)
            # The link worked once.
            assert requests.get(link).status_code == 404
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def test_without_a_passkey_or_an_authenticator_app_the_invite_refuses_naming_the_setting():
    # The default providers: email, PIN, password.
    with running_server({"providers": None}, log=True) as server:
        named = wait_for(server.log_path, r".*no operator yet.*")
        assert "providers" in named.group(0) and "passkey" in named.group(0) and "totp" in named.group(0), named.group(0)
        done = subprocess.run([BINARY, "admins", "invite", "root@example.com", "--data", server.folder], capture_output=True, text=True)
        assert done.returncode == 1 and done.stdout == ""
        assert "providers" in done.stderr and "passkey" in done.stderr and "totp" in done.stderr, done.stderr
