"""The documentation is checked like code: the README's set-up commands are the contract `.ci/run` runs, every
command block of the pages a user copies from runs as written on the cpu backend, the site builds with warnings as
errors (a broken link or reference fails it), and the generated command reference names every option.

Command blocks are the ```bash fences of RUN_PAGES. A block right after the line `<!-- requires CANN + NPU -->`
is skipped with that reason. A page's other blocks run in order, line by line, in a scratch directory holding what
the pages assume a checkout has: `cases/` (the project's tables, linked), and `OLD.so` / `NEW.so` (two copies of
the CPU twin, the "two builds of your library" of the compare recipe); `harness` is this checkout's CLI. Nothing in
the text is substituted: reports and the history land in the scratch directory because it is the working directory.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import build_parser
from harness.commands import run as run_command

ROOT = Path(__file__).resolve().parents[2]
#: The pages whose command blocks a user copies: each block runs in test_command_block.
RUN_PAGES = ("README.md", "docs/getting-started.md", "docs/adding-an-operator.md")
NPU_MARK = "<!-- requires CANN + NPU -->"
#: The README's first block, word for word: the two set-up commands (contract).
SETUP = ("pip install -e . && harness run",
         "pip install -e '.[cluster,test]' && python3 -m pytest -n 3 --dist loadgroup -q")
#: A command that ran works as written when it exits 0, 1 or 2 (a verdict about the operator or the evidence:
#: `compare` of one row is often INCONCLUSIVE, exit 2). 3 is the usage error a stale page produces (a renamed
#: option, a missing file); a traceback is a crash whatever the code.
WORKED = (0, 1, 2)


def command_blocks(text: str) -> list[tuple[int, str, bool]]:
    """(line number, body, needs NPU) of every ```bash block in a Markdown text."""
    blocks, lines = [], text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```bash":
            start = i
            while lines[i + 1].strip() != "```":
                i += 1
            needs_npu = start > 0 and lines[start - 1].strip() == NPU_MARK
            blocks.append((start + 1, "\n".join(lines[start + 1:i + 1]), needs_npu))
            i += 1
        i += 1
    return blocks


def commands(body: str) -> list[str]:
    """The block's commands: one a line, comments and blank lines left to the shell."""
    return [line for line in body.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def scratch(work: Path) -> dict:
    """`work` set up as a checkout the pages assume (tables, two builds of "your library"), and an environment
    whose `harness` is this checkout's."""
    from harness.backends.build import build_twin

    (work / "cases").symlink_to(ROOT / "cases")
    twin = build_twin()
    for name in ("OLD.so", "NEW.so"):
        shutil.copy(twin, work / name)
    bin_dir = work / ".bin"
    bin_dir.mkdir()
    shim = bin_dir / "harness"
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -m harness.cli \"$@\"\n")
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return {"cwd": work, "env": env}


def failures(body: str, cwd: Path, env: dict) -> list[str]:
    """Why a block does not work as written: one line per command that exited otherwise than WORKED or crashed."""
    found = []
    for command in commands(body):
        done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=600, stdin=subprocess.DEVNULL)
        output = done.stdout + done.stderr
        if done.returncode not in WORKED or "Traceback (most recent call last)" in output:
            found.append(f"{command!r}: exit {done.returncode}: {output.strip()[-600:]}")
    return found


def _blocks(page: str) -> list[tuple[int, str, bool]]:
    blocks = command_blocks((ROOT / page).read_text())
    return blocks[1:] if page == "README.md" else blocks  # the README's first: the set-up commands (below)


def test_readme_starts_with_the_setup_commands():
    """The README opens (after its title) with the two set-up commands, and .ci/run runs its test command."""
    readme = (ROOT / "README.md").read_text()
    lines = readme.splitlines()
    assert lines[0].startswith("# ") and lines[1] == "" and lines[2] == "```bash"
    first = command_blocks(readme)[0][1].splitlines()
    assert [line.split("  #")[0].strip() for line in first] == list(SETUP)
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^" + re.escape(SETUP[1].split(" && ")[1]) + r"( |$)", ci, re.MULTILINE), \
        ".ci/run no longer runs the README's test command"


def test_readme_fits_the_front_door():
    assert len((ROOT / "README.md").read_bytes()) <= 12288


def test_every_page_marks_what_needs_an_npu():
    """A block that names the npu backend or CANN is marked, so it is skipped with the reason, never run."""
    for page in RUN_PAGES:
        for line, body, needs_npu in command_blocks((ROOT / page).read_text()):
            if "--backend npu" in body or "Ascend/cann" in body:
                assert needs_npu, f"{page}:{line}: a block for the NPU without {NPU_MARK!r} before it"


def test_block_parser_finds_the_marker():
    text = f"a\n```bash\nharness runs\n```\n{NPU_MARK}\n```bash\nharness run --backend npu\n# note\n```\n"
    assert command_blocks(text) == [(2, "harness runs", False), (6, "harness run --backend npu\n# note", True)]
    assert commands(command_blocks(text)[1][1]) == ["harness run --backend npu"]


@pytest.mark.slow
@pytest.mark.parametrize("page", RUN_PAGES)
def test_command_blocks_work_as_written(page, tmp_path):
    """The page's blocks in order, as a reader follows it (a later block may read what an earlier one recorded),
    in a fresh checkout-like directory; the NPU blocks are test_npu_block's."""
    env = scratch(tmp_path)
    found = [f"{page}:{line}: {problem}" for line, body, needs_npu in _blocks(page) if not needs_npu
             for problem in failures(body, env["cwd"], env["env"])]
    assert found == []


