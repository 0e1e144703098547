"""Functions whose asserts carry values in their messages, kept out of the test modules: pytest rewrites the
asserts of those, and the message a handler reads would be its explanation text."""


def assert_message_read(x):
    try:
        assert x > 100, x * 5
    except AssertionError as e:
        return e.args[0]
    return 0.0


def assert_message_tuple_read(x):
    try:
        assert x > 100, (x * x, "too small")
    except AssertionError as e:
        return e.args[0][0]
    return 0.0


def passing_asserts(x):
    assert x > 0, f"x = {x} must be positive"
    assert x < 10
    return x * x
