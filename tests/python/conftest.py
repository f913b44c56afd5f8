"""Every test that runs jitted code must leave the NRT allocation counters balanced."""

import pytest

from numba_rs.runtime import rtsys


@pytest.fixture(autouse=True)
def nrt_balanced():
    before = rtsys.get_allocation_stats()
    yield
    after = rtsys.get_allocation_stats()
    allocs = after.alloc - before.alloc
    frees = after.free - before.free
    assert allocs == frees, f"NRT leak: {allocs} allocations, {frees} frees"
    assert after.mi_alloc - before.mi_alloc == after.mi_free - before.mi_free
