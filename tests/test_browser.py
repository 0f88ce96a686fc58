"""report.html and compare.html looked at in a real headless Chromium (Debian's package; .ci/run installs it): the
page loads with no console error, exception or failed load, every plot decodes, and the screenshot is not blank.
The negative controls prove the checks can fail: a page with a console error and a broken image must be caught,
and a blank page must read as blank. The per-row table of a 2401-row report is sorted, searched and filtered by
clicks and typing sent through DevTools, and the DOM is read back."""
from __future__ import annotations

import io
import json

import numpy as np
import pytest
from matplotlib import image as mpimg

from browser import Browser, chromium
from test_compare import history_with_runs, run_command
from test_reports import META, big_run, run_records

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
    assert look.images == 4                # 2 precision histograms, baseline panel, timing group
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


RED, GREEN = (198, 40, 40), (46, 125, 50)  # the status rule under the title: failed / passed


def colour_share(png: bytes, rgb: tuple[int, int, int], rows: int = 200) -> float:
    """Share of the top `rows` pixel rows drawn in exactly this colour (the summary is at the top)."""
    pixels = np.round(mpimg.imread(io.BytesIO(png), format="png")[:rows, :, :3] * 255).astype(int)
    return float(np.mean(np.all(pixels == rgb, axis=-1)))


def shown(tab) -> list[str]:
    return tab.evaluate("Array.from(document.querySelectorAll('#rows tbody tr'), r => r.cells[0].textContent)")


def test_big_report_opens_fast_with_summary_first_and_rows_sortable_searchable(browser, tmp_path):
    records = big_run()
    records[30]["reason"] = "<b>not bold</b>"
    paths = write_all(tmp_path, META, records)
    with browser.open(paths["html"]) as tab:
        assert tab.problems() == []
        assert tab.load_s < 10, f"{tab.load_s:.2f} s to the load event"
        shot = tab.screenshot()
        assert inked(shot) > 0.02 and colour_share(shot, RED) > 0.001 and colour_share(shot, GREEN) == 0
        first = tab.evaluate("(() => { const h = document.querySelector('h2'); const r = h.getBoundingClientRect();"
                             " return [h.textContent, r.top < innerHeight,"
                             " document.querySelector('h2 + p').textContent]; })()")
        assert first[0] == "状态" and first[1] and "未通过" in first[2]
        assert len(shown(tab)) == 200 and tab.evaluate("document.getElementById('row-count').textContent") == \
            "2401 / 2401 行"
        tab.click("#row-next")  # the second page of 200
        assert shown(tab)[0] == "TC_L1_0200" and tab.evaluate("document.getElementById('row-page').textContent") \
            == "201–400"
        tab.click('#rows th[data-col="0"]')
        assert shown(tab)[:2] == ["TC_L1_0000", "TC_L1_0001"]
        tab.click('#rows th[data-col="0"]')
        assert shown(tab)[:2] == ["TC_PF_0001", "TC_L1_2399"]
        assert tab.evaluate("document.querySelector('#rows th').getAttribute('aria-sort')") == "descending"
        tab.type("#row-search", "tc_l1_002")
        assert sorted(shown(tab)) == [f"TC_L1_{i:04d}" for i in range(20, 30)]
        tab.evaluate("(() => { const s = document.getElementById('row-verdict'); s.value = 'FAIL';"
                     " s.dispatchEvent(new Event('change')); return 0; })()")
        assert sorted(shown(tab)) == [f"TC_L1_{i:04d}" for i in range(20, 25)]
        assert tab.evaluate("document.getElementById('row-count').textContent") == "5 / 2401 行"
        tab.type("#row-search", "x")  # appended: "tc_l1_002x" matches nothing
        assert shown(tab) == []
        tab.evaluate("(() => { document.getElementById('row-verdict').value = '';"
                     " const s = document.getElementById('row-search'); s.value = 'not bold';"
                     " s.dispatchEvent(new Event('input')); return 0; })()")
        assert shown(tab) == ["TC_L1_0030"]
        assert tab.evaluate("document.querySelector('#rows tbody tr').cells[14].innerHTML") == \
            "&lt;b&gt;not bold&lt;/b&gt;"  # a cell is text, never markup
        assert tab.problems() == []


def test_a_passing_report_draws_its_status_green(browser, tmp_path):
    paths = write_all(tmp_path, META, run_records())
    with browser.open(paths["html"]) as tab:
        shot = tab.screenshot()
    assert colour_share(shot, GREEN) > 0.001 and colour_share(shot, RED) == 0
