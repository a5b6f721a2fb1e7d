"""Produce tricky JSON records for a VARIANT table, and check the table.

    variant_records.py produce --bootstrap B --topic T --manifest FILE [--bulk N]

Produces, to partition 0 of T, the records of records() below (nested
objects, arrays, unicode, large integers, decimals, nulls, an object of 300
keys, 200-deep nesting, malformed JSON, empty and null values, a null key),
then N plain records. Keys are JSON too: record i's key is the text of i
(None for the null-key record). Every record's offset goes to the manifest,
one JSON line {"offset": O, "key": K, "value": V, "corrupt": C} with K and V
as base64 (null for a null key or value) and C whether the value is not one
JSON text (it must land in _corrupt_record).

    variant_records.py check TABLE --manifest FILE

Reads TABLE, whose key and value columns are VARIANT and whose source
metadata column is _kafka:
  - delta-rs opens it: protocol reader 3 / writer 7 with variantType in both
    feature lists; one row per manifest line; corrupt rows have a null value
    and their bytes in _corrupt_record;
  - DuckDB reads the data files the log lists with read_parquet: key and
    value are VARIANT columns; every value cast to JSON equals the JSON text
    produced (numbers compared by value: 1.50 equals 1.5), corrupt and null
    values are NULL; variant_extract and casts give back chosen fields with
    their types;
  - DuckDB's delta_scan reads the table through its log: every row, the
    value a VARIANT.

    variant_records.py check-fields TABLE --manifest FILE --columns C1,C2

Reads TABLE, the same records decoded with a json_options schema whose
columns C1, C2, ... are VARIANT, with DuckDB: a value that is a JSON object
has each listed field's JSON sub-value in its column (NULL when the field
is missing or JSON null) and a null _corrupt_record; any other non-blank
value is corrupt, with every listed column NULL.

Prints a line per reader; exits non-zero on the first failure.
"""
import argparse
import base64
import decimal
import json
import random
import re
import sys

import duckext

WIDE_KEYS = 300
DEEP = 200


def deep_object(n):
    return "".join('{"a":' for _ in range(n)) + "1" + "}" * n


def deep_array(n):
    return "[" * n + '"bottom"' + "]" * n


def wide_object():
    keys = [f"k{j:03d}" for j in range(WIDE_KEYS)]
    random.Random(7).shuffle(keys)  # the encoder must sort them
    return "{" + ",".join(f'"{k}":{int(k[1:])}' for k in keys) + "}"


def records():
    """(name, key text or None, value bytes or None, corrupt)."""
    good = [
        ("nested", b'{"user":{"name":"ana","address":{"city":"Z\xc3\xbcrich","zip":"8001"}},"tags":["a","b"],"n":7}'),
        ("array", b'[1,"two",3.5,null,true,false,[],{},[[1,2],[3]]]'),
        ("unicode", '{"s":"h\u00e9llo \u4e16\u754c \U0001F600","esc":"tab\\tnl\\nquote\\"bs\\\\","u":"\\u00e9\\ud83d\\ude00"}'.encode()),
        ("large ints", b'{"max":9223372036854775807,"min":-9223372036854775808,"big":123456789012345678901234567890,'
                       b'"beyond":12345678901234567890123456789012345678901234567890,"small":-5,"i16":1000,"i32":100000}'),
        ("decimals", b'{"d":1.5,"p":0.1,"neg":-123.456,"exp":1.5e10,"tiny":1e-7,"long":3.14159265358979323846,"zero":0.0}'),
        ("nulls", b'{"a":null,"b":[null,null],"c":{"d":null}}'),
        ("json null", b"null"),
        ("string", b'"just a string"'),
        ("number", b"42"),
        ("boolean", b"true"),
        ("wide object", wide_object().encode()),
        ("deep object", deep_object(DEEP).encode()),
        ("deep array", deep_array(DEEP).encode()),
        ("whitespace", b' \n {"spaced" : [ 1 , 2 ] } \t'),
    ]
    out = [(name, v, False) for name, v in good]
    out += [
        ("truncated", b'{"a":', True),
        ("trailing", b'{"a":1} trailing', True),
        ("duplicate key", b'{"a":1,"a":2}', True),
        ("bare word", b"nope", True),
        ("empty", b"", False),
        ("tombstone", None, False),
    ]
    return [(name, str(i), v, corrupt) for i, (name, v, corrupt) in enumerate(out)] + \
        [("null key", None, b'{"keyless":true}', False)]


def b64(b):
    return None if b is None else base64.b64encode(b).decode()


def unb64(s):
    return None if s is None else base64.b64decode(s)


