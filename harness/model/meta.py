"""A run's meta (run.json, report.json `meta`, the history's runs.meta) and the file names of a stored run: the model
every room that writes or reads runs speaks in, below the session that writes them and the reader that reads them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from harness.model.settings import Settings

RESULTS = "results.jsonl"
META = "run.json"
#: The kinds whose runs measure the checkout's own operators with their outputs judged: what `latest`, `previous`
#: and a git revision name in `harness compare`. An ab side is a build of another revision (perhaps with defines,
#: outputs unchecked), a mutants run is broken on purpose, a baseline run times a peer library: each is reached by
#: its run id only, so none of them silently becomes the reference a regression is measured against.
REFERENCE_KINDS = ("run", "pytest")


class RunSettings(TypedDict):
    """What the run was asked to do; every key present in every meta (load_meta fills older runs' gaps)."""

    select: str | None
    workers: int
    timeout_s: float | None
    poison: bool
    timing: dict[str, Any]
    accept_disputed: bool
    gates: dict[str, str]  # op -> the precision gate its rows are judged by
    ab: dict[str, Any] | None  # harness ab: {"side", "rev", "pair", "defines"}; None otherwise
    devices: list[int]  # the device ids rows ran on (cpu: emulated devices)
    cluster: str | None  # the Ray cluster address (--cluster); None: this host
    shard: str | None  # "i/N" for `harness run --shard i/N`; None: every selected row
    mutant: dict[str, Any] | None  # harness mutants: {"name", "description"} ("clean": the twin as written)


class RunMeta(TypedDict):
    """report.json `meta`, run.json and the history's runs.meta (contract, docs/architecture.md "Report")."""

    kind: str  # "run", "ab", "pytest", "baseline" or "mutants": which shell made the session
    run_id: str
    commit: str
    dirty: bool
    branch: str
    backend: str
    device: str
    host: dict[str, Any]
    inputs: list[dict[str, str]]  # [{"path", "sha256"}] per case table
    operator_lib: dict[str, Any]  # {"path", "sha256"} (None each when the backend does not say)
    operator: dict[str, Any]  # harness.store.operator_identity.identify: what was judged (library, revision, runtime)
    harness: dict[str, Any]  # provenance.harness_identity: the judging harness's version, commit and dirty flag
    settings: RunSettings
    started: str
    finished: str
    backend_info: dict[str, Any]
    golden_blas: dict[str, Any]
    hardware: dict[str, Any]  # perf.hardware_identity: {"name", "detected", "override"}
    interrupted: bool
    job: dict[str, Any] | None  # harness.store.job.account: the run's wall, compute floor and overhead; None until it ends


def new_settings(settings: Settings | None = None, *, gates: dict[str, str], timing: dict[str, Any] | None = None,
                 ab: dict[str, Any] | None = None, mutant: dict[str, Any] | None = None) -> RunSettings:
    """The meta's view of the settings a run's workers were given (harness.model.settings), so the record says what
    the run did; `timing` for a shell that times rows itself (ab), else the settings' own. Without settings: the
    neutral values (a key older runs lack)."""
    if settings is None:
        return RunSettings(select=None, workers=1, timeout_s=None, poison=True, timing=timing or {},
                           accept_disputed=False, gates=gates, ab=ab, devices=[], cluster=None, shard=None,
                           mutant=mutant)
    if timing is None:
        timing = settings.timing.as_dict() if settings.timing is not None else {}
    return RunSettings(select=settings.select, workers=settings.workers, timeout_s=settings.timeout_s,
                       poison=settings.poison, timing=timing, accept_disputed=settings.accept_disputed,
                       gates=gates, ab=ab, devices=list(settings.devices), cluster=settings.cluster,
                       shard=settings.shard, mutant=mutant)
