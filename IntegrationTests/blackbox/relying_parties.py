"""Real relying parties of authd for test_relying_parties.py: Apache 2 with mod_auth_openidc
(Debian's libapache2-mod-auth-openidc) and a minimal Django site with mozilla-django-oidc, each
written into a temporary folder, listening on a free loopback port, and stopped when done; and a
person in headless Chromium who signs in on authd's pages with the code mailed to them."""
import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.parse

import requests
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from chromium import click

APACHE_MODULES = "/usr/lib/apache2/modules"
# A loaded machine is slow, not broken: these only bound how long a broken run hangs.
PATIENCE = 120


def free_port():
    """A port nothing on 127.0.0.1 listens on now (the relying party's redirect URI is registered
    before it starts, so the port is chosen first)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, proc, *logs):
    """Polls 127.0.0.1:`port` until it accepts a connection; fails when `proc` exits first."""
    deadline = time.monotonic() + PATIENCE
    while True:
        if proc.poll() is not None:
            raise AssertionError(f"the server exited with {proc.returncode} before listening on {port}:\n"
                                 + "\n".join(tail(log) for log in logs))
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if time.monotonic() >= deadline:
                raise AssertionError(f"nothing listens on {port}:\n" + "\n".join(tail(log) for log in logs))
            time.sleep(0.05)


def tail(path, size=4000):
    try:
        with open(path, errors="replace") as f:
            return f.read()[-size:]
    except (TypeError, OSError):
        return ""


def stop(proc):
    """SIGTERM, then SIGKILL if it does not go."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def discovery(server):
    return requests.get(server.url + "/.well-known/openid-configuration", timeout=60).json()


class RelyingParty:
    """A running relying party: `url` is its protected page, `redirect_uri` where authd sends codes,
    `access_log` what it was asked (method and path with query, one request a line)."""

    def __init__(self, url, redirect_uri, access_log, error_log):
        self.url, self.redirect_uri, self.access_log_path, self.error_log_path = url, redirect_uri, access_log, error_log

    def requests_seen(self):
        return tail(self.access_log_path, size=10**7)

    def errors(self):
        return tail(self.error_log_path)

    def got_a_code(self):
        """Whether authd ever sent the browser to the redirect URI with a code."""
        path = urllib.parse.urlparse(self.redirect_uri).path
        return any(path in line and "code=" in line for line in self.requests_seen().splitlines())

    def showed_the_page(self):
        """Whether the protected page was ever served (200)."""
        path = urllib.parse.urlparse(self.url).path
        return any(path in line and line.rstrip().endswith(" 200") for line in self.requests_seen().splitlines())


# --- Apache 2 with mod_auth_openidc -------------------------------------------------------------

WHOAMI_CGI = """#!/bin/sh
printf 'Content-Type: text/plain; charset=utf-8\\r\\n\\r\\n'
printf 'Apache says: signed in as %s (REMOTE_USER %s)\\n' "$OIDC_CLAIM_email" "$REMOTE_USER"
"""


