"""The static view: blocks, sites, operands, destinations; `show` and `python -m overdub`."""

import math

import overdub
from overdub.__main__ import main

SCALE = 2.0


def shaped(x, ys):
    k = 3

    def inner(v):
        return v * k
    total = 0.0
    for y in ys:
        if y > x:
            total += inner(y)
        else:
            total = total - math.sqrt(abs(y))
    return total * SCALE


L = shaped.__code__.co_firstlineno  # the line of `def shaped`


def test_table_is_stable_and_readable():
    table = overdub.view(shaped, {"call", "binop", "compare", "augop", "iter"}).table().splitlines()
    body = [line.split("  #")[0] for line in table[1:]]
    assert body == [
        f"block 0: entry (line {L})",
        f"block 1: entry (line {L + 3}) in shaped.<locals>.inner",
        "  %0 = mul(v, cell k)  -> return",
        f"block 2: after (line {L + 5})",
        "  %1 = iter(ys)  -> loop",
        f"block 3: for body (line {L + 7})",
        "  %2 = gt(y, x)  -> branch",
        f"block 4: if (line {L + 8})",
        "  %3 = call inner(y)  -> @4",
        "  %4 = iadd(total, @3)  -> total",
        f"block 5: else (line {L + 10})",
        "  %5 = call global abs(y)  -> @6",
        "  %6 = call global math.sqrt(@5)  -> @7",
        "  %7 = sub(total, @6)  -> total",
        f"block 6: after (line {L + 11})",
        "  %8 = mul(total, global SCALE)  -> return",
    ]
    assert table[3].endswith(f"# test_view.py:{L + 4}")


def test_sites_know_their_blocks_and_positions():
    view = overdub.view(shaped, {"call"})
    assert [(s.op, s.block, s.lineno, s.function) for s in view.sites] == [
        ("inner", 4, L + 8, "shaped"), ("abs", 5, L + 10, "shaped"), ("math.sqrt", 5, L + 10, "shaped")]
    assert str(view.sites[1]).endswith(f"test_view.py:{L + 10} in shaped: abs(y)")


def test_show_starts_with_the_patched_source():
    text = overdub.show(shaped, {"call"})
    assert text.startswith("def shaped(x, ys):\n")
    assert "total = total - __od_call__(2, math.sqrt)(__od_call__(1, abs)(y))" in text


def test_command_line(capsys):
    assert main(["colorsys:rgb_to_hsv", "call"]) == 0
    out = capsys.readouterr().out
    assert "%0 = call global max(r, g, b)  -> maxc" in out
    assert main(["builtins:len"]) == 1
    assert "cannot be patched" in capsys.readouterr().err
