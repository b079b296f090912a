"""The reproduction scripts of seeds 002 and 004 run at smoke size and write their figures.

Each script's ``main(argv)`` runs in this process (one import of numpy,
scikit-learn and matplotlib for all four) with ``--smoke`` and ``--out``
pointing at a temporary directory; the test checks that the PNG exists and is
a PNG, and that the Markdown table and the elapsed time were printed. No file
of ``../shared/data`` is needed.
"""

import importlib
from pathlib import Path

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
