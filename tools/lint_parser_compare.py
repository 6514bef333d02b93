"""libclang vs tree-sitter-cuda for lint's front end (docs/notes/lint.md): parse errors, what each resolves, speed.

For each file: does the parser report errors, are macros, #if branches, templates and constexpr resolved, and the
parse time (median of 5, warm). Run: PYTHONPATH=src python tools/lint_parser_compare.py FILES...
"""

from __future__ import annotations

import statistics
import sys
import time


def _median_time(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def tree_sitter_row(path: str) -> dict:
    import tree_sitter
    import tree_sitter_cuda

    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language()))
    data = open(path, "rb").read()
    tree = parser.parse(data)
    errors, macro_calls, branches = 0, 0, 0
    stack = [tree.root_node]
    while stack:
        n = stack.pop()
        errors += n.type == "ERROR" or n.is_missing
        branches += n.type in ("preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif")
        stack.extend(n.children)
    defined = {ln.split()[1].split("(")[0] for ln in data.decode(errors="replace").splitlines()
               if ln.strip().startswith("#define") and len(ln.split()) > 1}
    macro_calls = sum(data.decode(errors="replace").count(m) for m in defined) - len(defined)
    return dict(errors=errors, unexpanded_macro_uses=macro_calls, preproc_branches_kept=branches,
                seconds=_median_time(lambda: parser.parse(data)))


def libclang_row(path: str) -> dict:
    from gpumemlab.lint import frontend

    parsed = frontend.parse(path)
    return dict(errors=len(parsed.diagnostics), unexpanded_macro_uses=0, preproc_branches_kept=0,
                seconds=_median_time(lambda: frontend.parse(path)))


def main(paths: list[str]) -> int:
    print(f"{'file':38} {'parser':12} {'errors':>6} {'macro uses left':>15} {'#if kept':>8} {'parse ms':>9}")
    for p in paths:
        for name, fn in (("libclang", libclang_row), ("tree-sitter", tree_sitter_row)):
            r = fn(p)
            print(f"{p.split('/')[-1]:38} {name:12} {r['errors']:>6} {r['unexpanded_macro_uses']:>15} "
                  f"{r['preproc_branches_kept']:>8} {1000 * r['seconds']:>9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
