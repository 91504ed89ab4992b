"""Languages (contract §18), against the real binary: a page is in the best language of the
browser's Accept-Language, else the signed-in person's locale; a new account takes the first
language its browser or app asked for; mail is in the recipient's locale (else the request's);
`PATCH /me` sets and clears the locale and refuses what is not a BCP 47 tag; an operator's
catalog in DATA/locales/ adds a language or rewords a shipped one, and a broken one stops start-up
naming its line; a mail template override may be per language (DATA/templates/de/). What is
German is read from the shipped catalogs, as a person would see it, never from a side field."""
import json
import os
import re
import subprocess
import tempfile

import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from joserfc import jwt
from joserfc.jwk import KeySet

from conftest import Server, running_server
from mailtext import code_in
from test_openid_provider import BINARY, REDIRECT, authorize, register_client, sign_in_on_the_page
from test_pages import PAGES, Browserish

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
CONFIG = {**PAGES, "providers": ["email", "password"], "email": {"resend_interval": 0}}


def catalog(path):
    """A PO file's entries (a path in the repository, or an absolute one): key -> (English, translation)."""
    entries, key, field, current = {}, None, None, {}
    for line in open(path if os.path.isabs(path) else os.path.join(ROOT, path), encoding="utf-8").read().split("\n") + [""]:
        line = line.strip()
        if not line:
            if "msgctxt" in current:
                entries[current["msgctxt"]] = (current.get("msgid", ""), current.get("msgstr", current.get("msgstr[0]", "")))
            current, field = {}, None
        elif line.startswith("#"):
            continue
        elif line.startswith('"'):
            current[field] += json.loads(line)
        else:
            field, _, value = line.partition(" ")
            current[field] = json.loads(value)
    return entries


def visible(html):
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", html, flags=re.S)))


def lang_of(html):
    return re.search(r'<html lang="([^"]+)"', html).group(1)


def tokens(server, email, language):
    """Signs in through the API with a mailed code, the request asking for `language`."""
    before = len(server.outbox())
    headers = {"Accept-Language": language}
    assert requests.post(server.url + "/api/v1/auth/email/send-code", json={"email": email}, headers=headers).status_code == 200
    code = server.mailed_code(email, after=before)
    answer = requests.post(server.url + "/api/v1/auth/email/verify", json={"email": email, "code": code}, headers=headers)
    assert answer.status_code == 200, answer.text
    return answer.json()["access_token"]


def me(server, token, patch=None):
    headers = {"Authorization": "Bearer " + token}
    if patch is None:
        return requests.get(server.url + "/api/v1/auth/me", headers=headers)
    return requests.patch(server.url + "/api/v1/auth/me", json=patch, headers=headers)


def code_mail(server, email, language):
    """The code mail `email` is sent, with `wording`: its subject without the code."""
    before = len(server.outbox())
    requests.post(server.url + "/api/v1/auth/email/send-code", json={"email": email}, headers={"Accept-Language": language})
    mail = server.mailed(email, after=before)
    return {**mail, "wording": mail["subject"].replace(code_in(mail), "CODE")}


def test_the_login_page_follows_accept_language_and_falls_back_to_english():
    german = catalog("Sources/AuthdCore/Locales/de.po")
    with running_server(CONFIG) as server:
        s = requests.Session()
        english = s.get(server.url + "/login", headers={"Accept-Language": "en"}).text
        for header in ("de", "de-AT, en;q=0.5", "fr-FR, de;q=0.7, en;q=0.3", "DE-ch"):
            page = s.get(server.url + "/login", headers={"Accept-Language": header}).text
            assert lang_of(page) == "de", header
            shown = [t for e, t in german.values() if t and re.sub(r"<[^>]+>|\{\{[^}]+\}\}", "", t).strip() and t in page]
            assert len(shown) >= 5, f"German sentences on /login for {header}: {shown}"
        for header in ("fr", "", "*", "en-GB", "x" * 2000):
            page = s.get(server.url + "/login", headers={"Accept-Language": header}).text
            assert lang_of(page) == "en" and visible(page) == visible(english), header


def test_a_new_account_takes_its_first_language_and_mail_follows_the_locale():
    with running_server(CONFIG) as server:
        # The code mail to an address with no account yet is in the request's language.
        first = code_mail(server, "anna@example.com", "de-AT, de;q=0.9, en;q=0.5")
        english = code_mail(server, "someone-else@example.com", "en")
        assert first["wording"] != english["wording"]
        assert "Minuten" in first["text"] and "minutes" in english["text"], (first["text"], english["text"])

        token = tokens(server, "anna@example.com", "de-AT, de;q=0.9")
        assert me(server, token).json()["locale"] == "de-AT", "the first language asked for, whether or not authd has it"
        # Mail to the account is in its locale whatever the request asks for.
        assert code_mail(server, "anna@example.com", "en")["wording"] == first["wording"]

        changed = me(server, token, {"locale": "EN-gb"})
        assert changed.status_code == 200 and changed.json()["locale"] == "en-GB", "kept in canonical case"
        assert code_mail(server, "anna@example.com", "de")["wording"] == english["wording"]
        cleared = me(server, token, {"locale": None})
        assert cleared.status_code == 200 and cleared.json()["locale"] is None
        assert code_mail(server, "anna@example.com", "de")["wording"] == first["wording"], "no locale: the request's language"
        for bad in ("en_US", "x", "de--DE", "a" * 40, 42, "<b>"):
            refused = me(server, token, {"locale": bad})
            assert refused.status_code == 400, bad
            assert refused.json()["error"]["code"] == "INVALID_REQUEST" and refused.json()["error"]["details"]["field"] == "locale"
        assert me(server, token).json()["locale"] is None

        # An account made by an app that sends no Accept-Language has no locale.
        assert me(server, tokens(server, "bob@example.com", ""), None).json()["locale"] is None


