"""Writes tests/unit/py_linetable_data.h: run with a CPython 3.11,
   python3.11 tests/unit/gen_py_linetable.py > tests/unit/py_linetable_data.h
(then put the three comment lines back on top)."""
import sys
src = '''
def f(a, b):
    x = a + 1
    if x > b:
        return [i * 2
                for i in range(x)]
    y = (a +
         b)
    try:
        z = 1 / y
    except ZeroDivisionError:
        z = None
    return z
'''
ns = {}
exec(compile(src, "<t>", "exec"), ns)
co = ns["f"].__code__
lt = co.co_linetable
print("/* def f(a, b) ... from CPython", sys.version.split()[0], "*/")
print("static const uint8_t lt_f[] = {", ", ".join("0x%02x" % b for b in lt), "};")
print("static const int32_t lt_f_first = %d;" % co.co_firstlineno)
rows = []
for start, end, line in co.co_lines():
    for off in range(start, end, 2):
        rows.append(line if line is not None else -1)
print("/* line of each instruction (code unit), from co_lines() */")
print("static const int32_t lt_f_lines[] = {", ", ".join(str(r) for r in rows), "};")
