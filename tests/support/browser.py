"""A real browser for the tests of serve's page: Debian's `chromium` headless, driven by selenium through Debian's
`chromium-driver` (`scripts/install-system-deps.sh` installs both). Both are given by path, so Selenium Manager is
never asked to find or download anything (`SE_OFFLINE` too); nothing is downloaded at test time."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or next((p for p in ("/usr/bin/chromium", "/usr/lib/chromium/chromium")
                                              if Path(p).exists()), None)
CHROMEDRIVER = shutil.which("chromedriver") or next((p for p in ("/usr/bin/chromedriver",
                                                                 "/usr/lib/chromium/chromedriver")
                                                     if Path(p).exists()), None)


def missing() -> str | None:
    """Why the browser cannot be driven here (None: it can)."""
    if CHROMIUM is None or CHROMEDRIVER is None:
        return "Chromium or its driver is not installed (Debian's chromium and chromium-driver: " \
               "scripts/install-system-deps.sh)"
    try:
        import selenium  # noqa: F401 (the test extra)
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    return None


def chromium(width: int = 1280, height: int = 800) -> Any:
    """A headless Chromium whose page is `width`×`height` CSS pixels, its console kept (`console`). Quit it."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ["SE_OFFLINE"] = "true"
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--disable-gpu", "--no-first-run", "--disable-extensions",
                "--disable-background-networking", "--autoplay-policy=no-user-gesture-required",
                f"--window-size={width},{height}"):
        options.add_argument(arg)
    if os.geteuid() == 0:
        options.add_argument("--no-sandbox")  # Chromium's sandbox refuses to run as root
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    viewport(driver, width, height)
    return driver


def viewport(driver: Any, width: int, height: int, phone: bool = False) -> None:
    """The page's size in CSS pixels (the window's own frame left out), as a phone's (touch, its viewport meta
    tag) when `phone`; one device pixel a CSS pixel, so that screenshots stay small."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": phone})


def console(driver: Any) -> list[dict]:
    """What the page wrote to its console since the last call (selenium drains it): `level`, `message`."""
    return driver.get_log("browser")