def test_a_signed_in_pages_language_is_the_browsers_then_the_persons_locale():
    with running_server(CONFIG) as server:
        token = tokens(server, "carla@example.com", "de")
        browser = Browserish()
        sign_in_on_the_page(browser, server, server.url + "/login", "carla@example.com")
        # No language the browser names is one authd has: the person's locale.
        assert lang_of(browser.get(server.url + "/account", headers={"Accept-Language": "fr"}).text) == "de"
        assert lang_of(browser.get(server.url + "/account", headers={"Accept-Language": ""}).text) == "de"
        # The browser's own language comes first.
        assert lang_of(browser.get(server.url + "/account", headers={"Accept-Language": "en"}).text) == "en"
        me(server, token, {"locale": None})
        assert lang_of(browser.get(server.url + "/account", headers={"Accept-Language": "fr"}).text) == "en"


def test_an_operators_catalog_adds_a_language_and_rewords_a_shipped_one_and_a_broken_one_stops_start_up():
    english = catalog("Sources/AuthdCore/Locales/en.po")
    with running_server(CONFIG) as server:
        page = requests.get(server.url + "/login", headers={"Accept-Language": "en"}).text
        folder = server.folder
    # The login page's sentences, the plain ones (no placeholder, no markup), as the page shows them.
    plain = [(k, e) for k, (e, _) in english.items() if k.startswith("login.") and e in page and "<" not in e and "{{" not in e and len(e) > 8]
    assert len(plain) >= 2, plain
    (key, text), (other, other_text) = plain[0], plain[1]
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "authd.json"), "w") as f:
            json.dump({k: v for k, v in {"mail": {"transport": "outbox"}, **CONFIG}.items() if v is not None}, f)
        os.makedirs(os.path.join(folder, "locales"))
        with open(os.path.join(folder, "locales", "fr.po"), "w") as f:
            f.write('msgid ""\nmsgstr ""\n"Plural-Forms: nplurals=2; plural=(n > 1);\\n"\n\n'
                    f'msgctxt "{key}"\nmsgid {json.dumps(text)}\nmsgstr "Bonjour, ceci est authd"\n')
        with open(os.path.join(folder, "locales", "de.po"), "w") as f:
            f.write(f'msgctxt "{other}"\nmsgid {json.dumps(other_text)}\nmsgstr "Vom Betreiber umformuliert"\n')
        server = Server(folder)
        try:
            french = requests.get(server.url + "/login", headers={"Accept-Language": "fr-CA"}).text
            assert lang_of(french) == "fr" and "Bonjour, ceci est authd" in french
            assert other_text in french, "a key French lacks is English"
            german = requests.get(server.url + "/login", headers={"Accept-Language": "de"}).text
            assert "Vom Betreiber umformuliert" in german and lang_of(german) == "de"
        finally:
            server.stop()
        with open(os.path.join(folder, "locales", "fr.po"), "a") as f:
            f.write('\nmsgctxt "login.broken"\nmsgid "x"\nmsgstr "unterminated\n')
        run = subprocess.run([BINARY, "serve", "--data", folder, "--port", "0"], capture_output=True, text=True, timeout=120)
        assert run.returncode != 0 and "fr.po:" in run.stderr + run.stdout, run.stderr[-2000:]


def test_a_mail_override_may_be_per_language():
    with running_server(CONFIG) as server:
        templates = os.path.join(server.folder, "templates")
        os.makedirs(os.path.join(templates, "de"), exist_ok=True)
        with open(os.path.join(templates, "de", "email.sign_in_code.subject"), "w") as f:
            f.write("Ihr Code für {{product_name}}: {{code}}\n")
        with open(os.path.join(templates, "email.sign_in_code.subject"), "w") as f:
            f.write("Code for {{product_name}}: {{code}}\n")
        german = code_mail(server, "dora@example.com", "de")
        english = code_mail(server, "emil@example.com", "en")
        assert german["subject"].startswith("Ihr Code für ") and german["subject"].endswith(code_in(german))
        assert english["subject"].startswith("Code for ") and english["subject"].endswith(code_in(english))
        # The text part keeps the shipped wording of each language.
        assert "Minuten" in german["text"] and "minutes" in english["text"]


