"""Every public docstring of sklearn_dpol passes numpydoc's validation.

The public names are discovered, not listed: every module of the package whose
dotted path has no component starting with ``_`` and that defines ``__all__``
contributes the names in its ``__all__``. A class contributes itself and its
public methods and properties defined in sklearn_dpol (members inherited from
scikit-learn are scikit-learn's to document). A name added to an ``__all__``
later is validated without touching this file.

The enforced checks are those of scikit-learn's own docstring test
(``sklearn/tests/test_docstrings.py``); see ``ignored_errors`` for the few
that are dropped and why.
"""

import doctest
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest
from numpydoc.validate import validate

import sklearn_dpol

DOC_DIR = Path(__file__).resolve().parents[1] / "doc"

# Ignored everywhere, as in scikit-learn:
# - GL01/GL02: where the summary starts and blank lines before the closing
#   quotes are layout choices, not content.
# - RT02: the first line of Returns may name the returned object
#   (``self : object``), which makes the docstring easier to read.
IGNORED_EVERYWHERE = {"GL01", "GL02", "RT02"}

# Ignored on methods, properties and functions, required on classes only, as in
# scikit-learn: an extended summary, a See Also section and an Examples section
# on every ``fit``/``predict`` or small accounting function would repeat the
# class's; the class docstring carries them.
CLASS_ONLY = {"ES01", "SA01", "EX01"}

# scikit-learn's metadata-routing machinery generates these; their docstrings
# are scikit-learn's.
GENERATED_METHOD = re.compile(r"^set_\w+_request$")


def public_modules():
    """The package itself and every public submodule that defines ``__all__``."""
    modules, packages = [], [sklearn_dpol]
    while packages:
        package = packages.pop()
        modules.append(package)
        # Recurse into public packages only: private ones (``_core``) are not API.
        for info in pkgutil.iter_modules(package.__path__, prefix=package.__name__ + "."):
            if info.name.rpartition(".")[2].startswith("_"):
                continue
            module = importlib.import_module(info.name)
            (packages if info.ispkg else modules).append(module)
    return [module for module in modules if hasattr(module, "__all__")]


def public_objects():
    """``(import path, object)`` for each public class and function, each once."""
    seen, found = set(), []
    for module in public_modules():
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.ismodule(obj) or name.startswith("__") or id(obj) in seen:
                continue
            seen.add(id(obj))
            found.append((f"{module.__name__}.{name}", obj))
    return found


def defining_class(klass, name):
    """The class of ``klass``'s MRO whose body defines ``name``."""
    return next(base for base in klass.__mro__ if name in vars(base))


def own_members(klass):
    """Public methods and properties of ``klass`` that sklearn_dpol defines."""
    members = []
    for name in sorted(dir(klass)):
        if name.startswith("_") or GENERATED_METHOD.match(name):
            continue
        member = inspect.getattr_static(klass, name)
        if not (callable(member) or isinstance(member, (property, classmethod,
                                                         staticmethod))):
            continue
        if defining_class(klass, name).__module__.startswith("sklearn_dpol"):
            members.append(name)
    return members


def docstring_targets():
    """Import paths to validate and whether each is a class-level docstring."""
    targets = []
    for path, obj in public_objects():
        targets.append((path, inspect.isclass(obj)))
        if inspect.isclass(obj):
            targets.extend((f"{path}.{name}", False) for name in own_members(obj))
    return targets


def ignored_errors(is_class):
    return IGNORED_EVERYWHERE if is_class else IGNORED_EVERYWHERE | CLASS_ONLY


TARGETS = docstring_targets()


def test_discovery_finds_the_public_api():
    paths = {path for path, _ in TARGETS}
    for expected in ("sklearn_dpol.PrivateIGDClassifier.fit",
                     "sklearn_dpol.PrivateQFTLRegressor.export_public",
                     "sklearn_dpol.privacy.gaussian_mu",
                     "sklearn_dpol.audit.audit_estimator",
                     "sklearn_dpol.exceptions.PrivacyLeakWarning"):
        assert expected in paths
    assert not any("set_fit_request" in path or path.endswith(".get_params")
                   for path in paths)


@pytest.mark.parametrize("path, is_class", TARGETS, ids=[path for path, _ in TARGETS])
def test_docstring(path, is_class):
    result = validate(path)
    errors = [(code, message) for code, message in result["errors"]
              if code not in ignored_errors(is_class)]
    report = "\n".join(f"{code}: {message}" for code, message in errors)
    assert not errors, f"{path} ({result['file']}:{result['file_line']})\n{report}"


def api_page_entries():
    """``(module, name)`` pairs listed by autosummary in ``doc/api.rst``."""
    api = (DOC_DIR / "api.rst").read_text(encoding="utf-8")
    sections = re.split(r"^\.\. currentmodule:: ", api, flags=re.M)[1:]
    return {(section.split()[0], entry) for section in sections
            for entry in re.findall(r"^   ([A-Za-z]\w*)$", section, flags=re.M)}


@pytest.mark.parametrize("path, obj", public_objects(), ids=[p for p, _ in public_objects()])
def test_public_name_is_on_the_api_page(path, obj):
    """A public name missing from ``doc/api.rst`` would have no API page."""
    aliases = {(module.__name__, name) for module in public_modules()
               for name in module.__all__ if getattr(module, name) is obj}
    assert aliases & api_page_entries(), f"add one of {sorted(aliases)} to doc/api.rst"


def examples_not_run_elsewhere():
    """Public objects with Examples that ``test_docstring_examples.py`` does not run."""
    import sklearn_dpol.linear_model as linear_model

    estimators = {id(getattr(linear_model, name)) for name in linear_model.__all__}
    return [(path, obj) for path, obj in public_objects() if id(obj) not in estimators]


@pytest.mark.parametrize("path, obj", examples_not_run_elsewhere(),
                         ids=[path for path, _ in examples_not_run_elsewhere()])
def test_examples_run(path, obj):
    """The Examples of the validated docstrings are true, not decoration."""
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(obj, path, globs={}):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
