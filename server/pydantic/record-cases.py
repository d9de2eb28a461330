"""Record Pydantic v2's lax readings for the server's parsers (server/pydantic/).

Run with a Python that has pydantic (no FastAPI needed):
    python3 server/pydantic/record-cases.py > server/pydantic/pydantic-cases.json
(a venv with `pip install pydantic` is enough).
Every case is an input and what Pydantic answers: {"ok": value} or
{"type", "msg", "ctx"?}. The inputs are fixed lists plus a seeded fuzz, so the
file changes only when Pydantic's behaviour does.
"""
import json, random, sys
from datetime import date
from typing import Annotated
import pydantic, pydantic_core
from pydantic import StringConstraints, TypeAdapter, ValidationError

DATE = TypeAdapter(date)
INT = TypeAdapter(int)
STRIPPED = TypeAdapter(Annotated[str, StringConstraints(strip_whitespace=True)])

def compact(s):
    """A long input as [head, unit, times, tail] (the test expands it), so the file stays small."""
    if not isinstance(s, str) or len(s) < 200:
        return s
    for unit in ("9_", "9", "0", " "):
        i = s.find(unit * 50)
        if i < 0:
            continue
        n = 0
        while s.startswith(unit, i + n * len(unit)):
            n += 1
        return [s[:i], unit, n, s[i + n * len(unit):]]
    raise ValueError(s[:20])

def answer(ta, value):
    try:
        r = ta.validate_python(value)
        if isinstance(r, int):
            # Beyond 2^53 JavaScript holds an approximation; say only how big.
            return {"ok": r} if abs(r) < 2**53 else {"ok": "big"}
        return {"ok": r.isoformat() if isinstance(r, date) else r}
    except ValidationError as e:
        err = e.errors(include_url=False)[0]
        out = {"type": err["type"], "msg": err["msg"]}
        if "ctx" in err:
            out["ctx"] = {k: v if isinstance(v, (int, float, str)) else str(v) for k, v in err["ctx"].items()}
        return out

rng = random.Random(20261122)
def fuzz(alphabet, n, lo, hi):
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi))) for _ in range(n)]

# Whitespace candidates: every code point Python, Rust or JavaScript calls whitespace, and near misses.
SPACES = [chr(c) for c in [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x85, 0xA0, 0x1680, 0x180E,
    *range(0x2000, 0x200C), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF]]

int_inputs = ["5", " 5 ", "+5", "-5", "-0", "0005", "5.", "5.0", "5.00", "-5.0", "+5.0", ".0", "5.0.", "5.0_0", "5_.0",
    "5._0", "1_0", "+1_0", "-1_0", "1__0", "_10", "10_", "1_0.0", "1_000_000.0", "5 .0", "0x10", "1e3", "5e0", "",
    "+", "-", " ", "١٢", "５", "2023", "2023.000", "9" * 18, "9" * 19, "9" * 25, "-" + "9" * 25, "1_" * 20 + "1",
    "9" * 4300, "9" * 4301, " " + "9" * 4299 + " ", " " + "9" * 4300, "9" * 4299 + ".0", "+" + "9" * 4299, "1" + "0" * 4299 + ".0",
    "9" * 4301 + "x", "x" + "9" * 4301, "9" * 4301 + ".0", "9" * 4300 + ".0", "9_" * 2200 + "9", "-" + "9" * 4300,
    "-" + "9" * 4301, "0" * 4301, "0" * 4300 + "1", "-" + "0" * 4300 + "1", "+_1", "-_1", "1_", "1.0_0",
    " " * 5000 + "5", "5" + " " * 5000]
int_inputs += [f"{s}5" for s in SPACES] + [f"5{s}" for s in SPACES] + [f"{s}5{s}" for s in SPACES]
int_inputs += fuzz("0123456789_.+- ", 250, 1, 8) + fuzz("10_.", 150, 1, 22)

