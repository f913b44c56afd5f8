"""jitclass beside Numba 0.68.1 (where installed), one run: the cases of issue 46. A
particle update over a jitclass holding arrays and a binary search tree of 10^5
jitclass nodes (children through a deferred type) in compiled code; 10^5 attribute
reads and writes of an instance from Python, and 10^4 instances made from Python.
Prints best times and numba-rs's time over Numba's."""

import time

import numpy as np

import numba_rs
from numba_rs.experimental import jitclass as rs_jitclass

try:
    import numba
    from numba.experimental import jitclass as nb_jitclass
except ImportError:  # the numba-rs column still prints
    numba = None


def simulate(p, steps):
    s = 0.0
    for _ in range(steps):
        s += p.step(0.01)
    return s + p.x.sum()


TREE = (
    "class Node:\n"
    "    def __init__(self, value):\n"
    "        self.value = value\n"
    "        self.left = None\n"
    "        self.right = None\n"
    "def insert(root, v):\n"
    "    node = root\n"
    "    while True:\n"
    "        if v < node.value:\n"
    "            if node.left is None:\n"
    "                node.left = Node(v)\n"
    "                return\n"
    "            node = node.left\n"
    "        else:\n"
    "            if node.right is None:\n"
    "                node.right = Node(v)\n"
    "                return\n"
    "            node = node.right\n"
    "def tree(n):\n"
    "    root = Node(n // 2)\n"
    "    for i in range(n):\n"
    "        insert(root, (i * 7919) % n)\n"
    "    return root.value\n"
)


def build_tree(pkg, jitclass, njit):
    node_type = pkg.deferred_type()
    spec = [("value", pkg.types.int64), ("left", pkg.optional(node_type)),
            ("right", pkg.optional(node_type))]
    ns = {}
    exec(TREE, ns)
    ns["Node"] = jitclass(spec)(ns["Node"])
    node_type.define(ns["Node"].class_type.instance_type)
    ns["insert"] = njit(ns["insert"])
    return njit(ns["tree"])


def build(pkg_types, jitclass, njit):
    spec = [("x", pkg_types.float64[:]), ("v", pkg_types.float64[:]), ("t", pkg_types.float64)]
    ns = {"np": np}
    exec(  # the same class body for both packages
        "class Particles:\n"
        "    def __init__(self, n):\n"
        "        self.x = np.zeros(n)\n"
        "        self.v = np.ones(n)\n"
        "        self.t = 0.0\n"
        "    def step(self, dt):\n"
        "        for i in range(self.x.shape[0]):\n"
        "            self.v[i] -= 0.5 * self.x[i] * dt\n"
        "            self.x[i] += self.v[i] * dt\n"
        "        self.t += dt\n"
        "        return self.t\n",
        ns,
    )
    cls = jitclass(spec)(ns["Particles"])
    return cls, njit(simulate)


def best(f, repeat=5):
    f()
    b = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        b = min(b, time.perf_counter() - t)
    return b


def cases(cls, sim, tree):
    p = cls(10_000)

    def bst():
        tree(100_000)

    def particle():
        sim(p, 100)

    def reads():
        q = p
        s = 0.0
        for _ in range(100_000):
            s += q.t
        return s

    def writes():
        q = p
        for i in range(100_000):
            q.t = 1.0

    def make():
        for _ in range(10_000):
            cls(4)

    return [("particle update, 10^4 x 100 steps", particle),
            ("binary tree of 10^5 nodes", bst),
            ("10^5 attribute reads from Python", reads),
            ("10^5 attribute writes from Python", writes),
            ("10^4 instances made from Python", make)]


def main():
    ours = cases(*build(numba_rs.types, rs_jitclass, numba_rs.njit),
                 build_tree(numba_rs, rs_jitclass, numba_rs.njit))
    theirs = (cases(*build(numba.types, nb_jitclass, numba.njit),
                    build_tree(numba, nb_jitclass, numba.njit)) if numba else None)
    print(f"{'case':40} {'numba_rs':>10} {'numba':>10}  vs numba")
    numba_reads = float("nan")
    for i, (name, f) in enumerate(ours):
        a = best(f)
        b = best(theirs[i][1]) if theirs else float("nan")
        if "reads" in name:
            numba_reads = b
        print(f"{name:40} {a * 1e3:>8.2f}ms {b * 1e3:>8.2f}ms  {a / b:>7.3f}x")

    # The floor under the reads: the same loop over a plain Python object's attribute
    # (the loop and the float it makes cost this much whatever the attribute is).
    class Plain:
        __slots__ = ("t",)

        def __init__(self):
            self.t = 0.0

    q = Plain()

    def plain_reads():
        s = 0.0
        for _ in range(100_000):
            s += q.t
        return s

    c = best(plain_reads)
    print(f"{'(floor) 10^5 reads of a Python attribute':40} {c * 1e3:>8.2f}ms {'':>10}  "
          f"{c / numba_reads:>7.3f}x")


if __name__ == "__main__":
    main()
