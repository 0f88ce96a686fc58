"""Building the CPU twin: cache by content, concurrent builders, clear errors, and the mutant table."""
from __future__ import annotations

import ctypes
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from harness.backends import build
from harness.backends.build import MUTANT_DESCRIPTIONS, MUTANTS, BuildError, build_key, build_twin

TINY = 'extern "C" int twin_probe() { return 42; }\n'


def tiny_operators(root: Path, source: str = TINY) -> Path:
    """An operators/ tree with the real headers and one small source: builds in well under a second."""
    ops = root / "operators"
    shutil.copytree(build.OPERATORS_DIR / "include", ops / "include")
    shutil.copytree(build.OPERATORS_DIR / "host", ops / "host")
    (ops / "cpu_twin").mkdir()
    (ops / "cpu_twin" / "probe.cpp").write_text(source)
    return ops


def test_mutant_table_is_complete():
    assert len(MUTANTS) >= 15
    assert sorted(MUTANTS.values()) == list(range(1, len(MUTANTS) + 1))
    assert MUTANTS["conjugated_a"] == 1 and MUTANTS["workspace_per_batch"] == 15
    assert set(MUTANT_DESCRIPTIONS) == set(MUTANTS) and all(MUTANT_DESCRIPTIONS.values())


def test_builds_once_and_caches_by_content(tmp_path):
    ops = tiny_operators(tmp_path)
    first = build_twin(source_dir=ops, cache_dir=tmp_path / "cache")
    assert ctypes.CDLL(str(first)).twin_probe() == 42
    stamp = first.stat().st_mtime_ns
    assert build_twin(source_dir=ops, cache_dir=tmp_path / "cache") == first
    assert first.stat().st_mtime_ns == stamp
    (ops / "cpu_twin" / "probe.cpp").write_text(TINY.replace("42", "43"))
    second = build_twin(source_dir=ops, cache_dir=tmp_path / "cache")
    assert second != first and ctypes.CDLL(str(second)).twin_probe() == 43


def test_defines_change_the_key(tmp_path):
    ops = tiny_operators(tmp_path)
    keys = {build_key(d, ops) for d in ({}, {"TWIN_MUTANT": 1}, {"TWIN_MUTANT": 2}, {"TWIN_SLOWDOWN_PCT": 5})}
    assert len(keys) == 4


def test_concurrent_builders_agree(tmp_path):
    ops = tiny_operators(tmp_path)
    with ThreadPoolExecutor(4) as pool:
        paths = list(pool.map(lambda _: build_twin(source_dir=ops, cache_dir=tmp_path / "cache"), range(4)))
    assert len(set(paths)) == 1 and ctypes.CDLL(str(paths[0])).twin_probe() == 42
    leftovers = [p for p in (tmp_path / "cache").iterdir() if p.name.startswith(".build-")]
    assert leftovers == []


