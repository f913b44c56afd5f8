"""The ``parallel_diagnostics`` report, in the layout of Numba's ``ParforDiagnostics.dump``:
the function's source with each parallel loop marked, the fusion search (level 4) and
summary (level 3), the loops before (level >= 2) and after optimisation as parallel
regions (only loops that fused or contain serialised loops form a region, as in
Numba), and loop-invariant code motion (levels 3 and 4)."""

import inspect
import linecache
import textwrap

_WIDTH = 80
_wrapper = textwrap.TextWrapper(width=_WIDTH, drop_whitespace=False)
_SWORD = "+--"


def _wrapped(text):
    """Print as Numba's ``print_wrapped``: each line wrapped at 80 columns (blank lines
    vanish, as textwrap makes nothing of them)."""
    for line in text.splitlines():
        for piece in _wrapper.wrap(line):
            print(piece)


class Report:
    """What one specialisation's parallel loops became.

    ``loops``: ``(id, line, pattern, fused_into)`` of every loop produced (before
    fusion); ``fusion_reports``: ``(first, second, message)`` of each fusion tried;
    ``nested``: outer loop id -> the loops nested in it (serialised);
    ``hoisted``: ``(loop id, line, function)`` of allocations hoisted out of loops."""

    def __init__(self, func, loops, fusion_reports, nested, hoisted, fusion_enabled=True):
        self.func = func
        self.loops = sorted(loops)
        self.fusion_reports = list(fusion_reports)
        self.hoisted = sorted(set(hoisted))
        self.fusion_enabled = fusion_enabled
        self.fusion_info = {}
        for lid, _line, _pattern, into in self.loops:
            if into is not None:
                self.fusion_info.setdefault(into, []).append(lid)
        self.nested_fusion_info = {k: sorted(v) for k, v in nested.items() if v}
        fused = {lid for lid, _l, _p, into in self.loops if into is not None}
        self.final = [lid for lid, _l, _p, _t in self.loops if lid not in fused]
        self.line_of = {lid: line for lid, line, _p, _t in self.loops}

    # -- graphs (Numba's compute_graph_info / reachable_nodes) ------------------------

    @staticmethod
    def _roots(adj):
        children = {x for v in adj.values() for x in v}
        return set(adj) - children

    @staticmethod
    def _reachable(adj, root):
        out = list(adj.get(root, []))
        for k in adj.get(root, []):
            if adj.get(k):
                out.extend(Report._reachable(adj, k))
        return out

    def _regions(self):
        """Fusion roots and roots of true loop nests by source line (a later root on
        the same line replaces an earlier one, as in Numba)."""
        lines = {}
        # A loop nested in another shows in its outer loop's region, fused or not
        # (numba-rs fuses a loop body's NumPy loops; Numba's nested loops never fuse).
        nested = {x for v in self.nested_fusion_info.values() for x in v}
        for r in self._roots(self.fusion_info) - nested:
            lines[self.line_of.get(r, 0)] = ("fuse", r)
        for r in self._roots(self.nested_fusion_info):
            if self.nested_fusion_info.get(r):
                lines[self.line_of.get(r, 0)] = ("nest", r)
        return sorted(lines.items())

    # -- sections ---------------------------------------------------------------------

    def _source_listing(self, purpose):
        try:
            lines, first = inspect.getsourcelines(self.func)
        except (OSError, TypeError):
            lines = None
        if not lines or not self.loops:
            print("No source available")
            return
        lines = [x.rstrip("\n") for x in lines]
        by_line = {}
        for lid, line, _p, _t in sorted(self.loops, key=lambda x: (x[1], x[0])):
            by_line.setdefault(line, []).append(str(lid))
        per_line = max([1] + [len(v) for v in by_line.values()])
        count = len(self.all_final())
        width = max(len(x) for x in lines) + (1 + per_line * (len(str(count)) + 2))
        out = ["\n", f"Parallel loop listing for {purpose}", "-" * width + "|loop #ID"]
        for k, text in enumerate(lines):
            ids = by_line.get(first + k)
            fill = "-" if ids else " "
            tag = "#" + ", ".join(ids) if ids else ""
            out.append(text + (fill * width)[len(text):] + "| " + tag)
        print("\n".join(out))

    def _fusion(self, level):
        _wrapped(" Fusing loops ".center(_WIDTH, "-"))
        _wrapped(
            "Attempting fusion of parallel loops (combines loops with similar properties)...\n"
        )
        if level == 4:
            for a, b, msg in self.fusion_reports:
                _wrapped(f"  Trying to fuse loops #{a} and #{b}:")
                _wrapped(f"    {msg}")
        if self.fusion_info and level == 3:
            _wrapped("\n \nFused loop summary:\n")
            self._graph(self.fusion_info, "has the following loops fused into it:", "(fused)")
        if level == 3:
            after = (
                "Following the attempted fusion of parallel for-loops"
                if self.fusion_enabled
                else "With fusion disabled"
            )
            final = self.all_final()
            ids = ", ".join(f"#{x}" for x in final)
            _wrapped(
                f"\n{after} there are {len(final)} parallel for-loop(s) "
                f"(originating from loops labelled: {ids})."
            )
            _wrapped("-" * _WIDTH)

    def all_final(self):
        """The loops left after fusion, each followed by those nested in it."""
        out = []

        def walk(lid):
            out.append(lid)
            for k in self.nested_fusion_info.get(lid, []):
                walk(k)

        nested = {x for v in self.nested_fusion_info.values() for x in v}
        for lid in self.final:
            if lid not in nested:
                walk(lid)
        return out

    def _graph(self, adj, root_msg, node_msg):
        def children(root, depth):
            for k in adj.get(root, []):
                _wrapped(len(_SWORD) * depth * " " + f"{_SWORD}{k} {node_msg}")
                if adj.get(k):
                    children(k, depth + 1)

        for r in sorted(self._roots(adj)):
            _wrapped(f"{_SWORD}{r} {root_msg}")
            children(r, 1)

    def _before(self):
        fac = len(_SWORD)
        region = 0
        for _line, (kind, root) in self._regions():
            _wrapped(f"Parallel region {region}:")
            if kind == "fuse":
                msg = [f"{_SWORD}{root} (parallel)"]
                msg += [f"{_SWORD}{k} (parallel)" for k in sorted(self._reachable(self.fusion_info, root))]
                _wrapped("\n".join(msg))
            else:

                def nest(r, depth):
                    _wrapped(fac * depth * " " + f"{_SWORD}{r} (parallel)")
                    for k in self.nested_fusion_info.get(r, []):
                        if not self.nested_fusion_info.get(k):
                            msg = [fac * (depth + 1) * " " + f"{_SWORD}{k} (parallel)"]
                            msg += [
                                fac * (depth + 1) * " " + f"{_SWORD}{i} (parallel)"
                                for i in self._reachable(self.fusion_info, k)
                            ]
                            _wrapped("\n".join(msg))
                        else:
                            nest(k, depth + 1)

                nest(root, 0)
            print("\n")
            region += 1

    def _after(self):
        fac = len(_SWORD)
        summary = []
        for _line, (kind, root) in self._regions():
            _wrapped(f"Parallel region {len(summary)}:")
            if kind == "fuse":
                fused = sorted(self._reachable(self.fusion_info, root))
                extra = ", fused with loop(s): " + ", ".join(map(str, fused)) if fused else ""
                _wrapped(f"{_SWORD}{root} (parallel{extra})")
                summary.append((root, len(fused), 0))
            else:
                _wrapped(f"{_SWORD}{root} (parallel)")
                counts = [0, 0]

                def nest(r, depth):
                    for k in self.nested_fusion_info.get(r, []):
                        msg = fac * depth * " " + f"{_SWORD}{k} (serial"
                        if not self.nested_fusion_info.get(k):
                            fused = sorted(self._reachable(self.fusion_info, k))
                            if fused:
                                msg += ", fused with loop(s): " + ", ".join(map(str, fused))
                            _wrapped(msg + ")")
                            counts[0] += len(fused)
                        else:
                            _wrapped(msg + ")")
                            nest(k, depth + 1)
                        counts[1] += 1

                nest(root, 1)
                summary.append((root, counts[0], counts[1]))
            print("\n")
        if not summary:
            _wrapped("Parallel structure is already optimal.")
        for k, (root, fused, serial) in enumerate(summary):
            msg = f"\n \nParallel region {k} (loop #{root}) had {fused} loop(s) fused"
            if serial:
                msg += (
                    f" and {serial} loop(s) serialized as part of the larger parallel "
                    f"loop (#{root})."
                )
            else:
                msg += "."
            _wrapped(msg)

    def _allocation_hoisting(self):
        print("Allocation hoisting:")
        filename = self.func.__code__.co_filename
        for lid, line, _func in self.hoisted:
            _wrapped(
                f"The memory allocation derived from the instruction at {filename} ({line}) "
                f"is hoisted out of the parallel loop labelled #{lid} (it will be performed "
                "before the loop is executed and reused inside the loop):"
            )
            lines = linecache.getlines(filename)
            if lines and line:
                _wrapped("   Allocation:: " + lines[0 if line < 2 else line - 1].strip())
            _wrapped("    - numpy.empty() is used for the allocation.\n")
        if not self.hoisted:
            _wrapped("No allocation hoisting found")

    def _instruction_hoisting(self):
        # numba-rs reports the statements it hoists out of a loop's kernel: allocations
        # (the rest of loop-invariant code motion is LLVM's, after this report).
        print("")
        print("Instruction hoisting:")
        filename = self.func.__code__.co_filename
        printed = False
        for lid in self.all_final():
            mine = [line for l, line, _f in self.hoisted if l == lid]
            if not mine:
                print(f"loop #{lid} has nothing to hoist.")
                continue
            print(f"loop #{lid}:")
            print("  Has the following hoisted:")
            for line in mine:
                text = linecache.getline(filename, line).strip()
                print(f"    {text}")
            printed = True
        if not printed:
            _wrapped("No instruction hoisting found")
        _wrapped("-" * _WIDTH)

    def dump(self, level=1):
        if level not in (1, 2, 3, 4):
            raise ValueError("Report level unknown, should be one of 1, 2, 3, 4")
        code = self.func.__code__
        purpose = f" Function {self.func.__qualname__}, {code.co_filename} ({code.co_firstlineno}) "
        _wrapped("\n ")
        _wrapped("=" * _WIDTH)
        _wrapped(f" Parallel Accelerator Optimizing: {purpose} ".center(_WIDTH, "="))
        _wrapped("=" * _WIDTH)
        self._source_listing(purpose)
        if level >= 3:
            self._fusion(level)
        if level == 3 and self.nested_fusion_info:
            _wrapped(" Optimising loop nests ".center(_WIDTH, "-"))
            _wrapped(
                "Attempting loop nest rewrites (optimising for the largest parallel loops)...\n "
            )
            self._graph(self.nested_fusion_info, "is a parallel loop", "--> rewritten as a serial loop")
            _wrapped("-" * _WIDTH)
        if level >= 2:
            print(" Before Optimisation ".center(_WIDTH, "-"))
            self._before()
            print("-" * _WIDTH)
        print(" After Optimisation ".center(_WIDTH, "-"))
        self._after()
        print("-" * _WIDTH)
        _wrapped("-" * _WIDTH)
        _wrapped("\n ")
        if level >= 3:
            _wrapped("Loop invariant code motion".center(_WIDTH, "-"))
            self._allocation_hoisting()
        if level == 4:
            self._instruction_hoisting()
