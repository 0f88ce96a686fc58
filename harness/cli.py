"""harness: acceptance tests and benchmarks for ops-blas BLAS operators (aclblasCsymm, aclblasSgemmStridedBatched)
on Huawei Ascend NPUs, their CPU twin and an emulator: it runs ops-blas CSV case tables, judges precision against
CBLAS and performance against the task book's limits, writes the self-test report and keeps a run history.

The main job (every cases/*_test.csv on the CPU twin; the report lands in reports/<run_id>/report.md):
  harness run
Common commands:
  harness run cases/csymm_test.csv -k TC_L0     some rows of one table
  harness run --backend npu --operator-lib libops_blas.so     on an Ascend NPU (requires CANN + NPU)
  harness report reports/<run_id>               rebuild a run's reports from its results.jsonl (or a run id)
  harness compare BASE HEAD                     did performance change between two runs or commits?
  harness runs / harness history                the runs recorded, and per-commit trends
  harness lint CSV / harness cases describe CSV check a table, summarise its coverage
`harness COMMAND --help` documents every option with its default.

Exit codes (contract, harness/model/exitcodes.py): 0 all passed; 1 any FAIL/ERROR/CRASH/TIMEOUT (or a regression);
2 nothing failed but the evidence is insufficient (e.g. -k selected 0 rows); 3 environment or usage error;
128+N stopped by signal N (130 Ctrl-C, 143 SIGTERM) after writing the reports of what finished.
"""
from __future__ import annotations

import argparse
import difflib
import importlib
import pkgutil
import re
import signal
import sqlite3
import sys

import harness.commands
from harness.model.exitcodes import Exit, interrupted

#: Subcommands in the order `harness --help` lists them: the main job first, then by how often they are needed.
ORDER = ("run", "report", "compare", "runs", "history", "publish", "cases", "lint", "ab", "baseline", "mutants")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the descriptions' own line breaks and shows every option's default (unless its help already says)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if ("default" in text or action.default in (None, False, argparse.SUPPRESS)
                or not action.option_strings or isinstance(action, argparse._HelpAction)):
            return text
        return f"{text} (default: %(default)s)"


class Parser(argparse.ArgumentParser):
    """Usage errors are exit 3 with one line (not argparse's 2 and usage), with a "did you mean" where one fits."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:
        self.exit(Exit.ENV, f"{self.prog}: error: {message}{_suggestion(message, self)} (see {self.prog} --help)\n")


def _suggestion(message: str, parser: argparse.ArgumentParser) -> str:
    """'; did you mean X?' for an invalid choice or an unrecognised option close to a known one, else ''."""
    if match := re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message):
        word, known = match[1], re.findall(r"'([^']*)'", match[2]) or [c.strip() for c in match[2].split(",")]
    elif match := re.search(r"unrecognized arguments: (\S+)", message):
        word = match[1].split("=")[0]
        known = [o for a in _all_actions(parser) for o in a.option_strings]
    else:
        return ""
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _all_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The parser's actions and those of every subcommand under it (an unknown option may belong to any)."""
    actions = list(parser._actions)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                actions += _all_actions(sub)
    return actions


def version() -> str:
    from harness.store.provenance import harness_version

    return harness_version()


def version_line() -> str:
    """`harness --version`: the installed version and, run from a git checkout, its commit (and whether it has
    uncommitted changes), which is what a result is attributed to."""
    from harness.store.provenance import harness_git_state

    state = harness_git_state()
    if state["commit"] == "unknown":
        return f"harness {version()}"
    dirty = ", uncommitted changes" if state["dirty"] else ""
    return f"harness {version()} (commit {str(state['commit'])[:12]}, branch {state['branch']}{dirty})"


class _VersionAction(argparse.Action):
    """--version, computed only when asked (it runs git)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_line())
        parser.exit(Exit.OK)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line; `command` names the one command whose options are needed: only its module is imported
    (`check-acl` is the module check_acl). Each command's module imports what it runs on inside its handler (numpy,
    pandas, matplotlib, scipy: ~1-2 s of CPU), so building a parser costs none of it. None, or a name that is not
    a command: every command (help, suggestions)."""
    doc = __doc__ or ""
    parser = Parser(prog="harness", description=doc.split("\n\nExit codes")[0],
                    epilog="Exit codes" + doc.split("\n\nExit codes")[1])
    parser.add_argument("--version", action=_VersionAction, help="the version, and the commit of a checkout")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser, metavar="COMMAND")
    names = [m.name for m in pkgutil.iter_modules(harness.commands.__path__)]
    if command is not None and command.replace("-", "_") in names:
        names = [command.replace("-", "_")]
    rank = {name: i for i, name in enumerate(ORDER)}
    for name in sorted(names, key=lambda n: (rank.get(n, len(ORDER)), n)):
        importlib.import_module(f"harness.commands.{name}").add_parser(sub)
    return parser


def _is_table_error(exc: Exception) -> bool:
    """Whether exc is a harness.tables.reader.TableError, without importing the reader (numpy, ~0.1 s of CPU) in
    the commands that never read a table: such an error exists only once its module is imported."""
    reader = sys.modules.get("harness.tables.reader")
    return reader is not None and isinstance(exc, reader.TableError)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv[0] if argv else None)
    if not argv:  # a bare `harness` asks what it can do
        parser.print_help()
        return Exit.OK
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except sqlite3.Error as exc:  # --history naming a directory, a file that is no database, a locked one
        print(f"harness {args.command}: history database {getattr(args, 'history', '')}: {exc}", file=sys.stderr)
        return Exit.ENV
    except KeyboardInterrupt as exc:  # Ctrl-C outside a run's own handling (loading tables, mutants)
        signum = getattr(exc, "signum", signal.SIGINT)
        print(f"harness {args.command}: interrupted by {signal.Signals(signum).name}", file=sys.stderr)
        return interrupted(signum)
    except Exception as exc:
        if not _is_table_error(exc):
            raise
        print(str(exc), file=sys.stderr)  # a file that cannot be a case table, named with its line, for every command
        return Exit.ENV


if __name__ == "__main__":
    sys.exit(main())
