"""Reference results for the operators under test.

`golden.cblas` computes the expected output in the operator's precision with the same BLAS routine a reviewer
would use (scipy.linalg.blas, i.e. the reference/OpenBLAS `csymm`/`sgemm`); `golden.truth` computes the same
result in float64/complex128 so the criteria can tell a wrong operator from a golden that lost precision itself.

Both take the operands as the device sees them: 1-D column-major storage with leading dimensions (and batch
strides), and return a full copy of C's storage with only the written region updated.
"""
from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import Any

import numpy as np

from golden import cblas, truth  # noqa: F401  (the package's public submodules)
from golden.cblas import matrix_view  # noqa: F401


def _openblas_runtime(marker: str) -> dict[str, Any]:
    """Threads and build string of the loaded OpenBLAS whose path contains marker (a wheel's `.libs` folder)."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            paths = sorted({line.split()[-1] for line in maps if "openblas" in line.lower() and marker in line})
    except OSError:
        return {}
    for path in paths:
        lib = ctypes.CDLL(path)
        info: dict[str, Any] = {"library": path}
        for prefix in ("scipy_openblas_", "scipy_openblas64_", "openblas_"):
            for suffix in ("", "64_"):
                threads = getattr(lib, f"{prefix}get_num_threads{suffix}", None)
                config = getattr(lib, f"{prefix}get_config{suffix}", None)
                if threads is not None and "threads" not in info:
                    info["threads"] = int(threads())
                if config is not None and "runtime_config" not in info:
                    config.restype = ctypes.c_char_p
                    info["runtime_config"] = config().decode()
        return info
    return {}


def _load_scipy_blas() -> None:
    """Load the BLAS scipy's goldens call so its runtime can be inspected: a wheel's own OpenBLAS (the one file
    scipy.linalg.blas links, in scipy.libs/) by itself, else by importing scipy.linalg.blas. Importing
    scipy.linalg costs ~0.2 s of CPU that a run whose goldens all come from the golden cache never needs."""
    import scipy

    wheel = sorted((Path(scipy.__file__).parent.parent / "scipy.libs").glob("libscipy_openblas*.so*"))
    if len(wheel) == 1:
        try:
            ctypes.CDLL(str(wheel[0]))
            return
        except OSError:
            pass
    import scipy.linalg.blas  # noqa: F401


def blas_info() -> dict[str, Any]:
    """Which BLAS produced the goldens (scipy) and the truths (numpy): names, versions, threads.

    threadpoolctl is used when installed; otherwise the thread count comes from the loaded OpenBLAS itself, or
    from the *_NUM_THREADS environment variables.
    """
    import scipy

    _load_scipy_blas()

    deps = scipy.show_config(mode="dicts").get("Build Dependencies", {})
    blas = deps.get("blas", {})
    info: dict[str, Any] = {
        "scipy_version": scipy.__version__,
        "numpy_version": np.__version__,
        "blas_name": blas.get("name"),
        "blas_version": blas.get("version"),
        "blas_config": blas.get("openblas configuration"),
        "env_threads": {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
                        if k in os.environ},
    }
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        runtime = _openblas_runtime("/scipy.libs/")
        info["threads"] = runtime.get("threads")
        info["blas_library"] = runtime.get("library")
        info["blas_runtime_config"] = runtime.get("runtime_config")
        info["truth_blas"] = _openblas_runtime("/numpy.libs/")
        return info
    pools = [p for p in threadpool_info() if p.get("user_api") == "blas"]
    scipy_pool = next((p for p in pools if "/scipy.libs/" in p.get("filepath", "")), pools[0] if pools else {})
    info["threads"] = scipy_pool.get("num_threads")
    info["blas_library"] = scipy_pool.get("filepath")
    info["blas_runtime_config"] = f"{scipy_pool.get('internal_api')} {scipy_pool.get('version')}"
    info["truth_blas"] = next((p for p in pools if "/numpy.libs/" in p.get("filepath", "")), {})
    return info
