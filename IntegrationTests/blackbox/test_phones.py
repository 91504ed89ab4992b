"""Every page authd serves, on a phone and in German (contract §18, "Phones" and "Languages"): headless
Chromium asking for German, with a page 320 px wide (set with DevTools: a headless window is never
narrower than 500 px), walks the pages as people
reach them, filled with long values (60-character addresses, a long display
name, long app names and redirect URIs, a long service-key name, a long webhook URL, a long device
name, a passkey's credential id) and checks each page:

- **Nothing scrolls sideways**: `document.documentElement.scrollWidth <= window.innerWidth`. A
  failure names the innermost elements (or text) that reach past the screen's edge; content inside
  a box that scrolls on its own (`overflow-x: auto`, a wide table's region) or clips it (a visually
  hidden label) is allowed to.
- **Touch targets are at least 44 × 44 px**: every visible `button`, form field (`input` but
  hidden ones, `select`, `textarea`), `summary`, link shaped as a button (`a.secondary-button`,
  `a.upstream`) and link of the console's navigation bar. A checkbox or radio button is measured
  by the label around it, which is what a finger hits. Other links are text links inside sentences
  or lines of text ("All users", "Back to your account", a user's name in a table): WCAG exempts
  those inline targets, and they are not measured.
- Pages with `<details>` are checked a second time with every one opened.
- **German, whole**: `<html lang="de">`, and no line of the page (its title, its text with every
  `<details>` open) holds a word of English sentences (what the test typed aside).
- **axe** finds nothing serious or critical.

Every failure is collected and reported together at the end, page by page. Screenshots of every
page, full length, at 320 px (light), and of some in dark mode and at 1280 px, go to
output/phones/ (look at them after a change to the pages or the stylesheet).

The pages, as the routes in Sources/AuthdCore/Pages, Sources/AuthdCore/Console,
Sources/AuthdCore/OpenID and Sources/Providers/*/ serve them: /login with every provider's steps
(email code, password sign-in, sign-up and its code, both resets, passkey, approval start and wait,
user name + PIN for an app that allows it, "Continue with" an identity provider), the second step,
/account with a passkey, an authenticator app, a password, a linked identity and an app allowed,
the authenticator app's enrolment and recovery codes, /device (enter, confirm, approved, stale),
the consent and RP-initiated logout pages, /not-me (asked, done, used), /invitation (send, code),
and the console: setup, the factor page, overview, users, an invitation, a user (with a passkey,
TOTP, a password, a linked identity, long email, display name and groups; with a notice and an
error), apps, an app (long redirect URIs; created and rotated secrets), service keys (one made),
webhooks (a long URL, waiting and failed deliveries), the audit log, configuration, a refusal,
"sign in again". Two servers: the main one on localhost (a passkey's RP ID cannot be an IP
address), and a small one on 127.0.0.1 whose short `auth.fresh_auth` makes the stale pages. One
browser and one pass, about 40 s."""
import base64
import json
import os
import re
import subprocess
import time
import urllib.parse

import pyotp
import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from axe_selenium_python import Axe

from chromium import chromium
from conftest import running_server
from test_languages import catalog
from test_oidc_web_flow import GitHubStandIn
from test_page_methods import add_authenticator, fill, free_port, sign_in_with_email
from test_pages import click
from test_third_review import CHALLENGE

BINARY = os.environ.get("AUTHD_BINARY", ".build/debug/authd")
OUTPUT = os.path.join(os.path.dirname(__file__), "output", "phones")
WIDTH = 320


def sixty(stem):
    """A 60-character address without a place to break: the stem repeated, then @example.com."""
    return (stem * 10)[:48] + "@example.com"


