"""`python -m overdub module:qualname [kinds]`: print the patched source and the block/site table.

    python -m overdub colorsys:rgb_to_hsv
    python -m overdub statistics:median call,binop
"""

from __future__ import annotations

import importlib
import sys

from . import KINDS, show
from .errors import OverdubError


def main(argv: list[str]) -> int:
    if not argv or ":" not in argv[0]:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    module_name, _, qualname = argv[0].partition(":")
    obj = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    kinds = frozenset(argv[1].split(",")) if len(argv) > 1 else KINDS
    try:
        print(show(obj, kinds))
    except OverdubError as e:
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