def produce(args):
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": args.bootstrap, "linger.ms": 20, "enable.idempotence": True})
    delivered = []

    def report(err, msg):
        if err:
            sys.exit(f"delivery failed: {err}")
        delivered.append(msg.offset())

    recs = [(k, v, c) for _, k, v, c in records()]
    for i in range(args.bulk):
        recs.append((str(1000 + i), json.dumps({"id": i, "name": f"user-{i}", "amount": i * 1.25,
                                                 "tags": [f"t{i % 3}", "all"]}).encode(), False))
    with open(args.manifest, "a") as f:
        for k, v, corrupt in recs:
            delivered.clear()
            p.produce(args.topic, partition=0, key=None if k is None else k.encode(), value=v, on_delivery=report)
            p.flush()
            f.write(json.dumps({"offset": delivered[0], "key": b64(None if k is None else k.encode()),
                                "value": b64(v), "corrupt": corrupt}) + "\n")
    print(f"produced {len(recs)} records")


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def load_exact(text):
    """JSON with numbers as exact Decimals (ints as ints)."""
    return json.loads(text, parse_float=decimal.Decimal, parse_constant=decimal.Decimal)


def load_first(text):
    """load_exact of the first JSON value of text, ignoring what follows."""
    decoder = json.JSONDecoder(parse_float=decimal.Decimal, parse_constant=decimal.Decimal)
    text = text.decode() if isinstance(text, bytes) else text
    return decoder.raw_decode(text, len(text) - len(text.lstrip()))[0]


# DuckDB writes decimals below one without their leading zero (.1, -.5)
# when it casts a VARIANT to JSON.
BARE_FRACTION = re.compile(r'(?<=[:,\[])(-?)\.(?=\d)')


def load_duckdb_json(text):
    """load_exact of JSON DuckDB wrote."""
    if text.startswith((".", "-.")):
        text = text.replace(".", "0.", 1)
    return load_exact(BARE_FRACTION.sub(r"\g<1>0.", text))


def same(want, got, path="$"):
    """None when JSON values want and got are equal, numbers by value (a
    double that does not hold the produced digits exactly compares as the
    nearest double), else where they differ."""
    num = (int, decimal.Decimal, float)
    if isinstance(want, bool) or isinstance(got, bool):
        return None if want is got else f"{path}: {got!r}, want {want!r}"
    if isinstance(want, num) and isinstance(got, num):
        if decimal.Decimal(want) == decimal.Decimal(got) or float(want) == float(got):
            return None
        return f"{path}: {got!r}, want {want!r}"
    if isinstance(want, dict) and isinstance(got, dict):
        if sorted(want) != sorted(got):
            return f"{path}: keys {sorted(got)[:5]}..., want {sorted(want)[:5]}..."
        for k in want:
            if (d := same(want[k], got[k], f"{path}.{k}")) is not None:
                return d
        return None
    if isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            return f"{path}: {len(got)} elements, want {len(want)}"
        for i, (w, g) in enumerate(zip(want, got)):
            if (d := same(w, g, f"{path}[{i}]")) is not None:
                return d
        return None
    return None if want == got and type(want) is type(got) else f"{path}: {got!r}, want {want!r}"


def null_value(m):
    """Whether manifest line m's value column must be SQL NULL: a corrupt,
    null, empty or blank value."""
    v = unb64(m["value"])
    return m["corrupt"] or v is None or not v.strip()


def check_delta_rs(table, manifest):
    from deltalake import DeltaTable

    dt = DeltaTable(table)
    p = dt.protocol()
    if (p.min_reader_version, p.min_writer_version) != (3, 7) or "variantType" not in (p.reader_features or []) \
            or "variantType" not in (p.writer_features or []):
        fail(f"delta-rs: protocol {p}, want reader 3 / writer 7 with variantType in both feature lists")
    types = {f.name: str(f.type) for f in dt.schema().fields}
    rows = dt.to_pyarrow_table().to_pylist()
    if len(rows) != len(manifest):
        fail(f"delta-rs: {len(rows)} rows, want {len(manifest)}")
    by_offset = {r["_kafka"]["offset"]: r for r in rows}
    for m in manifest:
        r = by_offset.get(m["offset"])
        if r is None:
            fail(f"delta-rs: no row at offset {m['offset']}")
        want_corrupt = unb64(m["value"]) if m["corrupt"] else None
        if r["_corrupt_record"] != want_corrupt:
            fail(f"delta-rs: offset {m['offset']}: _corrupt_record {r['_corrupt_record']!r}, want {want_corrupt!r}")
        if (r["value"] is None) != null_value(m):
            fail(f"delta-rs: offset {m['offset']}: value {r['value']!r}, want it null only for corrupt and null values")
    print(f"delta-rs: protocol 3/7 {p.reader_features}, value type {types.get('value')}, {len(rows)} rows")
    return dt


