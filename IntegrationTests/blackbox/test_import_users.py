"""`authd import-users` (contract §11) with hashes made by third-party hashers: Python's `bcrypt`,
passlib's Django PBKDF2 and Argon2 (argon2i, as Django stores it), argon2-cffi (argon2id) and
Django's bcrypt_sha256 (bcrypt of the SHA-256 hex digest). Each user signs in with the old password,
after which its stored hash is authd's Argon2id."""
import base64
import binascii
import hashlib
import json
import os
import subprocess
import tempfile

import bcrypt
from argon2 import PasswordHasher
from passlib.hash import django_argon2, django_pbkdf2_sha256

from conftest import running_server

BINARY = os.environ.get("AUTHD_BINARY", ".build/debug/authd")
PASSWORD = "an old password from before"
PIN_USER = "5d1c7a39-8e2f-4c11-9b1e-0a2b3c4d5e6f"


def hashes():
    digest = binascii.hexlify(hashlib.sha256(PASSWORD.encode()).digest())
    return {
        "bcrypt@example.com": bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(4)).decode(),
        "pbkdf2@example.com": django_pbkdf2_sha256.using(rounds=1000).hash(PASSWORD),
        "bcryptsha@example.com": "bcrypt_sha256$" + bcrypt.hashpw(digest, bcrypt.gensalt(4)).decode(),
        "djargon@example.com": django_argon2.using(memory_cost=8192, rounds=1).hash(PASSWORD),
        "argon2id@example.com": PasswordHasher(time_cost=1, memory_cost=8192, parallelism=2).hash(PASSWORD),
    }


def claims(token):
    part = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def import_users(folder, path, *flags):
    return subprocess.run([BINARY, "import-users", path, "--data", folder, *flags], capture_output=True, text=True)


