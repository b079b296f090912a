"""numba's cache follows every kernel source (sklearn_dpol/_core/_kernel_cache.py).

numba keys a cached kernel on its own file only, so a kernel that inlines a function
of another module (the exact sampler's ``release_value``, the loss primitives) would
keep running the old copy after that module changed. The guard removes the kernels'
cache files when any kernel source changed since they were written.
"""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import sklearn_dpol

CORE = Path(sklearn_dpol.__file__).parent / "_core"


def _copy_package(tmp_path):
    target = tmp_path / "pkg"
    shutil.copytree(Path(sklearn_dpol.__file__).parent, target / "sklearn_dpol",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return target


def _run(root, cache_dir, code):
    env = dict(os.environ, PYTHONPATH=str(root), NUMBA_CACHE_DIR=str(cache_dir))
    # cwd: not a directory holding another sklearn_dpol (``-c`` puts the cwd first).
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=root,
                          capture_output=True, text=True, check=True, timeout=600).stdout


def _cache_files(cache_dir, module):
    return sorted(p.name for p in Path(cache_dir).rglob(f"{module}.*.nbi"))


def test_a_changed_callee_clears_the_cached_callers(tmp_path):
    root, cache = _copy_package(tmp_path), tmp_path / "numba_cache"
    use = """
        import numpy as np
        from sklearn_dpol._core import _kernel_cache
        from sklearn_dpol._core._md_kernels import l2_step
        u = np.zeros(3); l2_step(u, np.ones(3), 0.1)
        print(_kernel_cache.cache_directory(_kernel_cache.__file__.replace(
            "_kernel_cache.py", "_exact_kernels.py")))
    """
    directory = _run(root, cache, use).strip()
    stamp = Path(directory) / "sklearn_dpol_kernels.sha256"
    assert stamp.exists() and _cache_files(cache, "_md_kernels")
    first = stamp.read_text()
    # Unchanged sources: the cache is kept.
    _run(root, cache, use)
    assert stamp.read_text() == first and _cache_files(cache, "_md_kernels")
    # A change to a callee module (not to _md_kernels.py itself): the callers'
    # cache files are removed before anything loads them, then rebuilt.
    losses = root / "sklearn_dpol" / "_core" / "losses.py"
    losses.write_text(losses.read_text() + "\n# changed\n")
    marker = f"""
        from pathlib import Path
        import sklearn_dpol._core._loss_kernels  # runs the guard
        print(sorted(p.name for p in Path({directory!r}).glob("_md_kernels.*.nbi")))
    """
    assert _run(root, cache, marker).strip() == "[]"
    assert stamp.read_text() != first


def test_the_guard_hashes_every_kernel_source():
    from sklearn_dpol._core import _kernel_cache

    kernel_modules = {p.stem for p in CORE.glob("_*kernels.py")}
    assert kernel_modules <= set(_kernel_cache.SOURCES)
    assert "losses" in _kernel_cache.SOURCES   # compiled by _loss_kernels
    for name in _kernel_cache.SOURCES:
        assert (CORE / f"{name}.py").exists()
