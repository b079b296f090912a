"""``validate_data`` whose error messages never quote the data.

scikit-learn's input checks put records into their messages: a 1-D ``X`` is
printed whole ("Expected 2D array, got 1D array instead: array=[...]"), a
complex ``X`` too ("Complex data not supported [[...]]"), and numpy's
conversion quotes the cell it could not convert ("could not convert string to
float: '<cell>'"). An exception is an output of the call, and a failed
validation is refunded, so such a message would release records for free
(``doc/privacy.md``, "Export and validation-message review fixes").

:func:`validate_data` calls scikit-learn's and, on ``ValueError`` or
``TypeError``, raises the same exception type with a message that holds no
value of the data: scikit-learn's message as it is when it is one of its
value-free templates (shapes, counts, dtypes, feature names, which are the
schema), a rewritten first sentence for the messages known to quote the data,
and a generic message otherwise. The new exception is raised outside the
``except`` block, so neither its ``__cause__`` nor its ``__context__`` keeps
the original (nor its traceback, whose frames hold the arrays).
"""

import math
import re
import sys

import numpy as np
from sklearn import config_context
from sklearn.utils.validation import validate_data as _sklearn_validate_data

__all__ = ["validate_data", "check_no_dask_collections"]

_RESHAPE = ("Reshape your data either using array.reshape(-1, 1) if your data has a "
            "single feature or array.reshape(1, -1) if it contains a single sample.")

# scikit-learn's messages whose formatted parts are shapes, counts, dtypes, type
# names, estimator or feature names (the schema), never a value of the data.
# Matched against the whole message.
_VALUE_FREE = [re.compile(pattern, re.DOTALL) for pattern in (
    r"Input (X |y |sample_weight )?contains (NaN|infinity or a value too large for "
    r"dtype\('\w+'\))\.?(\n\w+ does not accept missing values encoded as NaN natively\..*)?",
    r"Input contains NaN\.?",
    r"Input y contains NaN or infinity\.",
    r"Found array with \d+ (sample|feature)\(s\) \(shape=\([\d, ]*\)\) while a minimum "
    r"of \d+ is required( by \w+)?\.",
    r"Found array with dim \d+, while dim <= 2 is required( by \w+)?\.",
    r"Found input variables with inconsistent numbers of samples: \[[\d, ]*\]",
    r"Expected 2D input, got input with shape \([\d, ]*\)\.\n.*",
    r"Expected a 2-dimensional container but got <class '[\w.]+'> instead\..*",
    r"X has \d+ features, but \w+ is expecting \d+ features as input\.",
    r"X does not contain any features, but \w+ is expecting \d+ features",
    r"The feature names should match those that were passed during fit\.\n.*",
    r"Feature names are only supported if all input features have string names, .*",
    r"(This )?\w+ (estimator )?requires y to be passed, but the target y is None\.?",
    r"y cannot be None",
    r"y should be a 1d array, got an array of shape \([\d, ]*\) instead\.",
    r"dtype='numeric' is not compatible with arrays of bytes/strings\..*",
    r"Sparse data was passed( for \w+)?, but dense data is required\..*",
    r"np\.matrix is not supported\..*",
    r"Only sparse matrices with 32-bit integer indices are accepted\..*",
    r"Pandas DataFrame with mixed sparse extension arrays generated a sparse matrix.*",
    # numpy's conversions: ragged rows (a shape), an object cell (its type, not its value).
    r"setting an array element with a sequence\.( The requested array has an inhomogeneous "
    r"shape after \d+ dimensions\. The detected shape was \([\d, ]*\) \+ inhomogeneous "
    r"part\.)?",
    r"float\(\) argument must be a string or a (real )?number, not '[\w.]+'",
)]

# scikit-learn's missing-value refusal (its first sentence names the input, not a value).
_NAN = re.compile(r"(Input (?:X |y |sample_weight )?contains NaN)(?! or)\.?")

# Messages that quote the data, and the value-free sentence that replaces them.
_CONVERSION = re.compile(r"(could not convert|invalid literal for|cannot convert)", re.I)


