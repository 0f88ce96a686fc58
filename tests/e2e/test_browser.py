"""report.html and compare.html looked at in a real headless Chromium (Debian's chromium and chromium-driver through
Selenium; .ci/run installs them and a CJK font): the page loads with no console error, exception or failed load,
every plot decodes, and the screenshot is not blank. The main job's report at 1400 px: the status line is the first
thing on the page, the task-book panel and the detail table fit the viewport, and no Chinese character or status
mark renders as an empty box. The negative controls prove the checks can fail: a page with a console error and a
broken image must be caught, a blank page must read as blank, a glyph no font has must read as a box, and a
2400-px figure must read as overflowing. The per-row table of a 2401-row report is sorted, searched, filtered and
paged by clicks and typing sent through WebDriver, and the DOM is read back."""
from __future__ import annotations

import io
import json

import numpy as np
import pytest
from matplotlib import image as mpimg

from browser import NO_GLYPH, Browser, chromium
from commands import run_command
from perf_records import history_with_runs
from report_records import MAIN_META, META, big_run, main_job, precision_row, run_records

from harness.commands import compare as compare_command
from harness.reports import write_all

EXECUTABLE = chromium()
pytestmark = pytest.mark.skipif(EXECUTABLE is None, reason="requires chromium, chromium-driver and selenium "
                                "(apt-get install chromium chromium-driver; pip install -e '.[test]'; CI installs them)")


def inked(png: bytes) -> float:
    """Share of screenshot pixels that are not the page background (white)."""
    pixels = mpimg.imread(io.BytesIO(png), format="png")[..., :3]
    return float(np.mean(np.any(pixels < 0.95, axis=-1)))


@pytest.fixture(scope="module")
def browser():
    with Browser(EXECUTABLE) as b:
        yield b


def test_report_html_in_a_real_browser(browser, tmp_path):
    more = [precision_row(f"TC_L0_{i:04d}") for i in range(10, 17)]  # 10 precision rows: error histograms drawn
    paths = write_all(tmp_path, META, run_records() + more)
    look = browser.look(paths["html"])
    assert look.problems == []
    assert look.images == 3                # 2 precision histograms, baseline panel
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


#: The status rule under the title: failed / every phase judged and passed / nothing failed but a phase not judged
RED, GREEN, AMBER = (198, 40, 40), (46, 125, 50), (239, 108, 0)


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
        assert first_line(tab).startswith("✘ 精度失败")
        assert tab.evaluate("document.querySelector('h2').textContent") == "状态"
        assert len(shown(tab)) == 200 and tab.evaluate("document.getElementById('row-count').textContent") == \
            "2401 / 2401 行"
        tab.click("#row-next")  # the second page of 200
        assert shown(tab)[0] == "TC_L1_0200" and tab.evaluate("document.getElementById('row-page').textContent") \
            == "201–400"
        tab.click("#row-next-bottom")  # the pager below the table turns the same pages
        assert shown(tab)[0] == "TC_L1_0400" and tab.evaluate(
            "document.getElementById('row-page-bottom').textContent") == "401–600"
        tab.click("#row-prev-bottom")
        assert shown(tab)[0] == "TC_L1_0200"
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


def test_a_passing_report_draws_its_status_green_and_amber_while_a_phase_is_not_judged(browser, tmp_path):
    judged = run_records()
    judged[3]["baseline"][0].update(verdict="PASS", measured_mean_us=80.0, hardware="Ascend 950PR")
    paths = write_all(tmp_path / "judged", {**META, "hardware": {"name": "Ascend 950PR"}}, judged)
    with browser.open(paths["html"]) as tab:
        shot = tab.screenshot()
    assert colour_share(shot, GREEN) > 0.001 and colour_share(shot, RED) == 0 == colour_share(shot, AMBER)
    paths = write_all(tmp_path / "open", META, run_records())  # perf timed on the twin: not judged
    with browser.open(paths["html"]) as tab:
        shot = tab.screenshot()
    assert colour_share(shot, AMBER) > 0.001 and colour_share(shot, RED) == 0 == colour_share(shot, GREEN)


def first_line(tab) -> str:
    """The first line of text a reader sees on the page."""
    return tab.evaluate("document.body.innerText.trim().split('\\n')[0]")


def inside_viewport(tab, selector: str) -> bool:
    """Whether the element, scrolled into view, lies wholly within the viewport's width."""
    return tab.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView();"
                        " const r = e.getBoundingClientRect();"
                        " return r.width > 0 && r.left >= 0 && r.right <= document.documentElement.clientWidth; })()")


def test_the_main_jobs_report_at_1400_px(browser, tmp_path):
    paths = write_all(tmp_path, MAIN_META, main_job())
    with browser.open(paths["html"]) as tab:
        assert tab.problems() == []
        assert tab.evaluate("document.documentElement.clientWidth") == 1400
        shot = tab.screenshot()
        (tmp_path / "main-job-1400.png").write_bytes(shot)
        assert inked(shot) > 0.02 and colour_share(shot, AMBER) > 0.001  # perf not judged on the twin
        # the status line is the first thing on the page, and it is on the first screen
        assert first_line(tab).startswith("✔ 精度通过；性能未判定：非 Ascend 950PR")
        assert tab.evaluate("document.body.firstElementChild.id") == "status-line"
        # verdict, precision, performance (not judged, and why) and memory on the first screen, the task-book rows
        # below them
        on_screen = tab.evaluate("Array.from(document.querySelectorAll('li, h3'), e => [e.textContent,"
                                 " e.getBoundingClientRect().bottom <= innerHeight])")
        first_screen = [text for text, visible in on_screen if visible]
        assert [t[:3] for t in first_screen[:4]] == ["用例：", "精度：", "性能：", "内存："], first_screen
        assert "性能：未判定" in first_screen[2] and "任务书限值只适用于 Ascend 950PR" in first_screen[2]
        assert "任务书性能用例（3）" in first_screen
        # no Chinese character, check mark or arrow renders as an empty box
        assert tab.boxed() == []
        assert inside_viewport(tab, 'img[alt^="任务书标杆对比"]')
        assert inside_viewport(tab, "#rows")  # the detail table's right columns are not clipped
        assert tab.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")


def test_the_glyph_and_viewport_checks_can_fail(browser, tmp_path):
    page = tmp_path / "bad.html"
    page.write_text('<html><body><p>状态 ✔</p><img id="wide" src="data:image/png;base64,'
                    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==" '
                    'style="width:2400px;height:10px"></body></html>', encoding="utf-8")
    with browser.open(page) as tab:
        assert tab.boxed() == []
        assert tab.boxed(f"状态{NO_GLYPH}✔\U000f0001") == [NO_GLYPH, "\U000f0001"]
        assert not inside_viewport(tab, "#wide")
