"""show_adjoint's readable form: the fast paths, accumulation blocks and in-place bookkeeping of the
generated adjoint folded away, on the README's example and on generated programs."""

from __future__ import annotations

import importlib.util
import math
import sys

import pytest

from contexts import show_adjoint


def loop(x):
    y = 1.0
    for i in range(3):
        y = y * math.sin(x) + x
    return y


def _adjoint_part(text: str) -> list[str]:
    lines = text.split("\n\n", 2)[2].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("block "))
    return lines[start:]


def test_the_loop_reads_as_a_person_would_write_it():
    adjoint = _adjoint_part(show_adjoint(loop))
    body = [line.strip() for line in adjoint if not line.startswith("block ")]
    assert len(body) <= 15, "\n".join(adjoint)
    assert "d_t2 = y_old * d_t3" in body and "d_y += d_t3 * t2" in body    # the product's two terms
    assert "_, d_args, _ = pb1(d_t2)" in body and "d_x += d_args[0]" in body  # math.sin's pullback
    text = "\n".join(adjoint)
    assert "_od_" not in text and "type(" not in text and "is None" not in text


def test_raw_shows_the_generated_code():
    raw = show_adjoint(loop, raw=True)
    assert "__od_binop_adj__" in raw and "_od_d_x" in raw


def _programs(n):
    from tests.fuzz import gen
    for i in range(n):
        yield gen.generate("scalar", 11, i)


@pytest.mark.parametrize("index", range(0, 120, 3))
def test_generated_programs_fold_without_losing_a_block(index, tmp_path):
    prog = gen_program = next(iter(p for j, p in enumerate(_programs(index + 1)) if j == index))
    path = tmp_path / f"prog_{index}.py"
    path.write_text(gen_program.source)
    spec = importlib.util.spec_from_file_location(f"_show_prog_{index}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        try:
            raw = show_adjoint(module.f, raw=True)
        except Exception:  # noqa: BLE001 - a program reverse mode refuses has nothing to show
            pytest.skip("refused by reverse mode")
        folded = show_adjoint(module.f)
    finally:
        del sys.modules[spec.name]
    blocks = lambda text: [line for line in text.splitlines() if line.startswith("block ")]  # noqa: E731
    assert blocks(folded) == blocks(raw)
    assert "_od_c = " not in folded and "__od_acc__" not in folded, prog.source
