"""Functions a library makes on their first call: networkx's `@argmap` wrappers are stubs until called, when
`argmap._lazy_compile` assembles their text, compiles it by `exec` and puts the code into the stub
(`func.__code__ = ...`). Session 69 (CI, in a worker that met a networkx case forward mode first):

- forward mode never asked the registry's source finders (`registry.adopt_generated`), so the compiled wrapper
  was a primitive, refused, unless reverse mode had adopted its text first;
- reverse mode transformed the compilation itself (refused: a closure writing a cell), and once that ran as it
  is, read the stub's defaults by the compiled code's parameters in the reverse pass (an IndexError).

A fresh interpreter for the networkx calls (a wrapper compiles once per process); against central
differences."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests import fd
from tests.modes import MODES, gradient_in

pytestmark = pytest.mark.one_mode

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _real(x, k=2.0, *, scale=3.0):
    return scale * x ** k + k * x


def _compile_into(stub):
    """The stub becomes the function it stands for, as networkx's `_lazy_compile` makes it."""
    stub.__code__ = _real.__code__
    return stub


def _stub(*args, **kwargs):
    return _compile_into(_stub)(*args, **kwargs)


_stub.__defaults__ = _real.__defaults__
_stub.__kwdefaults__ = dict(_real.__kwdefaults__)
_PRISTINE = _stub.__code__


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("call", ["defaults", "keyword", "positional"])
def test_a_function_replacing_its_own_code_while_it_runs(mode, call):
    def f(x):
        _stub.__code__ = _PRISTINE  # (each call its first)
        if call == "defaults":
            return _stub(x)
        if call == "keyword":
            return _stub(x, k=1.5, scale=0.5)
        return _stub(x, 2.5)

    x = 1.3
    want = fd.gradient(f, x)
    got = gradient_in(mode, f, x)
    np.testing.assert_allclose(np.array(got, dtype=float), np.array(want, dtype=float), rtol=1e-6)


_NETWORKX = textwrap.dedent('''
    import numpy as np
    import networkx as nx
    import contexts.ad.api, contexts.forward.api
    from contexts import gradient, jvp
    from tests import fd
    contexts.ad.api.BY_FORWARD[:] = []; contexts.forward.api.AFTER_REFUSAL[:] = []  # (this mode's own answer)
    EDGES = [(0, 1), (1, 2), (2, 3), (3, 4), (0, 2), (1, 3), (2, 4)]

    def f(w):
        G = nx.Graph()
        for (a, b), x in zip(EDGES, w):
            G.add_edge(a, b, weight=x)
        return float(nx.{call} + 0.0)

    w = np.linspace(1.0, 2.0, 7)
    want = fd.gradient(f, w)[0]
    assert np.abs(want).max() > 1e-3
    if "{mode}" == "reverse":
        got = gradient(f, w)[0]
    else:
        got = np.array([jvp(f, (w,), (np.eye(7)[i],))[1] for i in range(7)])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-8)
    print("ok")
''')


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("call", ['pagerank(G, weight="weight")[4]',
                                  'shortest_path_length(G, 0, 4, weight="weight")',
                                  'floyd_warshall_numpy(G, weight="weight")[0, 4]'])
def test_networkx_wrappers_on_their_first_call(mode, call, tmp_path):
    pytest.importorskip("networkx")
    script = tmp_path / "first_call.py"  # (a file: the function differentiated needs its source)
    script.write_text(_NETWORKX.format(mode=mode, call=call))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([_ROOT, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]