def validate_data(_estimator, /, X="no_validation", y="no_validation", reset=True,
                  validate_separately=False, skip_check_array=False, **check_params):
    """:func:`sklearn.utils.validation.validate_data` without data in its errors.

    Same parameters and return value. A ``ValueError`` or ``TypeError`` is
    raised again, same type, with a message that quotes no value of ``X`` or
    ``y``, and with ``__cause__`` and ``__context__`` both ``None``.

    The finiteness check runs whatever scikit-learn's global configuration:
    ``sklearn.set_config(assume_finite=True)`` makes scikit-learn skip it (even
    with ``ensure_all_finite=True``), and a NaN or inf record would then be
    refused only after it was read (charged), or reach a release. The check is
    the refusal of non-finite records before reading (``doc/privacy.md``,
    "Failures and refunds"), so it is not a speed option here.
    """
    check_no_dask_collections(_estimator, X=X, y=y)
    y = labels_as_given(y)
    try:
        with config_context(assume_finite=False):
            result = _sklearn_validate_data(
                _estimator, X, y, reset=reset, validate_separately=validate_separately,
                skip_check_array=skip_check_array, **check_params)
    except (ValueError, TypeError, ArithmeticError) as exc:
        # ArithmeticError: an object y of Decimal('sNaN') or 10**400 (InvalidOperation,
        # OverflowError) fails in numpy's conversion
        kind = ValueError if isinstance(exc, ArithmeticError) else type(exc)
        message = str(exc)
    else:
        if not (check_params.get("y_numeric") and isinstance(result, tuple)):
            return result
        targets = _float_targets(result[1])
        if targets is None:
            # scikit-learn converts an object y only; a str or bytes y ('<U', 'S') passes
            # its check, and numpy's conversion would quote the record it cannot convert.
            kind, message = ValueError, "could not convert string to float"
        elif (getattr(getattr(y, "dtype", None), "kind", "O") not in "biuf"
              and not np.all(np.isfinite(targets))):
            # 'nan' or 'inf' strings convert without error, after scikit-learn's check for
            # finite values: a str array skips it, and an object array's check compares
            # x != x, which the string 'nan' is not (scikit-learn then converts it to NaN).
            # A numeric y was checked by scikit-learn already.
            kind, message = ValueError, "Input y contains NaN or infinity."
        else:
            return result[0], targets
    # Outside the except block: the new exception chains nothing.
    error = _exception(kind, _value_free_message(message, _estimator, X, y))
    raise error


def labels_as_given(y):
    """A ``y`` without a dtype (a list, tuple, deque, ...), as an object array of its own elements.

    numpy infers such a ``y``'s dtype from all of its values, so one record's
    label would re-type every other: one string among numbers makes them all
    strings (no label equals a numeric class any more), one float among large
    integer IDs rounds them all. Element by element, each label keeps its own
    value and type, whatever the others are (reviews 125 and 129,
    ``doc/privacy.md`` 58.3 and 58.8): a 0-d array is read as its scalar, and
    a rectangular nested list (a column ``y``) becomes an ``(n, k)`` object
    array. Arrays, pandas objects and other inputs with a dtype or an array
    interface are returned as they are; so is a ragged or deeper nesting, which
    validation refuses (its message quotes no value).
    """
    if (y is None or isinstance(y, (str, bytes)) or hasattr(y, "dtype")
            or hasattr(y, "__array__") or hasattr(y, "__array_interface__")
            or not hasattr(y, "__len__") or not hasattr(y, "__iter__")):
        return y                         # arrays, pandas, scalars: their own dtype
    rows = [_label_as_given(v) for v in y]
    if rows and all(isinstance(v, list) for v in rows):
        width = len(rows[0])
        if any(len(r) != width for r in rows) or any(
                isinstance(e, list) for r in rows for e in r):
            return y                     # ragged or deeper: validation refuses it
        out = np.empty((len(rows), width), dtype=object)   # a column or a 2-D y
        for i, r in enumerate(rows):
            for j, e in enumerate(r):
                out[i, j] = e
        return out
    if any(isinstance(v, list) for v in rows):
        return y
    out = np.empty(len(rows), dtype=object)
    for i, value in enumerate(rows):
        out[i] = value
    return out


