"""The reproduction scripts of seeds 002 and 004 run at smoke size and write their figures.

Each script's ``main(argv)`` runs in this process (one import of numpy,
scikit-learn and matplotlib for all four) with ``--smoke`` and ``--out``
pointing at a temporary directory; the test checks that the PNG exists and is
a PNG, and that the Markdown table and the elapsed time were printed. No file
of ``../shared/data`` is needed: the ``--data`` path of the Fig. 2(a) and mirror
descent scripts runs on a small stand-in ``cal_housing.data.gz`` written to
``tmp_path`` in the real file's format.
"""

import gzip
import importlib
import math
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

SCRIPTS = {
    "reproduce_seed002_fig2a_qftl": ("seed002_fig2a_qftl_regret.png",
                                     "| epsilon | PrivateQFTLRegressor |"),
    "reproduce_seed002_fig2c_igd": ("seed002_fig2c_igd_accuracy.png",
                                    "| epsilon | fit, one pass |"),
    "reproduce_seed004_frank_wolfe_rate": ("seed004_frank_wolfe_rate.png",
                                           "| n | T (seed's count) |"),
    "reproduce_seed004_mirror_descent_geometry": ("seed004_mirror_descent_geometry.png",
                                                  "| p | set |"),
}


@pytest.fixture
def script_module(monkeypatch):
    """Import a script the way ``python examples/<script>.py`` finds its imports."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    return importlib.import_module


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_smoke_run_writes_figure_and_table(name, script_module, tmp_path, capsys):
    figure, table_header = SCRIPTS[name]
    script_module(name).main(["--smoke", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    path = tmp_path / figure
    assert path.is_file(), f"{figure} not written; output:\n{out[-2000:]}"
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    assert table_header in out
    assert "|---|" in out
    assert "elapsed:" in out
    assert "| nan" not in out


def test_figure_names_match_the_documented_ones():
    """The docs link these exact names under doc/images/."""
    for name, (figure, _) in SCRIPTS.items():
        text = (EXAMPLES / f"{name}.py").read_text()
        assert f'FIGURE = "{figure}"' in text


@pytest.fixture
def fake_cal_housing(tmp_path):
    """A small file in cal_housing's format (header row, 9 columns, value last)."""
    rng = np.random.default_rng(0)
    n = 400
    cols = [rng.uniform(-124.3, -114.3, n), rng.uniform(32.6, 41.9, n),
            rng.integers(1, 53, n), rng.integers(2, 30_000, n), rng.integers(1, 6_000, n),
            rng.integers(3, 30_000, n), rng.integers(1, 6_000, n), rng.uniform(0.5, 15.0, n)]
    X = np.column_stack(cols).astype(float)
    y = np.clip(60_000 * X[:, 7] + rng.normal(0, 30_000, n), 15_000, 500_001)
    header = ("longitude,latitude,housingMedianAge,totalRooms,totalBedrooms,population,"
              "households,medianIncome,medianHouseValue")
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    with gzip.open(data_dir / "cal_housing.data.gz", "wt") as f:
        np.savetxt(f, np.column_stack([X, y]), delimiter=",", header=header, comments="",
                   fmt="%.6f")
    return data_dir, np.column_stack([X, y])


def markdown_tables(text):
    """Blocks of consecutive '| ... |' lines with a '|---' separator."""
    tables, block = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            block.append(line)
        elif block:
            tables.append(block)
            block = []
    return [t for t in tables if len(t) >= 3 and t[1].startswith("|---")]


