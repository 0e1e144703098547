"""Registers the `fuzz` marker of the fuzzer's slice tests: `python -m pytest -m "not fuzz"` leaves them out."""


def pytest_configure(config):
    config.addinivalue_line("markers", "fuzz: the fuzzer's seeded slices through every mode (minutes)")
