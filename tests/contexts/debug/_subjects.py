"""Functions the debugging contexts are tested on; kept in their own module so their lines are stable."""

import math

import numpy as np


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def fails(x):
    return 1 / x


def calls_fails(x):
    try:
        return fails(x)
    except ZeroDivisionError:
        return -1.0


def norm2(xs):
    total = 0.0
    for x in xs:
        total += square(x)
    return math.sqrt(total)


def square(x):
    return x * x


class Account:
    def __init__(self, balance):
        self.balance = balance

    def __repr__(self):
        return f"Account({self.balance})"

    def deposit(self, amount, *, fee=0):
        self.balance = self.balance + amount - fee
        return self.balance


def with_defaults(a, b=2, *rest, scale=1, **extra):
    return (a + b + sum(rest)) * scale + len(extra)


def countdown(n):
    while n > 0:
        yield n
        n -= 1


def overflow(x):
    big = x * 1e300
    bigger = big * 1e300          # MARK the first Inf
    return bigger - bigger


def log_ratio(a, b):
    ratio = np.float64(a) / b
    return np.log(ratio)          # MARK log(0) = -inf


def sqrt_all(xs):
    arr = np.asarray(xs, dtype=float)
    return np.sqrt(arr)           # MARK sqrt of a negative entry


def already_nan(x):
    return x + 1.0


def deliberate_nan(x):
    missing = float("nan")
    return x if x > 0 else missing


def compares_to_inf(x):
    return x < math.inf


def numpy_work(xs):
    arr = np.asarray(xs)
    total = np.sum(arr)
    mean = arr.mean()
    return np.sin(total) + mean


def scale_in_place(arr):
    arr *= 1e300
    arr *= 1e300                  # MARK
    return arr


def exp_in_place(arr):
    np.exp(arr, out=arr)          # MARK
    return arr


def line_of(fn, marker="# MARK"):
    """The line number of the first source line of fn containing `marker`."""
    import inspect
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, text in enumerate(lines) if marker in text)


def echo(x):
    return x


def make_adder(k):
    def add(x):
        return x + k
    return add


class Shapes:
    count = 0

    @classmethod
    def make(cls, n):
        return [cls.area(i) for i in range(n)]

    @staticmethod
    def area(side):
        return side * side


async def async_double(x):
    return 2 * x


halve = lambda x: x / 2  # noqa: E731


def swallows(x):
    try:
        return overflow(x)
    except Exception:
        return 0.0


def sqrt_times_zero(x):
    root = np.sqrt(x)             # MARK sqrt's adjoint at 0: 0.5 * 0 / 0
    return (root * 0.0).sum()


def calls_sqrt_times_zero(x):
    return sqrt_times_zero(x) + (x * 2.0).sum()



def inf_minus_inf(a, b):
    return a - b                  # MARK inf - inf


def zero_times_inf(a, b):
    return a * b                  # MARK 0 * inf


def scaled_by_zero(x, c):
    scaled = x * c
    return np.sum(np.minimum(scaled, 1.0))


def cbrt_cubed(x):
    root = np.cbrt(x)             # MARK the adjoint: 0 * inf
    return np.sum(root ** 3)


def log_shifted(x):
    y = x - 1.0
    return np.log(y) * 2.0        # MARK log(0) = -inf in the primal of a derivative
