#!/usr/bin/env python3
"""Fails when a function of the project is longer than the limit (default 100 lines).

  python3 scripts/check_function_length.py [--limit 100] [--list N] [PATH...]

Every C++ (.h .cc .cu .cuh) and Python (.py) file under the source folders is read; a
function's length is counted from the first line of its declaration (template and return
type included) to its closing brace, blank lines and comments included: what a reader
scrolls through. Lambdas and local classes count towards the function around them.

Data tables are exempt, by one rule: the lines inside a braced initializer list (C++) or a
list, tuple, dict or set display (Python) that spans several lines are not counted; the
line that opens it and the line that closes it are. So a function that returns a table of
rows (`static const auto* kRules = new std::vector<Rule>{ {...}, ... };`) counts the few
lines around its table, while a function that builds the same data with a statement per
field counts every statement.

C++ is read with a small brace matcher, not a compiler: comments, string and character
literals (raw strings included) and preprocessor lines are blanked first; then each `{` is
classified by what precedes it. At namespace or class scope a `{` opens a function body
when its declaration has a parameter list (`)` then only qualifiers, a trailing return
type or a constructor's initializers), a namespace, class or enum when it says so, and a
data initializer otherwise. Inside a function a `{` opens a block after `)`, `;`, `{`,
`}`, `:`, `]`, `else`, `do`, `try`, `mutable` or `noexcept`, and an initializer list
after anything else (`=`, `(`, `,`, `return`, a type or variable name).

Exit status: 0 when nothing is over the limit, 1 otherwise (each offender on its own line:
path:line: name: N lines), 2 on a usage error.
"""
import argparse
import ast
import os
import re
import sys

SOURCE_DIRS = ["base", "proto", "kernels", "profiler", "runtime", "analysis", "reports",
               "api", "cli", "python", "bench", "fuzz", "tests", "scripts"]
CPP_EXTS = (".h", ".cc", ".cu", ".cuh", ".cpp", ".hpp")
SKIP_DIRS = {"build", ".git", "__pycache__", "testdata", "golden"}

BLOCK_BEFORE = {")", ";", "{", "}", ":", "]", "else", "do", "try", "mutable", "noexcept"}
QUALIFIERS = {"const", "override", "final", "noexcept", "mutable", "volatile", "&", "&&",
              "try", "__device__", "__host__"}


def blank_cpp(text):
    """Comments, literals and preprocessor lines replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":  # a preprocessor line, with its continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        line_start = c == "\n"
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        m = re.match(r'(?:u8|u|U|L)?R"([^()\\ ]{0,16})\(', text[i:i + 24])
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            close = ")" + m.group(1) + '"'
            end = text.find(close, i + m.end())
            end = n if end < 0 else end + len(close)
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:end]))
            i = end
            continue
        if c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator: 1'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = min(j + 1, n)
            continue
        out.append(c)
        i += 1
    return "".join(out)


TOKEN = re.compile(r"[A-Za-z_][A-Za-z_0-9]*|->|::|&&|==|!=|<=|>=|[^\sA-Za-z_0-9]")


def tokens(text):
    line = 1
    pos = 0
    for m in TOKEN.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        yield m.group(0), line


class Scope:
    def __init__(self, kind, line, name="", start=0):
        self.kind = kind      # namespace, class, function, block, init
        self.line = line      # line of the '{'
        self.name = name
        self.start = start    # first line of a function's declaration
        self.data_lines = 0   # lines of a function inside its initializer lists


ACCESS = (["public"], ["private"], ["protected"])


def top_level(stmt):
    """The tokens of a declaration outside parentheses and brackets."""
    depth = 0
    out = []
    for tok, _ in stmt:
        if tok in "([":
            depth += 1
        elif tok in ")]":
            depth -= 1
        elif depth == 0:
            out.append(tok)
    return out


NOT_NAMES = {"__launch_bounds__", "__attribute__", "alignas", "decltype", "noexcept",
             "__declspec", "requires"}
CLASS_KEYS = ("class", "struct", "union", "enum")


def strip_template(toks):
    """`toks` without a leading `template <...>` (angle brackets matched)."""
    while toks[:2] == ["template", "<"]:
        depth, i = 0, 1
        for i in range(1, len(toks)):
            depth += {"<": 1, ">": -1}.get(toks[i], 0)
            if depth == 0:
                break
        toks = toks[i + 1:]
    return toks


def is_function(stmt):
    """Whether a declaration at namespace or class scope, up to its '{', is a function's."""
    toks = strip_template([t for t, _ in stmt])
    if ")" not in toks:
        return False
    top = top_level([(t, 0) for t in toks])
    if "=" in top and "operator" not in toks:
        return False
    first_paren = toks.index("(") if "(" in toks else len(toks)
    if any(t in CLASS_KEYS for t in toks[:first_paren]):
        return False  # a class whose bases have parentheses
    # What follows the parameter list: qualifiers, `-> type`, `: member(init), ...`.
    last = len(toks) - 1 - toks[::-1].index(")")
    tail = toks[last + 1:]
    if not tail or all(t in QUALIFIERS for t in tail) or "->" in tail:
        return True
    return ":" in toks[:last + 1] or tail[0] == ":"  # a constructor's initializers


def function_name(stmt):
    toks = strip_template([t for t, _ in stmt])
    depth = 0
    for i, t in enumerate(toks):
        if t == "(" and depth == 0 and i > 0 and toks[i - 1] not in NOT_NAMES:
            for j in range(max(0, i - 4), i):  # operator(), operator==, ...
                if toks[j] == "operator":
                    return "".join(toks[j:i])
            name = toks[i - 1]
            if i >= 3 and toks[i - 2] == "::":
                name = toks[i - 3] + "::" + name
            return name
        depth += {"(": 1, ")": -1}.get(t, 0)
    return "?"