def test_seed002_real_stream_uses_public_scaling_only(fake_cal_housing, script_module):
    directory, raw = fake_cal_housing
    module = script_module("reproduce_seed002_fig2a_qftl")
    X, y = module.real_stream(directory, 300)
    assert X.shape == (300, 8)
    assert np.all(np.linalg.norm(X, axis=1) <= module.REAL_DATA_NORM + 1e-12)
    assert np.all(np.abs(y) <= module.REAL_Y_BOUND)
    # Public constants only: longitude by California's extent, value by its top-code,
    # in the fixed order of REAL_ORDER_SEED (first 300 of the permutation of 400 rows).
    order = np.random.default_rng(module.REAL_ORDER_SEED).permutation(len(raw))[:300]
    assert np.allclose(X[:, 0], (2 * (raw[order, 0] + 124.5) / 10.5 - 1) / math.sqrt(8))
    assert np.allclose(y, 2 * raw[order, -1] / 500_001 - 1)
    # More rows asked for than the file holds: the whole file.
    assert module.real_stream(directory, 10_000)[0].shape == (400, 8)


def test_seed002_data_run_prints_real_table_and_keeps_default_figure(
        fake_cal_housing, script_module, tmp_path, capsys):
    directory, _ = fake_cal_housing
    out_dir = tmp_path / "out"
    module = script_module("reproduce_seed002_fig2a_qftl")
    module.main(["--smoke", "--data", str(directory), "--out", str(out_dir)])
    out = capsys.readouterr().out
    for name in (module.FIGURE, module.REAL_FIGURE):
        assert (out_dir / name).read_bytes()[:8] == PNG_SIGNATURE
    assert module.FIGURE != module.REAL_FIGURE
    assert "cal_housing: average regret" in out
    tables = markdown_tables(out)
    assert len(tables) == 4   # synthetic regret and noise, then the same two on cal_housing
    real = tables[2]
    assert real[0].startswith("| epsilon | PrivateQFTLRegressor |")
    assert len(real) == 2 + len(module.EPSILONS)
    assert "nan" not in " ".join(real[2:]).lower()
    assert "first 256 rows" in out
    assert "elapsed:" in out


def test_seed002_default_run_writes_no_real_figure(script_module, tmp_path, capsys):
    module = script_module("reproduce_seed002_fig2a_qftl")
    module.main(["--smoke", "--out", str(tmp_path)])
    assert "cal_housing" not in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == [module.FIGURE]


def test_seed004_binned_features_are_public_and_unit_norm(fake_cal_housing, script_module):
    directory, raw = fake_cal_housing
    module = script_module("reproduce_seed004_mirror_descent_geometry")
    X, y = module.binned_cal_housing(directory, 4)
    assert X.shape == (400, 32)
    assert np.allclose(np.linalg.norm(X, axis=1), 1.0)
    assert np.all(np.count_nonzero(X, axis=1) == 8)
    # Bin edges fixed by the public range: longitude's bin from California's extent.
    lon = 2 * (raw[:, 0] + 124.5) / 10.5 - 1
    assert np.array_equal(np.argmax(X[:, :4], axis=1), np.minimum((lon + 1) * 2, 3).astype(int))
    assert np.allclose(y, 2 * raw[:, -1] / 500_001 - 1)


def test_seed004_data_run_compares_balls_on_real_task(fake_cal_housing, script_module,
                                                      tmp_path, capsys):
    directory, _ = fake_cal_housing
    out_dir = tmp_path / "out"
    module = script_module("reproduce_seed004_mirror_descent_geometry")
    module.main(["--smoke", "--data", str(directory), "--out", str(out_dir)])
    out = capsys.readouterr().out
    for name in (module.FIGURE, module.REAL_FIGURE):
        assert (out_dir / name).read_bytes()[:8] == PNG_SIGNATURE
    assert "n=400 rows" in out
    tables = markdown_tables(out)
    assert len(tables) == 5   # synthetic excess and growth; cal_housing excess, optima, growth
    excess, optima = tables[2], tables[3]
    assert excess[0].startswith("| p | set |")
    assert [row.split("|")[1:3] for row in excess[2:]] == [
        [" 16 ", " l2 "], [" 16 ", " l1 "], [" 32 ", " l2 "], [" 32 ", " l1 "]]
    assert len(optima) == 2 + 4
    for table in tables[2:]:
        assert "nan" not in " ".join(table[2:]).lower()
    assert "elapsed:" in out
