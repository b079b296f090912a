"""The reproduction scripts of seeds 001 and 003 run, print their tables and write
their figures; their real-data path works on a stand-in file (never the real data)."""

import gzip
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
PNG = b"\x89PNG\r\n\x1a\n"

SCRIPTS = {
    "reproduce_seed001_scenarios.py": (
        ["seed001_scenario_few_private_users.png", "seed001_scenario_sparse_gradients.png"],
        ["Scenario 1, table 1", "Scenario 1, table 2", "Scenario 2, table 3",
         "Scenario 2, table 4", "Scenario 2, table 5"],
    ),
    "reproduce_seed003_fig3_fig4.py": (
        ["seed003_fig3_regret.png", "seed003_fig4_tradeoff.png"],
        ["Figure 3: regret", "Figure 3: log-log slope", "Figure 4: privacy/regret"],
    ),
}


def markdown_tables(text):
    """Blocks of consecutive '| ... |' lines with a '|---' separator, as lists of rows."""
    tables, block = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            block.append(line)
        elif block:
            tables.append(block)
            block = []
    return [t for t in tables if len(t) >= 3 and t[1].startswith("|---")]


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_smoke_run_prints_tables_and_writes_figures(script, tmp_path):
    figures, titles = SCRIPTS[script]
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / script), "--smoke", "--out", str(tmp_path)],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
        env=dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONPATH=str(ROOT)),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    for name in figures:
        assert (tmp_path / name).read_bytes()[:8] == PNG
        assert f"figure written to {tmp_path / name}" in out
    for title in titles:
        assert title in out
    assert "Check passed" in out
    tables = markdown_tables(out)
    assert len(tables) == len(titles)
    for table in tables:
        width = table[0].count("|")
        assert all(row.count("|") == width for row in table)   # well-formed rows
        assert "nan" not in " ".join(table[2:]).lower()
    assert "elapsed:" in out.splitlines()[-1]


def load(script):
    """Import a script as a module (it imports ``_repro`` from ``examples/``)."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        spec = importlib.util.spec_from_file_location(script[:-3], EXAMPLES / script)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(EXAMPLES))
    return module


@pytest.fixture
def fake_cal_housing(tmp_path):
    """A small file in cal_housing's format, with values inside the public ranges."""
    rng = np.random.default_rng(0)
    n = 400
    cols = [rng.uniform(-124.3, -114.3, n), rng.uniform(32.6, 41.9, n),
            rng.integers(1, 53, n), rng.integers(2, 30_000, n), rng.integers(1, 6_000, n),
            rng.integers(3, 30_000, n), rng.integers(1, 6_000, n), rng.uniform(0.5, 15.0, n)]
    X = np.column_stack(cols).astype(float)
    y = np.clip(60_000 * X[:, 7] + rng.normal(0, 30_000, n), 15_000, 500_001)
    header = ("longitude,latitude,housingMedianAge,totalRooms,totalBedrooms,population,"
              "households,medianIncome,medianHouseValue")
    data = np.round(np.column_stack([X, y]), 6)
    with gzip.open(tmp_path / "cal_housing.data.gz", "wt") as f:
        np.savetxt(f, data, delimiter=",", header=header, comments="", fmt="%.6f")
    return tmp_path, data


def test_seed001_real_data_path(fake_cal_housing, capsys):
    directory, raw = fake_cal_housing
    module = load("reproduce_seed001_scenarios.py")
    X, y = module.load_cal_housing(directory)
    assert X.shape == (400, 8) and np.all(np.abs(X) <= 1.0) and np.all(np.abs(y) <= 1.0)
    # Public constants only: longitude by California's extent, value by its top-code.
    assert np.allclose(np.sort(X[:, 0]), np.sort(2 * (raw[:, 0] + 124.5) / 10.5 - 1))
    assert np.allclose(np.sort(y), np.sort(2 * raw[:, -1] / 500_001 - 1))
    module.real_data(directory, [0])
    out = capsys.readouterr().out
    (table,) = markdown_tables(out)
    assert table[0].startswith("| learner | UC | AP | none private |")
    assert len(table) == 2 + 2 + 6   # header, separator, 2 PF methods, 6 baselines


def test_seed003_real_data_path(fake_cal_housing, capsys):
    module = load("reproduce_seed003_fig3_fig4.py")
    directory, _ = fake_cal_housing
    X, y = module.load_cal_housing(directory)
    assert np.all(np.linalg.norm(X, axis=1) <= 1.0 + 1e-12) and np.all(np.abs(y) <= 1.0)
    module.real_data(directory, [0])
    (table,) = markdown_tables(capsys.readouterr().out)
    assert len(table) == 2 + 8   # full and bandit x four sigmas
    losses = [float(row.split("|")[5].split("±")[0]) for row in table[2:]]
    assert all(np.isfinite(losses))


def test_seed003_best_fixed_loss_is_the_minimum():
    module = load("reproduce_seed003_fig3_fig4.py")
    X, y = module.stream(300, 1)
    grid = np.linspace(-1.0, 1.0, 4001)
    brute = min(np.sum(np.abs(u * X[:, 0] - y)) for u in grid)
    assert module.best_fixed_loss(X, y) <= brute + 1e-9
    assert module.best_fixed_loss(X, y) >= brute - 2 * (grid[1] - grid[0]) * np.sum(np.abs(X))