def test_concurrent_builders_compile_and_link_once(tmp_path, monkeypatch):
    """Four builders of one twin at once (threads: each lock is its own open file, as another process's is): the
    first compiles and links, the others wait for it and take what it published. A compiler that takes half a
    second makes them meet; before the locks each compiled and linked its own copy."""
    log = tmp_path / "cxx.log"
    wrapper = tmp_path / "slow-cxx"
    wrapper.write_text(f'#!/bin/sh\ncase " $* " in *" -E "*) ;; *) echo "$*" >> {log}; sleep 0.5 ;; esac\n'
                       f'exec {shutil.which("g++")} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setattr(build, "CXX", str(wrapper))
    ops = tiny_operators(tmp_path)
    with ThreadPoolExecutor(4) as pool:
        paths = list(pool.map(lambda _: build_twin(source_dir=ops, cache_dir=tmp_path / "cache",
                                                   object_cache_dir=tmp_path / "objects"), range(4)))
    assert len(set(paths)) == 1 and ctypes.CDLL(str(paths[0])).twin_probe() == 42
    calls = [line for line in log.read_text().splitlines() if "--version" not in line]
    assert [" -c " in f" {c} " for c in calls] == [True, False], calls  # one compile, one link


def test_compile_error_is_one_clear_message(tmp_path):
    ops = tiny_operators(tmp_path, 'extern "C" int twin_probe() { return undeclared_name; }\n')
    with pytest.raises(BuildError) as err:
        build_twin(source_dir=ops, cache_dir=tmp_path / "cache")
    text = str(err.value)
    assert text.startswith("building the CPU twin failed") and "undeclared_name" in text
    assert not list((tmp_path / "cache").glob("*/*.so"))


def test_missing_compiler(tmp_path, monkeypatch):
    monkeypatch.setattr(build, "CXX", "no-such-compiler-for-the-twin")
    with pytest.raises(BuildError, match="no C\\+\\+ compiler"):
        build_twin(source_dir=tiny_operators(tmp_path), cache_dir=tmp_path / "cache")


def test_bad_define_name(tmp_path):
    with pytest.raises(BuildError, match="define name"):
        build_twin({"NOT A NAME": 1}, source_dir=tiny_operators(tmp_path), cache_dir=tmp_path / "cache")


def test_no_sources(tmp_path):
    with pytest.raises(BuildError, match="no CPU twin sources"):
        build_twin(source_dir=tmp_path, cache_dir=tmp_path / "cache")


def test_object_cache_recompiles_only_the_units_a_change_reaches(tmp_path):
    """One unit reads a define and a header, the other neither: a define or a header change recompiles the first
    only, and the library runs the new code (a stale object reused would still return the old value)."""
    ops = tiny_operators(tmp_path, '#include "knob.h"\nextern "C" int twin_probe() { return KNOB; }\n')
    (ops / "cpu_twin" / "knob.h").write_text("#ifndef KNOB\n#define KNOB 42\n#endif\n")
    (ops / "cpu_twin" / "other.cpp").write_text('extern "C" int twin_other() { return 7; }\n')
    objects = tmp_path / "objects"

    def probe(defines: dict) -> int:
        lib = build_twin(defines, source_dir=ops, cache_dir=tmp_path / "cache", object_cache_dir=objects)
        return ctypes.CDLL(str(lib)).twin_probe()

    assert probe({}) == 42 and len(list(objects.glob("*.o"))) == 2
    assert probe({"KNOB": 43}) == 43 and len(list(objects.glob("*.o"))) == 3
    (ops / "cpu_twin" / "knob.h").write_text("#ifndef KNOB\n#define KNOB 44\n#endif\n")
    assert probe({}) == 44 and len(list(objects.glob("*.o"))) == 4
    assert probe({"UNUSED_NAME": 1}) == 44 and len(list(objects.glob("*.o"))) == 4, "a define no unit reads"


def test_units_whose_inputs_are_unchanged_are_keyed_without_the_preprocessor(tmp_path, monkeypatch):
    """The manifests (ccache's direct mode): a rebuild preprocesses only the units whose source, command or
    headers changed, and a header changed behind a manifest is still seen (the library runs the new value; a
    manifest trusted without checking its headers would keep the stale object, 42)."""
    log = tmp_path / "cxx.log"
    wrapper = tmp_path / "logging-cxx"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {shutil.which("g++")} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setattr(build, "CXX", str(wrapper))
    ops = tiny_operators(tmp_path, '#include "knob.h"\nextern "C" int twin_probe() { return KNOB; }\n')
    (ops / "cpu_twin" / "knob.h").write_text("#define KNOB 42\n")
    (ops / "cpu_twin" / "other.cpp").write_text('extern "C" int twin_other() { return 7; }\n')

    def preprocessed(change) -> tuple[list[str], int]:
        log.write_text("")
        change()
        lib = build_twin(source_dir=ops, cache_dir=tmp_path / "cache", object_cache_dir=tmp_path / "objects")
        units = [Path(a).name for line in log.read_text().splitlines() if " -E " in f" {line} "
                 for a in line.split() if a.endswith(".cpp")]
        return sorted(units), ctypes.CDLL(str(lib)).twin_probe()

    assert preprocessed(lambda: None) == (["other.cpp", "probe.cpp"], 42)
    assert preprocessed(lambda: (ops / "cpu_twin" / "other.cpp").write_text(
        'extern "C" int twin_other() { return 8; }\n')) == (["other.cpp"], 42)
    assert preprocessed(lambda: (ops / "cpu_twin" / "knob.h").write_text("#define KNOB 44\n")) == (["probe.cpp"], 44)
    # a new file in the tree may be what an #include finds now: every unit is preprocessed again
    assert preprocessed(lambda: (ops / "cpu_twin" / "new.h").write_text("")) == (["other.cpp", "probe.cpp"], 44)
