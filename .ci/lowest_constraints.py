"""Print pip constraints pinning every runtime dependency to its declared floor.

``pyproject.toml``'s ``dependencies`` are ``name>=floor`` (an upper bound, if
any, is kept out of the pin); the output pins ``name==floor``, so that
``pip install -c constraints.txt .`` installs exactly the lowest versions the
project declares, as pip would need ``--resolution=lowest-direct`` for. Every
runtime dependency must have a floor: one without is an error, since it could
not be checked.
"""

import re
import sys
from pathlib import Path

pyproject = Path(sys.argv[1] if len(sys.argv) > 1 else "pyproject.toml")
try:
    import tomllib
except ImportError:  # Python 3.10: the [project] table's dependencies array, read plainly
    block = re.search(r"^dependencies\s*=\s*\[(.*?)\]", pyproject.read_text(), re.M | re.S)
    dependencies = re.findall(r'"([^"]+)"', block.group(1))
else:
    dependencies = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
for requirement in dependencies:
    match = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*>=\s*([^,;\s]+)\s*(,[^;]*)?",
                         requirement)
    if match is None:
        sys.exit(f"{pyproject}: the runtime dependency {requirement!r} has no floor "
                 "(name>=version) to pin")
    print(f"{match.group(1)}=={match.group(3)}")
