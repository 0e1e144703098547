"""The `perf` tests (the benchmark driver and the memory report, run in subprocesses) are left out of the
default run: `python -m pytest -m perf` runs them. Any `-m` expression naming `perf` decides for itself."""


def pytest_collection_modifyitems(config, items):
    if "perf" in (config.option.markexpr or ""):
        return
    dropped = [item for item in items if item.get_closest_marker("perf")]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if not item.get_closest_marker("perf")]
