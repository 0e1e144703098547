"""The third-party suite: real functions of packages from PyPI, differentiated unchanged in reverse and
forward mode against central finite differences (the cases and the checks: `cases.py`; the table of
outcomes and times: `python perf/thirdparty.py`). A package that is not installed skips its cases
(`pip install -e '.[test,thirdparty]'` installs them all). A case refused today is a strict xfail that must
raise its error: a fix makes it fail, to be moved to right."""

from __future__ import annotations

import pytest

from tests.thirdparty.cases import CASES, CHECKS, expected


def _params():
    for case in CASES:
        for mode in CHECKS:
            refused = expected(case, mode)
            marks = []
            if refused is not None:
                marks.append(pytest.mark.xfail(raises=refused.error, strict=True, reason=refused.reason))
            yield pytest.param(case, mode, marks=marks, id=f"{case.id}-{mode}")


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
@pytest.mark.parametrize("case, mode", list(_params()))
def test_thirdparty(case, mode):
    pytest.importorskip(case.package)
    f, x = case.build()
    CHECKS[mode](case, f, x)
