"""A seeded program fuzzer: random Python programs checked in every differentiation mode against central
finite differences. `python -m tests.fuzz --help`; see README.md in this folder."""