@contextlib.contextmanager
def apache_with_mod_auth_openidc(server, register, port=None):
    """Apache 2 on 127.0.0.1, its own ServerRoot, pid file and logs in a temporary folder, prefork
    with mod_cgi; `/private/` needs an OpenID Connect sign-in through `server`, and
    `/private/whoami` (a CGI) prints the `email` claim. `register(redirect_uri)` registers the
    client and returns authd's `{"client_id","client_secret"}`."""
    port = port or free_port()
    base = f"http://127.0.0.1:{port}"
    redirect_uri = base + "/private/redirect_uri"  # a vanity URL inside the protected path, as the module wants
    client = register(redirect_uri)
    with tempfile.TemporaryDirectory(prefix="authd-apache-") as root:
        # Apache's children run as www-data when started by root: they read the CGI from here.
        os.chmod(root, 0o755)
        for folder in ("cgi-bin", "run", "logs"):
            os.mkdir(os.path.join(root, folder))
            os.chmod(os.path.join(root, folder), 0o755)
        cgi = os.path.join(root, "cgi-bin", "whoami")
        with open(cgi, "w") as f:
            f.write(WHOAMI_CGI)
        os.chmod(cgi, 0o755)
        run_as = "User www-data\nGroup www-data\n" if os.geteuid() == 0 else ""
        modules = ["mpm_prefork", "authn_core", "authz_core", "authz_user", "alias", "cgi", "auth_openidc"]
        load = "\n".join(f"LoadModule {m}_module {APACHE_MODULES}/mod_{m}.so" for m in modules)
        conf = os.path.join(root, "httpd.conf")
        access_log, error_log = os.path.join(root, "logs", "access.log"), os.path.join(root, "logs", "error.log")
        with open(conf, "w") as f:
            f.write(load + "\n" + run_as + textwrap.dedent(f"""\
                ServerRoot "{root}"
                DefaultRuntimeDir "{root}/run"
                PidFile "{root}/run/httpd.pid"
                ServerName 127.0.0.1
                Listen 127.0.0.1:{port}
                StartServers 2
                MinSpareServers 1
                MaxSpareServers 4
                ErrorLog "{error_log}"
                LogLevel warn auth_openidc:info
                LogFormat "%m %U%q %>s" plain
                CustomLog "{access_log}" plain
                DocumentRoot "{root}/cgi-bin"

                OIDCProviderMetadataURL {server.url}/.well-known/openid-configuration
                OIDCClientID {client["client_id"]}
                OIDCClientSecret {client["client_secret"]}
                OIDCRedirectURI {redirect_uri}
                OIDCCryptoPassphrase {secrets.token_urlsafe(32)}
                OIDCScope "openid email"
                OIDCPKCEMethod S256
                OIDCRemoteUserClaim email
                OIDCPassClaimsAs environment

                ScriptAlias /private/whoami "{cgi}"
                <Location /private>
                    AuthType openid-connect
                    Require valid-user
                </Location>
                """))
        os.chmod(conf, 0o600)  # the client secret: read by the root parent before it drops to www-data
        apache = shutil.which("apache2") or "/usr/sbin/apache2"
        with open(os.path.join(root, "logs", "stderr.log"), "w") as stderr:
            # A session of its own: on SIGTERM the parent signals its whole process group, which
            # would otherwise be pytest's.
            proc = subprocess.Popen([apache, "-f", conf, "-DFOREGROUND"], stdout=stderr, stderr=subprocess.STDOUT,
                                    env={"PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/bin"), "LANG": "C"},
                                    start_new_session=True)
        try:
            wait_for_port(port, proc, os.path.join(root, "logs", "stderr.log"), error_log)
            yield client, RelyingParty(base + "/private/whoami", redirect_uri, access_log, error_log)
        finally:
            stop(proc)


# --- Django with mozilla-django-oidc ------------------------------------------------------------

DJANGO_URLS = """\
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.urls import include, path
from django.utils.html import escape


@login_required
def private(request):
    return HttpResponse("<!doctype html><title>Django</title><h1>Django says: signed in as "
                        + escape(request.user.email) + "</h1>")


urlpatterns = [
    path("oidc/", include("mozilla_django_oidc.urls")),
    path("private/", private),
]
"""


