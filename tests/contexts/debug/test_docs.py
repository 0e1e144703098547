import doctest
import sys
import warnings

import pytest

import contexts.debug
from contexts.debug import _blind, _show, breakpoints, count, nan, trace


@pytest.mark.parametrize("module", [contexts.debug, _blind, _show, breakpoints, count, nan, trace],
                         ids=lambda m: m.__name__)
def test_docstring_examples_run(module, monkeypatch):
    monkeypatch.setattr(sys, "breakpointhook", sys.breakpointhook)  # restored even if an example fails
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failed == 0
    if module is not _show:
        assert attempted > 0
