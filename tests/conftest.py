"""The suite's one fixture for every test directory: `@pytest.mark.one_mode`, a test of one mode's own refusal
(what that mode cannot follow, refused rather than answered wrong), run without the other mode's answer after
a refusal (`contexts.compose.after_refusal`, `by_forward`: tested in tests/contexts/test_other_mode.py)."""

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "one_mode: run without the other mode answering after a refusal")


@pytest.fixture(autouse=True)
def _one_mode(request, monkeypatch):
    if request.node.get_closest_marker("one_mode") is not None:
        import contexts.ad.api as ad_api
        import contexts.forward.api as forward_api
        monkeypatch.setattr(ad_api, "BY_FORWARD", [])
        monkeypatch.setattr(forward_api, "AFTER_REFUSAL", [])
    yield
