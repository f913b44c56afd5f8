"""The primitive draws ``np.random.Generator``'s methods are written with
(``_npgenerator``). Each calls one of NumPy's own distribution functions on the
Generator's bit generator (``new`` makes a Generator: NumPy's ``default_rng``); they
exist only in compiled code (numba-typeinfer's
``np_generator``, numba-lower's ``impls/npgen``)."""


def _builtin(name):
    def stub(*args):
        raise TypeError(f"numba_rs._npgen.{name} can only be called from compiled code")

    stub.__name__ = name
    stub._numba_rs_builtin = f"numba_rs._npgen:{name}"
    return stub


cont = _builtin("cont")
cont_f = _builtin("cont_f")
disc = _builtin("disc")
bounded = _builtin("bounded")
bounded_fill = _builtin("bounded_fill")
interval = _builtin("interval")
new = _builtin("new")
