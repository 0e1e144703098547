"""PEP 695 generics (Python 3.12+), imported only there by test_new_syntax.py."""


def square[T](x: T) -> T:
    return x * x


def calls_generic(x):
    return square(x) + 3.0 * x


def reads_type_param[T](x: T) -> T:
    return x * 2.0 if T.__name__ == "T" else x


class Box[T]:
    def __init__(self, v: T):
        self.v = v

    def scaled[S](self, s: S) -> T:
        return self.v * s


def uses_box(x):
    return Box(x).scaled(2.0) + x


type Pair = tuple[float, float]


def cubic_pair(x) -> Pair:
    return x * x * x, x
