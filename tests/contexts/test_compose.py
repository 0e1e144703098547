"""The runnable examples of contexts.compose (the modes composed: hessian, hvp, jacobian by either mode);
its derivatives are tested against finite differences in tests/contexts/forward."""

import doctest

import contexts.compose


def test_docstring_examples():
    result = doctest.testmod(contexts.compose, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
