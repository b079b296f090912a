"""Shared plumbing of the reproduction scripts in ``examples/``.

Every script takes the same options: ``--full`` for the paper's full size,
``--smoke`` for a seconds-long run (the test suite uses it), ``--data DIR`` for
a copy of ``../shared/data`` (real data instead of the generated or shipped
default) and ``--out DIR`` for the figure (``doc/images`` by default).
"""

import argparse
import time
from pathlib import Path

IMAGES = Path(__file__).resolve().parent.parent / "doc" / "images"


def make_parser(doc):
    """An argument parser with the options every reproduction shares."""
    parser = argparse.ArgumentParser(
        description=doc.strip().splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--full", action="store_true",
                      help="the paper's full size (slow; the default finishes in < 5 min)")
    size.add_argument("--smoke", action="store_true",
                      help="a tiny run that only checks the script works")
    parser.add_argument("--data", type=Path, default=None,
                        help="directory holding the files of ../shared/data")
    parser.add_argument("--out", type=Path, default=IMAGES,
                        help="directory for the figure (default: doc/images)")
    parser.add_argument("--seeds", type=int, default=None,
                        help="repetitions per point (default depends on the size)")
    return parser


def pick(args, default, full, smoke):
    """The value of a size-dependent setting for the chosen size."""
    if args.smoke:
        return smoke
    return full if args.full else default


def print_table(title, headers, rows, fmt="{:.4g}"):
    """Print a Markdown table; floats are formatted with ``fmt``."""
    print(f"\n{title}\n")
    print("| " + " | ".join(headers) + " |")
    print("|" + "---|" * len(headers))
    for row in rows:
        cells = [fmt.format(c) if isinstance(c, float) else str(c) for c in row]
        print("| " + " | ".join(cells) + " |")


def save_figure(fig, out_dir, name):
    """Save ``fig`` as ``out_dir/name`` (PNG, 120 dpi) and say where."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / name
    fig.savefig(path, dpi=120, bbox_inches="tight")
    print(f"\nfigure written to {path}")
    return path


class Stopwatch:
    """Elapsed wall-clock time, printed at the end of a script."""

    def __init__(self):
        self.start = time.perf_counter()

    def report(self):
        print(f"elapsed: {time.perf_counter() - self.start:.1f} s")
