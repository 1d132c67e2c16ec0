#!/usr/bin/env python3
"""The layers of common/ point only down (docs/architecture.md): no header of common/ is in
a circle of includes, no object of the library in a circle of calls, and a tool that does
not communicate links no MPI. One PASS or FAIL line each; exit status 1 when one fails.

    scripts/check_layers.py BUILD      (BUILD: a build folder, e.g. build)
"""
import collections
import glob
import os
import re
import subprocess
import sys

# The tools that read and write files only: none of them may need MPI.
TOOLS_WITHOUT_MPI = ["analyze_traces", "check_schedule", "compare_runs", "cpu_kernels", "gen_reviews",
                     "import_tokens"]


def circles(graph):
    """The strongly connected parts of more than one node (Tarjan's algorithm)."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for after in graph[node]:
            if after not in index:
                visit(after)
                low[node] = min(low[node], low[after])
            elif after in on_stack:
                low[node] = min(low[node], index[after])
        if low[node] == index[node]:
            part = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                part.append(member)
                if member == node:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for node in list(graph):
        if node not in index:
            visit(node)
    return found


def include_graph():
    graph = collections.defaultdict(set)
    for header in glob.glob("common/*.h") + glob.glob("common/cuda/*.h"):
        for included in re.findall(r'#include "([A-Za-z0-9_]+\.h)"', open(header).read()):
            graph[os.path.basename(header)].add(included)
    return graph


def symbols(path):
    defined, undefined = set(), set()
    listing = subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] in "TDBRC":
            defined.add(fields[2])
        elif len(fields) == 2 and fields[0] == "U":
            undefined.add(fields[1])
    return defined, undefined


def call_graph(build):
    objects = glob.glob(f"{build}/obj/common/*.o") + glob.glob(f"{build}/obj/common/cuda/*.o")
    owner, needs = {}, {}
    for path in objects:
        name = os.path.relpath(path, f"{build}/obj")[:-2]
        defined, needs[name] = symbols(path)
        owner.update({symbol: name for symbol in defined})
    graph = collections.defaultdict(set)
    for name, undefined in needs.items():
        graph[name] |= {owner[s] for s in undefined if s in owner and owner[s] != name}
    return graph, len(objects)


def report(passed, line):
    print(("PASS " if passed else "FAIL ") + line)
    return passed


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) == 2 else 2
    build = sys.argv[1]
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ok = True
    found = circles(include_graph())
    ok &= report(not found, "layers includes: no header of common/ in a circle" if not found else
                 "layers includes: " + "; ".join(" -> ".join(c) for c in found))
    graph, count = call_graph(build)
    found = circles(graph)
    if count == 0:
        ok &= report(False, f"layers calls: no objects under {build}/obj/common (build first)")
    else:
        ok &= report(not found, f"layers calls: no object of common/ in a circle ({count} objects)" if not found else
                     "layers calls: objects calling each other: " + "; ".join(", ".join(c) for c in found))
    for tool in TOOLS_WITHOUT_MPI:
        path = f"{build}/tools/{tool}"
        if not os.path.exists(path):
            ok &= report(False, f"layers {tool}: {path} is not built")
            continue
        mpi = sorted(s for s in symbols(path)[1] if s.startswith(("MPI_", "PMPI_")))
        ok &= report(not mpi, f"layers {tool}: links no MPI" if not mpi else
                     f"layers {tool}: links {len(mpi)} MPI symbol(s), e.g. {mpi[0]}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
