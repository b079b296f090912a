"""Machinery shared by every private estimator.

* Randomness: ``fit`` re-seeds from ``random_state``; a stream of
  ``partial_fit`` calls keeps drawing from one generator, so no two releases
  reuse noise.
* Copies never reuse noise: with ``random_state=None``, ``copy.deepcopy`` and
  a ``pickle`` round trip give the copy a generator freshly seeded from the
  operating system, so two continuations of one checkpoint draw independent
  noise. With an integer (or ``RandomState``/``Generator``) seed the copy
  keeps the generator's state, which reproduces the noise: an
  experiments-only setting (``doc/privacy.md``, "Failures and refunds").
* Atomic calls: a call that raises leaves the estimator exactly as it was,
  generator state included.
* Failures cost what they reveal: a call that fails while only its
  parameters and the shape and finiteness of its input have been checked is
  refunded; once the estimator has declared that it reads the data's values
  (:meth:`PrivateEstimatorMixin._mark_data_read`), a failure is charged its
  planned cost (``doc/privacy.md``, "Failures and refunds").
* Frozen privacy hyperparameters: a stream's calibration is fixed when it
  starts; changing it needs ``fit``.
* Budget accounting: with an ``accountant``, every call reserves the guarantee
  it will have (planned from hyperparameters and metadata, before any data is
  read), is refunded if it fails before reading the data's values, charged
  if it fails after, and settles at its ``privacy_``; a
  ``partial_fit`` stream is one charge, for the stream's whole guarantee. The
  ledger refuses a charge whose noise generator repeats a live charge's, and a
  stale copy of a stream.
"""

import copy
import os
import threading
import weakref
from contextlib import contextmanager
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted
from ._validate import check_no_dask_collections, validate_data

from .privacy import PrivacyCost
from .privacy._accountant import noise_fingerprint
from .privacy._validation import MAX_FINITE_EPSILON



class _Budget(Interval):
    """``epsilon``: a real in ``(0, MAX_FINITE_EPSILON]`` or ``np.inf`` (no privacy); not a bool."""

    def is_satisfied_by(self, val):
        return (not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)
                and (val <= MAX_FINITE_EPSILON or val == np.inf))

    def __str__(self):
        return (f"a float in the range (0, {MAX_FINITE_EPSILON:g}] or np.inf (no privacy, "
                "no noise)")


# ``epsilon`` may be ``np.inf`` (no privacy); sklearn's open interval excludes it.
EPSILON_CONSTRAINT = _Budget(Real, 0, np.inf, closed="right")
DELTA_CONSTRAINT = Interval(Real, 0, 1, closed="neither")
POSITIVE = Interval(Real, 0, None, closed="neither")


class _Count(Interval):
    """An integer interval that refuses booleans (``horizon=True`` is not a count of 1)."""

    def is_satisfied_by(self, val):
        return not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)


HORIZON_CONSTRAINT = _Count(Integral, 1, None, closed="left")


def check_max_calls(estimator):
    """Refuse ``max_calls`` without a ``horizon``, or above it (public parameters only).

    ``max_calls`` (the ``partial_fit`` calls a stream may make) caps a stream of at
    most ``horizon`` samples; with ``horizon=None`` the stream is calibrated for any
    length, and a declared call count that changed nothing would be ignored silently,
    so it is refused. Each call has at least one sample, so more calls than
    ``horizon`` could never be made (the calibration would pay for steps that
    cannot happen): refused too (``doc/privacy.md``, "A stream's number of calls,
    declared up front").
    """
    max_calls, horizon = estimator.max_calls, estimator.horizon
    if max_calls is None:
        return
    if horizon is None:
        raise ValueError(
            f"max_calls={max_calls!r} needs a horizon (the stream's largest number of "
            "samples): with horizon=None the stream is calibrated for any length and "
            "takes no call limit. Pass horizon too, or max_calls=None.")
    if max_calls > horizon:
        raise ValueError(
            f"max_calls={max_calls!r} is larger than horizon={horizon!r}: every "
            "partial_fit call has at least one sample, so at most horizon calls can be "
            "made. Pass max_calls <= horizon.")

#: The value a public bound of ``_DEFAULT_BOUNDS`` left at its default, ``None``,
#: stands for (with a :class:`~sklearn_dpol.exceptions.DefaultBoundWarning`).
DEFAULT_BOUND = 1.0