date_inputs = ["2024-02-29", "2023-02-29", "2024-02-30", "0000-01-01", "0001-01-01", "0999-12-31", "1599-12-31",
    "1600-01-01", "9999-12-31", "10000-01-01", "0000-02-29", "0100-02-29", "1900-02-29", "2000-02-29", "2024-13-01",
    "2024-00-10", "2024-01-00", "2024-1-01", "2024-01-1", "20240101", "2024/01/01", "bad", "", " 2024-03-01",
    "2024-03-01 ", "2024-03-01T", "2024-03-01X", "2024-03-01T00", "2024-03-01T00:00", "2024-03-01T00:00:00",
    "2024-03-01t00:00:00", "2024-03-01_00:00:00", "2024-03-01 00:00:00", "2024-03-01T09:30:00",
    "2024-03-01T00:00:00Z", "2024-03-01T00:00:00z", "2024-03-01T00:00:00+00:00", "2024-03-01T00:00:00-00:00",
    "2024-03-01T00:00:00+0000", "2024-03-01T00:00:00+00", "2024-03-01T00:00:00+23:59", "2024-03-01T00:00:00+24:00",
    "2024-03-01T00:00:00+25:00", "2024-03-01T00:00:00+01:60", "2024-03-01T00:00:00\u221205:00",
    "2024-03-01T00:00:00.0", "2024-03-01T00:00:00.000000", "2024-03-01T00:00:00.0000001", "2024-03-01T00:00:00.5",
    "2024-03-01T00:00:00,0", "2024-03-01T00:00:00.", "2024-03-01T24:00:00", "2024-03-01T00:60:00",
    "2024-03-01T00:00:60", "2024-03-01T00:00:00Zx", "0000-01-01T00:00:00", "9999-12-31T23:59:59",
    "0", "-0", "+0", "1000", "-1000", "86400", "1706918400", "+1706918400", "-1706918400", "1706918400001",
    "1706918400999", "1706918400000", "-1706918400000", "20000000000", "-20000000000", "20000000001",
    "-20000000001", "19999987200", "-19999987200", "-11676096000", "-11676096001", "-11676182400",
    "-62135596800000", "-62135596800001", "-62167219200000", "-62167219200001", "253402214400000",
    "253402300799000", "253402300800000", "253402300799", "253402214400", "9223372036854775807",
    "9223372036854775808", "-9223372036854775807", "-9223372036854775808", "99999999999999999999",
    "1706918400.0", "1706918400.", "1706918400.5", "1706918400.000", "-1706918400.000", ".5", "0.0",
    "1706918400000.0", "1706918400000.5", "1706918400000.0001", "1706918400e0", "1.7069184e9", "2e10", "0x10",
    "1_000", " 1706918400", "1706918400 ", "1e300", "-1e300", "1.5e300", "1706918400.0000001", "-0.5"]
date_inputs += fuzz("0123456789-", 150, 8, 12) + fuzz("0123456789-:T .+Z", 150, 10, 24) + fuzz("0123456789.-", 100, 1, 15)

# JSON numbers and other JSON values as a body gives them (json.loads, then Pydantic's python mode).
date_values = [1706918400, -1706918400, 1706918400.5, 1706918400.0, 1706918400001, -20000000001, 0, 1e300, -1e300,
    1e21, -62167219200000, 253402300800000, 9007199254740993, True, False, [], {}, 1.5, -0.5, 86400.0000001]

strip_inputs = [f"{s}ab{s}" for s in SPACES] + ["  ab  ", "\u200bab\u200b"]

tables = {
    "int": [[compact(s), answer(INT, s)] for s in int_inputs],
    "date": [[compact(s), answer(DATE, s)] for s in date_inputs],
    "date_values": [[v, answer(DATE, v)] for v in date_values],
    "strip": [[s, answer(STRIPPED, s)["ok"]] for s in strip_inputs],
}
# One case a line, so a change of Pydantic's behaviour reads as a diff of cases.
dump = lambda v: json.dumps(v, ensure_ascii=False, separators=(",", ":"))
out = [f'{{"pydantic":{dump(pydantic.VERSION)},"pydantic_core":{dump(pydantic_core.__version__)}']
for name, rows in tables.items():
    out.append(f',{dump(name)}:[\n' + ",\n".join(dump(r) for r in rows) + "\n]")
sys.stdout.write("".join(out) + "}\n")
