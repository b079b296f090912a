"""One BLAS thread around small per-release linear algebra.

A 91 x 91 ``eigh`` takes about a millisecond with one thread; with OpenBLAS's
threads competing against other busy processes for the same cores it can take
a hundred times longer (issue 16). Streams therefore run their per-release
small-matrix work with one BLAS thread, as scikit-learn does around its own
small problems (``threadpoolctl``). The controller is built once per process
(building one inspects every loaded library, about a millisecond; limiting
with it costs microseconds).
"""

import os
import threading
from contextlib import contextmanager

_lock = threading.Lock()
_controller = {}


def _get_controller():
    pid = os.getpid()
    with _lock:
        controller = _controller.get(pid)
        if controller is None:
            from threadpoolctl import ThreadpoolController

            controller = _controller[pid] = ThreadpoolController()
        return controller


@contextmanager
def single_blas_thread():
    """Limit the BLAS libraries loaded in this process to one thread inside the block."""
    with _get_controller().limit(limits=1, user_api="blas"):
        yield
