#!/usr/bin/env python3
"""The call-cycle check: inside each folder given, the files' graph of who calls whom has no
cycle. File A calls file B when a function A defines calls a function B defines (calls through
a function pointer, a hook, are not edges: that is how a lower file reaches up). The graph
comes from the compiler itself (gcc -fcallgraph-info writes each translation unit's call
graph), not from reading the text, so macros and inline functions from headers count as the
compiler sees them; a function defined in a header belongs to no file.

Fails naming each cycle and the calls that make it. Usage:
  test/call_cycles.py SOURCE_DIR [-I DIR ...] FOLDER...
"""
import collections
import os
import re
import subprocess
import sys
import tempfile

NODE = re.compile(r'node: \{ title: "([^"]*)" label: "([^"\\]*)(?:\\n([^":]*):\d+:\d+)?"')
EDGE = re.compile(r'edge: \{ sourcename: "([^"]*)" targetname: "([^"]*)"')


def unit_graph(root, incs, path, tmp):
    """(functions the file defines with external linkage, calls as (caller, callee) names)"""
    obj = os.path.join(tmp, path.replace("/", "_") + ".o")
    cmd = ["gcc", "-std=c11", "-D_GNU_SOURCE", "-I."] + incs
    cmd += ["-O0", "-w", "-c", "-fcallgraph-info", "-o", obj, path]
    subprocess.run(cmd, cwd=root, check=True)
    names, defines, calls = {}, set(), []
    with open(obj[:-2] + ".ci") as f:
        for line in f:
            m = NODE.search(line)
            if m:
                title, name, where = m.groups()
                names[title] = name
                # static functions are titled "file:name": they cannot be called from outside
                if where == path and ":" not in title:
                    defines.add(name)
                continue
            m = EDGE.search(line)
            if m:
                calls.append(m.groups())
    return defines, [(names.get(a, a), names.get(b, b)) for a, b in calls]


def cycles(graph):
    """Strongly connected components with more than one file (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    root, args = args[0], args[1:]
    incs, folders = [], []
    while args:
        a = args.pop(0)
        if a == "-I" and args:
            incs.append("-I" + args.pop(0))
        else:
            folders.append(a)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for folder in folders:
            files = sorted(f"{folder}/{f}" for f in os.listdir(os.path.join(root, folder))
                           if f.endswith(".c"))
            owner, units = {}, {}
            for path in files:
                defines, calls = unit_graph(root, incs, path, tmp)
                units[path] = calls
                for name in defines:
                    owner[name] = path
            graph = collections.defaultdict(set)
            why = collections.defaultdict(set)
            for path, calls in units.items():
                graph[path]
                for caller, callee in calls:
                    to = owner.get(callee)
                    if to and to != path:
                        graph[path].add(to)
                        why[(path, to)].add(f"{caller} -> {callee}")
            for comp in cycles(graph):
                bad += 1
                print(f"call_cycles: {folder}/ files call each other in a cycle: "
                      + ", ".join(comp))
                for a in comp:
                    for b in comp:
                        if (a, b) in why:
                            print(f"  {a} -> {b}: " + ", ".join(sorted(why[(a, b)])))
            print(f"call_cycles: {folder}/: {len(files)} files checked")
    if bad:
        print(f"call_cycles: {bad} cycle(s); break each with a hook that the upper file "
              "registers, or by moving what both need below both")
        sys.exit(1)


if __name__ == "__main__":
    main()
