import colorsys


from contexts.debug import CountContext

from . import _subjects as s


def test_fib_counts_match_the_recursion():
    ctx = CountContext()
    assert ctx.run(s.fib, 5) == 5
    # fib(5) makes 15 calls of fib: 1 root + 14 made by fib itself; 7 of them (n >= 2) recurse.
    assert ctx.calls["fib"] == 15
    fib = ctx.counts["fib"]
    assert fib["python calls"] == 14
    assert ctx.ops["fib"]["<"] == 15
    assert ctx.ops["fib"]["-"] == 14
    assert ctx.ops["fib"]["+"] == 7
    assert fib["arithmetic"] == 21 and fib["compare"] == 15
    assert ctx.total() == sum(fib.values())
    assert list(ctx.counts) == ["fib"]


def test_loop_counts_iteration_augops_and_callees():
    ctx = CountContext()
    assert ctx.run(s.norm2, [1.0, 2.0, 2.0]) == 3.0
    norm2, square = ctx.counts["norm2"], ctx.counts["square"]
    assert ctx.ops["norm2"]["+="] == 3
    assert ctx.ops["norm2"]["square"] == 3 and norm2["python calls"] == 3
    assert ctx.ops["norm2"]["sqrt"] == 1 and norm2["other calls"] == 1
    assert ctx.ops["square"]["*"] == 3 and square["arithmetic"] == 3
    assert ctx.calls == {"norm2": 1, "square": 3}


def test_numpy_calls_are_told_apart():
    ctx = CountContext()
    ctx.run(s.numpy_work, [1.0, 2.0])
    work = ctx.counts["numpy_work"]
    # np.asarray, np.sum, arr.mean, np.sin -- each a numpy call made by numpy_work
    assert work["numpy calls"] == 4
    assert work["other calls"] == 0
    assert ctx.ops["numpy_work"]["+"] == 1


def test_kinds_restrict_what_is_counted():
    ctx = CountContext(kinds={"call"})
    assert ctx.run(s.fib, 5) == 5
    assert ctx.counts["fib"] == {"python calls": 14}


def test_table_lists_every_function_and_totals():
    ctx = CountContext()
    ctx.run(s.norm2, [1.0, 2.0, 2.0])
    table = ctx.table()
    lines = table.splitlines()
    assert lines[0].split()[0] == "function" and lines[0].split()[-1] == "total"
    rows = {line.split()[0]: line.split() for line in lines[2:] if line and not line.startswith("calls")}
    assert set(rows) == {"norm2", "square", "(all)"}
    assert int(rows["(all)"][-1]) == ctx.total()
    assert int(rows["square"][-1]) == sum(ctx.counts["square"].values())
    assert "square x3" in table


def test_third_party_code():
    ctx = CountContext()
    expected = colorsys.rgb_to_hsv(0.2, 0.5, 0.9)
    assert ctx.run(colorsys.rgb_to_hsv, 0.2, 0.5, 0.9) == expected
    assert ctx.calls["rgb_to_hsv"] == 1
    assert ctx.counts["rgb_to_hsv"]["arithmetic"] > 5
    assert ctx.ops["rgb_to_hsv"]["max"] == 1 and ctx.ops["rgb_to_hsv"]["min"] == 1