@pytest.mark.parametrize("line", [pytest.param(line, id=f"{page}:{line}") for page in RUN_PAGES
                                  for line, _, needs_npu in _blocks(page) if needs_npu])
def test_npu_block(line):
    pytest.skip("requires CANN + NPU")


@pytest.mark.slow
def test_a_renamed_option_fails_its_block(tmp_path):
    """Negative control: the README's first recipe with one option renamed (as a stale page would have it) fails
    the checker, with the usage error's exit 3; the block as written passes (test_command_blocks_work_as_written)."""
    env = scratch(tmp_path)
    blocks = [body for _, body, npu in _blocks("README.md") if not npu]
    doctored = blocks[0].replace("--limit", "--count")
    assert doctored != blocks[0]
    found = failures(doctored, env["cwd"], env["env"])
    assert len(found) == 1 and "exit 3" in found[0] and "unrecognized arguments: --count" in found[0]


def _options(parser: argparse.ArgumentParser, prog: str = "harness") -> dict[str, list[str]]:
    """prog -> the option strings of that command, for every command and sub-command."""
    found = {prog: [o for a in parser._actions for o in a.option_strings if o not in ("-h", "--help")]}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.update(_options(sub, f"{prog} {name}"))
    return found


def missing_options(html: str) -> list[str]:
    """The options of each command that its section of the reference page does not list (sphinx-argparse gives
    `harness run` the section id `harness-run` and lists an option's strings as `<kbd>-n, --workers</kbd>`)."""
    options = _options(build_parser())
    starts = sorted((html.index(f'<section id="{prog.replace(" ", "-")}">') if prog != "harness" else 0, prog)
                    for prog in options)
    missing = []
    for (start, prog), (end, _) in zip(starts, starts[1:] + [(len(html), "")]):
        listed = {o for kbd in re.findall(r"<kbd>(.*?)</kbd>", html[start:end]) for o in kbd.split(", ")}
        missing += [f"{prog} {option}" for option in options[prog] if option not in listed]
    return missing


def _sphinx(src: Path, out: Path) -> subprocess.CompletedProcess:
    pytest.importorskip("sphinx", reason="the docs extra is not installed: pip install -e '.[docs]'")
    pytest.importorskip("myst_parser", reason="the docs extra is not installed: pip install -e '.[docs]'")
    return subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(src),
                           str(out)], capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_site_builds_without_warnings_and_names_every_option(tmp_path):
    done = _sphinx(ROOT / "docs", tmp_path / "html")
    assert done.returncode == 0, done.stderr[-3000:]
    html = (tmp_path / "html" / "cli.html").read_text()
    assert missing_options(html) == []
    assert sorted(p.stem for p in (tmp_path / "html").glob("*.html")) == sorted(
        [p.stem for p in (ROOT / "docs").glob("*.md")] + ["genindex", "search"])  # every page, none left out
    # negative control: the same check on the page with one option's entries taken out finds it missing
    doctored = html.replace("<kbd>--timing-scope</kbd>", "<kbd></kbd>", 1)
    assert missing_options(doctored) == ["harness run --timing-scope"]


@pytest.mark.slow
def test_a_broken_link_fails_the_site_build(tmp_path):
    """Negative control for -W: the same pages with one link to a page that does not exist do not build."""
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs, ignore=shutil.ignore_patterns("_build", "incoming"))
    page = docs / "getting-started.md"
    page.write_text(page.read_text() + "\nSee [the old page](no-such-page.md).\n")
    done = _sphinx(docs, tmp_path / "html")
    assert done.returncode != 0 and "no-such-page" in done.stderr


def test_every_run_option_is_in_a_named_group(monkeypatch):
    """`harness run --help` shows every option under a purpose (OPTION_GROUPS), none in the plain "options"."""
    parser = _run_parser()
    assert ungrouped(parser) == []
    assert [g.title for g in parser._action_groups[2:]] == list(run_command.OPTION_GROUPS)
    # negative control: an option no group lists lands in "options", and the check names it
    monkeypatch.setattr(run_command, "OPTION_GROUPS", {title: tuple(n for n in names if n != "--junitxml")
                                                       for title, names in run_command.OPTION_GROUPS.items()})
    assert ungrouped(_run_parser()) == ["--junitxml"]


def _run_parser() -> argparse.ArgumentParser:
    sub = argparse.ArgumentParser().add_subparsers()
    run_command.add_parser(sub)
    return sub.choices["run"]


def ungrouped(parser: argparse.ArgumentParser) -> list[str]:
    """Options of a parser in argparse's default groups (positionals and "options"), -h aside."""
    return [a.option_strings[0] if a.option_strings else a.dest for g in parser._action_groups[:2]
            for a in g._group_actions if not isinstance(a, argparse._HelpAction)]


def repeated_sentences(pages: dict[str, str]) -> list[str]:
    """Sentences of 80 characters or more that two pages both carry (whitespace aside): content said twice."""
    where: dict[str, set[str]] = {}
    for name, text in pages.items():
        for sentence in re.split(r"(?<=[.;:])\s", re.sub(r"\s+", " ", text)):
            if len(sentence.strip()) >= 80:
                where.setdefault(sentence.strip(), set()).add(name)
    return [f"{sorted(names)}: {sentence[:100]}" for sentence, names in where.items() if len(names) > 1]


def test_no_page_repeats_another():
    pages = {p.name: p.read_text() for p in (ROOT / "docs").glob("*.md")}
    assert repeated_sentences(pages) == []
    # negative control: a paragraph of one page copied into another is found
    paragraph = max(pages["precision.md"].split("\n\n"), key=len)
    assert repeated_sentences({**pages, "tables.md": pages["tables.md"] + "\n\n" + paragraph})
