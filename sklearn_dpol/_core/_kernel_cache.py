"""Keep numba's on-disk cache of the kernels in step with their sources.

numba keys a cached kernel on the timestamp of the file that defines it. A kernel
that calls a function of another module (``release_value`` of the exact sampler,
the loss primitives of ``losses.py``) holds its own compiled copy of that function,
so after the callee's source changes numba still loads the old copy: a fix to the
sampler or to a loss would silently not reach the kernels that inline it. Once per
process, before the first kernel module is compiled or loaded from the cache,
:func:`refresh` hashes the sources of every kernel module and of ``losses.py`` and,
when the hash differs from the stamp kept next to the cache, removes the cache files
of those modules, so that everything is compiled from the current sources.
"""

import glob
import hashlib
import os

#: The modules whose compiled code is cached, and those they compile from.
SOURCES = ("_exact_kernels", "_igd_kernels", "_loss_kernels", "_md_kernels",
           "_mi_kernels", "_pf_kernels", "_fw_kernels", "_stream_kernels", "_sum_kernels",
           "losses")
STAMP = "sklearn_dpol_kernels.sha256"

_done = False


def sources_digest(directory):
    """SHA-256 of the kernel sources in ``directory`` (names and contents)."""
    digest = hashlib.sha256()
    for name in SOURCES:
        digest.update(name.encode())
        with open(os.path.join(directory, name + ".py"), "rb") as handle:
            digest.update(hashlib.sha256(handle.read()).digest())
    return digest.hexdigest()


def cache_directory(source):
    """Where numba caches the kernels of ``source`` (its own locator), or ``None``."""
    try:
        from numba.core import caching
    except ImportError:  # pragma: no cover - numba moved its caching module
        return None
    # CacheImpl since numba 0.61 (_CacheImpl before): the classes numba tries, in order.
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    for locator_class in getattr(impl, "_locator_classes", ()):
        locator = locator_class.from_function(refresh, source)
        if locator is not None:
            return locator.get_cache_path()
    return None


def refresh():
    """Remove the kernels' cache files if any kernel source changed since they were written."""
    global _done
    if _done:
        return
    _done = True
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        directory = cache_directory(os.path.join(here, "_exact_kernels.py"))
        if directory is None:
            return
        # Stamp a new cache directory too: what numba writes there next comes
        # from the current sources.
        os.makedirs(directory, exist_ok=True)
        stamp = os.path.join(directory, STAMP)
        digest = sources_digest(here)
        try:
            with open(stamp) as handle:
                if handle.read().strip() == digest:
                    return
        except OSError:
            pass
        for name in SOURCES:
            for pattern in (name + ".*.nbi", name + ".*.nbc"):
                for path in glob.glob(os.path.join(directory, pattern)):
                    try:
                        os.remove(path)
                    except OSError:
                        pass
        temporary = f"{stamp}.{os.getpid()}"
        with open(temporary, "w") as handle:
            handle.write(digest + "\n")
        os.replace(temporary, stamp)
    except OSError:
        # A read-only installation: numba then caches elsewhere or not at all.
        return