OPERATOR = sixty("theoperator")
INVITEE = sixty("invitedperson")
NEWCOMER = sixty("newcomer")
CREATED = sixty("createdbyanoperator")
STALE_OPERATOR = sixty("staleoperator")
DISPLAY_NAME = "Maximiliane Alexandra Konstantinopolitanische-Dudelsackpfeifenmacherin von Hohenstein"
APP_NAME = "Familienfotoarchivverwaltungsanwendungsprogramm: the family's photos and memories"
KIOSK_NAME = "Schulbibliotheksausleihterminalanwendung for the school library kiosk"
LONG_REDIRECT = "https://photos-and-memories.family-archive.example.com/oauth2/idpresponse/generic_oauth/callback/with/a/long/path"
CALLBACK = "http://127.0.0.1:9/callback"  # nothing listens: the browser's navigation there fails, and that is all
BYE = "http://127.0.0.1:9/signed-out/after/the/app/asked/authd/to/sign/the/person/out/of/every/session"
KEY_NAME = ("photo-backend-for-the-family-archive-" * 2)[:64]
GROUPS = "family, photos, administrators-of-the-family-archive-with-a-very-long-group-name"
DEVICE_NAME = "Wohnzimmerbilderrahmenanzeigegerätesteuerung (the living-room picture frame)"
LABEL = "Familienfotoarchivgesellschaft GitHub"  # labels are at most 40 characters
HOOK_URL = "http://127.0.0.1:9/hooks/authd/events/delivered-to-a-receiver-with-a-rather-long-path-" + "x" * 40
PASSWORD = "a long enough password for the phones"
# The pass is made in German, the language whose words run longest: every page must be in it.
LANGUAGE = "de"
# Words of English sentences that German ones never hold: one on a page means a sentence was left
# untranslated (what the test itself typed is taken out first).
ENGLISH = {"the", "your", "you", "and", "with", "this", "that", "from", "sign", "please", "enter", "have", "has", "been", "when",
           "which", "there", "signed", "into", "are", "its", "can", "cannot", "for", "nothing", "yet", "here", "now"}
GERMAN = {}
for _path in ("Sources/AuthKernel/Languages/Catalogs/de.po", "Sources/AuthdCore/Locales/de.po", "Sources/AuthdCore/Locales/console-de.po",
              "Sources/Providers/OIDC/Locales/de.po"):
    GERMAN.update({key: german for key, (_, german) in catalog(_path).items()})


def german(key):
    """A sentence as the German pages and mail show it (its placeholders cut off where they begin)."""
    return GERMAN[key].split("{{")[0].strip()


def on_account(driver):
    return driver.current_url.endswith("/account") and german("account.title") in driver.page_source


TYPED = [DISPLAY_NAME, APP_NAME, KIOSK_NAME, DEVICE_NAME, LABEL, PASSWORD, "Konstantinopolitanischer Taschenrechner (phone)"]

# What a page measures: the document's widths, the innermost elements or text past the screen's
# edge (outside boxes that scroll on their own), and the touch targets under 44 px.
MEASURE = r"""
const w = window.innerWidth;
const describe = el => {
  let s = el.tagName.toLowerCase();
  if (el.id) s += '#' + el.id;
  if (el.classList.length) s += '.' + [...el.classList].join('.');
  if (el.getAttribute('type')) s += '[type=' + el.getAttribute('type') + ']';
  const text = (el.innerText || el.value || el.getAttribute('aria-label') || '').trim().replace(/\s+/g, ' ');
  return text ? s + ' "' + text.slice(0, 40) + '"' : s;
};
const visible = el => {
  const r = el.getBoundingClientRect(), s = getComputedStyle(el);
  return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none';
};
// Whether `el` lies inside a box that scrolls on its own or clips what overflows it (with `self`,
// `el` may be that box; the box itself is measured on its own). An absolutely positioned element
// escapes every box up to its containing block (the nearest positioned ancestor): a scrolling box
// below that does not hold it, and it widens the page.
const inScroller = (el, self) => {
  let escaping = !self && ['absolute', 'fixed'].includes(getComputedStyle(el).position);
  for (let p = self ? el : el.parentElement; p && p !== document.body; p = p.parentElement) {
    const s = getComputedStyle(p);
    if (escaping && s.position === 'static' && s.transform === 'none') continue;
    if (s.overflowX !== 'visible') return true;
    escaping = ['absolute', 'fixed'].includes(s.position);
  }
  return false;
};
const past = r => r.width > 0 && (r.right > w + 0.5 || r.left < -0.5);
const wide = new Map();
const note = (el, r) => wide.set(el, Math.max(wide.get(el) || 0, Math.round(r.right)));
for (const el of document.body.querySelectorAll('*')) {
  const r = el.getBoundingClientRect();
  if (visible(el) && !inScroller(el, false) && past(r)) note(el, r);
}
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
const range = document.createRange();
for (let n = walker.nextNode(); n; n = walker.nextNode()) {
  const parent = n.parentElement;
  if (!n.textContent.trim() || !parent || !visible(parent) || inScroller(parent, true)) continue;
  range.selectNodeContents(n);
  const r = range.getBoundingClientRect();
  if (past(r)) note(parent, r);
}
const innermost = [...wide.keys()].filter(el => ![...wide.keys()].some(o => o !== el && el.contains(o)));
const small = [];
const targets = 'button, input:not([type=hidden]), select, textarea, summary, a.secondary-button, a.upstream, .console-nav a';
for (const el of document.querySelectorAll(targets)) {
  if (!visible(el)) continue;
  let box = el.getBoundingClientRect();
  if (el.type === 'checkbox' || el.type === 'radio') {
    const label = el.closest('label');
    if (label) box = label.getBoundingClientRect();
  }
  if (box.height < 43.5 || box.width < 43.5) small.push(describe(el) + ' ' + Math.round(box.width) + '×' + Math.round(box.height));
}
return {width: w, scrollWidth: document.documentElement.scrollWidth, details: document.querySelectorAll('details').length,
        wide: innermost.slice(0, 6).map(el => describe(el) + ' reaches ' + wide.get(el)), small: small};
"""


