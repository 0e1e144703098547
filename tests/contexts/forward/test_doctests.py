"""The runnable examples in contexts.forward's docstrings."""

import doctest
import importlib

import pytest

MODULES = ["contexts.forward", "contexts.forward.api", "contexts.forward.dual", "contexts.forward.context",
           "contexts.forward.mixed", "contexts.forward.arrays"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
