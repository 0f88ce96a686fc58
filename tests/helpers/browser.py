"""Report pages looked at in Debian's headless Chromium through Selenium and Debian's chromedriver
(`chromium-driver`): load a file, collect console errors, uncaught exceptions and failed loads, take a screenshot,
click and type as a user would, and find characters the installed fonts draw as empty boxes.

Why Selenium with the distribution's driver: WebDriver is the standard protocol (a user's click and keystrokes,
the browser's own log), the driver matches the installed browser's version, and nothing is downloaded at test
time (Selenium Manager is never asked: the driver's path is given).
"""
from __future__ import annotations

import base64
import json
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
         "--disable-dev-shm-usage"]
#: A code point no font has a glyph for (plane 16 private use): what an empty box looks like in this browser.
NO_GLYPH = "\U0010fffd"


def chromedriver() -> str | None:
    return shutil.which("chromedriver") or next(
        (p for p in ("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver") if Path(p).is_file()), None)


def chromium() -> str | None:
    """The browser, when the whole stack is here (chromium, chromedriver, the selenium package); else None."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return None
    browser = next((p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None)
    return browser if browser and chromedriver() else None


@dataclass
class PageLook:
    """What the browser saw: problems (console errors, exceptions, failed requests, broken images) and a PNG."""

    problems: list[str] = field(default_factory=list)
    screenshot: bytes = b""
    images: int = 0


class Browser:
    """One headless Chromium with a fresh profile, driven by chromedriver; use as a context manager."""

    def __init__(self, executable: str, width: int = 1400, height: int = 900):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self._profile = tempfile.mkdtemp(prefix="harness-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = executable
        for flag in (*FLAGS, f"--user-data-dir={self._profile}", f"--window-size={width},{height}"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(options=options, service=Service(executable_path=chromedriver()))
        self.driver.set_page_load_timeout(60)
        self._home = self.driver.current_window_handle

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self._profile, ignore_errors=True)

    def send(self, method: str, params: dict | None = None, session: str | None = None,
             timeout_s: float = 30.0) -> dict:
        """One Chrome DevTools command (e.g. "Emulation.setDeviceMetricsOverride") to the current tab, and its
        reply (`session` and `timeout_s` are the old DevTools client's, kept for its callers)."""
        return self.driver.execute_cdp_cmd(method, params or {})

    def look(self, page: Path) -> PageLook:
        """Open `page` in a new tab, wait for its load event, and report what went wrong and what it looks like."""
        with self.open(page) as tab:
            images, not_loaded = tab.evaluate("[document.images.length, Array.from(document.images).filter("
                                              "i => !(i.complete && i.naturalWidth > 0)).length]")
            look = PageLook(screenshot=tab.screenshot(), images=images)
            if not_loaded:
                look.problems.append(f"{not_loaded} of {images} images did not load")
            look.problems += tab.problems()
        return look

    def open(self, page: Path) -> "Tab":
        return Tab(self, page)


class Tab:
    """One page in its own tab, loaded; clicks and keystrokes go through WebDriver, as a user's would, not through
    the page's own scripts. Use as a context manager."""

    def __init__(self, browser: Browser, page: Path):
        self.browser, self.driver = browser, browser.driver
        self.driver.switch_to.new_window("tab")
        self.driver.get_log("browser")  # what earlier tabs logged is theirs
        self._log: list[dict] = []
        start = time.monotonic()
        self.driver.get(page.resolve().as_uri())  # returns after the load event
        #: seconds from navigation to the load event (inline scripts, the row table included, have run by then)
        self.load_s = time.monotonic() - start

    def __enter__(self) -> "Tab":
        return self

    def __exit__(self, *exc: object) -> None:
        self.driver.close()
        self.driver.switch_to.window(self.browser._home)

    def send(self, method: str, params: dict | None = None) -> dict:
        return self.browser.send(method, params)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (JSON-able values only)."""
        return json.loads(self.driver.execute_script(f"return JSON.stringify({expression});"))

    def _element(self, selector: str):
        from selenium.webdriver.common.by import By

        element = self.driver.find_element(By.CSS_SELECTOR, selector)
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)
        return element

    def click(self, selector: str) -> None:
        """A left click in the middle of the first element matching `selector` (scrolled into view first)."""
        self._element(selector).click()

    def type(self, selector: str, text: str) -> None:
        """Focus the element by a click, then type `text` into it as keyboard input (after what it holds)."""
        from selenium.webdriver.common.keys import Keys

        element = self._element(selector)
        element.click()
        element.send_keys(Keys.END, text)

    def screenshot(self) -> bytes:
        """The viewport as PNG."""
        return base64.b64decode(self.driver.get_screenshot_as_base64())

    def boxed(self, text: str | None = None) -> list[str]:
        """The characters of `text` (default: the page's visible text) that the page's fonts draw as the empty box
        of a missing glyph, or not at all: each is drawn on a canvas in the body's font and compared with NO_GLYPH."""
        return self.driver.execute_script("""
            const text = arguments[0] === null ? document.body.innerText : arguments[0];
            const font = '32px ' + getComputedStyle(document.body).fontFamily;
            const draw = ch => { const c = document.createElement('canvas'); c.width = 48; c.height = 48;
                const x = c.getContext('2d'); x.font = font; x.fillText(ch, 4, 36);
                return x.getImageData(0, 0, 48, 48).data.join(','); };
            const box = draw(arguments[1]), blank = draw(' ');
            const chars = [...new Set(Array.from(text))].filter(ch => ch.codePointAt(0) > 0x7e && ch.trim());
            return chars.filter(ch => { const d = draw(ch); return d === box || d === blank; });
        """, text, NO_GLYPH)

    def problems(self) -> list[str]:
        """Console errors, uncaught exceptions and failed loads seen so far in this tab."""
        self._log += self.driver.get_log("browser")
        found = []
        for entry in self._log:
            if entry.get("level") != "SEVERE":
                continue
            message = entry.get("message", "")
            if entry.get("source") == "console-api":
                found.append("console.error: " + message.split(" ", 2)[-1].strip('"'))
            elif "Uncaught" in message:
                found.append(f"exception: {message}")
            elif entry.get("source") == "network":
                found.append(f"load failed: {message}")
            else:
                found.append(f"log: {message}")
        return found