def check_duckdb(dt, manifest):
    import duckdb

    con = duckdb.connect()
    files = dt.file_uris()
    quoted = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
    con.execute(f"CREATE VIEW t AS SELECT * FROM read_parquet([{quoted}])")
    types = dict(con.execute("SELECT column_name, column_type FROM (DESCRIBE t)").fetchall())
    if types.get("value") != "VARIANT" or types.get("key") != "VARIANT":
        fail(f"duckdb: column types {types}, want key and value VARIANT")
    rows = con.execute("SELECT _kafka.offset, key::JSON::VARCHAR, value IS NULL, value::JSON::VARCHAR, _corrupt_record "
                       "FROM t").fetchall()
    if len(rows) != len(manifest):
        fail(f"duckdb: {len(rows)} rows, want {len(manifest)}")
    by_offset = {r[0]: r for r in rows}
    for m in manifest:
        o = m["offset"]
        _, key, is_null, value, corrupt = by_offset[o]
        if null_value(m):
            if not is_null:
                fail(f"duckdb: offset {o}: value {value}, want NULL")
        elif unb64(m["value"]).strip() == b"null":
            # A VARIANT null, which DuckDB reads as NULL.
            if not is_null and value != "null":
                fail(f"duckdb: offset {o}: value {value}, want a VARIANT null")
        else:
            if is_null:
                fail(f"duckdb: offset {o}: value NULL, want {unb64(m['value'])[:80]!r}")
            if (d := same(load_exact(unb64(m["value"])), load_duckdb_json(value))) is not None:
                fail(f"duckdb: offset {o}: {d}")
        want_key = unb64(m["key"])
        if want_key is not None and load_exact(want_key) != load_duckdb_json(key):
            fail(f"duckdb: offset {o}: key {key}, want {want_key}")
        want_corrupt = unb64(m["value"]) if m["corrupt"] else None
        if corrupt != want_corrupt:
            fail(f"duckdb: offset {o}: _corrupt_record {corrupt!r}, want {want_corrupt!r}")

    def one(sql, offset):
        return con.execute(sql + " FROM t WHERE _kafka.offset = ?", [offset]).fetchone()

    named = {name: m for (name, _, _, _), m in zip(records(), manifest)}
    def ex(*path):
        """Nested variant_extract calls down path: keys, or 1-based array
        indexes (DuckDB's variant_extract takes one step at a time)."""
        sql = "value"
        for p in path:
            sql = f"variant_extract({sql}, {p}::UINTEGER)" if isinstance(p, int) else f"variant_extract({sql}, '{p}')"
        return sql

    checks = [
        ("nested", f"SELECT {ex('user', 'address', 'city')}::VARCHAR", "Z\u00fcrich"),
        ("nested", f"SELECT {ex('tags', 2)}::VARCHAR", "b"),
        ("nested", f"SELECT {ex('n')}::INTEGER + 1", 8),
        ("array", f"SELECT {ex(9, 1, 2)}::INTEGER", 2),
        ("unicode", f"SELECT {ex('s')}::VARCHAR", "h\u00e9llo \u4e16\u754c \U0001F600"),
        ("unicode", f"SELECT {ex('u')}::VARCHAR", "\u00e9\U0001F600"),
        ("unicode", f"SELECT {ex('esc')}::VARCHAR", 'tab\tnl\nquote"bs\\'),
        ("large ints", f"SELECT {ex('max')}::BIGINT", 9223372036854775807),
        ("large ints", f"SELECT {ex('min')}::BIGINT", -9223372036854775808),
        ("large ints", f"SELECT variant_typeof({ex('small')})", "INT8"),
        ("large ints", f"SELECT variant_typeof({ex('i16')})", "INT16"),
        ("large ints", f"SELECT variant_typeof({ex('i32')})", "INT32"),
        ("large ints", f"SELECT variant_typeof({ex('max')})", "INT64"),
        ("large ints", f"SELECT {ex('big')}::DECIMAL(38,0)", decimal.Decimal("123456789012345678901234567890")),
        ("large ints", f"SELECT variant_typeof({ex('beyond')})", "DOUBLE"),
        ("decimals", f"SELECT {ex('neg')}::DECIMAL(10,3)", decimal.Decimal("-123.456")),
        ("decimals", f"SELECT {ex('p')}::DECIMAL(3,1)", decimal.Decimal("0.1")),
        ("decimals", f"SELECT variant_typeof({ex('long')})", "DECIMAL(38, 20)"),  # a 16-byte decimal of scale 20
        ("decimals", f"SELECT {ex('exp')}::DOUBLE", 1.5e10),
        ("nulls", f"SELECT {ex('c', 'd')} IS NULL", True),
        ("wide object", f"SELECT {ex('k123')}::INTEGER", 123),
        ("wide object", f"SELECT {ex('k299')}::INTEGER", 299),
        ("deep object", "SELECT " + ex(*["a"] * DEEP) + "::INTEGER", 1),
        ("deep array", "SELECT " + ex(*[1] * DEEP) + "::VARCHAR", "bottom"),
        ("string", "SELECT value::VARCHAR", "just a string"),
        ("number", "SELECT value::INTEGER * 2", 84),
        ("boolean", "SELECT value::BOOLEAN", True),
        ("null key", f"SELECT key IS NULL AND {ex('keyless')}::BOOLEAN", True),
    ]
    for name, sql, want in checks:
        got = one(sql, named[name]["offset"])[0]
        if got != want:
            fail(f"duckdb: {name}: {sql} = {got!r}, want {want!r}")
    print(f"duckdb: read_parquet: {len(rows)} rows, key and value VARIANT, {len(checks)} extracts")

    n, t = duckext.connect().execute("SELECT count(*), any_value(typeof(value)) FROM delta_scan(?)", [dt.table_uri]).fetchone()
    if n != len(manifest) or t != "VARIANT":
        fail(f"duckdb: delta_scan: {n} rows of value type {t}, want {len(manifest)} of VARIANT")
    print(f"duckdb: delta_scan: {n} rows, value {t}")