class Phone:
    """The browser at 320 px and what its pages failed, page by page."""

    def __init__(self, driver):
        self.driver = driver
        self.failures = []
        self.checked = []

    def check(self, name, dark=False, wide=False):
        """Measures the page in view (again with every <details> open), checks that it is in German
        and that axe finds nothing serious, and takes its screenshots."""
        d = self.driver
        WebDriverWait(d, 10).until(lambda x: x.execute_script("return document.readyState") == "complete")
        problems = []
        lang = d.execute_script("return document.documentElement.lang")
        if lang != LANGUAGE:
            problems.append(f"in {lang!r}, not {LANGUAGE!r}")
        problems += english_left(d) + axe_findings(d)
        found = d.execute_script(MEASURE)
        assert found["width"] == WIDTH, f"the window is {found['width']} px wide, not {WIDTH}"
        self.shot(name)
        rounds = [("", found)]
        if found["details"]:
            d.execute_script("document.querySelectorAll('details').forEach(e => e.open = true)")
            rounds.append((" (details open)", d.execute_script(MEASURE)))
            d.execute_script("document.querySelectorAll('details').forEach(e => e.open = false)")
        for state, measured in rounds:
            if measured["scrollWidth"] > measured["width"]:
                problems.append(f"scrolls sideways{state}: {measured['scrollWidth']} px > {measured['width']}: " + "; ".join(measured["wide"]))
            elif measured["wide"]:
                problems.append(f"content past the edge{state}: " + "; ".join(measured["wide"]))
            if measured["small"]:
                problems.append(f"touch targets under 44 px{state}: " + "; ".join(measured["small"]))
        if dark:
            d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
            self.shot(name + "-dark")
            d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "light"}]})
        if wide:
            self.viewport(1280)
            self.shot(name + "-1280")
            self.viewport(WIDTH)
        self.checked.append(name)
        if problems:
            path = urllib.parse.urlparse(d.current_url).path
            self.failures.append(f"{name} ({path}):\n    " + "\n    ".join(problems))

    def viewport(self, width):
        """The page's width, as a phone's or a laptop's screen (a headless window is at least 500 px
        wide: the viewport is set with DevTools instead)."""
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False})

    def shot(self, name):
        """The whole page, as long as it is (and as wide, should it overflow)."""
        d = self.driver
        width, height = d.execute_script(
            "return [Math.max(innerWidth, document.documentElement.scrollWidth), Math.ceil(document.documentElement.scrollHeight)]")
        png = d.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True, "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}})
        with open(os.path.join(OUTPUT, name + ".png"), "wb") as f:
            f.write(base64.b64decode(png["data"]))


