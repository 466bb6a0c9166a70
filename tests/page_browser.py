"""Headless Chromium for the calculator page's tests and bench/page_speed.py (selenium with
Debian's chromium and chromium-driver). ``browser()`` yields a driver whose network is cut
(CDP Network.emulateNetworkConditions offline) and whose every request is recorded in
``driver.requests`` (CDP Network.requestWillBeSent, read from the performance log). Its
``get`` of a file waits until the page has inflated its data and started
(``window.SYMCALC_READY_MS``, or ``SYMCALC_BOOT_ERROR`` when the boot failed)."""
from __future__ import annotations

import contextlib
import json
import shutil
import tempfile

CHROMIUM = next((p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser") if shutil.which(p)), None)
DRIVER = shutil.which("chromedriver") or ("/usr/bin/chromedriver" if shutil.which("/usr/bin/chromedriver") else None)


def missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    if not CHROMIUM or not DRIVER:
        return "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"
    return None


@contextlib.contextmanager
def browser(width: int = 1300, height: int = 1000):
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="symcalc-chromium-")
    opts = Options()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-dev-shm-usage", f"--user-data-dir={profile}",
                f"--window-size={width},{height}"):
        opts.add_argument(arg)
    opts.binary_location = CHROMIUM
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    plain_get = driver.get

    def get(url: str) -> None:
        plain_get(url)
        if url.startswith("file:"):
            ready(driver)

    driver.get = get
    # a script that clicks every derive button of a per-stage report redraws the figures each
    # time: seconds on an idle machine, past WebDriver's default 30 s on a loaded CI runner
    driver.set_script_timeout(180)
    try:
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
            "offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0})
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def ready(driver, seconds: float = 30) -> None:
    """Wait until the page's boot script has run (the data blocks are inflated
    asynchronously, after the load event)."""
    from selenium.webdriver.support.ui import WebDriverWait

    # polled every 20 ms (WebDriverWait's default, 0.5 s, left each page load idle for up to
    # half a second: about 20 s of the torch-free lane over its page loads)
    WebDriverWait(driver, seconds, poll_frequency=0.02).until(lambda d: d.execute_script(
        "return window.SYMCALC_READY_MS !== undefined || window.SYMCALC_BOOT_ERROR !== undefined"))


def requests(driver) -> list[str]:
    """URLs of the requests the page sent since the last call (CDP Network events)."""
    out = []
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent":
            out.append(msg["params"]["request"]["url"])
    return out