def check_fields(args):
    import duckdb
    from deltalake import DeltaTable

    with open(args.manifest) as f:
        manifest = [json.loads(line) for line in f]
    columns = args.columns.split(",")
    files = DeltaTable(args.table).file_uris()
    quoted = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
    con = duckdb.connect()
    con.execute(f"CREATE VIEW t AS SELECT * FROM read_parquet([{quoted}])")
    types = dict(con.execute("SELECT column_name, column_type FROM (DESCRIBE t)").fetchall())
    if any(types.get(c) != "VARIANT" for c in columns):
        fail(f"duckdb: column types {types}, want {columns} VARIANT")
    select = ", ".join(f"{c}::JSON::VARCHAR, {c} IS NULL" for c in columns)
    rows = {r[0]: r for r in con.execute(f"SELECT _kafka.offset, _corrupt_record, {select} FROM t").fetchall()}
    if len(rows) != len(manifest):
        fail(f"duckdb: {len(rows)} rows, want {len(manifest)}")
    for m in manifest:
        o, v = m["offset"], unb64(m["value"])
        try:
            # from_json reads the first JSON value and ignores what
            # follows it, as Spark does.
            obj = load_first(v) if v is not None and v.strip() else None
        except ValueError:
            obj = "malformed"
        corrupt = v is not None and v.strip() and not isinstance(obj, dict)
        r = rows[o]
        if (r[1] is not None) != bool(corrupt):
            fail(f"duckdb: offset {o}: _corrupt_record {r[1]!r}, want it set only for a value that is not an object")
        for i, c in enumerate(columns):
            got, is_null = r[2 + 2 * i], r[3 + 2 * i]
            want = obj.get(c) if isinstance(obj, dict) else None
            if want is None:
                if not is_null:
                    fail(f"duckdb: offset {o}: {c} = {got}, want NULL")
            elif is_null or (d := same(want, load_duckdb_json(got))) is not None:
                fail(f"duckdb: offset {o}: {c}: {got if is_null else d}")
    print(f"duckdb: {len(rows)} rows, VARIANT fields {columns} as produced")


def check(args):
    with open(args.manifest) as f:
        manifest = [json.loads(line) for line in f]
    dt = check_delta_rs(args.table, manifest)
    check_duckdb(dt, manifest)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("produce")
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--manifest", required=True)
    p.add_argument("--bulk", type=int, default=0)
    c = sub.add_parser("check")
    c.add_argument("table")
    c.add_argument("--manifest", required=True)
    cf = sub.add_parser("check-fields")
    cf.add_argument("table")
    cf.add_argument("--manifest", required=True)
    cf.add_argument("--columns", required=True)
    args = ap.parse_args()
    {"produce": produce, "check": check, "check-fields": check_fields}[args.cmd](args)


if __name__ == "__main__":
    main()