def _label_as_given(v):
    """One element: a 0-d array as its scalar, a sequence as a list of its elements."""
    if isinstance(v, np.ndarray):
        return v[()] if v.ndim == 0 else v.tolist() if v.ndim == 1 else [v]
    if isinstance(v, (list, tuple)):
        return [e[()] if isinstance(e, np.ndarray) and e.ndim == 0 else e for e in v]
    return v


def jointly_typed(y):
    """``y`` with one dtype for all its labels, as numpy infers it from their values.

    For inferring a label set from ``y`` only (``classes=None``: the labels are
    released without privacy, with a ``PrivacyLeakWarning``), where scikit-learn's
    target checks refuse an object array of numbers. An object array that does not
    convert (ragged values) is returned as it is.
    """
    if getattr(y, "dtype", None) != object:
        return y
    try:
        typed = np.asarray(y.tolist())
    except (TypeError, ValueError):
        return y
    if typed.dtype.kind == "c":   # scikit-learn's refusal would print every label
        raise ValueError("Complex data not supported: y holds a complex label. Pass real "
                         "labels. Nothing was read or charged.")
    return typed


def _is_dask_collection(obj):
    """True for a dask collection other than a dask array (a DataFrame, a Series, an
    Index, a bag, a delayed value), decided from the type alone: nothing is computed,
    and dask is not imported (an object of a dask type means dask is imported)."""
    if "dask" not in sys.modules:
        return False
    kind = type(obj)
    if not kind.__module__.split(".")[0] in ("dask", "dask_expr"):
        return False
    if not callable(getattr(kind, "__dask_graph__", None)):
        return False
    arrays = sys.modules.get("dask.array")
    return not (arrays is not None and isinstance(obj, arrays.Array))


def check_no_dask_collections(estimator, **inputs):
    """``ValueError`` for a dask DataFrame, Series (or another dask collection that is
    not a dask array) among ``inputs``, before anything is computed or charged.

    numpy's conversion in scikit-learn's validation would compute the whole
    collection on the driver, silently (and its row count, a lazy scalar, even
    earlier): a dask DataFrame is refused with the two ways to pass it
    (``doc/integrations.md``, "fit on a dask array"). A dask *array* passes: the
    estimators that reduce it on the workers do, and the others compute it on the
    driver, as documented.
    """
    arrays = sys.modules.get("dask.array") if "dask" in sys.modules else None
    for name, value in inputs.items():
        if arrays is not None and isinstance(value, arrays.Array):
            if any(math.isnan(size) for size in value.shape):
                # Unknown chunk sizes (a DataFrame's to_dask_array() without lengths): its
                # row count is lazy, a function of the data, and numpy's conversion would
                # compute it whole on the driver (review 123). Decided from the shape's
                # NaN entries alone, before anything is computed or charged.
                raise ValueError(
                    f"{type(estimator).__name__} got {name} as a dask array of unknown "
                    f"chunk sizes (shape {value.shape}), which it would compute on the "
                    f"driver, whole, while converting it. Its row count must not depend on "
                    "private values (filtering rows with a boolean mask of the data makes "
                    "it data-dependent): declare the chunk sizes from public information "
                    "(a DataFrame's to_dask_array(lengths=True), or compute_chunk_sizes(), "
                    f"only if the row count is public), or pass {name}.compute() if it fits "
                    "in the driver's memory. Nothing was computed or charged.")
            continue
        if not _is_dask_collection(value):
            continue
        what = f"a {type(value).__module__.split('.')[0]} {type(value).__name__}"
        convert = ("to_dask_array(lengths=True)" if hasattr(value, "to_dask_array")
                   else "to a dask array")
        raise ValueError(
            f"{type(estimator).__name__} got {name} as {what}, which it would compute on "
            f"the driver, whole, while converting it. Pass {name}.{convert} instead (a dask "
            "array, reduced on the workers by the fit of PrivateQFTLRegressor, "
            "PrivateFrankWolfeLasso and PrivateMirrorDescentRegressor with loss='squared'; "
            "computing the partition lengths reads the data, so do so only if the row "
            "count is public), or "
            f"{name}.compute() if it fits in the driver's memory. Nothing was computed "
            "or charged.")


