"""Real third-party relying parties sign a person in through authd (contract §13), in headless
Chromium: Apache 2 with mod_auth_openidc (Debian's libapache2-mod-auth-openidc) and a Django site
with mozilla-django-oidc, each configured the way its own documentation says, pointed at authd's
discovery or endpoints, with a client made by `authd clients create`. The person opens the app's
protected page, is sent to authd's /login, types the code mailed to them (read from the mail as a
person reads it), and lands back at the app, which shows their email.

Then apps limited to groups (contract §17): a client registered `--allowed-groups family` refuses a
signed-in person outside that group on authd's own page (403, "You don't have access to APP"), the
app never gets a code; once `authd users groups EMAIL add family` puts them in, the same person gets in.

The relying parties are written, started and stopped by relying_parties.py."""
import json
import subprocess
import urllib.parse

import pytest
from selenium.webdriver.common.by import By

from chromium import chromium
from conftest import running_server
from mailtext import visible
from relying_parties import (allow_if_asked, apache_with_mod_auth_openidc, arrive, browser_session,
                             django_with_mozilla_django_oidc, on_authd, page_text, sign_in_through_authd, wait_until)
from test_openid_provider import BINARY
from test_pages import PAGES

# Pages on the default issuer (http://127.0.0.1:PORT); one address may be mailed codes back to back.
CONFIG = {**PAGES, "email": {"resend_interval": 0}}


@pytest.fixture
def browser():
    with chromium(1280, 900) as driver:
        yield driver


def authd(server, *args):
    """An `authd` admin command on the server's data folder (it goes to the running server); its output."""
    done = subprocess.run([BINARY, *args, "--data", server.folder], capture_output=True, text=True)
    assert done.returncode == 0, f"authd {' '.join(args)} failed ({done.returncode}): {done.stderr or done.stdout}"
    return done.stdout


def registrar(server, name, *flags):
    """`authd clients create NAME --redirect-uri URI FLAGS…` for the redirect URI the relying party
    picks; its JSON (the CLI prints it, then a sentence)."""
    def register(redirect_uri):
        out = authd(server, "clients", "create", name, "--redirect-uri", redirect_uri, *flags)
        return json.loads(out[: out.rindex("}") + 1])
    return register


def sent_to_authd_login(browser, server):
    """The relying party sent the browser to authd's /login; returns the authorize request it made
    (the page's return_to), as a dict of its parameters."""
    wait_until(browser, lambda d: on_authd(d, server) and urllib.parse.urlparse(d.current_url).path == "/login")
    return_to = urllib.parse.parse_qs(urllib.parse.urlparse(browser.current_url).query)["return_to"][0]
    assert urllib.parse.urlparse(return_to).path == "/oauth/authorize", return_to
    return {k: v[0] for k, v in urllib.parse.parse_qs(urllib.parse.urlparse(return_to).query).items()}


# --- Signing in ---------------------------------------------------------------------------------

def test_apache_mod_auth_openidc_signs_a_person_in(browser):
    with running_server(CONFIG) as server, \
            apache_with_mod_auth_openidc(server, registrar(server, "Apache", "--first-party")) as (client, rp):
        browser.get(rp.url)
        asked = sent_to_authd_login(browser, server)
        # mod_auth_openidc's request, as configured (OIDCPKCEMethod S256): PKCE and a nonce; the default
        # registration (no --pkce optional) takes nothing less.
        assert asked["client_id"] == client["client_id"] and asked["redirect_uri"] == rp.redirect_uri
        assert asked["code_challenge_method"] == "S256" and asked["nonce"] and asked["state"]
        sign_in_through_authd(browser, server, "ada@example.com")
        text = arrive(browser, rp, "signed in as ada@example.com")
        assert "REMOTE_USER ada@example.com" in text
        assert rp.got_a_code()

        # The module's session cookie: the next visit goes straight in, without authd.
        browser.get(rp.url)
        assert "signed in as ada@example.com" in page_text(browser) and browser.current_url == rp.url


