"""A recording context: what the tests compare plain runs against."""

import overdub


class Recorder(overdub.Context):
    """Records (kind, op) of every intercepted operation; changes nothing."""

    intercepts = overdub.KINDS

    def __init__(self, intercepts=None):
        if intercepts is not None:
            self.intercepts = frozenset(intercepts)
        self.ops = []
        self.sites = []

    def prehook(self, site, fn, /, *args, **kwargs):
        self.ops.append((site.kind, site.op))
        self.sites.append(site)


def record(fn, *args, intercepts=("call",), **kwargs):
    """(plain result, result under a Recorder, ops recorded)."""
    plain = fn(*args, **kwargs)
    rec = Recorder(intercepts)
    patched = rec.run(fn, *args, **kwargs)
    return plain, patched, rec.ops


def calls(ops):
    """The ops of the call sites only."""
    return [op for kind, op in ops if kind == "call"]
