"""The README's example and the main job keep working."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_example_runs():
    text = (ROOT / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    namespace = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert namespace["stream"].privacy_.n_releases == 50
    assert namespace["model"].score(namespace["X"], namespace["y"]) > 0.8
    # 3 epsilons x 3 folds + the refit, in worker processes, and the stream once.
    charges = namespace["budget"].charges
    assert len(charges) == 11 and all(c.status == "spent" for c in charges)


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