def test_django_mozilla_django_oidc_signs_a_person_in_after_consent(browser):
    with running_server(CONFIG) as server, \
            django_with_mozilla_django_oidc(server, registrar(server, "Django site")) as (client, rp):
        browser.get(rp.url)
        asked = sent_to_authd_login(browser, server)
        # OIDC_USE_PKCE = True: S256 and a nonce, so the default registration (no --pkce optional) serves it.
        assert asked["client_id"] == client["client_id"] and asked["redirect_uri"] == rp.redirect_uri
        assert asked["code_challenge_method"] == "S256" and asked["nonce"]
        sign_in_through_authd(browser, server, "dan@example.com", consent=False)
        # Not first-party: authd asks the person first, naming the app.
        assert on_authd(browser, server) and "Django site" in page_text(browser)
        assert browser.find_elements(By.CSS_SELECTOR, "button[value='allow']")
        allow_if_asked(browser, server)
        arrive(browser, rp, "signed in as dan@example.com")
        assert rp.got_a_code()


# --- Apps limited to groups (contract §17) ------------------------------------------------------
# These need the server side of §17 (--allowed-groups, `authd users groups`).

DENIED = "You don't have access to "


def add_to_group(server, email, group):
    authd(server, "users", "groups", email, "add", group)


def refused_on_authd(browser, server, rp, app_name):
    """The person signed in but is in none of the client's groups: authd's own page says so, with
    403 and no redirect; the relying party never got a code."""
    try:
        wait_until(browser, lambda d: DENIED in page_text(d) or d.current_url.startswith(rp.url))
    except Exception as failure:
        raise AssertionError(f"the browser is at {browser.current_url}, showing {page_text(browser)[:500]!r}") from failure
    assert on_authd(browser, server) and urllib.parse.urlparse(browser.current_url).path == "/oauth/authorize", browser.current_url
    said = f"You don't have access to {app_name}. Ask its operator."
    assert said in " ".join(page_text(browser).split()), page_text(browser)
    # WebDriver does not tell a page's status: ask again with the browser's cookies.
    again = browser_session(browser, server).get(browser.current_url, allow_redirects=False, timeout=60)
    assert again.status_code == 403 and "Location" not in again.headers
    assert said in " ".join(visible(again.text).split())
    assert not rp.got_a_code() and not rp.showed_the_page()


def test_apache_app_limited_to_a_group_lets_in_only_its_members(browser):
    with running_server(CONFIG) as server, \
            apache_with_mod_auth_openidc(server, registrar(server, "Family photos", "--first-party", "--allowed-groups", "family")) as (_, rp):
        browser.get(rp.url)
        sent_to_authd_login(browser, server)
        sign_in_through_authd(browser, server, "eve@example.com")  # the first sign-in makes the account, in no group
        refused_on_authd(browser, server, rp, "Family photos")
        browser.get(rp.url)  # trying again changes nothing
        refused_on_authd(browser, server, rp, "Family photos")

        add_to_group(server, "eve@example.com", "family")
        browser.get(rp.url)  # still signed in at authd: straight back to Apache with a code
        arrive(browser, rp, "signed in as eve@example.com")


def test_django_app_limited_to_a_group_lets_in_only_its_members(browser):
    with running_server(CONFIG) as server, \
            django_with_mozilla_django_oidc(server, registrar(server, "Family recipes", "--allowed-groups", "family")) as (_, rp):
        browser.get(rp.url)
        sent_to_authd_login(browser, server)
        sign_in_through_authd(browser, server, "fay@example.com")  # allows the app if asked before the refusal
        refused_on_authd(browser, server, rp, "Family recipes")

        add_to_group(server, "fay@example.com", "family")
        browser.get(rp.url)
        wait_until(browser, lambda d: d.current_url.startswith(rp.url) or d.find_elements(By.CSS_SELECTOR, "button[value='allow']"))
        allow_if_asked(browser, server)
        arrive(browser, rp, "signed in as fay@example.com")
