"""The on-disk cache of generated tables (harness.tables.cache): keyed by the generator's sources, followed
import by import; used once made; fresh on request; a damaged entry made again; one generation for processes
that ask at once."""
from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.tables import cache

ROWS = [{"case_name": "TC_L0_0001", "m": "8"}]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "tables"


def counting(rows=ROWS):
    calls = []

    def generate():
        calls.append(1)
        return [dict(r) for r in rows]
    return generate, calls


def test_an_entry_is_made_once_then_read(cache_dir):
    generate, calls = counting()
    assert cache.rows("ssymm", 5, generate) == ROWS
    assert cache.rows("ssymm", 5, generate) == ROWS and len(calls) == 1
    assert cache.rows("ssymm", 6, generate) == ROWS and len(calls) == 2      # another seed, another entry
    assert cache.rows("ssymm", 5, generate, fresh=True) == ROWS and len(calls) == 3  # the generator itself
    assert len(list(cache_dir.glob("ssymm-*.json"))) == 2


def test_a_damaged_entry_is_made_again(cache_dir):
    generate, calls = counting()
    cache.rows("ssymm", 5, generate)
    [entry] = cache_dir.glob("ssymm-5-*.json")
    for damage in ('[{"case_name": 3}]', "[{", '{"rows": []}'):
        entry.write_text(damage)
        assert cache.rows("ssymm", 5, generate) == ROWS
    assert len(calls) == 4


def test_an_unusable_cache_directory_only_costs_the_generation(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "file"))  # a file where the directory should be
    generate, calls = counting()
    assert cache.rows("ssymm", 5, generate) == ROWS and cache.rows("ssymm", 5, generate) == ROWS
    assert len(calls) == 2


def test_a_second_process_waits_for_the_first_ones_rows(cache_dir):
    """While one holder of the entry's lock generates, another asking for it waits and reads its rows (the
    xdist workers of one run): its own generator never runs."""
    started, release = threading.Event(), threading.Event()

    def first_generator():
        started.set()
        assert release.wait(60)
        return ROWS

    def never():
        raise AssertionError("generated twice")
    results = {}
    first = threading.Thread(target=lambda: results.update(first=cache.rows("ssymm", 5, first_generator)))
    first.start()
    assert started.wait(60)
    second = threading.Thread(target=lambda: results.update(second=cache.rows("ssymm", 5, never)))
    second.start()
    second.join(0.5)          # however far it got, it cannot have the lock yet
    release.set()
    first.join(60)
    second.join(60)
    assert results == {"first": ROWS, "second": ROWS}


def test_the_key_follows_the_generators_imports(tmp_path, monkeypatch):
    """sources(): the package's modules and every harness/golden module they import (inside functions too, and the
    packages above them), nothing else; an edit to any of them is a new key, an edit elsewhere is not."""
    files = {
        "harness/__init__.py": "",
        "harness/ops/fake/__init__.py": "from harness.ops.fake import generate\n",
        "harness/ops/fake/generate.py": "from harness import helper\nimport numpy\n\n\ndef rows():\n"
                                        "    from golden.cblas import gemm\n    from . import extra\n",
        "harness/ops/fake/extra.py": "",
        "harness/helper.py": "from harness.deep import x\n",
        "harness/deep.py": "x = 1\n",
        "harness/unrelated.py": "import harness.helper\n",
        "golden/__init__.py": "",
        "golden/cblas.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.setattr(cache, "ROOT", tmp_path)
    monkeypatch.setattr(cache.ops, "part", lambda op, part: SimpleNamespace(
        __file__=str(tmp_path / "harness/ops/fake/generate.py")))
    found = {str(p.relative_to(tmp_path)) for p in cache.sources("fake")}
    assert found == set(files) - {"harness/unrelated.py"}
    cache.digest.cache_clear()
    before = cache.digest("fake")
    (tmp_path / "harness/unrelated.py").write_text("# edited\n")
    cache.digest.cache_clear()
    assert cache.digest("fake") == before
    (tmp_path / "harness/deep.py").write_text("x = 2\n")
    cache.digest.cache_clear()
    assert cache.digest("fake") != before
    cache.digest.cache_clear()


def test_the_real_generators_sources_include_what_their_numbers_come_from():
    names = {str(p.relative_to(cache.ROOT)) for p in cache.sources("csymm")}
    assert {"harness/ops/csymm/generate.py", "harness/generate/cells.py", "harness/generate/conditioning.py",
            "harness/judge/diagnosis.py", "golden/cblas.py", "harness/tables/fill.py"} <= names
    assert not names & {"harness/run/runner.py", "harness/flows/session.py", "harness/reports/html.py"}


def test_a_fresh_generation_keeps_readers_of_the_entry_there_from_waiting(cache_dir):
    """The byte-for-byte check regenerates an entry another run may be reading: readers get the entry at once."""
    cache.rows("ssymm", 5, counting()[0])
    started, release = threading.Event(), threading.Event()

    def slow_fresh():
        started.set()
        assert release.wait(60)
        return [{"case_name": "TC_L0_0002"}]
    fresh = threading.Thread(target=lambda: cache.rows("ssymm", 5, slow_fresh, fresh=True))
    fresh.start()
    assert started.wait(60)
    try:
        assert cache.rows("ssymm", 5, counting()[0]) == ROWS  # not blocked behind the fresh generation
    finally:
        release.set()
        fresh.join(60)
    assert cache.rows("ssymm", 5, counting()[0]) == [{"case_name": "TC_L0_0002"}]  # then its rows