def english_left(driver):
    """The lines of the page (its visible text, opened <details> too, and its title) that hold an English word."""
    # What a page marks translate="no" (an audit row's recorded reason, a configuration key) is data, not a sentence.
    text = driver.execute_script(
        "document.querySelectorAll('details').forEach(e => e.open = true);"
        "const data = [...document.querySelectorAll('[translate=no]')]; data.forEach(e => { e.dataset.shown = e.style.display; e.style.display = 'none'; });"
        "const t = document.title + '\\n' + document.body.innerText;"
        "data.forEach(e => e.style.display = e.dataset.shown || '');"
        "document.querySelectorAll('details').forEach(e => e.open = false); return t")
    for typed in TYPED:
        text = text.replace(typed, " ")
    found = []
    for line in text.split("\n"):
        words = {w.strip(".,:;!?()\"'„“…").lower() for w in line.split()}
        if words & ENGLISH:
            found.append(f"English left: {line.strip()[:120]!r}")
    return found


def axe_findings(driver):
    """axe-core's serious and critical findings (its bundled version's view of
    autocomplete="one-time-code" aside, as test_pages.accessible sets it aside)."""
    axe = Axe(driver)
    axe.inject()
    found = []
    for v in axe.run()["violations"]:
        if v.get("impact") not in ("serious", "critical"):
            continue
        nodes = [n for n in v["nodes"] if not (v["id"] == "autocomplete-valid" and 'autocomplete="one-time-code"' in n.get("html", ""))]
        if nodes:
            found.append(f"axe {v['id']}: {v['help']} ({nodes[0].get('html', '')[:100]})")
    return found


