"""A tiny Chrome DevTools Protocol client over --remote-debugging-pipe, for looking at report pages in Debian's
headless Chromium: load a file, collect console errors, uncaught exceptions and failed loads, take a screenshot.

Why the pipe and not playwright or --enable-logging: the pipe needs no download of a second browser, no port, and
no parsing of log text whose format changes between versions; the protocol's events say exactly what failed.
Messages are JSON, each terminated by a NUL byte: we write to the browser's fd 3 and read its fd 4.
"""
from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
         "--remote-debugging-pipe"]


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        if path := shutil.which(name):
            return path
    return None


@dataclass
class PageLook:
    """What the browser saw: problems (console errors, exceptions, failed requests, broken images) and a PNG."""

    problems: list[str] = field(default_factory=list)
    screenshot: bytes = b""
    images: int = 0


def _above(fd: int, lowest: int) -> int:
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, lowest)
    os.close(fd)
    return moved


class Browser:
    """One headless Chromium with a fresh profile; use as a context manager."""

    def __init__(self, executable: str, width: int = 1400, height: int = 900):
        self._profile = tempfile.mkdtemp(prefix="harness-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # the browser reads commands on its fd 3 and writes replies and events to its fd 4; the child's ends are
        # first moved above 4 so that placing one on 3 or 4 cannot close the other
        to_browser_r, from_browser_w = (_above(fd, 10) for fd in (to_browser_r, from_browser_w))
        self.proc = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={self._profile}", f"--window-size={width},{height}",
             "about:blank"],
            pass_fds=(3, 4, to_browser_r, from_browser_w), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=lambda: (os.dup2(to_browser_r, 3), os.dup2(from_browser_w, 4)))
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)
        os.close(self._to_browser)
        os.close(self._from_browser)
        shutil.rmtree(self._profile, ignore_errors=True)

    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method: str, params: dict | None = None, session: str | None = None,
             timeout_s: float = 30.0) -> dict:
        """Send one command and wait for its reply; events read meanwhile are kept in `events`."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout_s
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, timeout_s: float = 30.0) -> dict:
        deadline = time.monotonic() + timeout_s
        for i, event in enumerate(self.events):
            if event.get("method") == method:
                return self.events.pop(i)
        while True:
            event = self._read_message(deadline)
            if event.get("method") == method:
                return event
            self.events.append(event)

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
    """One page in its own tab, loaded (state: the target and its session); click and type go through DevTools'
    Input domain, as a user's would, not through the page's own scripts. Use as a context manager."""

    def __init__(self, browser: Browser, page: Path):
        self.browser = browser
        self.target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = browser.send("Target.attachToTarget", {"targetId": self.target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page", "Network"):
            self.send(f"{domain}.enable")
        start = time.monotonic()
        self.send("Page.navigate", {"url": page.resolve().as_uri()})
        browser.wait_for("Page.loadEventFired")
        #: seconds from navigation to the load event (inline scripts, the row table included, have run by then)
        self.load_s = time.monotonic() - start

    def __enter__(self) -> "Tab":
        return self

    def __exit__(self, *exc: object) -> None:
        self.browser.events.clear()
        self.browser.send("Target.closeTarget", {"targetId": self.target})

    def send(self, method: str, params: dict | None = None) -> dict:
        return self.browser.send(method, params, session=self.session)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (JSON-able values only)."""
        reply = self.send("Runtime.evaluate", {"expression": f"JSON.stringify({expression})", "returnByValue": True})
        if "exceptionDetails" in reply:
            raise RuntimeError(f"{expression}: {reply['exceptionDetails'].get('text')}")
        return json.loads(reply["result"]["value"])

    def click(self, selector: str) -> None:
        """A left click in the middle of the first element matching `selector` (scrolled into view first)."""
        x, y = self.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); "
                             "e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect(); "
                             "return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})

    def type(self, selector: str, text: str) -> None:
        """Focus the element by a click, then type `text` into it as keyboard input."""
        self.click(selector)
        self.send("Input.insertText", {"text": text})

    def screenshot(self) -> bytes:
        return base64.b64decode(self.send("Page.captureScreenshot", {"format": "png",
                                                                      "captureBeyondViewport": False})["data"])

    def problems(self) -> list[str]:
        """Console errors, uncaught exceptions and failed loads seen so far in this tab."""
        found = []
        for event in self.browser.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append(f"exception: {params['exceptionDetails'].get('text')}")
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append("console.error: " + " ".join(str(a.get("value")) for a in params["args"]))
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                found.append(f"log: {params['entry'].get('text')}")
            elif method == "Network.loadingFailed":
                found.append(f"load failed: {params.get('errorText')}")
        return found