def bound_in_use(value):
    """A public bound parameter's value in use: ``None`` (the default) is :data:`DEFAULT_BOUND`.

    Anything else (a number, or ``"auto"``) is returned unchanged. The one place
    that resolves an unset bound, so that a fit with ``None`` and a fit with
    ``1.0`` compute the same thing; the parameter itself keeps ``None``.
    """
    return DEFAULT_BOUND if value is None else value


def make_generator(random_state, purpose=0):
    """A fresh ``numpy.random.Generator`` from an sklearn-style ``random_state``.

    ``None`` seeds from the operating system's entropy; an integer gives a
    reproducible generator; a ``RandomState`` contributes one draw as the seed.
    ``purpose`` separates the streams of ``fit`` and ``partial_fit`` so that an
    integer seed never hands both the same noise.
    """
    if isinstance(random_state, np.random.RandomState):
        random_state = int(random_state.randint(0, 2**32 - 1, dtype=np.uint64))
    if isinstance(random_state, np.random.Generator):
        # Only reachable with scikit-learn's parameter validation turned off (the
        # constraint is int, RandomState or None). Used as it is, the generator would
        # be shared with every clone (copied in its current state), so a clone's
        # release would draw the original's noise: draw a seed from it instead.
        random_state = int(random_state.integers(0, 2**63 - 1))
    seed = np.random.SeedSequence(random_state, spawn_key=(purpose,))
    return np.random.default_rng(seed)



_FLOAT64 = np.dtype(np.float64)


def validated_stream_batch(estimator, X, y):
    """``(X, y)`` of a later ``partial_fit`` call, validated at a fraction of the cost.

    Returns ``(X, y)`` when ``validate_data(estimator, X, y, dtype=np.float64,
    y_numeric=True, accept_sparse="csr", reset=False)`` would return them
    unchanged: a native float64 ``ndarray`` ``X`` of shape ``(n >= 1,
    n_features_in_)``, a 1-D native float64 ``ndarray`` ``y`` of length ``n``,
    both finite, on an estimator fitted without feature names, array-API
    dispatch off. Else ``None``, and the caller runs ``validate_data``, which
    raises (or warns) exactly as before: the fast path only skips checks that
    are known to pass. Finiteness is scikit-learn's own first pass (a finite
    sum means finite entries); a non-finite sum goes to the full check, which
    tells overflow from NaN.
    """
    if not (type(X) is np.ndarray and type(y) is np.ndarray and X.dtype is _FLOAT64
            and y.dtype is _FLOAT64 and X.ndim == 2 and y.ndim == 1
            and X.shape[0] == y.shape[0] and X.shape[0] >= 1
            and X.shape[1] == getattr(estimator, "n_features_in_", -1)
            and not hasattr(estimator, "feature_names_in_")):
        return None
    from sklearn import get_config

    if get_config().get("array_api_dispatch", False):
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        if not (np.isfinite(X.sum()) and np.isfinite(y.sum())):
            return None
    return X, y


_SAMPLER_STATE = ("_sampler", "_sampler_rng")
# Stream bookkeeping an export does not carry: the frozen calibration (it holds
# the ledger's address) and the ledger reservation. An export refuses
# ``partial_fit``, and its ``fit`` freezes afresh.
_NOT_EXPORTED = ("_frozen_params", "_accountant_stream", "_call", "_rng_pid")

# One lock per estimator, held for a whole release call (fit, partial_fit, a
# search's fit), so that calls from several threads run one after the other.
# Without it two concurrent calls shared one `_call` and one saved state: one
# failed on the other's bookkeeping, and its restore rewound the generator that
# had drawn the other's published noise (review 116; doc/privacy.md 56.2). Kept
# outside the estimator, so pickles and copies never carry a lock; blocking, not
# refusing, so that no refusal depends on timing. A forked child starts afresh.
_CALL_LOCKS = weakref.WeakKeyDictionary()
_CALL_LOCKS_GUARD = threading.Lock()


# The parameter objects of each estimator's last validated stream call (see
# _release_stream_batch_locked), outside the estimator for the same reasons.
_VALIDATED_PARAMS = weakref.WeakKeyDictionary()


def _parameter_objects(estimator):
    return tuple(estimator.__dict__.get(name) for name in estimator._parameter_constraints)