def stored_hashes(folder):
    with tempfile.TemporaryDirectory() as out:
        path = os.path.join(out, "export.json")
        result = subprocess.run([BINARY, "export", "--to", path, "--data", folder], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        with open(path) as f:
            bundle = json.load(f)
        # The export holds the store's records base64-encoded: decode every field that is.
        texts = []
        for value in bundle.values():
            if isinstance(value, str):
                try:
                    texts.append(base64.b64decode(value, validate=True).decode("utf-8", "replace"))
                except (binascii.Error, ValueError):
                    pass
        return "\n".join(texts)


def test_users_from_another_system_sign_in_with_their_old_passwords():
    made = hashes()
    with running_server() as s, tempfile.TemporaryDirectory() as work:
        s.sign_in("already@example.com")
        lines = [{"email": email, "email_verified": True, "password_hash": h, "created_at": "2024-05-01 10:00:00.123456+00",
                  "display_name": email.split("@")[0]} for email, h in made.items()]
        lines[0]["app_metadata"] = {"plan": "pro"}
        lines[0]["id"] = "7b0f6f0e-3c2a-4e57-9a57-2f4b1c1d2e3f"
        lines += [
            {"email": "already@example.com", "password_hash": made["bcrypt@example.com"]},     # skipped: exists
            {"email": "bcrypt@example.com"},                                                    # skipped: twice in the file
            {"email": "costly@example.com", "password_hash": bcrypt.hashpw(b"x", bcrypt.gensalt(15)).decode()},
            {"email": "typo@example.com", "pasword_hash": "x"},                                 # refused: unknown field
            {"email": "md5@example.com", "password_hash": "md5$salt$abcdef"},                   # refused: unknown format
            {"id": PIN_USER, "pin_hash": "sha256$s4lt$" + hashlib.sha256(b"s4lt" + b"4821").hexdigest()},  # a PIN-only user
            {"display_name": "nobody"},                                                         # refused: no email, no PIN
            {"id": "0b7c3a2e-1d4f-4a6b-8c9d-0e1f2a3b4c5d", "pin_hash": "4821"},                  # refused: not sha256$SALT$HEX
        ]
        path = os.path.join(work, "users.jsonl")
        with open(path, "w") as f:
            f.write("\n".join(json.dumps(line) for line in lines) + "\n\n")

        dry = import_users(s.folder, path, "--dry-run")
        assert dry.returncode == 1 and "6 users would be imported, 2 skipped (already there), 5 refused" in dry.stdout, dry.stdout + dry.stderr
        assert s.call("POST", "/api/v1/auth/password/login", {"email": "bcrypt@example.com", "password": PASSWORD})[0] == 401, "a dry run writes nothing"

        done = import_users(s.folder, path)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "6 users imported, 2 skipped (already there), 5 refused" in done.stdout, done.stdout
        for reason in ("already@example.com exists", "bcrypt cost 15 is over 14", "unknown field pasword_hash", "unknown hash format",
                       "needs id and pin_hash", "pin_hash must be sha256$SALT$HEX"):
            assert reason in done.stdout, (reason, done.stdout)
        assert s.outbox() and all("bcrypt@example.com" not in line for line in s.outbox()), "the import mails nobody"

        before = stored_hashes(s.folder)
        assert before.count("import$") == 5
        for email in made:
            status, wrong, _ = s.call("POST", "/api/v1/auth/password/login", {"email": email, "password": "not it at all"})
            assert status == 401, (email, wrong)
            status, session, _ = s.call("POST", "/api/v1/auth/password/login", {"email": email, "password": PASSWORD})
            assert status == 200, (email, session)
            assert session["user"]["display_name"] == email.split("@")[0]
        status, first, _ = s.call("POST", "/api/v1/auth/password/login", {"email": "bcrypt@example.com", "password": PASSWORD})
        assert first["user"]["id"] == "7b0f6f0e-3c2a-4e57-9a57-2f4b1c1d2e3f" and first["user"]["created_at"].startswith("2024-05-01T10:00:00")
        assert claims(first["access_token"])["app_metadata"] == {"plan": "pro"}
        after = stored_hashes(s.folder)
        assert "import$" not in after, "every imported hash was replaced at its first sign-in"
        assert after.count("$argon2id$") >= 5

        again = import_users(s.folder, path)
        assert "0 users imported, 8 skipped" in again.stdout, again.stdout

        # The PIN-only user (a couples-app user with no email) comes back with its id and PIN.
        assert s.call("POST", "/api/v1/auth/pin/verify", {"user_id": PIN_USER, "pin": "1234"})[0] == 401
        status, pin_session, _ = s.call("POST", "/api/v1/auth/pin/verify", {"user_id": PIN_USER, "pin": "4821"})
        assert status == 200 and pin_session["user"]["is_anonymous"], pin_session
        assert s.call("POST", "/api/v1/auth/pin/verify", {"user_id": PIN_USER, "pin": "4821"})[0] == 200, "and with the re-hashed PIN"


def test_argon2_hashes_that_would_hold_a_thread_for_hours_are_refused_per_line():
    """Finding 3 of the second review: `t=4294967295` was imported (only the memory was bounded), and
    one unauthenticated sign-in then held a hashing thread for hours. Contract §12: `t` > 10 or `p` > 8
    is refused per line, with its reason; the other lines are imported."""
    made = PasswordHasher(time_cost=1, memory_cost=8192, parallelism=1).hash(PASSWORD)
    assert ",t=1,p=1$" in made
    lines = [
        {"email": "fine@example.com", "email_verified": True, "password_hash": made},
        {"email": "hours@example.com", "password_hash": made.replace(",t=1,", ",t=4294967295,")},
        {"email": "lanes@example.com", "password_hash": "argon2" + made.replace(",p=1$", ",p=255$")},
    ]
    with running_server() as s, tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "users.jsonl")
        with open(path, "w") as f:
            f.write("\n".join(json.dumps(line) for line in lines) + "\n")
        done = import_users(s.folder, path)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "1 user imported, 0 skipped (already there), 2 refused" in done.stdout, done.stdout
        assert "line 2: password_hash: Argon2 time cost t=4294967295 is over 10" in done.stdout, done.stdout
        assert "line 3: password_hash: Argon2 parallelism p=255 is over 8" in done.stdout, done.stdout
        for email in ("hours@example.com", "lanes@example.com"):
            assert s.call("POST", "/api/v1/auth/password/login", {"email": email, "password": PASSWORD})[0] == 401, "no such user"
        assert s.call("POST", "/api/v1/auth/password/login", {"email": "fine@example.com", "password": PASSWORD})[0] == 200
