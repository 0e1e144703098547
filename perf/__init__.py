"""Benchmarks of overdub against hand-written gradients and peers (`python perf/run.py`)."""
