"""The authenticator app's QR code on /account (contract §18): the TOTP set-up page shows the
`otpauth://` URI as a server-rendered SVG QR code, no script, the key as text under it. In headless
Chromium with JavaScript off, the QR code is photographed as it is drawn and read back by a real
reader (zbar's `zbarimg`); the secret it carries makes the code that turns the factor on. The page
passes axe in light and dark mode, and the code stays black on white in dark mode. Screenshots at
375 and 1280 px, light and dark, under IntegrationTests/blackbox/output/totp-qr/."""
import os
import shutil
import subprocess
import urllib.parse

import pyotp
import pytest
from selenium.webdriver.common.by import By

from chromium import chromium
from conftest import running_server
from test_pages import PAGES, accessible, click, register_password

OUTPUT = os.path.join(os.path.dirname(__file__), "output", "totp-qr")
CONFIG = {**PAGES, "providers": ["email", "password", "totp"], "totp": {"issuer": "Photo Sync"}}


def decode(png_path):
    """The texts zbarimg reads from the QR codes in a PNG file."""
    zbarimg = shutil.which("zbarimg")
    assert zbarimg, "zbarimg is missing: apt-get install zbar-tools (make test-deps)"
    result = subprocess.run([zbarimg, "--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", png_path],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, f"zbarimg read no QR code in {png_path}: {result.stderr}"
    return result.stdout.strip().splitlines()


def shoot(driver, name):
    """The page and the QR code alone, at a phone's width and a laptop's."""
    os.makedirs(OUTPUT, exist_ok=True)
    paths = []
    for width in (375, 1280):
        driver.set_window_size(width, 1000)
        driver.save_screenshot(os.path.join(OUTPUT, f"{name}-{width}.png"))
        qr = driver.find_element(By.CSS_SELECTOR, ".totp-qr svg")
        assert 150 <= qr.size["width"] <= 240 and qr.size["width"] == qr.size["height"], qr.size
        path = os.path.join(OUTPUT, f"{name}-qr-{width}.png")
        qr.screenshot(path)
        paths.append(path)
    driver.set_window_size(375, 1000)
    return paths


def sign_in_and_begin(browser, server, email):
    register_password(server, email, "a long enough secret")
    browser.get(server.url + "/login")
    browser.find_element(By.ID, "email-address").send_keys(email)
    browser.find_element(By.ID, "password-password").send_keys("a long enough secret")
    click(browser, "button[formaction='/login/password/login']")
    assert browser.current_url.endswith("/account")
    click(browser, "form[action='/account/totp/begin'] button")


def test_the_qr_code_reads_as_the_key_and_its_code_turns_the_app_on():
    with running_server(CONFIG) as server, chromium(375, 1000, javascript=False) as browser:
        sign_in_and_begin(browser, server, "qr.reader@example.com")

        # Server-rendered: no script on the page draws it, and it is one SVG with a name.
        assert browser.execute_script("return document.querySelectorAll('.totp-qr svg').length") == 1
        svg = browser.find_element(By.CSS_SELECTOR, ".totp-qr svg")
        assert svg.get_attribute("role") == "img" and svg.get_attribute("aria-label")
        assert "<script" not in svg.get_attribute("outerHTML")
        key = browser.find_element(By.ID, "totp-key").text.replace(" ", "")
        link = browser.find_element(By.CSS_SELECTOR, "a[href^='otpauth://']").get_attribute("href")

        read = []
        for path in shoot(browser, "light"):
            texts = decode(path)
            assert len(texts) == 1, texts
            read.append(texts[0])
        assert read[0] == read[1] == link, "the QR code carries the same URI as the link"
        uri = urllib.parse.urlsplit(read[0])
        assert uri.scheme == "otpauth" and uri.netloc == "totp"
        assert urllib.parse.unquote(uri.path) == "/Photo Sync:qr.reader@example.com"
        app = pyotp.parse_uri(read[0])
        assert app.secret == key, "the QR code's secret is the key shown as text"
        assert app.issuer == "Photo Sync" and app.digits == 6 and app.interval == 30

        # The code the scanned secret makes turns the app on: the recovery codes follow.
        browser.find_element(By.ID, "totp-code").send_keys(app.now())
        click(browser, "form[action='/account/totp/confirm'] button")
        assert len(browser.find_elements(By.CSS_SELECTOR, "#recovery-codes code")) == 10
        status, challenge, _ = server.call("POST", "/api/v1/auth/password/login",
                                           {"email": "qr.reader@example.com", "password": "a long enough secret"})
        assert status == 202 and "totp" in challenge["factors"]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_set_up_page_is_accessible_and_the_code_black_on_white(scheme):
    with running_server(CONFIG) as server, chromium(375, 1000) as browser:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
        sign_in_and_begin(browser, server, f"qr.{scheme}@example.com")
        assert browser.execute_script("return matchMedia('(prefers-color-scheme: dark)').matches") == (scheme == "dark")
        accessible(browser)
        colours = browser.execute_script("""
            const svg = document.querySelector('.totp-qr svg');
            return [getComputedStyle(svg.querySelector('rect')).fill, getComputedStyle(svg.querySelector('path')).fill,
                    getComputedStyle(document.querySelector('main')).backgroundColor];""")
        assert colours[:2] == ["rgb(255, 255, 255)", "rgb(0, 0, 0)"], colours
        assert (colours[2] != "rgb(255, 255, 255)") == (scheme == "dark"), "the card follows the scheme, the code does not"
        key = browser.find_element(By.ID, "totp-key").text.replace(" ", "")
        for path in shoot(browser, scheme):
            assert pyotp.parse_uri(decode(path)[0]).secret == key
