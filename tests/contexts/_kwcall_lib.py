"""A call of an imported module's function with sixteen keywords: CPython compiles it in this module with the
keywords' names one by one (a dict built: the module is an import), and alone, as a twin is, with them as one
tuple of names. The source check must take the two for the same program (it refused: "the file changed")."""

from tests.contexts import _kw_target


def f16(q):
    return _kw_target.g(a=1.0, b=1.0, c=1.0, d=1.0, e=1.0, f=1.0, g=1.0, h=1.0, i=1.0, j=1.0, k=1.0, l=1.0,
                        m=1.0, n=1.0, o=1.0, q=q)


def f16_named(q):
    # (one keyword's name, `b`, also a text constant of the call: the module's code holds it once, shared with
    # the dict's key; the twin's twice, in the tuple of names and alone. canyonbpy's `grads_wrt=["par2"]`)
    return _kw_target.g(a=1.0, b=1.0, c=1.0, d=1.0, e=1.0, f=1.0, g=1.0, h=1.0, i=1.0, j=1.0, k=1.0, l=1.0,
                        m=1.0, n=1.0, o=1.0, q=q, names=["b"])