def _warn_large_delta(estimator, X):
    """``LargeDeltaWarning`` from ``delta`` and the number of rows (public), before the read."""
    from sklearn.utils.validation import _num_samples

    from .exceptions import warn_large_delta

    delta = getattr(estimator, "delta", None)
    if not isinstance(delta, Real):
        return
    try:
        n_records = int(_num_samples(X))
    except (TypeError, ValueError):    # malformed input: validation will say so
        return
    warn_large_delta(type(estimator).__name__, delta, n_records)


def _check_parameters_unchanged(estimator, params):
    """Raise (after the read: charged, rolled back) if a parameter was replaced mid-call."""
    if any(a is not b for a, b in zip(_parameter_objects(estimator), params)):
        raise RuntimeError(
            f"{type(estimator).__name__}: a parameter was changed while the call was "
            "running (from another thread), so its noise and its stated guarantee could "
            "disagree; nothing was released and the call was charged. Change parameters "
            "between calls."
        )


def _call_lock(estimator):
    """The re-entrant lock that serialises ``estimator``'s release calls."""
    with _CALL_LOCKS_GUARD:
        lock = _CALL_LOCKS.get(estimator)
        if lock is None:
            lock = _CALL_LOCKS[estimator] = threading.RLock()
        return lock


def _reset_call_locks_after_fork():
    global _CALL_LOCKS_GUARD
    _CALL_LOCKS_GUARD = threading.Lock()
    _CALL_LOCKS.clear()
    _VALIDATED_PARAMS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_call_locks_after_fork)


