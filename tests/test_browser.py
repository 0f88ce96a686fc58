"""report.html and compare.html looked at in a real headless Chromium (Debian's package; .ci/run installs it): the
page loads with no console error, exception or failed load, every plot decodes, and the screenshot is not blank.
The negative controls prove the checks can fail: a page with a console error and a broken image must be caught,
and a blank page must read as blank."""
from __future__ import annotations

import io
import json

import numpy as np
import pytest
from matplotlib import image as mpimg

from browser import Browser, chromium
from test_compare import history_with_runs, run_command
from test_reports import META, run_records

from harness.commands import compare as compare_command
from harness.reports import write_all

EXECUTABLE = chromium()
pytestmark = pytest.mark.skipif(EXECUTABLE is None, reason="requires chromium (apt-get install chromium; CI installs it)")


def inked(png: bytes) -> float:
    """Share of screenshot pixels that are not the page background (white)."""
    pixels = mpimg.imread(io.BytesIO(png), format="png")[..., :3]
    return float(np.mean(np.any(pixels < 0.95, axis=-1)))


@pytest.fixture(scope="module")
def browser():
    with Browser(EXECUTABLE) as b:
        yield b


def test_report_html_in_a_real_browser(browser, tmp_path):
    paths = write_all(tmp_path, META, run_records())
    look = browser.look(paths["html"])
    assert look.problems == []
    assert look.images == 5                # verdicts, 2 precision histograms, baseline panel, timing group
    assert look.screenshot[:8] == b"\x89PNG\r\n\x1a\n" and inked(look.screenshot) > 0.02


def test_compare_page_in_a_real_browser(browser, tmp_path):
    history_with_runs(tmp_path, np.random.default_rng(9), [100, 112])
    out = tmp_path / "cmp"
    assert run_command(compare_command, ["compare", "run0", "run1", "--report-dir", str(out),
                                         "--history", str(tmp_path / "h.sqlite")]) == 1
    look = browser.look(out / "compare.html")
    assert look.problems == [] and look.images == 1
    assert inked(look.screenshot) > 0.02
    assert json.loads((out / "compare.json").read_text())["rows"][0]["verdict"] == "REGRESSION"


def test_the_browser_check_catches_errors_and_blank_pages(browser, tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text('<html><body><img src="data:image/png;base64,AAAA"><script>console.error("boom");'
                   "undefined_function();</script></body></html>")
    look = browser.look(bad)
    assert any("console.error: boom" in p for p in look.problems)
    assert any(p.startswith("exception") for p in look.problems)
    assert any("images did not load" in p for p in look.problems)
    blank = tmp_path / "blank.html"
    blank.write_text("<html><body></body></html>")
    look = browser.look(blank)
    assert look.problems == [] and inked(look.screenshot) < 0.001
