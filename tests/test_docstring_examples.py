"""The Examples sections of the public estimators run and say what is true."""

import doctest

import pytest

import sklearn_dpol
import sklearn_dpol.linear_model as linear_model

PUBLIC = [getattr(linear_model, name) for name in linear_model.__all__]


@pytest.mark.parametrize("estimator", PUBLIC, ids=lambda cls: cls.__name__)
def test_docstring_example(estimator):
    finder = doctest.DocTestFinder(recurse=False)
    tests = finder.find(estimator, estimator.__name__, globs={"sklearn_dpol": sklearn_dpol})
    assert tests and tests[0].examples, f"{estimator.__name__} has no Examples section"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