def trailing_return(recent):
    """Whether the tokens before a '{' end in `) -> type` (a lambda's body follows)."""
    for t in reversed(recent[:-1]):
        if t == "->":
            return True
        if t in (")", ";", "{", "}", "=", ",", "("):
            return False
    return False


def cpp_functions(text):
    """(name, first line, last line, counted lines) of every function body in `text`."""
    stack = []
    stmt = []          # tokens since the last boundary at namespace/class scope
    prev = ";"
    recent = []        # the last few tokens, for a lambda's trailing return type
    found = []
    for tok, line in tokens(blank_cpp(text)):
        recent = recent[-11:] + [tok]
        inner = stack[-1] if stack else None
        in_decl_scope = inner is None or inner.kind in ("namespace", "class")
        if tok == "{":
            if in_decl_scope:
                toks = [t for t, _ in stmt]
                if "namespace" in toks or (toks[:1] == ["extern"] and ")" not in toks):
                    kind = "namespace"
                elif is_function(stmt):
                    # A constructor's member initialised with braces is not its body.
                    if prev not in (")", "}") and prev not in QUALIFIERS and \
                            ":" in toks and "->" not in toks:
                        kind = "init"
                    else:
                        kind = "function"
                elif any(k in top_level(stmt) for k in ("class", "struct", "union", "enum")) \
                        and "=" not in top_level(stmt):
                    kind = "class"
                else:
                    kind = "init"
                scope = Scope(kind, line, function_name(stmt) if kind == "function" else "",
                              stmt[0][1] if stmt else line)
                if kind == "init" and stmt and ":" in toks and is_function(stmt):
                    scope.kind = "ctor-init"  # stays part of the statement
            else:
                if inner.kind in ("init", "ctor-init"):
                    kind = "init"
                elif prev in BLOCK_BEFORE or trailing_return(recent):
                    kind = "block"
                else:
                    kind = "init"
                scope = Scope(kind, line)
            stack.append(scope)
            if scope.kind != "ctor-init":
                stmt = []
            prev = "{"
            continue
        if tok == "}":
            if not stack:
                prev = "}"
                continue
            scope = stack.pop()
            outer = stack[-1] if stack else None
            if scope.kind == "init" and line > scope.line:
                # Lines strictly inside the list are data, counted once (the outermost).
                owner = next((s for s in reversed(stack) if s.kind == "function"), None)
                if owner is not None and outer.kind != "init":
                    owner.data_lines += max(0, line - scope.line - 1)
            if scope.kind == "function":
                length = line - scope.start + 1
                found.append((scope.name, scope.start, line, length - scope.data_lines))
            if scope.kind == "ctor-init":
                prev = "}"
                continue
            if outer is None or outer.kind in ("namespace", "class"):
                stmt = []
            prev = "}"
            continue
        if in_decl_scope:
            if tok == ";" or (tok == ":" and [t for t, _ in stmt] in ACCESS):
                stmt = []
            else:
                stmt.append((tok, line))
        elif stack and stack[-1].kind == "ctor-init":
            stmt.append((tok, line))
        prev = tok
    return found


def literal_lines(node):
    """Lines strictly inside the multi-line collection displays of `node` (outermost only)."""
    lines = set()

    def visit(n, inside):
        is_lit = isinstance(n, (ast.List, ast.Tuple, ast.Dict, ast.Set))
        if is_lit and not inside and n.end_lineno > n.lineno:
            lines.update(range(n.lineno + 1, n.end_lineno))
            inside = True
        for c in ast.iter_child_nodes(n):
            visit(c, inside)

    for child in ast.iter_child_nodes(node):
        visit(child, False)
    return lines


def py_functions(text, path):
    tree = ast.parse(text, filename=path)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            length = node.end_lineno - start + 1 - len(literal_lines(node))
            out.append((node.name, start, node.end_lineno, length))
    return out


def source_files(root, paths):
    for p in paths:
        full = os.path.join(root, p)
        if os.path.isfile(full):
            yield p
            continue
        for dirpath, dirnames, filenames in os.walk(full):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            for f in sorted(filenames):
                if f.endswith(CPP_EXTS) or f.endswith(".py"):
                    yield os.path.relpath(os.path.join(dirpath, f), root)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", help="files or folders (default: the source folders)")
    ap.add_argument("--limit", type=int, default=100, help="most lines a function may have")
    ap.add_argument("--list", type=int, default=0, metavar="N",
                    help="also print the N longest functions")
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = ap.parse_args(argv)
    paths = args.paths or [d for d in SOURCE_DIRS if os.path.isdir(os.path.join(args.root, d))]
    rows = []
    for rel in source_files(args.root, paths):
        with open(os.path.join(args.root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        try:
            funcs = py_functions(text, rel) if rel.endswith(".py") else cpp_functions(text)
        except SyntaxError as e:
            print(f"{rel}: cannot parse: {e}", file=sys.stderr)
            return 2
        rows.extend((n, rel, start, name) for name, start, _, n in funcs)
    rows.sort(key=lambda r: (-r[0], r[1], r[2]))
    for n, rel, start, name in rows[:args.list]:
        print(f"{n:5d}  {name}  ({rel}:{start})")
    over = [r for r in rows if r[0] > args.limit]
    for n, rel, start, name in over:
        print(f"{rel}:{start}: {name}: {n} lines (limit {args.limit}; split it, or make its "
              f"data a table)")
    print(f"{len(rows)} functions checked, {len(over)} over {args.limit} lines")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
