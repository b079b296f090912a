"""doc/integrations.md runs as written, and its printed verbose output is true.

Every ```python block is executed in order in one namespace (as a script, so
the dask cluster starts under ``__name__ == "__main__"``).
"""

import contextlib
import io
import re
import warnings
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "doc" / "integrations.md"

pytest.importorskip("dask_ml", reason="the page's dask example needs dask-ml")


def blocks(language):
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), re.S)


def mask_times(text):
    return re.sub(r"\d+\.\d+ seconds", "<t> seconds", text)


def test_every_example_runs_and_says_what_is_true():
    namespace = {"__name__": "__main__"}
    printed = []
    from sklearn_dpol.exceptions import DefaultBoundWarning

    for index, code in enumerate(blocks("python")):
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DefaultBoundWarning)
            exec(compile(code, f"{DOC.name}, python block {index + 1}", "exec"), namespace)
        # The page passes its public bounds: none of its examples draws the library's own
        # warning about a bound left unset (review 128 found 19).
        assert not [w for w in caught if issubclass(w.category, DefaultBoundWarning)], index
        printed.append(buffer.getvalue())
    assert len(printed) == 16
    # a public clip before PolynomialFeatures covers a record that would overflow
    assert "True\n" in printed and namespace["clipped_poly"][-1].coef_.shape == (6,)
    # The sparse one-hot pipeline, the weighted fit, class weights and sparse weighted
    # mirror descent (sparse data and sample weights).
    assert printed[-5] == "True\n" and printed[-4] == "(3,)\n"
    assert printed[-3] == "(1, 6) (6,)\n"
    # The private selection on sparse, weighted data (session 33, review 120 M1).
    assert printed[-2] == "['alpha']\n"
    assert namespace["search"].best_estimator_.n_features_in_ == 40
    assert namespace["sparse_model"][-1].privacy_.epsilon == 1.0
    # The verbose example's output is the one the page shows.
    (shown,) = blocks("text")
    assert mask_times(printed[-1]) == mask_times(shown)
    # A few claims of the page, on the objects its examples built.
    assert namespace["best"].privacy_.epsilon in (0.5, 1.0, 4.0)
    assert namespace["remote"].privacy_.n_releases == 8
    assert namespace["routed"][-1].sample_epsilon_summary_["n_users"] == 2000
    seeded, noiseless = namespace["seeded"], namespace["noiseless"]
    # equal up to the noise grid (sigma 2^-28, doc/privacy.md section 14)
    assert abs((seeded[0] - seeded[1]) - (noiseless[0] - noiseless[1])).max() < 1e-7
