"""The README's examples print what their comments say, and the main job keeps working."""

import ast
import contextlib
import io
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_examples():
    """The README's Python examples, in order."""
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```python\n(.*?)```", text, re.S)


def expected_prints(code):
    """The comment of every ``print(...)`` statement: what it must print, one line each."""
    lines = code.splitlines()
    expected = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print":
            line = lines[node.end_lineno - 1]
            assert "  # " in line, f"print without its output in a comment: {line!r}"
            expected.append((node.lineno, line.split("  # ", 1)[1].strip()))
    return [text for _, text in sorted(expected)]


def run_example(code, cwd):
    """Run ``code``: what it prints, and its namespace. It must warn nothing (review 120:
    the examples drew a DefaultBoundWarning, which the suite's filters hid)."""
    out = io.StringIO()
    namespace = {"__name__": "__main__"}
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            exec(compile(code, "README.md", "exec"), namespace)
    finally:
        os.chdir(old)
    assert [str(w.message) for w in caught] == [], "a README example warns"
    return out.getvalue().splitlines(), namespace


def test_readme_examples_print_what_their_comments_say(tmp_path):
    examples = readme_examples()
    assert len(examples) >= 2
    # The smallest working example comes first.
    assert len(examples[0].splitlines()) < len(examples[1].splitlines())
    for index, code in enumerate(examples):
        assert "lambda " not in code and "lambda:" not in code  # a lambda cannot be pickled
        expected = expected_prints(code)
        assert expected, "an example that prints nothing checks nothing"
        printed, namespace = run_example(code, tmp_path)
        assert printed == expected, f"README example {index + 1}"
    # The second example's saved model holds no private state, and its budget
    # was charged once for the search and once for the stream.
    budget = namespace["budget"]
    assert [c.status for c in budget.charges] == ["spent", "spent"]
    text = (tmp_path / "model.joblib").read_bytes()
    assert b"_w_private" not in text and b"_rng" not in text


def test_expected_prints_reads_every_print():
    code = "print(1)  # 1\nx = 2\nprint(x,\n      x)  # 2 2\n"
    assert expected_prints(code) == ["1", "2 2"]
    printed, _ = run_example(code, ROOT)
    assert printed == ["1", "2 2"]


def test_readme_keeps_its_two_setup_commands():
    text = (ROOT / "README.md").read_text()
    assert "    pip install . && python -m sklearn_dpol\n" in text
    assert '    pip install ".[test]" && python -m pytest\n' in text


def test_main_job_prints_the_privacy_utility_table(tmp_path):
    plot = tmp_path / "privacy_utility.png"
    result = subprocess.run(
        [sys.executable, "-m", "sklearn_dpol", "--n-samples", "20000", "--seeds", "1",
         "--plot", str(plot)],
        capture_output=True, text=True, cwd=ROOT, timeout=600, check=True,
    )
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"Saved the privacy/utility plot to {plot}" in result.stdout
    table = [line for line in result.stdout.splitlines() if line.startswith("| ")]
    assert table[0].startswith("| data | estimator | epsilon")
    assert len(table) == 1 + 9 * 6  # header + nine tasks x six epsilons
    assert sum("ParameterFreeLocalDPRegressor" in line for line in table) == 6
    assert sum("MutualInformationPrivateOGDRegressor" in line for line in table) == 6
    assert sum("PrivateMirrorDescentRegressor" in line for line in table) == 6
    assert sum("(objective perturbation)" in line for line in table) == 6
    assert sum("PrivateQFTLRegressor" in line for line in table) == 2 * 6
    assert sum("PrivateFrankWolfeLasso" in line for line in table) == 6


def test_plot_without_matplotlib_fails_before_the_run(tmp_path):
    code = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "from sklearn_dpol.__main__ import main\n"
        f"main(['--plot', {str(tmp_path / 'p.png')!r}])\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=ROOT, timeout=120)
    assert result.returncode != 0
    assert "pip install 'sklearn-dpol[plot]'" in result.stderr
    assert "Compiling" not in result.stdout   # refused before any work


def test_import_does_not_load_numba():
    code = "import sys, sklearn_dpol; assert 'numba' not in sys.modules, 'numba imported'"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=120)
