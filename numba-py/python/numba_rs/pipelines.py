"""``pipeline_class=``: Numba's compiler pipeline classes, read rather than run.

numba-rs compiles with its own passes, which do what Numba's default nopython pipeline
does. A pipeline class is accepted when the passes it defines are that default pipeline
with, at most:

- ``PreserveIR`` added (the final IR is kept as ``metadata['preserved_ir']``, as
  ``numba.tests.support.IRPreservingTestPipeline`` asks);
- default passes repeated (numba-rs runs each of them to a fixed point already).

Anything else (a pass of the user's own, a default pass removed, object-mode
pipelines) is a NotImplementedError naming it: numba-rs cannot run Numba's passes.
"""

import types as _pytypes


def preserves_ir(cls):
    """Whether the pipeline class asks for the final IR to be kept; NotImplementedError
    for a class numba-rs cannot honour."""

    def refuse(why):
        return NotImplementedError(
            f"numba-rs does not run Numba's compiler pipeline classes (the option "
            f"pipeline_class={cls!r}): {why}"
        )

    try:
        from numba.core.compiler import CompilerBase, DefaultPassBuilder, Flags
    except ImportError as e:  # a Numba class without an importable Numba
        raise refuse("Numba cannot be imported") from e
    if not (isinstance(cls, type) and issubclass(cls, CompilerBase)):
        raise refuse("it is not a subclass of numba.core.compiler.CompilerBase")
    state = _pytypes.SimpleNamespace(flags=Flags(), func_ir=None)
    default = [p for p, _ in DefaultPassBuilder.define_nopython_pipeline(state).passes]
    probe = cls.__new__(cls)
    probe.state = state
    try:
        managers = probe.define_pipelines()
    except Exception as e:
        raise refuse(f"its define_pipelines() failed on numba-rs's probe ({e})") from e
    if len(managers) != 1:
        raise refuse(f"it defines {len(managers)} pipelines, not one nopython pipeline")
    passes = [p for p, _ in managers[0].passes]
    missing = [p.__name__ for p in default if p not in passes]
    if missing:
        raise refuse(f"it leaves out the pass(es) {', '.join(missing)}")
    extra = [p for p in passes if p not in default]
    unknown = [p.__name__ for p in extra if p.__name__ != "PreserveIR"]
    if unknown:
        raise refuse(f"it adds the pass(es) {', '.join(unknown)}")
    return bool(extra)