class PrivateEstimatorMixin:
    """Atomic calls and frozen privacy hyperparameters for private estimators.

    Subclasses list the parameters that fix a stream's calibration in
    ``_stream_params``, check cross-parameter constraints in
    ``_more_validate_params`` and implement one engine,
    ``_partial_fit(X, y, *, fitting, ...)``, which ``fit`` and ``partial_fit``
    call through :meth:`_release_fit` and :meth:`_release_stream_batch`.
    """

    _stream_params = ()
    # The public bounds whose defaults draw a DefaultBoundWarning (_warn_default_bounds).
    _DEFAULT_BOUNDS = ()
    # State that is not released: the uncorrupted iterate and the generator.
    _private_state = ("_w_private", "_rng")

    # -- copies: never continue with the original's noise ---------------------------

    def __deepcopy__(self, memo):
        # Under the call lock: a copy taken while another thread's call runs would
        # hold the ledger's advanced call count with the state from before the call,
        # and pass the stale-copy check (review 117; doc/privacy.md 56.3).
        with _call_lock(self):
            cls = type(self)
            new = cls.__new__(cls)
            memo[id(self)] = new
            for name, value in self.__dict__.items():
                new.__dict__[name] = copy.deepcopy(value, memo)
        new._reseed_copy()
        return new

    def __getstate__(self):
        with _call_lock(self):   # a pickle is a copy too (see __deepcopy__)
            return super().__getstate__()

    def set_params(self, **params):
        """Set the parameters of this estimator.

        As ``sklearn.base.BaseEstimator.set_params``, but it waits for a
        running ``fit`` or ``partial_fit`` on another thread: a parameter
        changed during a call would let its noise be calibrated on one value
        while its guarantee states another (``doc/privacy.md`` 56.3).

        Parameters
        ----------
        **params : dict
            Estimator parameters (``<component>__<parameter>`` for nested
            objects).

        Returns
        -------
        self : estimator instance
            Estimator instance.
        """
        with _call_lock(self):
            return super().set_params(**params)

    def __copy__(self):
        """A copy of a private estimator is a deep copy.

        A shallow copy would share the stream's state arrays, its generator and
        its ledger reservation (whose call count the stale-stream check reads), so
        the original and the copy could both continue one stream under one charge.
        """
        return copy.deepcopy(self)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._reseed_copy()

    def _reseed_copy(self):
        """Give a copy (deep copy, unpickled object) fresh noise when unseeded.

        With ``random_state=None`` the user asked for fresh entropy: a copied
        generator would make the copy's next release draw exactly the noise
        of the original's next release (or of another copy's), and the
        difference of the two releases would be the noiseless difference of
        the models. Re-seeding from the operating system makes the two
        continuations independent. A seeded estimator keeps its generator, so
        that experiments reproduce: an experiments-only hazard, documented.
        """
        if getattr(self, "random_state", 0) is None and "_rng" in self.__dict__:
            self._rng = make_generator(None)

    def _exact_sampler(self):
        """The exact sampler's generator state, drawn from ``self._rng`` and kept
        with it: a new generator (a fit, a re-seeded copy) gives a new state, and
        a stream's calls share one state advanced in place, so a stream cut into
        ``partial_fit`` calls draws the same bits as one call.
        """
        from ._core.noise import sampler_state

        if self.__dict__.get("_sampler_rng") is not self._rng:
            self._sampler = sampler_state(self._rng)
            self._sampler_rng = self._rng
        return self._sampler

    def export_public(self):
        """A copy that predicts from released values only.

        The copy keeps the released model, ``privacy_`` and the other public
        attributes, drops every piece of private state (the uncorrupted
        iterates, the random generator, and the ``random_state`` seed, which
        would regenerate the noise: the copy has ``random_state=None``), and
        the ``accountant`` (the ledger's address: the copy has
        ``accountant=None``); an estimator nested in a parameter becomes an
        unfitted clone without seed or accountant. The copy pickles without
        them, and refuses ``partial_fit``: a stream cannot continue without
        its private state. ``fit`` on the copy trains a new model from scratch.

        Returns
        -------
        public : estimator
            The public copy.
        """
        check_is_fitted(self)
        # The exact sampler's state (``_exact_sampler``) is private for every
        # estimator: xoshiro256** is invertible, so its state after a release
        # regenerates the digits of that release's noise.
        from ._export import public_state

        private = (*self._private_state, *_SAMPLER_STATE, *_NOT_EXPORTED)
        # Any estimator nested in the state (a search's template, estimators in
        # its grid) becomes an unfitted clone without seed or accountant: a fitted
        # template would carry its own private state into the export.
        public = public_state(
            {k: v for k, v in self.__dict__.items() if k not in private}
        )
        # The seed regenerates every noise draw (a RandomState instance can be
        # stepped back to the draw that seeded the noise): it is private too.
        public["random_state"] = None
        # The accountant is the ledger's address (a PostgreSQL URL's password
        # included) and a fit of the export would charge the original's ledger.
        if "accountant" in public:
            public["accountant"] = None
        exported = type(self).__new__(type(self))
        exported.__dict__.update(public)
        exported._exported_public = True
        return exported

    def _check_not_exported(self):
        if getattr(self, "_exported_public", False):
            raise ValueError(
                "This is a public export (export_public()): it holds only released "
                "values and cannot continue a stream. Call partial_fit on the original "
                "estimator, or fit this one to start afresh."
            )
        if getattr(self, "_released_by_search", False):
            raise ValueError(
                "This model was released by PrivateHyperparameterSearch, whose charge "
                "covers its one fit: continuing its stream would release more under no "
                "charge. Start a stream on a new estimator with search.best_params_ (and "
                "your accountant), or call fit on this one to start afresh."
            )

    @contextmanager
    def _atomic(self, stream=False):
        """Undo every change to the estimator if the body raises.

        That includes the generator's state, the exact sampler's state and,
        when ``random_state`` is a ``RandomState`` instance (which seeding
        draws from), its state too. A stream's mechanism is shared with the
        state it was advanced from and rolls back with it (its steps are
        written past the restored step count; ``_StepRows``). One exception:
        an unseeded estimator whose call failed after reading its data (a
        charged failure, which may have drawn noise) keeps a fresh generator
        instead of the rewound one, so that no later call draws the failed
        call's noise again (``doc/privacy.md`` 56.1). A seeded one is rewound:
        its seed regenerates every draw anyway.
        """
        self.__dict__.pop("_data_read_in_call", None)
        saved = dict(self.__dict__)
        sampler = {name: np.array(saved[name], copy=True) for name in ("_sampler",)
                   if isinstance(saved.get(name), np.ndarray)}
        rng = self.__dict__.get("_rng")
        rng_state = _generator_state(rng) if rng is not None else None
        seeder = getattr(self, "random_state", None)
        seeder_state = seeder.get_state() if isinstance(seeder, np.random.RandomState) else None
        try:
            yield
        except BaseException:
            data_read = self.__dict__.get("_data_read_in_call", False)
            self.__dict__.clear()
            self.__dict__.update(saved)
            for name, value in sampler.items():
                saved[name][...] = value     # the state array is advanced in place
            if rng is not None:
                rng.bit_generator.state = rng_state
            if seeder_state is not None:
                seeder.set_state(seeder_state)
            if data_read and self.random_state is None and "_rng" in self.__dict__:
                self._forget_noise()
            if data_read and stream:
                # A charged stream failure ends the stream (56.3): its retry would be
                # a second continuation of this state under the same charge.
                self._broken_stream = True
            raise
        self.__dict__.pop("_data_read_in_call", None)

    def _release_fit(self, X, y, reset=(), **engine_kwargs):
        """``fit``: start afresh from ``random_state`` and make one release."""
        with _call_lock(self), self._in_call(stream=False):
            return self._release_fit_locked(X, y, reset, **engine_kwargs)

    @contextmanager
    def _in_call(self, stream):
        """Mark the estimator as inside a release call, refusing what must not run.

        The marker ``(pid, thread, id)`` is set for the duration of a call (under the
        call lock). Found at the start of a call it means a re-entrant call from the
        same thread (an input's ``__array__``, a warnings hook: the lock is
        re-entrant), which would share the outer call's saved state, or a copy made
        while a call was running (a fork, or a copy by the calling thread itself),
        whose stream position is stale. Both are refused before anything is read
        (``doc/privacy.md`` 56.3); a copy may still ``fit`` afresh.
        """
        here = (os.getpid(), threading.get_ident(), id(self))   # a copy has another id
        marker = self.__dict__.get("_in_call_marker")
        if marker is not None and (marker == here or stream):
            raise ValueError(
                f"{type(self).__name__}: "
                + ("a release call was made from inside another call on this estimator "
                   "(a re-entrant fit or partial_fit, e.g. from an input's __array__ or a "
                   "warnings hook), which is refused. Make the call after the first returns."
                   if marker == here else
                   "this copy was made while a call was running on the original (a fork or "
                   "a copy taken mid-call), so its stream position is stale and partial_fit "
                   "is refused. Continue the original, or call fit on this copy to start "
                   "afresh."))
        self.__dict__["_in_call_marker"] = here
        try:
            yield
        finally:
            self.__dict__.pop("_in_call_marker", None)

    def _release_fit_locked(self, X, y, reset, **engine_kwargs):
        # Before the plan, which reads X's shape (a dask DataFrame's is computed).
        check_no_dask_collections(self, X=X, y=y, **engine_kwargs)
        params = _parameter_objects(self)
        self._more_validate_params()
        with self._atomic(), _silent_floats():
            # Seeded before the reservation, which refuses noise already charged.
            rng = make_generator(self.random_state, purpose=0)
            charge = self._reserve_privacy(
                X, fitting=True, engine_kwargs=engine_kwargs,
                noise=None if self.random_state is None else rng)
            _warn_large_delta(self, X)   # after the plan, which must come before X is touched
            with _refunded_on_failure(charge) as call:
                # A fit ends any stream, and the stream's charge with it.
                for name in (*reset, "_exported_public", "_released_by_search",
                             "_accountant_stream", "_broken_stream"):
                    self.__dict__.pop(name, None)
                self._rng = rng
                self._freeze_stream_params()
                self._call = call
                self._partial_fit(X, y, fitting=True, **engine_kwargs)
                del self._call
                _check_parameters_unchanged(self, params)
                _settle(charge, self.privacy_)
            self._forget_noise()
        # validated by scikit-learn on entry (or skipped by the user's choice)
        _VALIDATED_PARAMS[self] = _parameter_objects(self)
        return self

    def _release_stream_batch(self, X, y, **engine_kwargs):
        """``partial_fit``: continue the stream (same calibration, same generator)."""
        with _call_lock(self), self._in_call(stream=True):
            return self._release_stream_batch_locked(X, y, **engine_kwargs)

    def _release_stream_batch_locked(self, X, y, **engine_kwargs):
        self._check_not_exported()
        check_no_dask_collections(self, X=X, y=y, **engine_kwargs)   # before the plan
        if self.__dict__.get("_broken_stream", False):
            raise ValueError(
                f"{type(self).__name__}: an earlier partial_fit call of this stream failed "
                "after it had read its data. That call was charged, but a continuation after "
                "it would be a second continuation of the same stream state under the same "
                "charge (doc/privacy.md 56.3), so this stream cannot continue. Call fit to "
                "start afresh, or start a new stream on sklearn.base.clone(est)."
            )
        params = _parameter_objects(self)
        if hasattr(self, "_frozen_params"):
            # scikit-learn validates the parameters of a fitted estimator's
            # partial_fit only once; a parameter set between calls (one the
            # stream does not freeze, such as max_iter) is checked here, before
            # anything is read or charged (review 116), whenever a parameter
            # object changed since this estimator's last call (whose
            # parameters scikit-learn validated on entry, unless the user
            # skipped validation).
            last = _VALIDATED_PARAMS.get(self)
            if last is None or any(a is not b for a, b in zip(params, last)):
                self._validate_params()
                self._more_validate_params()
                _VALIDATED_PARAMS[self] = params
        with self._atomic(stream=True), _silent_floats():
            if not hasattr(self, "_frozen_params"):
                self._more_validate_params()
                # a stream's first call (a stream after fit was warned by fit)
                self._warn_default_bounds()
                self._freeze_stream_params()
            self._check_stream_params_unchanged()
            fresh = not hasattr(self, "_rng")
            unseeded = self.random_state is None
            if fresh or (unseeded and self.__dict__.get("_rng_pid") != os.getpid()):
                # Unseeded: fresh entropy for every call, drawn in the calling
                # process. The generator _forget_noise kept after the last call is
                # unused, but a copy of this process (os.fork, joblib's
                # multiprocessing backend) holds it too: in another process it is
                # replaced, or the two continuations would draw the same noise.
                self._rng = make_generator(self.random_state, purpose=1)
            charge = self._reserve_privacy(
                X, fitting=False, engine_kwargs=engine_kwargs,
                noise=None if unseeded else self._rng, carried=not fresh)
            with _refunded_on_failure(charge) as call:
                self._call = call
                self._partial_fit(X, y, fitting=False, **engine_kwargs)
                del self._call
                _check_parameters_unchanged(self, params)
                _settle(charge, self.privacy_)
            self._forget_noise()
        _VALIDATED_PARAMS[self] = _parameter_objects(self)
        return self

    def _forget_noise(self):
        """After an unseeded release, keep nothing that regenerates its noise.

        The generator that drew it and the exact sampler's state after it
        (xoshiro256** is invertible) would let whoever reads the estimator's
        pickle rewind to the noise just drawn: an unseeded estimator keeps a
        fresh, unused generator instead (the next call draws its own anyway).
        A seeded one keeps its generator, so that experiments reproduce (a
        documented hazard: its seed regenerates every draw).
        """
        if self.random_state is None:
            self._rng = make_generator(None)
            self._rng_pid = os.getpid()     # the process whose call may draw from it
            for name in _SAMPLER_STATE:
                self.__dict__.pop(name, None)

    def _bound(self, name):
        """The public bound parameter ``name`` in use (:func:`bound_in_use`: ``None`` is 1.0)."""
        return bound_in_use(getattr(self, name))

    def _warn_default_bounds(self):
        """Warn (:class:`~sklearn_dpol.exceptions.DefaultBoundWarning`) about
        the public bounds among ``_DEFAULT_BOUNDS`` left at their default, ``None``
        (which stands for :data:`DEFAULT_BOUND`).

        Called once per ``fit``, and by a stream's first ``partial_fit`` call.
        The message depends only on the class and the parameters, never on the
        data, so the warning itself releases nothing. A bound passed explicitly
        (``1.0`` included) never warns.
        """
        names = self._DEFAULT_BOUNDS
        from .exceptions import DefaultBoundWarning, _warn_at_caller

        left = [name for name in names if getattr(self, name, 0) is None]
        if not left:
            return
        listed = ", ".join(f"{name}=None" for name in left)
        # Only this estimator's own bounds, and "auto" where this estimator offers it.
        own = ", ".join(f"{name}=<{_BOUND_MEANINGS.get(name, 'a public bound')}>"
                        for name in names)
        auto = [name for name in names if _accepts_auto(self, name)]
        norm_param, norm_words = (self._norm_words() if hasattr(self, "_norm_words")
                                  else (None, None))
        offered = (" or " + " and ".join(
            f"{name}='auto' (a private quantile of "
            f"{'the ' + norm_words if name == norm_param else '|y|'})"
            for name in auto)) if auto else ""
        explicit = ", ".join(f"{name}={DEFAULT_BOUND!r}" for name in left)
        _warn_at_caller(
            f"{type(self).__name__}: {listed}, the default "
            f"({'it stands' if len(left) == 1 else 'they stand'} for {DEFAULT_BOUND!r}). "
            "Every record is clipped to these public bounds, so a default that does not "
            "fit the data gives a useless model without any error. Pass bounds known "
            f"without looking at the data ({own}){offered}, or scale the features "
            "privately first with sklearn_dpol.preprocessing.PrivateRangeScaler in a "
            f"Pipeline. If {DEFAULT_BOUND!r} is your public bound, pass it explicitly "
            f"({explicit}): an explicit bound does not warn.",
            DefaultBoundWarning,   # at the user's line that called fit / partial_fit
        )

    def _mark_data_read(self):
        """Declare that the call now reads the values of its data.

        Called by the engine once validation (parameters, shapes, dtypes and
        finiteness, all checked before any other work) is over. From here on
        a failure is a function of the data: it is charged its planned cost
        instead of being refunded. Nothing after this point raises on purpose
        (``doc/privacy.md``, "Failures and refunds"); the charge covers what
        cannot be ruled out (a bug, an interrupt).
        """
        call = self.__dict__.get("_call")
        if call is not None:
            call.data_read = True
        self._data_read_in_call = True      # read (and dropped) by _atomic

    def _privacy_spec(self, X=None, *, fitting=True, **metadata):
        """The call's :class:`~sklearn_dpol.privacy._spec.PrivacySpec`: its one declaration.

        From hyperparameters and public metadata only: ``X`` is read for its
        public shape, where the calibration needs it, and is ``None`` when
        there is no data yet (private selection plans before any). For
        ``partial_fit``, the spec of the whole stream after this call. The
        accountant's charge (:meth:`_planned_privacy`), private selection's
        ``rho`` and ``privacy_`` are derived from it.
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not plan its privacy cost, so it cannot "
            "charge an accountant."
        )

    def _planned_privacy(self, X, *, fitting, **engine_kwargs):
        """The guarantee the call will have, from hyperparameters and metadata.

        The cost of :meth:`_privacy_spec`. For ``partial_fit``, the guarantee
        of the whole stream after this call. It must cover the ``privacy_``
        the call sets, and must not read the values of ``X`` (only its public
        shape, where the calibration needs it).
        """
        return self._privacy_spec(X, fitting=fitting, **engine_kwargs).cost()

    def _reserve_privacy(self, X, *, fitting, engine_kwargs, noise=None, carried=False):
        """Reserve the call's guarantee with the accountant (``None`` without one).

        A ``fit`` is a new charge. A stream is one charge, opened by its first
        call and raised by later calls only if the stream's guarantee grows;
        each later call advances the charge's call count, which refuses a stale
        copy of the stream. ``noise`` is the generator a new charge draws from
        (``None`` for fresh entropy): the ledger refuses one already charged.
        A generator ``carried`` over from a fit is no fresh entropy, even with
        ``random_state=None``: every copy of the fitted estimator holds it.
        """
        accountant = getattr(self, "accountant", None)
        if accountant is None:
            return None
        cost = PrivacyCost.of(self._planned_privacy(X, fitting=fitting, **engine_kwargs))
        label = type(self).__name__
        stream = None if fitting else getattr(self, "_accountant_stream", None)
        if stream is not None:
            # The same ledger (the accountant is frozen), as opened now: the
            # copy pickled with the stream may have been closed since.
            stream.accountant = accountant
            # The count lives on the reservation object, which a failed call's
            # undo (a shallow restore of __dict__) keeps: the ledger's count
            # is not undone by the refund either.
            stream.next_call(cost, label)
            return stream
        # Tagged by origin: a fit that drew nothing (epsilon=inf) leaves its
        # generator as it was seeded, and the stream after it reuses no noise.
        noise = noise_fingerprint(noise, origin="carried" if carried else "seeded")
        reservation = accountant.reserve(cost, label, kind="fit" if fitting else "stream",
                                         noise=noise)
        if not fitting:
            self._accountant_stream = reservation
        return reservation

    def _frozen_value(self, name):
        value = getattr(self, name, None)
        # An accountant is its ledger file: an unpickled copy of the same ledger
        # (same path) is the same accountant.
        return value.path if name == "accountant" and value is not None else value

    def _freeze_stream_params(self):
        # The accountant too: a stream continued without it would grow uncharged.
        # Copies, so that a parameter changed in place (an array's entry) is seen.
        self._frozen_params = {name: copy.deepcopy(self._frozen_value(name))
                               for name in (*self._stream_params, "accountant")}

    def _check_stream_params_unchanged(self):
        frozen = getattr(self, "_frozen_params", None)
        if frozen is None:
            return
        changed = [
            name for name, value in frozen.items()
            if not _same_value(self._frozen_value(name), value)
        ]
        if changed:
            details = ", ".join(
                f"{name}: {frozen[name]!r} -> {self._frozen_value(name)!r}"
                for name in changed
            )
            raise ValueError(
                f"Privacy hyperparameters changed since the stream started ({details}). "
                "The guarantee of a stream is calibrated when it starts; call fit to "
                "start a new stream with the new values, or restore them."
            )


def _generator_state(rng):
    """A copy of ``rng``'s bit generator state, to restore it after a failed call.

    numpy's own bit generators build a new state object on every read (their
    arrays included), so only another bit generator's state is deep-copied.
    """
    bit_generator = rng.bit_generator
    state = bit_generator.state
    if type(bit_generator).__module__.startswith("numpy.random"):
        return state
    return copy.deepcopy(state)


class _Call:
    """One ``fit`` or ``partial_fit`` call: has it read the data's values yet?"""

    def __init__(self):
        self.data_read = False


