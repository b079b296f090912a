"""Sphinx configuration of the sklearn_dpol documentation.

Build (from the repository root, no network needed):

    pip install ".[doc]" && python -m sphinx -W --keep-going -b html doc doc/_build/html
"""

import re
import sys
from pathlib import Path

# Document the source tree next to this file, installed or not.
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sklearn_dpol  # noqa: E402

project = "sklearn_dpol"
author = "the sklearn_dpol developers"
copyright = "the sklearn_dpol developers, BSD-3-Clause"
release = sklearn_dpol.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

# Built-in theme: nothing is fetched at build time.
html_theme = "alabaster"
html_theme_options = {"description": "Differentially private online learners",
                      "fixed_sidebar": True}
html_static_path = []

# API pages. The stubs go to doc/generated/ (ignored by git) at every build.
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "inherited-members": True}
autodoc_typehints = "none"
# The class template lists the members (see autodoc_skip_member below), so
# numpydoc does not add its own member tables.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# Markdown pages: heading anchors make in-page links like (#5-trust-model) work.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

_GENERATED_METHOD = re.compile(r"^set_\w+_request$")


def _defining_module(member):
    """The module whose source defines ``member`` (a function, property or descriptor)."""
    member = getattr(member, "fget", member)
    return getattr(member, "__module__", None) or ""


def autodoc_skip_member(app, what, name, obj, skip, options):
    """Document a class's own public members, not scikit-learn's inherited ones.

    ``get_params``, ``score`` and the generated ``set_*_request`` methods are
    scikit-learn's, documented there (their docstrings cross-reference
    scikit-learn's glossary, which this site does not have); ``export_public``
    and ``predict`` inherited from this package's mixins are ours and stay.
    """
    if what != "class" or skip or name.startswith("_"):
        return None
    if _GENERATED_METHOD.match(name) or not _defining_module(obj).startswith("sklearn_dpol"):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", autodoc_skip_member)
