"""Every test that runs jitted code must leave the NRT allocation counters balanced;
`nthreads` runs a test with 1, 2 and NUMBA_NUM_THREADS threads."""

import pytest

import numba_rs
from numba_rs.runtime import rtsys


@pytest.fixture(params=sorted({1, 2, numba_rs.config.NUMBA_NUM_THREADS}))
def nthreads(request):
    """Run the test with 1, 2 and NUMBA_NUM_THREADS threads (restored afterwards)."""
    old = numba_rs.get_num_threads()
    numba_rs.set_num_threads(request.param)
    yield request.param
    numba_rs.set_num_threads(old)


@pytest.fixture(autouse=True)
def nrt_balanced():
    before = rtsys.get_allocation_stats()
    yield
    after = rtsys.get_allocation_stats()
    allocs = after.alloc - before.alloc
    frees = after.free - before.free
    assert allocs == frees, f"NRT leak: {allocs} allocations, {frees} frees"
    assert after.mi_alloc - before.mi_alloc == after.mi_free - before.mi_free


def _not_yet():
    import pathlib

    table = {}
    path = pathlib.Path(__file__).with_name("not_yet.txt")
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            nodeid, _, why = line.partition("\t")
            table[nodeid] = why
    return table


_NOT_YET = _not_yet()


def pytest_collection_modifyitems(config, items):
    """Features not implemented yet run as strict xfails, named in not_yet.txt."""
    for item in items:
        why = _NOT_YET.get(item.nodeid.split("/")[-1])
        if why is not None:
            item.add_marker(pytest.mark.xfail(strict=True, reason=f"not implemented yet: {why}"))
