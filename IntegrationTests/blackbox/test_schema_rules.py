"""The schemas in /openapi.yaml say exactly what the server accepts: for labels (display_name,
device_name, platform) and email addresses, random strings from an alphabet of the edge cases
(white space of every kind, control characters, separators, bidi controls, private use, non-ASCII,
the characters an address is made of) get 200 from the server exactly when the served schema's
patterns and maxLength allow them."""
import random
import re
import urllib.request

import yaml

from conftest import running_server

BIG = {"limit": 1000000, "window": 1}
CONFIG = {"providers": ["email", "password"], "password": {"resends_per_ip": BIG}}


def schema(server):
    with urllib.request.urlopen(server.url + "/openapi.yaml", timeout=10) as resp:
        return yaml.safe_load(resp.read())


def allowed(value, rule):
    if len(value) > rule["maxLength"]:
        return False
    patterns = [rule["pattern"]] if "pattern" in rule else [part["pattern"] for part in rule["allOf"]]
    return all(re.search(p, value) for p in patterns)


def test_label_schema_is_the_server_rule():
    random.seed(7)
    alphabet = ["a", "é", " ", "\t", "\n", "\r", "\x00", "\x1f", "\x7f", "\x85", "\xa0", "\u061c", "\u200b", "\u200d", "\u200e",
                "\u2028", "\u2029", "\u202e", "\u2066", "\u3000", "\ue000", "\ufe0f", "\U0001f600", "\U000f0001", "\U0010fffd"]
    with running_server(CONFIG) as server:
        rule = schema(server)["components"]["schemas"]["Label"]
        token = server.sign_in("labels@example.com")["access_token"]
        values = ["".join(random.choice(alphabet) for _ in range(random.randint(0, 5))) for _ in range(1500)]
        values += ["x" * 100, "x" * 101, " " * 100, "e\u0301" * 50, "e\u0301" * 50 + "x"]
        wrong = []
        for value in values:
            status, _, _ = server.call("PATCH", "/api/v1/auth/me", {"display_name": value}, token=token)
            assert status in (200, 400), status
            if (status == 200) != allowed(value, rule):
                wrong.append((value, status))
        assert wrong == [], wrong[:10]


def test_email_schema_is_the_server_rule():
    random.seed(11)
    alphabet = ["a", "Z", "7", ".", "@", "-", "+", "_", "'", " ", "\t", "\n", "é", "\u212a", '"', "(", "\u3000"]
    with running_server(CONFIG) as server:
        rule = schema(server)["components"]["schemas"]["EmailAddress"]
        def part(low, high):
            # Mostly what addresses are made of, now and then anything from the alphabet.
            return "".join(random.choice(alphabet) if random.random() < 0.15 else random.choice("aab7-.")
                           for _ in range(random.randint(low, high)))

        values = ["".join(random.choice(alphabet) for _ in range(random.randint(1, 9))) for _ in range(1000)]
        values += [part(0, 4) + "@" + part(1, 4) + "." + part(1, 4) for _ in range(1500)]
        values += ["a" * 64 + "@example.com", "a" * 65 + "@example.com", " " * 10 + "a" * 64 + "@example.com",
                   "a@" + "b" * 63 + ".com", "a@" + "b" * 64 + ".com", "a@b." + "c" * 63, "a@b." + "c" * 64,
                   "a@b.1c", "a@b.c1", "a@b.c", "a@b.xn--p1ai", "a@localhost", "a@1.2.3.4", "\u212aate@example.com",
                   "a@example.com" + " " * 241, "a@example.com" + " " * 242]
        wrong = []
        for value in values:
            status, body, _ = server.call("POST", "/api/v1/auth/password/resend-verification", {"email": value})
            # 429: the address passed validation and met the one-resend-a-minute rule.
            assert status in (200, 400, 429), (status, body)
            if (status != 400) != allowed(value, rule):
                wrong.append((value, status))
        assert wrong == [], wrong[:10]
        # The generated values hit both sides of the rule.
        assert sum(allowed(v, rule) for v in values) > 40