@contextlib.contextmanager
def django_with_mozilla_django_oidc(server, register, port=None):
    """A minimal Django project on 127.0.0.1 (served by Hypercorn), signing people in with
    mozilla-django-oidc: PKCE S256 (OIDC_USE_PKCE), a nonce, RS256 ID tokens checked against authd's
    JWKS, the email from userinfo. `/private/` needs a signed-in user and prints their email."""
    port = port or free_port()
    base = f"http://127.0.0.1:{port}"
    redirect_uri = base + "/oidc/callback/"  # mozilla-django-oidc's callback view
    client = register(redirect_uri)
    meta = discovery(server)
    with tempfile.TemporaryDirectory(prefix="authd-django-") as root:
        site = os.path.join(root, "rpsite")
        os.mkdir(site)
        open(os.path.join(site, "__init__.py"), "w").close()
        with open(os.path.join(site, "urls.py"), "w") as f:
            f.write(DJANGO_URLS)
        with open(os.path.join(site, "settings.py"), "w") as f:
            f.write(textwrap.dedent(f"""\
                SECRET_KEY = {secrets.token_urlsafe(40)!r}
                DEBUG = False
                ALLOWED_HOSTS = ["127.0.0.1"]
                INSTALLED_APPS = ["django.contrib.auth", "django.contrib.contenttypes", "django.contrib.sessions",
                                  "mozilla_django_oidc"]
                MIDDLEWARE = ["django.contrib.sessions.middleware.SessionMiddleware",
                              "django.contrib.auth.middleware.AuthenticationMiddleware"]
                ROOT_URLCONF = "rpsite.urls"
                DATABASES = {{"default": {{"ENGINE": "django.db.backends.sqlite3", "NAME": {os.path.join(root, "db.sqlite3")!r}}}}}
                USE_TZ = True
                # Its cookies share 127.0.0.1 with authd's (cookies ignore ports): keep the names apart.
                SESSION_COOKIE_NAME = "rpsite_session"
                AUTHENTICATION_BACKENDS = ["mozilla_django_oidc.auth.OIDCAuthenticationBackend"]
                LOGIN_URL = "/oidc/authenticate/"
                LOGIN_REDIRECT_URL = "/private/"
                OIDC_RP_CLIENT_ID = {client["client_id"]!r}
                OIDC_RP_CLIENT_SECRET = {client["client_secret"]!r}
                OIDC_RP_SIGN_ALGO = "RS256"
                OIDC_RP_SCOPES = "openid email"
                OIDC_USE_PKCE = True
                OIDC_OP_AUTHORIZATION_ENDPOINT = {meta["authorization_endpoint"]!r}
                OIDC_OP_TOKEN_ENDPOINT = {meta["token_endpoint"]!r}
                OIDC_OP_USER_ENDPOINT = {meta["userinfo_endpoint"]!r}
                OIDC_OP_JWKS_ENDPOINT = {meta["jwks_uri"]!r}
                OIDC_TIMEOUT = 60
                LOGGING = {{"version": 1, "disable_existing_loggers": False,
                           "handlers": {{"stderr": {{"class": "logging.StreamHandler"}}}},
                           "loggers": {{"django": {{"handlers": ["stderr"], "level": "WARNING"}},
                                       "mozilla_django_oidc": {{"handlers": ["stderr"], "level": "DEBUG"}}}}}}
                """))
        with open(os.path.join(site, "asgi.py"), "w") as f:
            f.write("from django.core.asgi import get_asgi_application\n\napplication = get_asgi_application()\n")
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("AUTHD_")},
               "DJANGO_SETTINGS_MODULE": "rpsite.settings", "PYTHONPATH": root, "PYTHONUNBUFFERED": "1"}
        subprocess.run([sys.executable, "-m", "django", "migrate", "-v", "0"], cwd=root, env=env, check=True, timeout=PATIENCE)
        access_log, error_log = os.path.join(root, "access.log"), os.path.join(root, "error.log")
        with open(error_log, "w") as stderr:
            proc = subprocess.Popen([sys.executable, "-m", "hypercorn", "rpsite.asgi:application", "--bind", f"127.0.0.1:{port}",
                                     "--access-logfile", access_log, "--access-logformat", "%(m)s %(U)s?%(q)s %(s)s"],
                                    cwd=root, env=env, stdout=stderr, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_for_port(port, proc, error_log)
            yield client, RelyingParty(base + "/private/", redirect_uri, access_log, error_log)
        finally:
            stop(proc)


# --- The person in the browser ------------------------------------------------------------------

def wait_until(driver, condition):
    """WebDriverWait, generous, over pages being replaced while it looks."""
    return WebDriverWait(driver, PATIENCE, ignored_exceptions=(NoSuchElementException, StaleElementReferenceException)).until(condition)


def on_authd(driver, server):
    return driver.current_url.startswith(server.url + "/")


def sign_in_through_authd(driver, server, email, consent=True):
    """The browser is at authd's /login (sent there by a relying party's authorize request): the
    person types their email, reads the code from the mail they got, types it; then allows the app
    on the consent page when one is shown (and `consent`)."""
    wait_until(driver, lambda d: urllib.parse.urlparse(d.current_url).path == "/login" and on_authd(d, server))
    before = len(server.outbox())
    driver.find_element(By.ID, "email-address").send_keys(email)
    click(driver, By.CSS_SELECTOR, "button[formaction='/login/email/send']")
    driver.find_element(By.ID, "email-code").send_keys(server.mailed_code(email, after=before))
    click(driver, By.CSS_SELECTOR, "form[action='/login/email/verify'] button")
    allow_if_asked(driver, server, consent)


def allow_if_asked(driver, server, consent=True):
    if consent and on_authd(driver, server) and driver.find_elements(By.CSS_SELECTOR, "button[value='allow']"):
        click(driver, By.CSS_SELECTOR, "button[value='allow']")


def page_text(driver):
    return driver.find_element(By.TAG_NAME, "body").text


def arrive(driver, rp, text):
    """Waits until the browser shows the relying party's protected page with `text` on it."""
    try:
        wait_until(driver, lambda d: d.current_url.startswith(rp.url) and text in page_text(d))
    except Exception as failure:
        raise AssertionError(f"the browser is at {driver.current_url}, showing {page_text(driver)[:500]!r}; "
                             f"the relying party logged: {rp.errors()}") from failure
    return page_text(driver)


def browser_session(driver, server):
    """A requests session holding the browser's cookies for authd (to read a page's status, which
    WebDriver does not tell)."""
    session = requests.Session()
    cookies = "; ".join(f"{c['name']}={c['value']}" for c in driver.get_cookies())
    session.headers["Cookie"] = cookies
    return session
