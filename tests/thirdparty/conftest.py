"""The third-party packages may change process-wide numpy state when imported (one sets numpy's print
options to the 1.13 style): restored after each test, so later tests (doctests printing arrays) see
numpy's defaults."""

import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _numpy_state_restored():
    options, errors = np.get_printoptions(), np.geterr()
    yield
    np.set_printoptions(**options)
    np.seterr(**errors)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A report's traceback as text: a package's str subclasses in it (pygeodesy's `Str_`, whose repr is
    one too) cannot be sent from a pytest-xdist worker, which then stops the whole run."""
    outcome = yield
    report = outcome.get_result()
    if report.longrepr is not None and not isinstance(report.longrepr, (str, tuple)):
        report.longrepr = str(report.longrepr)
