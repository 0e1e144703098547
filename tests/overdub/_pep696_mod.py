"""PEP 696 type parameter defaults (Python 3.13+), imported only there by test_new_syntax.py."""


def tripled[T = float](x: T) -> T:
    return x * 3.0 + x * x
