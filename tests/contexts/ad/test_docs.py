"""Every docstring example of reverse mode and the top-level package runs and prints what it says."""

import doctest

import pytest

import contexts
import contexts.ad
from contexts.ad import api, custom, show


@pytest.mark.parametrize("module", [contexts, contexts.ad, api, custom, show], ids=lambda m: m.__name__)
def test_docstring_examples_run(module):
    failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failed == 0 and attempted > 0
