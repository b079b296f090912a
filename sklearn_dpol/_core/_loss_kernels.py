"""Numba-compiled loss primitives: the functions of :mod:`.losses`, compiled once.

Imported lazily by the kernels (``_igd_kernels``, ``_md_kernels``,
``_mi_kernels``, ``_pf_kernels``) so that ``import sklearn_dpol`` does not load
numba. The maths lives in :mod:`.losses` only; this module compiles those very
functions (``cache=True``), so a kernel and the Python reference cannot
disagree. The integer codes are :data:`.losses.CODES`.

Numba's cache of a caller is not invalidated when a callee in another module
changes: after editing :mod:`.losses`, delete ``_core/__pycache__/*.nbi`` and
``*.nbc``.
"""

import types

from numba import njit

from . import losses as _losses
from ._kernel_cache import refresh as _refresh_kernel_cache
from .losses import (  # noqa: F401  (re-exported for the kernels)
    ABSOLUTE_CODE,
    HINGE_CODE,
    HUBER_CODE,
    LOG_LOSS_CODE,
    SQUARED_CODE,
)

_refresh_kernel_cache()  # before any kernel is compiled or loaded: see _kernel_cache

_jit = njit(cache=True, nogil=True)

# The functions of .losses call each other (softplus, sigmoid_neg, ...). Each
# is compiled as a copy bound to a private namespace in which those names are
# the compiled versions, so the module .losses itself stays plain Python (and
# numba-free). The copies keep their code object: numba's cache lives next to
# losses.py and follows its source.
_namespace = dict(vars(_losses))


def _compile(name):
    function = getattr(_losses, name)
    copy = types.FunctionType(function.__code__, _namespace, function.__name__,
                              function.__defaults__, function.__closure__)
    copy.__module__ = function.__module__
    copy.__qualname__ = function.__qualname__
    copy.__doc__ = function.__doc__
    compiled = _jit(copy)
    _namespace[name] = compiled
    return compiled


sigmoid_neg = _compile("sigmoid_neg")
softplus = _compile("softplus")
log_softplus = _compile("log_softplus")
loss_value = _compile("loss_value")
loss_derivative = _compile("loss_derivative")
margin_derivative = _compile("margin_derivative")
_implicit_log_loss_weight_bisect = _compile("_implicit_log_loss_weight_bisect")
implicit_log_loss_weight = _compile("implicit_log_loss_weight")
implicit_hinge_weight = _compile("implicit_hinge_weight")
implicit_weight = _compile("implicit_weight")
