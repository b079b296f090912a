"""The documentation builds without a warning, and the user guide's examples are true.

The site is built from a copy of ``doc/`` (and of the README it includes) in a
temporary directory, so a test run never writes into the repository. The build
runs in a subprocess with the same flags as the documented command
(``python -m sphinx -W --keep-going -b html doc doc/_build/html``): any Sphinx,
autodoc, numpydoc or MyST warning fails the test and is printed.
"""

import doctest
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "doc"
GUIDE_PAGES = sorted((DOC / "user_guide").glob("*.md"))


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    """Build a copy of the site once; return (html directory, completed process)."""
    work = tmp_path_factory.mktemp("docs")
    shutil.copytree(DOC, work / "doc", ignore=shutil.ignore_patterns("_build", "generated"))
    shutil.copy2(ROOT / "README.md", work / "README.md")  # doc/index.md includes parts of it
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    html = work / "html"
    process = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         str(work / "doc"), str(html)],
        cwd=work, env=env, capture_output=True, text=True, timeout=600,
    )
    return html, process


def test_site_builds_without_warnings(built_site):
    html, process = built_site
    assert process.returncode == 0, f"Sphinx failed or warned:\n{process.stderr}"
    assert (html / "index.html").exists()


def test_every_page_of_the_site_is_built(built_site):
    html, _ = built_site
    sources = [path.relative_to(DOC).with_suffix(".html")
               for pattern in ("*.md", "*.rst", "user_guide/*.md") for path in DOC.glob(pattern)]
    missing = [str(page) for page in sources if not (html / page).exists()]
    assert not missing, f"pages not built: {missing}"


def test_api_pages_are_generated(built_site):
    """Each name of doc/api.rst gets its own page, with its methods documented."""
    html, _ = built_site
    page = (html / "generated" / "sklearn_dpol.PrivateIGDClassifier.html").read_text(
        encoding="utf-8")
    for member in ("fit", "partial_fit", "predict_proba", "export_public"):
        assert f'id="sklearn_dpol.PrivateIGDClassifier.{member}"' in page
    # scikit-learn's inherited members are scikit-learn's to document.
    assert 'id="sklearn_dpol.PrivateIGDClassifier.get_params"' not in page
    assert "set_fit_request" not in page


@pytest.mark.parametrize("page", GUIDE_PAGES, ids=[page.name for page in GUIDE_PAGES])
def test_user_guide_examples_run(page):
    """The ``>>>`` examples of the guide run and print what the page says."""
    result = doctest.testfile(str(page), module_relative=False, report=True, verbose=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} example(s) of {page.name} failed (see above)"
