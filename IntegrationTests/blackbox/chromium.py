"""Headless Chromium for the page suites: a driver and a click that waits for the next page."""
import contextlib
import shutil

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


@contextlib.contextmanager
def chromium(width=390, height=900, javascript=True, language=None):
    """Debian's chromium and chromedriver, headless, at `width` × `height`; with `javascript` False,
    no page runs a script (WebDriver still reads them); with `language` ("de"), the browser asks
    for pages in it (Accept-Language), as one set up in that language does."""
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", f"--window-size={width},{height}"):
        options.add_argument(flag)
    prefs = {}
    if not javascript:
        prefs["profile.managed_default_content_settings.javascript"] = 2
    if language:
        options.add_argument(f"--lang={language}")
        options.add_argument(f"--accept-lang={language}")
        prefs["intl.accept_languages"] = language
    if prefs:
        options.add_experimental_option("prefs", prefs)
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def click(driver, by, selector):
    """Clicks and waits for the next page: the form posts, the server answers or redirects."""
    page = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(by, selector).click()

    def replaced(_):
        # Chromedriver may report the old page's node as not belonging to the new document instead
        # of as stale, when asked while the navigation lands: both mean the page was replaced.
        try:
            page.is_enabled()
            return False
        except (StaleElementReferenceException, WebDriverException):
            return True

    WebDriverWait(driver, 10).until(replaced)