def test_the_id_token_and_userinfo_carry_the_locale_under_profile_only():
    with running_server(CONFIG) as server:
        client = register_client(server)
        meta = requests.get(server.url + "/.well-known/openid-configuration").json()
        assert "locale" in meta["claims_supported"]
        keys = KeySet.import_key_set(requests.get(meta["jwks_uri"]).json())
        for scope, expected in (("openid email profile", "de-CH"), ("openid email", None)):
            rp = OAuth2Session(client["client_id"], client["client_secret"], scope=scope, redirect_uri=REDIRECT, code_challenge_method="S256")
            verifier = generate_token(48)
            url, _ = rp.create_authorization_url(meta["authorization_endpoint"], code_verifier=verifier, nonce=generate_token(20))
            browser = Browserish()
            browser.headers["Accept-Language"] = "de-CH, de;q=0.9"
            callback = authorize(browser, server, url, email="greta@example.com")
            token = rp.fetch_token(meta["token_endpoint"], authorization_response=callback, code_verifier=verifier)
            claims = jwt.decode(token["id_token"], keys, algorithms=["RS256"]).claims
            assert claims.get("locale") == expected, claims
            assert rp.get(meta["userinfo_endpoint"]).json().get("locale") == expected


def test_the_account_page_sets_the_persons_language():
    with running_server(CONFIG) as server:
        token = tokens(server, "hanna@example.com", "")
        browser = Browserish()
        browser.headers["Accept-Language"] = "fr"
        sign_in_on_the_page(browser, server, server.url + "/login", "hanna@example.com")
        page = browser.get(server.url + "/account").text
        assert lang_of(page) == "en" and '<select id="account-language" name="locale"' in page
        assert re.search(r'<option value="de" lang="de"[^>]*>Deutsch</option>', page) and re.search(r'<option value="" selected>', page)
        csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
        origin = {"Origin": server.url}

        posted = browser.post(server.url + "/account/language", data={"csrf": csrf, "locale": "de"}, headers=origin, allow_redirects=False)
        assert posted.status_code == 303 and posted.headers["Location"] == "/account"
        done = browser.get(server.url + "/account")
        assert done.status_code == 200 and lang_of(done.text) == "de", "French is not had: the person's German"
        assert re.search(r'<option value="de" lang="de" selected>Deutsch</option>', done.text)
        assert "Deutsch" in re.search(r'id="page-notice"[^>]*>(.*?)<', done.text, re.S).group(1)
        assert me(server, token).json()["locale"] == "de"

        for bad in ("fr", "de-XX-<b>", "x" * 100):
            refused = browser.post(server.url + "/account/language", data={"csrf": csrf, "locale": bad}, headers=origin)
            assert refused.status_code == 400, bad
        assert browser.post(server.url + "/account/language", data={"csrf": "wrong", "locale": "en"}, headers=origin).status_code == 403
        assert me(server, token).json()["locale"] == "de"

        cleared = browser.post(server.url + "/account/language", data={"csrf": csrf, "locale": ""}, headers=origin)
        assert cleared.status_code == 200 and lang_of(cleared.text) == "en" and me(server, token).json()["locale"] is None


def test_authd_catalog_prints_every_sentence_as_a_po_file_an_operator_translates():
    def run(*args):
        return subprocess.run([BINARY, "catalog", *args], capture_output=True, text=True, timeout=120)

    with tempfile.TemporaryDirectory() as folder:
        german = run("--language", "de")
        assert german.returncode == 0, german.stderr
        path = os.path.join(folder, "de.po")
        open(path, "w").write(german.stdout)
        entries = catalog(path)
        shipped = catalog("Sources/AuthdCore/Locales/de.po")
        assert set(shipped) <= set(entries) and all(entries[k] == shipped[k] for k in shipped)
        assert {k.split(".")[0] for k in entries} >= {"kernel", "console", "login", "account", "email", "password", "passkey", "totp", "approval", "oidc", "pin"}
        french = run("--language", "fr")
        assert french.returncode == 0 and 'msgstr "Bonjour"' not in french.stdout
        assert all(t == "" for _, t in catalog_text(french.stdout, folder).values()), "nothing French is shipped"
        for bad in ("en_US", "x", "<b>"):
            refused = run("--language", bad)
            assert refused.returncode != 0 and "BCP 47" in refused.stderr
        # The French file, one sentence translated, is a catalog authd reads.
        text = french.stdout.replace('msgid "Sign in"\nmsgstr ""', 'msgid "Sign in"\nmsgstr "Se connecter"', 1)
        os.makedirs(os.path.join(folder, "data", "locales"))
        open(os.path.join(folder, "data", "locales", "fr.po"), "w").write(text)
        open(os.path.join(folder, "data", "authd.json"), "w").write(json.dumps({"mail": {"transport": "outbox"}, "providers": ["email"]}))
        server = Server(os.path.join(folder, "data"))
        try:
            page = requests.get(server.url + "/login", headers={"Accept-Language": "fr"}).text
            assert lang_of(page) == "fr"
        finally:
            server.stop()


def catalog_text(text, folder):
    path = os.path.join(folder, "text.po")
    open(path, "w").write(text)
    return catalog(path)