def _silent_floats():
    """No numpy floating-point warning while a call reads its records.

    Any such warning is a function of the data, outside the guarantee: for
    example scikit-learn's finiteness check sums the rows, and a finite row
    ``[M, M, -M, -M]`` with ``M`` near ``1.8e308`` gives ``inf - inf``, a NaN
    and a RuntimeWarning its neighbour does not print (``doc/privacy.md``,
    section 49.8). The values are unchanged: every overflow is already handled
    (clipped rows, finite releases).
    """
    return np.errstate(all="ignore")


@contextmanager
def _refunded_on_failure(charge):
    """Refund ``charge`` if the body raises before reading the data's values.

    A failure after :meth:`PrivateEstimatorMixin._mark_data_read` depends on
    the data, so the reservation stays spent (its planned cost): a refunded
    failure would be a free query. So does a failure of objective
    perturbation to certify its solve: it happens after the noise met the
    data and is one bit outside the guarantee (``doc/privacy.md``, section
    7.4). A failure during validation (parameters, shapes, finiteness) is
    refunded: the input was rejected before any work on its values.
    """
    call = _Call()
    try:
        yield call
    except BaseException as exc:
        if charge is not None:
            from ._core.objective_perturbation import SolverDidNotConverge

            if call.data_read or isinstance(exc, SolverDidNotConverge):
                charge.settle(charge.cost)
            else:
                charge.refund()
        raise


