"""The prose of doc/user_guide/streams.md quotes the scores its doctest prints.

The seed's stream (``stream="iterate_perturbation"``) prints its score with a
horizon and without; the sentence after the DP-FTRL doctest compared them with
0.85 and 0.62, numbers of an older run, while the doctest printed 0.86 and
0.72.
"""

import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "doc" / "user_guide" / "streams.md"


def test_seed_stream_scores_in_the_prose_match_the_doctest_output():
    text = PAGE.read_text(encoding="utf-8")
    with_horizon = re.search(r"^30000 [\d.]+ [\d.]+ ([\d.]+)$", text, re.M).group(1)
    without = re.search(r"^None [\d.]+ [\d.]+ ([\d.]+)$", text, re.M).group(1)
    prose = re.search(r"the seed's stream reached ([\d.]+) with a\s+horizon and ([\d.]+) "
                      r"without", text)
    assert prose is not None
    assert prose.groups() == (with_horizon, without)