def _float_targets(y):
    """A numeric ``y`` as it is; any other dtype as float64, or ``None`` when a value
    does not convert (the caller raises a message without it)."""
    dtype = getattr(y, "dtype", None)
    if dtype is not None and dtype.kind in "biuf":
        return y
    try:
        converted = np.asarray(y, dtype=np.float64)
    except (ValueError, TypeError, ArithmeticError):
        converted = None
    return converted


def _exception(kind, message):
    """``kind(message)``, or its builtin base when ``kind`` needs other arguments
    (``UnicodeDecodeError``, numpy's ufunc errors)."""
    try:
        error = kind(message)
        if str(error) == message:
            return error
    except Exception:  # noqa: BLE001 - any constructor failure means "not this type"
        pass
    return (ValueError if issubclass(kind, ValueError) else TypeError)(message)


def _value_free_message(message, estimator, X, y):
    name = type(estimator).__name__
    nan = _NAN.match(message)
    if nan:
        # scikit-learn's advice (HistGradientBoosting, "an imputer transformer") is not
        # private: an imputer fitted on the rows releases their statistic (review 128).
        return (f"{nan.group(1)}. {name} does not accept missing values. Fill "
                "them with a public constant (for example SimpleImputer(strategy="
                "'constant', fill_value=0) as a Pipeline step), or drop the rows or "
                "columns by a public rule; an imputer fitted on the data (strategy='mean', "
                "'median' or 'most_frequent') releases a statistic of the private rows "
                "without noise.")
    if any(pattern.fullmatch(message) for pattern in _VALUE_FREE):
        return message
    for kind in ("1D", "scalar"):
        if message.startswith(f"Expected 2D array, got {kind} array instead"):
            return f"Expected 2D array, got {kind} array instead. {_RESHAPE}"
    if message.startswith("Complex data not supported"):
        return ("Complex data not supported. Pass real-valued X and y (for example "
                "np.real(X) if the imaginary parts are known to be zero).")
    if _CONVERSION.match(message):
        return ("could not convert string to float" if "string to float" in message
                else "could not convert a value to a number") + (
            f"{_non_numeric_columns(X, y)}. {name} needs numeric X and y: encode "
            "categorical columns with categories known in advance (for example "
            "OneHotEncoder(categories=[...])), or drop them, before fitting.")
    return (f"{name} could not validate its input; scikit-learn's message is withheld "
            "because it may quote values of the data. Pass X as a 2-D array of real "
            "numbers of shape (n_samples, n_features) and y as a 1-D array of shape "
            "(n_samples,).")


def _non_numeric_columns(X, y):
    """Which inputs have a non-numeric dtype: from the schema (dtypes, column
    names), never from the values."""
    found = []
    dtypes = getattr(X, "dtypes", None)
    columns = getattr(X, "columns", None)
    if dtypes is not None and columns is not None and hasattr(dtypes, "__iter__"):
        try:
            names = [str(column) for column, dtype in zip(columns, dtypes)
                     if not _numeric_dtype(dtype)]
        except Exception:  # noqa: BLE001 - an unusual frame: say nothing of columns
            names = []
        if names:
            shown = ", ".join(repr(n) for n in names[:5]) + (", ..." if len(names) > 5 else "")
            found.append(f"X's column(s) {shown}")
    elif _non_numeric(X):
        found.append("X (its dtype is not numeric)")
    if _non_numeric(y):
        found.append("y (its dtype is not numeric)")
    return (" in " + " and ".join(found)) if found else ""


def _non_numeric(array):
    dtype = getattr(array, "dtype", None)
    return dtype is not None and not _numeric_dtype(dtype)


def _numeric_dtype(dtype):
    try:
        return np.dtype(dtype).kind in "biufc"
    except TypeError:
        # A pandas extension dtype (nullable Int64, Float64, boolean, string, ...).
        return getattr(dtype, "kind", "O") in "biufc"