def _settle(charge, guarantee):
    if charge is not None:
        charge.settle(guarantee)


_BOUND_MEANINGS = {
    "data_norm": "public bound on the L2 norm of a row",
    "y_bound": "public bound on |y|",
    "feature_bound": "public bound on every |x_j|",
}


def _accepts_auto(estimator, name):
    """Whether ``estimator``'s parameter ``name`` takes ``"auto"`` (its public constraints)."""
    for constraint in getattr(type(estimator), "_parameter_constraints", {}).get(name, ()):
        options = getattr(constraint, "options", None)
        if options is not None and "auto" in options:
            return True
    return False


def _same_value(a, b):
    if a is b:
        return True
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # array-likes: compare their contents
        return np.array_equal(np.asarray(a), np.asarray(b))


class ReleasedLinearRegressorMixin:
    """``predict`` from the released ``coef_`` and ``intercept_`` (post-processing)."""

    def predict(self, X):
        """Predict with the released linear model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted targets.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, accept_sparse="csr", reset=False)
        predictions = np.asarray(X @ self.coef_) + self.intercept_
        bound = self._prediction_bound()
        if bound is not None:
            # Post-processing of the released model with a public (or released) constant:
            # every training target was clipped to [-bound, bound].
            np.clip(predictions, -bound, bound, out=predictions)
        return predictions

    def _prediction_bound(self):
        """A public bound on ``|y|`` to clip predictions to (``None``: no clipping)."""
        return None