def authd(server, *args):
    done = subprocess.run([BINARY, *args, "--data", server.folder], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def create_client(server, name, *flags):
    out = authd(server, "clients", "create", name, *flags)
    return json.loads(out[: out.rindex("}") + 1])


def authorize_url(server, client, **extra):
    return server.url.replace("127.0.0.1", "localhost") + "/oauth/authorize?" + urllib.parse.urlencode({
        "client_id": client["client_id"], "redirect_uri": CALLBACK, "response_type": "code", "scope": "openid email profile",
        "nonce": "n-" + str(time.time()), "state": "s", "code_challenge": CHALLENGE, "code_challenge_method": "S256", **extra})


def new_sign_in_link(server, email, after=0):
    """The /not-me link of the newest "new way to sign in" mail to `email`."""
    mail = server.mailed(email, about=german("kernel.mail.sign_in_method_added.subject"), after=after)
    return re.search(r"(http://\S+/not-me\?token=[^\s<>\"')]+)", mail["text"]).group(1)


@pytest.fixture
def phone():
    os.makedirs(OUTPUT, exist_ok=True)
    with chromium(WIDTH, 900, language=LANGUAGE) as driver:
        phone = Phone(driver)
        phone.viewport(WIDTH)
        yield phone


def test_no_page_scrolls_sideways_at_320_px_and_every_touch_target_is_44_px(phone, tmp_path):
    browser = phone.driver
    check = phone.check
    github = GitHubStandIn()
    secret = tmp_path / "github-secret"
    secret.write_text("gh-secret\n")
    hook_secret = tmp_path / "webhook-secret"
    hook_secret.write_text("whsec_" + base64.b64encode(os.urandom(32)).decode())
    port = free_port()
    issuer = f"http://localhost:{port}"
    config = {
        "issuer": issuer, "providers": ["email", "password", "passkey", "totp", "approval", "pin", "oidc"],
        "passkeys": {"rp_id": "localhost", "origins": [issuer]}, "email": {"resend_interval": 0},
        "oidc": {"providers": {"github": {
            "kind": "github", "label": LABEL, "client_id": "gh-client", "client_secret_file": str(secret),
            "authorize_url": github.url + "/login/oauth/authorize", "token_url": github.url + "/login/oauth/access_token", "api_url": github.url + "/api"}}},
        "webhooks": [{"url": HOOK_URL, "secret_file": str(hook_secret)}], "webhook_delivery": {"retry_delay": 3600},
    }
    stale_config = {"issuer": None, "providers": ["email", "totp"], "email": {"resend_interval": 0}, "auth": {"fresh_auth": 3}}
    try:
        with running_server(config, port=port) as server, running_server(stale_config) as small:
            # The small server: an operator with an authenticator app signs in now; their sign-in is
            # stale by the end, for the pages that ask for a new one.
            stale = small.sign_in(STALE_OPERATOR)
            enrolment = small.call("POST", "/api/v1/auth/mfa/totp/enroll", token=stale["access_token"])[1]
            stale_app = pyotp.parse_uri(enrolment["otpauth_uri"])
            assert small.call("POST", "/api/v1/auth/mfa/totp/confirm", {"code": stale_app.now()}, token=stale["access_token"])[0] == 200
            sign_in_with_email(browser, small, STALE_OPERATOR)
            check("login-second-step-totp")
            fill(browser, "factor-totp", stale_app.at(time.time() + 30))
            click(browser, "form[action='/login/factor'] button")
            browser.get(small.url + "/admin")
            check("console-not-an-operator")
            authd(small, "admins", "grant", STALE_OPERATOR)
            device_code = requests.post(small.url + "/oauth/device_authorization",
                                        data={"client_id": "frame", "device_name": DEVICE_NAME, "platform": "linux"}).json()["user_code"]

            # The main server's apps and keys, with long names and addresses.
            app = create_client(server, APP_NAME, "--redirect-uri", CALLBACK, "--redirect-uri", LONG_REDIRECT, "--post-logout-redirect-uri", BYE)
            kiosk = create_client(server, KIOSK_NAME, "--first-party", "--allow-pin", "--redirect-uri", CALLBACK)
            authd(server, "service-keys", "create", KEY_NAME)

            # The sign-in page, signed out, with every provider's first step.
            browser.get(issuer + "/login")
            check("login", dark=True, wide=True)
            browser.get(authorize_url(server, kiosk))
            WebDriverWait(browser, 10).until(lambda d: "/login" in d.current_url)
            check("login-for-an-app-with-pin", dark=True)

            # The first operator: the invite link, a passkey, a sign-in with it.
            add_authenticator(browser)
            link = re.search(r"(http://\S+/admin/setup\?token=\S+)", authd(server, "admins", "invite", OPERATOR)).group(1)
            browser.get(link)
            check("console-setup")
            click(browser, "form[action='/admin/setup'] button")
            check("console-factor", dark=True)
            click(browser, "form[action='/account/passkey/begin'] button")
            check("account-passkey-create")
            fill(browser, "passkey-name", "Konstantinopolitanischer Taschenrechner (phone)")
            click(browser, "#passkey-button")
            assert on_account(browser), browser.current_url
            browser.get(issuer + "/admin")
            click(browser, "form[action='/admin/reauth'] button")
            click(browser, "form[action='/login/passkey/begin'] button")
            check("login-passkey")
            WebDriverWait(browser, 10).until(lambda d: urllib.parse.urlparse(d.current_url).path == "/admin")

            # /account filled in: a password, an authenticator app, a linked identity.
            browser.get(issuer + "/account")
            fill(browser, "account-new-password", PASSWORD)
            click(browser, "form[action='/account/password/change'] button")
            click(browser, "form[action='/account/totp/begin'] button")
            check("account-totp-enroll", dark=True)
            totp = pyotp.TOTP(browser.find_element(By.ID, "totp-key").text.replace(" ", ""))
            fill(browser, "totp-code", totp.now())
            click(browser, "form[action='/account/totp/confirm'] button")
            check("account-totp-codes")
            browser.get(issuer + "/account")
            click(browser, "a[href^='/login/oidc/github?link=1']")
            WebDriverWait(browser, 10).until(lambda d: on_account(d) and german("oidc.account.linked").split(":")[0] in d.page_source)

            # An app asks: consent; the app asks to sign out: the logout page.
            browser.get(authorize_url(server, app))
            WebDriverWait(browser, 10).until(lambda d: "/oauth/authorize" in d.current_url)
            check("consent", dark=True)
            browser.find_element(By.CSS_SELECTOR, "button[value='allow']").click()
            WebDriverWait(browser, 10).until(lambda d: d.current_url.startswith(CALLBACK))
            browser.get(issuer + "/oauth/logout?" + urllib.parse.urlencode({"client_id": app["client_id"], "post_logout_redirect_uri": BYE}))
            check("logout")
            click(browser, "button[value='stay']")

            # A device: the code typed, the device confirmed, approved.
            device = requests.post(server.url + "/oauth/device_authorization",
                                   data={"client_id": "frame", "device_name": DEVICE_NAME, "platform": "linux"}).json()
            browser.get(issuer + "/device")
            check("device-enter")
            browser.get(device["verification_uri_complete"].replace("127.0.0.1", "localhost"))
            check("device-confirm", dark=True)
            click(browser, "#approve")
            check("device-approved")

            browser.get(issuer + "/account")
            check("account", dark=True, wide=True)

            # The console.
            browser.get(issuer + "/admin")
            check("console-overview", dark=True, wide=True)
            browser.get(issuer + "/admin/users")
            fill(browser, "invite-email", INVITEE)
            fill(browser, "invite-name", DISPLAY_NAME)
            fill(browser, "invite-groups", GROUPS)
            click(browser, "form[action='/admin/invitations'] button")
            invitation = browser.find_element(By.ID, "invitation-url").text
            check("console-users-invited", wide=True)
            # A user created by the operator: its page, with the notice.
            browser.get(issuer + "/admin/users")
            fill(browser, "new-email", CREATED)
            fill(browser, "new-name", DISPLAY_NAME)
            fill(browser, "new-groups", GROUPS)
            click(browser, "form[action='/admin/users/new'] button")
            check("console-user-created")
            browser.get(issuer + "/admin/users")
            fill(browser, "new-email", CREATED)
            click(browser, "form[action='/admin/users/new'] button")
            check("console-users-create-refused")
            browser.get(issuer + "/admin/users?" + urllib.parse.urlencode({"query": OPERATOR}))
            check("console-users-search")
            click(browser, "a[href^='/admin/users/']")
            user_page = browser.current_url
            fill(browser, "display_name", DISPLAY_NAME)
            fill(browser, "app_metadata", json.dumps({"plan": "family", "archive": LONG_REDIRECT}))
            click(browser, "form[action$='/profile'] button")
            fill(browser, "groups", GROUPS)
            click(browser, "form[action$='/groups'] button")
            check("console-user", dark=True, wide=True)
            click(browser, "form[action$='/reset'] button")
            check("console-user-notice")
            fill(browser, "confirm", "not the address")
            click(browser, "form[action$='/delete'] button")
            check("console-user-error")

            browser.get(issuer + "/admin/clients")
            check("console-clients", wide=True)
            fill(browser, "client-name", APP_NAME + " (again)")
            fill(browser, "client-redirects", LONG_REDIRECT + "/again\n" + CALLBACK)
            click(browser, "form[action='/admin/clients'] button")
            check("console-clients-created")
            browser.get(issuer + "/admin/clients/" + app["client_id"])
            check("console-client", dark=True, wide=True)
            fill(browser, "client-claims", "plan, archive")
            fill(browser, "client-groups", GROUPS)
            click(browser, f"form[action='/admin/clients/{app['client_id']}/edit'] button")
            check("console-client-saved")
            click(browser, f"form[action='/admin/clients/{app['client_id']}/rotate'] button")
            check("console-client-rotated")

            browser.get(issuer + "/admin/keys")
            check("console-keys", wide=True)
            fill(browser, "key-name", KEY_NAME[:-1] + "2")
            click(browser, "form[action='/admin/keys'] button")
            check("console-keys-created", dark=True)

            deadline = time.monotonic() + 30
            browser.get(issuer + "/admin/webhooks")
            while german("console.webhooks.retry_now") not in browser.page_source and time.monotonic() < deadline:
                time.sleep(0.2)
                browser.get(issuer + "/admin/webhooks")
            check("console-webhooks", dark=True, wide=True)
            browser.get(issuer + "/admin/audit")
            check("console-audit", wide=True)
            browser.get(issuer + "/admin/audit?" + urllib.parse.urlencode({"user": OPERATOR, "since": "2020-01-01", "until": "2099-12-31"}))
            check("console-audit-filtered")
            browser.get(issuer + "/admin/config")
            check("console-config", wide=True)
            not_me = new_sign_in_link(server, OPERATOR)

            # Signed out: every provider's steps.
            click(browser, "footer form[action='/logout'] button")
            browser.get(issuer + "/login")
            before = len(server.outbox())
            fill(browser, "email-address", NEWCOMER)
            click(browser, "button[formaction='/login/email/send']")
            check("login-email-code")
            fill(browser, "email-code", "000000" if server.mailed_code(NEWCOMER, after=before) != "000000" else "111111")
            click(browser, "form[action='/login/email/verify'] button")
            check("login-email-code-wrong")

            browser.get(issuer + "/login")
            fill(browser, "email-address", OPERATOR)
            fill(browser, "password-password", "not the password")
            click(browser, "button[formaction='/login/password/login']")
            check("login-password-wrong")
            fill(browser, "password-password", PASSWORD)
            click(browser, "button[formaction='/login/password/login']")
            check("login-second-step", dark=True)
            click(browser, "form[action='/login/restart'] button")

            browser.get(issuer + "/login")
            browser.execute_script("document.querySelectorAll('details').forEach(e => e.open = true)")
            fill(browser, "register-email", sixty("signup"))
            fill(browser, "register-name", DISPLAY_NAME)
            fill(browser, "register-password", PASSWORD)
            click(browser, "form[action='/login/password/register'] button")
            check("login-password-verify")

            browser.get(issuer + "/login")
            browser.execute_script("document.querySelectorAll('details').forEach(e => e.open = true)")
            fill(browser, "reset-email", OPERATOR)
            click(browser, "form[action='/login/password/reset-send'] button")
            check("login-password-reset-code")

            browser.get(issuer + "/login")
            browser.execute_script("document.querySelectorAll('details').forEach(e => e.open = true)")
            fill(browser, "reset-device-email", OPERATOR)
            fill(browser, "reset-device-password", PASSWORD + " again")
            click(browser, "form[action='/login/password/reset-device'] button")
            check("login-password-reset-wait")

            browser.get(issuer + "/login")
            browser.find_element(By.ID, "email-address").clear()  # the address typed earlier in this sign-in is kept
            browser.find_element(By.ID, "email-address").send_keys(OPERATOR)
            click(browser, "button[formaction='/login/approval/start']")
            assert browser.find_elements(By.CSS_SELECTOR, "form[action='/login/approval/check']"), browser.find_element(By.TAG_NAME, "main").text
            check("login-approval-wait", dark=True)
            click(browser, "form[action='/login/approval/check'] button")
            check("login-approval-not-yet")

            # The invitation, in a browser signed in nowhere.
            browser.get(invitation)
            check("invitation")
            before = len(server.outbox())
            click(browser, "form[action='/invitation/send'] button")
            check("invitation-code", dark=True)
            fill(browser, "invitation-code", server.mailed_code(INVITEE, about=german("kernel.mail.invitation_code.subject"), after=before))
            click(browser, "form[action='/invitation/verify'] button")
            assert on_account(browser), browser.current_url
            click(browser, "footer form[action='/logout'] button")

            # "Not you?": asked, done, and the link used.
            browser.get(not_me)
            check("not-me")
            click(browser, "form[action='/not-me'] button")
            check("not-me-done")
            browser.get(not_me)
            check("not-me-used")

            # The small server's operator signed in a while ago: the pages that ask for a new sign-in.
            browser.get(small.url + "/device?user_code=" + device_code)
            assert german("device.sign_in_again") in browser.page_source
            check("device-stale")
            browser.get(small.url + "/admin/users/" + stale["user"]["id"])
            click(browser, "form[action$='/disable'] button")
            assert german("console.reauth.title") in browser.find_element(By.TAG_NAME, "h1").text
            check("console-reauth", dark=True)
    finally:
        github.server.shutdown()
    assert not phone.failures, f"{len(phone.failures)} of {len(phone.checked)} pages fail at {WIDTH} px:\n" + "\n".join(phone.failures)
