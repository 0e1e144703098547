"""Modules written from source text into a directory and imported, for tests of code that lives in files
(the engines read a function's source from its file)."""

from __future__ import annotations

import contextlib
import importlib
import sys
import textwrap
from pathlib import Path


@contextlib.contextmanager
def imported(where: Path, sources: dict[str, str]):
    """Write each `name -> source` as `where/name.py`, put `where` first on sys.path and yield the modules (in
    the order given); afterwards the path and the modules are removed again."""
    for name, text in sources.items():
        (where / f"{name}.py").write_text(textwrap.dedent(text))
    sys.path.insert(0, str(where))
    try:
        yield [importlib.import_module(name) for name in sources]
    finally:
        sys.path.remove(str(where))
        for name in sources:
            sys.modules.pop(name, None)


@contextlib.contextmanager
def installed(tmp_path_factory, sources: dict[str, str]):
    """`imported` from a `site-packages` directory of a fresh temporary folder: library code to the engines
    (installed code, outside the engine), as a package from PyPI is."""
    root = tmp_path_factory.mktemp("env") / "site-packages"
    root.mkdir()
    with imported(root, sources) as modules:
        yield modules
