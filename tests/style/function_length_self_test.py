#!/usr/bin/env python3
"""The function-length check on hand-written sources: what it must count, what it must
exempt (data tables) and what it must not mistake for a function. Run by ctest
(function_length_self_test); exits 1 naming every case that went wrong."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "scripts"))
import check_function_length as cfl  # noqa: E402

failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def lengths(text):
    return {name: n for name, _, _, n in cfl.cpp_functions(text)}


def body(n, stmt="  x += 1;"):
    return "\n".join([stmt] * n)


# A plain function: first declaration line to closing brace (3 + n lines).
src = "namespace a {\nint\nLong(int x) {\n" + body(98) + "\n  return x;\n}\n}  // namespace a\n"
got = lengths(src)
expect(got.get("Long") == 102, f"plain function counted {got.get('Long')}, want 102")

# Comments, strings and preprocessor lines cannot open or close a brace.
src = ('void F() {\n  // }\n  /* { */\n  const char* s = "}{";\n  char c = \'{\';\n'
       '#define X {\n  auto r = R"x(})x";\n}\nvoid G() {\n}\n')
got = lengths(src)
expect(got == {"F": 8, "G": 2}, f"literals and comments: {got}")

# A data table inside a function: only its opening and closing lines count.
rows = "\n".join(f'      {{"row{i}", {i}}},' for i in range(300))
src = ("const std::vector<Row>& Rows() {\n  static const auto* const kRows = "
       "new std::vector<Row>{\n" + rows + "\n  };\n  return *kRows;\n}\n")
got = lengths(src)
expect(got.get("Rows") == 5, f"table function counted {got.get('Rows')}, want 5")
# ... but the same rows written as statements count in full.
stmts = "\n".join(f'  out.push_back(Row("row{i}", {i}));' for i in range(300))
got = lengths("std::vector<Row> Rows() {\n  std::vector<Row> out;\n" + stmts +
              "\n  return out;\n}\n")
expect(got.get("Rows") == 304, f"statements counted {got.get('Rows')}, want 304")
# A namespace-scope table is no function at all.
got = lengths("const Row kRows[] = {\n" + rows + "\n};\n")
expect(got == {}, f"namespace-scope table taken for a function: {got}")

# Blocks, lambdas (with a trailing return type too) and braced calls count.
src = ("void F() {\n  auto f = [&](int a) -> double {\n" + body(40) + "\n  };\n"
       "  for (int i = 0; i < 3; ++i) {\n" + body(40) + "\n  }\n  Call({1, 2});\n}\n")
got = lengths(src)
expect(got.get("F") == 87, f"lambda and loop counted {got.get('F')}, want 87")

# Classes, methods, constructors with braced member initializers, extern "C", TEST macros.
src = ("class C : public B<decltype(f())> {\n public:\n  C(int x) : a_{x}, b_(x) {\n"
       + body(5) + "\n  }\n  int Get() const override {\n    return a_;\n  }\n"
       " private:\n  int a_{0};\n  int b_;\n};\n"
       'extern "C" {\nint Init(void) {\n  return 0;\n}\n}\n'
       "TEST(Suite, Case) {\n" + body(120) + "\n}\n")
got = lengths(src)
expect(got.get("C") == 7, f"constructor counted {got.get('C')}, want 7")
expect(got.get("Get") == 3, f"method counted {got.get('Get')}, want 3")
expect(got.get("Init") == 3, f"extern C function counted {got.get('Init')}, want 3")
expect(got.get("TEST") == 122, f"TEST counted {got.get('TEST')}, want 122")
expect(set(got) == {"C", "Get", "Init", "TEST"}, f"functions found: {sorted(got)}")

# Python: ast lengths, decorators included, literal displays exempt.
py = ("@decorator\ndef f():\n    x = 1\n" + "    x += 1\n" * 100 + "\n"
      "def table():\n    return [\n" + "        (1, 2),\n" * 200 + "    ]\n")
got = {name: n for name, _, _, n in cfl.py_functions(py, "x.py")}
expect(got == {"f": 103, "table": 3}, f"python lengths: {got}")

# End to end: the script fails on a tree with one offender and names it; passes without.
with tempfile.TemporaryDirectory() as root:
    os.makedirs(os.path.join(root, "analysis"))
    path = os.path.join(root, "analysis", "long.cc")
    with open(path, "w") as f:
        f.write("void TooLong() {\n" + body(100) + "\n}\n")
    expect(cfl.main(["--root", root, "analysis"]) == 1, "a 102-line function passed")
    with open(path, "w") as f:
        f.write("void Fine() {\n" + body(98) + "\n}\n")
    expect(cfl.main(["--root", root, "analysis"]) == 0, "a 100-line function failed")

if failures:
    print(f"{len(failures)} case(s) failed")
    sys.exit(1)
print("all function-length cases passed")
