"""Produce JSON records whose schema changes over time, and check the tables
Tributary inferred from them (agent/e2e/inference_test.go).

    inference_records.py produce --bootstrap B --topic T --manifest FILE
        --stream evo|hints --phase N [--partitions P]

Creates T (P partitions) if it does not exist and produces phase N of the
stream with Confluent's client, record i to partition i % P. Every record's
partition and offset is appended to the manifest as a JSON line
{"partition", "offset", "phase", "i"} plus "raw" (the text) for a
malformed record, so that the checker knows every produced offset.

The "evo" stream (tables of every schema_evolution_mode):
  phase 1  18 records that set the first schema: id, name, amount, code,
           ratio (integers), user {name, age}, tags [string], when (an ISO
           timestamp), note (null in the first records of each partition).
  phase 2  18 records that add a top-level field (score) and a nested one
           (user.email).
  phase 3  18 records without score that add a nested struct (extra.deep.x)
           and change types: code becomes a string in every other record
           (number -> string), amount an integer beyond BIGINT in every
           third, ratio a number with a fraction (int -> double); then 3
           malformed records, one per partition.
The "hints" stream (a table with schema_hints and string_type_inference
off): phase 1 has ts and seen as ISO strings, user without dob, empty tags,
attrs as an object of numbers, and the keys "first name" and "a.b"; phase 2
adds user.dob, non-empty tags, new attrs keys and the key "(cost)".

    inference_records.py check TABLE --manifest FILE... --stream evo|hints
        --mode MODE [--rescue COLUMN] [--metadata _kafka]

--manifest may repeat: the table must hold exactly the records of the
manifests given. Reads TABLE with delta-rs (its DataFusion reader), with DuckDB (read_parquet(union_by_name=true)
over the data files the log lists) and with a pyarrow dataset over the same
files (physical names mapped to the log's names when the table uses column
mapping), and prints one JSON object:
  {"readers": {reader: {"rows": n, "corrupt": n, "problems": [...]}},
   "history": [{"version", "columns": [[name, type]...], "added": [...],
                "rows": n, "files": [...]}...],  # one per metaData action
   "columns": [[name, type]...],  # the final schema, top level
   "protocol": {...}, "configuration": {...},
   "metadata": {column: its field metadata},
   "problems": [...]}             # schema history problems
MODE is the table's schema_evolution_mode, resolved: what each record must
have become follows from it (see evo_expected()). A rescued value is
under its path from the top of the record ({"user.email": ...}), and a
record with a value that fits nowhere in a table without a rescue column
(NONE) is corrupt: its text in _corrupt_record, its other fields decoded. The schema history problems:
a data column dropped or moved, a new one not after the existing ones (at
every struct level; the source metadata, rescue and corrupt record
columns may stay after them), a type changed other than as Delta's type
widening allows (and only in ADD_NEW_COLUMNS_WITH_TYPE_WIDENING), a
schema change in a commit without rows or whose rows have no value in the
added column, and a data file whose columns are not the schema of the
commit that added it. The Go test fails on any problem and asserts on the
rest.
"""
import argparse
import collections
import datetime
import decimal
import json
import os
import sys
import time

UTC = datetime.timezone.utc
PHASE_SIZE = 18
# The records of phase 3 of the evo stream that are not JSON, one per
# partition; what _corrupt_record must hold.
MALFORMED = ['{"id": 9001, "name": ', 'not json at all', '{"id": 9003,, "name": "x"}']


def evo_value(i, phase):
    """Record i (of phase `phase`) of the evo stream, as a Python object."""
    v = {
        "id": i,
        "name": f"n{i}",
        "amount": 10 * i,
        "code": 100 + i,
        "ratio": i,
        "user": {"name": f"u{i}", "age": 20 + i % 50},
        "tags": [f"t{i}", "x"],
        "when": f"2026-01-{1 + i % 28:02d}T10:{i % 60:02d}:00Z",
        # nulls do not fix a type: the first records of each partition
        # have none.
        "note": None if i % 6 < 3 else f"note {i}",
    }
    if phase == 2:
        v["score"] = 2 * i
        v["user"]["email"] = f"u{i}@example.com"
    if phase == 3:
        if i % 2 == 0:
            v["code"] = f"C-{i}"
        if i % 3 == 0:
            v["amount"] = 10**20 + i
        v["ratio"] = i + 0.5
        v["extra"] = {"deep": {"x": i}}
    return v


def hints_value(i, phase):
    """Record i of the hints stream."""
    v = {
        "id": i,
        "ts": f"2026-03-01T12:00:{i % 60:02d}Z",
        "seen": f"2026-02-{1 + i % 28:02d}",
        "user": {"name": f"h{i}"},
        "tags": [],
        "attrs": {"a": i, "b": 2 * i},
        "first name": f"F{i}",
        "a.b": i,
    }
    if phase == 2:
        v["user"]["dob"] = f"1990-01-{1 + i % 28:02d}"
        v["tags"] = ["x", f"y{i}"]
        v["attrs"] = {"c": i, "d": 3000 + i}
        v["(cost)"] = 1.25 * i
    return v


def produce(args):
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": args.bootstrap})
    if args.topic not in admin.list_topics(timeout=30).topics:
        for f in admin.create_topics([NewTopic(args.topic, num_partitions=args.partitions,
                                               replication_factor=1)]).values():
            f.result()
    # A new topic takes a moment to show in the metadata.
    for _ in range(300):
        md = admin.list_topics(timeout=30).topics.get(args.topic)
        if md is not None and md.partitions and md.error is None:
            break
        time.sleep(0.1)
    else:
        sys.exit(f"topic {args.topic} does not show in the metadata")
    parts = len(md.partitions)
    start = (args.phase - 1) * PHASE_SIZE
    records = []
    for i in range(start, start + PHASE_SIZE):
        v = evo_value(i, args.phase) if args.stream == "evo" else hints_value(i, args.phase)
        records.append(({"phase": args.phase, "i": i}, i % parts, json.dumps(v).encode()))
    if args.stream == "evo" and args.phase == 3:
        for j, raw in enumerate(MALFORMED):
            records.append(({"phase": 3, "raw": raw}, j % parts, raw.encode()))

    producer = Producer({"bootstrap.servers": args.bootstrap, "acks": "all", "enable.idempotence": True})
    lines, errors = [], []

    def delivered(entry):
        def cb(err, msg):
            if err is not None:
                errors.append(str(err))
            else:
                lines.append(dict(entry, partition=msg.partition(), offset=msg.offset()))
        return cb

    for entry, part, value in records:
        producer.produce(args.topic, value=value, key=str(entry.get("i", "bad")).encode(), partition=part,
                         on_delivery=delivered(entry))
        producer.poll(0)
    producer.flush(60)
    if errors or len(lines) != len(records):
        sys.exit(f"delivery failed: {errors[:3]} ({len(lines)} of {len(records)} delivered)")
    with open(args.manifest, "a", encoding="utf-8") as f:
        for line in sorted(lines, key=lambda x: (x["partition"], x["offset"])):
            f.write(json.dumps(line) + "\n")
    print(f"produced {len(records)} records to {args.topic}")


# ---- what each record must become -------------------------------------

ADD, WIDEN, RESCUE, FAIL, NONE = ("ADD_NEW_COLUMNS", "ADD_NEW_COLUMNS_WITH_TYPE_WIDENING", "RESCUE",
                                  "FAIL_ON_NEW_COLUMNS", "NONE")

# The evo stream's first schema: top-level columns and the leaf types
# (Delta log type names) inference must give them.
EVO_FIRST = {"id": "long", "name": "string", "amount": "long", "code": "long", "ratio": "long",
             "user": {"name": "string", "age": "long"}, "tags": ["string"], "when": "timestamp", "note": "string"}


def evo_expected(i, phase, mode, rescue):
    """The row (data columns and the rescue column) record i of the evo
    stream becomes in a table of mode `mode` with rescue column `rescue`
    ("" for none), once every record is in (for FAIL_ON_NEW_COLUMNS: after
    the resume with mode ADD_NEW_COLUMNS, see the Go test)."""
    v = evo_value(i, phase)
    evolves = mode in (ADD, WIDEN, FAIL)
    row = {k: v.get(k) for k in EVO_FIRST}
    row["user"] = {"name": v["user"]["name"], "age": v["user"]["age"]}
    rescued = {}
    if evolves:
        row["score"] = v.get("score")
        row["user"]["email"] = v["user"].get("email")
        row["extra"] = v.get("extra")
    elif mode == RESCUE:
        if "score" in v:
            rescued["score"] = v["score"]
        if "email" in v["user"]:
            rescued["user.email"] = v["user"]["email"]
        if "extra" in v:
            rescued["extra"] = v["extra"]
    # Type changes: number -> string never fits; an integer beyond BIGINT
    # and a fraction in a BIGINT column fit only where types widen (Delta
    # widens BIGINT to DECIMAL(20 + k, s) with k >= s, not to DOUBLE).
    if isinstance(v["code"], str):
        row["code"] = None
        rescued["code"] = v["code"]
    if v["amount"] >= 2**63 and mode != WIDEN:
        row["amount"] = None
        rescued["amount"] = v["amount"]
    if isinstance(v["ratio"], float) and mode != WIDEN:
        row["ratio"] = None
        rescued["ratio"] = v["ratio"]
    if rescue:
        row[rescue] = rescued or None
    elif rescued:
        # Nowhere to rescue: the record is corrupt, as with an explicit
        # schema, its other fields decoded.
        row["_corrupt_record"] = json.dumps(v)
    return row


def hints_expected(i, phase, mode, rescue):
    v = hints_value(i, phase)
    row = {k: v[k] for k in ("id", "ts", "seen", "tags", "attrs", "first name", "a.b")}
    row["user"] = {"name": v["user"]["name"], "dob": v["user"].get("dob")}
    row["(cost)"] = v.get("(cost)")
    if rescue:
        row[rescue] = None
    return row


# ---- reading the table ------------------------------------------------

def read_log(root):
    """The table's commits, in order: [(version, [action...])]."""
    log = os.path.join(root, "_delta_log")
    out = []
    for name in sorted(os.listdir(log)):
        if name.endswith(".json") and name[:-5].isdigit():
            with open(os.path.join(log, name), encoding="utf-8") as f:
                out.append((int(name[:-5]), [json.loads(line) for line in f if line.strip()]))
    return out


def delta_type(t):
    """A Delta log type as a short comparable form: leaf names, dicts for
    structs, [element] for arrays, (key, value) for maps."""
    if isinstance(t, str):
        return t
    if t["type"] == "struct":
        return {f["name"]: delta_type(f["type"]) for f in t["fields"]}
    if t["type"] == "array":
        return [delta_type(t["elementType"])]
    if t["type"] == "map":
        return (delta_type(t["keyType"]), delta_type(t["valueType"]))
    return str(t)


def leaf_paths(fields, prefix=""):
    """Dotted paths of every field of a Delta schema's field list, nested
    struct fields included."""
    out = []
    for f in fields:
        path = prefix + f["name"]
        out.append(path)
        t = f["type"]
        if isinstance(t, dict) and t.get("type") == "struct":
            out.extend(leaf_paths(t["fields"], path + "."))
    return out


def prefix_problems(old, new, where, widen):
    """Problems with schema `new` following `old` (Delta field lists): every
    old field is still there, in the same position (new ones only at the
    end, at every level), with the same type or, where widen is set, a
    type Delta's type widening allows."""
    problems = []
    if [f["name"] for f in new[:len(old)]] != [f["name"] for f in old]:
        problems.append(f"{where}: fields {[f['name'] for f in old]} are not a prefix of {[f['name'] for f in new]}")
        return problems
    for o, n in zip(old, new):
        ot, nt = o["type"], n["type"]
        if isinstance(ot, dict) and ot.get("type") == "struct" and isinstance(nt, dict) and nt.get("type") == "struct":
            problems += prefix_problems(ot["fields"], nt["fields"], f"{where}.{o['name']}", widen)
        elif delta_type(ot) != delta_type(nt):
            ok = widen and isinstance(ot, str) and isinstance(nt, str) and (
                (ot, nt) in {("byte", "short"), ("short", "integer"), ("integer", "long"), ("float", "double"),
                             ("integer", "double"), ("short", "double"), ("byte", "double")}
                or (ot in ("integer", "long") and nt.startswith("decimal")))
            if not ok:
                problems.append(f"{where}.{o['name']}: type changed from {delta_type(ot)} to {delta_type(nt)}")
    return problems


def physical_names(fields):
    """{physical name: (logical name, nested mapping)} of a column-mapped
    schema, or {} for a table without column mapping."""
    out = {}
    for f in fields:
        phys = f.get("metadata", {}).get("delta.columnMapping.physicalName")
        nested = {}
        t = f["type"]
        while isinstance(t, dict) and t.get("type") in ("array", "map"):
            t = t.get("elementType") or t.get("valueType")
        if isinstance(t, dict) and t.get("type") == "struct":
            nested = physical_names(t["fields"])
        if phys:
            out[phys] = (f["name"], nested)
    return out


def to_logical(v, mapping):
    """A row or struct value read by physical names, by the log's names."""
    if not mapping:
        return v
    if isinstance(v, dict):
        return {mapping.get(k, (k, {}))[0]: to_logical(x, mapping.get(k, (k, {}))[1]) for k, x in v.items()}
    if isinstance(v, list):
        return [to_logical(x, mapping) for x in v]
    return v


def norm(v):
    """A value as the expectations write it: timestamps as ISO strings in
    UTC, dates as ISO strings, decimals as ints or floats, maps as dicts, binary
    as text."""
    if isinstance(v, datetime.datetime):
        v = v.astimezone(UTC) if v.tzinfo else v.replace(tzinfo=UTC)
        return v.strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).decode("utf-8", "replace")
    if isinstance(v, list) and v and isinstance(v[0], tuple) and len(v[0]) == 2:
        return {k: norm(x) for k, x in v}
    if isinstance(v, list):
        return [norm(x) for x in v]
    if isinstance(v, dict):
        # DuckDB reads a Parquet MAP as a dict of key and value lists.
        if set(v) == {"key", "value"} and isinstance(v["key"], list):
            return {k: norm(x) for k, x in zip(v["key"], v["value"])}
        return {k: norm(x) for k, x in v.items()}
    return v


def fill(got, want):
    """got with the struct fields want has and got lacks (older files of an
    evolved struct) set to null."""
    if isinstance(want, dict) and isinstance(got, dict):
        return {k: fill(got.get(k), w) for k, w in want.items()} | {k: x for k, x in got.items() if k not in want}
    return got


def compare_rows(reader, rows, entries, expect, rescue, metadata, columns):
    """Problems of rows (one reader) against the manifest entries."""
    problems = []
    by_offset = collections.defaultdict(list)
    for r in rows:
        m = r.get(metadata) or {}
        by_offset[(m.get("partition"), m.get("offset"))].append(r)
    produced = {(e["partition"], e["offset"]) for e in entries}
    extra = sorted(k for k in by_offset if k not in produced)
    if extra:
        problems.append(f"{len(extra)} rows at offsets never produced: {extra[:5]}")
    dup = sorted(k for k, rs in by_offset.items() if len(rs) > 1)
    if dup:
        problems.append(f"{len(dup)} offsets with more than one row: {dup[:5]}")
    missing = sorted(k for k in produced if k not in by_offset)
    if missing:
        problems.append(f"{len(missing)} produced offsets without a row: {missing[:5]}")
    got_cols = set(rows[0]) if rows else set()
    if rows and not set(columns) <= got_cols:
        problems.append(f"columns {sorted(got_cols)} lack {sorted(set(columns) - got_cols)}")
    corrupt = 0
    bad = []
    for e in entries:
        rs = by_offset.get((e["partition"], e["offset"]))
        if not rs:
            continue
        r = rs[0]
        cr = r.get("_corrupt_record")
        if "raw" in e:
            corrupt += 1
            if cr is None or norm(cr) != e["raw"]:
                bad.append(f"offset {e['partition']}/{e['offset']}: _corrupt_record {cr!r}, want {e['raw']!r}")
            parsed = {k: r.get(k) for k in columns if k != rescue and r.get(k) is not None}
            if parsed:
                bad.append(f"offset {e['partition']}/{e['offset']}: a malformed record has values {parsed}")
            continue
        want = expect(e["i"], e["phase"])
        want_cr = want.pop("_corrupt_record", None)
        if cr is not None:
            corrupt += 1
        if (cr if cr is None else norm(cr)) != want_cr:
            bad.append(f"offset {e['partition']}/{e['offset']} (record {e['i']}): _corrupt_record {cr!r}, want {want_cr!r}")
        got = {}
        for k, w in want.items():
            g = norm(r.get(k))
            if k == rescue and g is not None:
                try:
                    g = json.loads(g)
                except ValueError:
                    pass
            got[k] = fill(g, w)
        if got != want:
            diff = {k: {"got": got[k], "want": want[k]} for k in want if got[k] != want[k]}
            bad.append(f"offset {e['partition']}/{e['offset']} (record {e['i']}, phase {e['phase']}): {diff}")
    if bad:
        problems.append(f"{len(bad)} rows differ, e.g. " + "; ".join(bad[:4]))
    return {"rows": len(rows), "corrupt": corrupt, "problems": problems}


def check(args):
    import duckdb
    import pyarrow as pa
    import pyarrow.dataset as pads
    import pyarrow.parquet as pq
    from deltalake import DeltaTable, QueryBuilder

    entries = [json.loads(line) for m in args.manifest for line in open(m, encoding="utf-8") if line.strip()]
    mode = args.mode
    rescue = args.rescue
    if args.stream == "evo":
        expect = lambda i, phase: evo_expected(i, phase, mode, rescue)  # noqa: E731
    else:
        expect = lambda i, phase: hints_expected(i, phase, mode, rescue)  # noqa: E731
    root = args.table.removeprefix("file://")

    # The schema history in the log.
    out = {"readers": {}, "history": [], "problems": []}
    problems = out["problems"]
    prev = None
    protocol, configuration = {}, {}
    files_at = {}  # data file -> version of its add
    commits = read_log(root)
    for version, actions in commits:
        adds = [a["add"] for a in actions if "add" in a]
        for a in adds:
            files_at[a["path"]] = version
        for a in actions:
            if "protocol" in a:
                protocol = a["protocol"]
        meta = [a["metaData"] for a in actions if "metaData" in a]
        if not meta:
            continue
        md = meta[-1]
        configuration = md.get("configuration") or {}
        fields = json.loads(md["schemaString"])["fields"]
        added = []
        if prev is not None:
            # The system columns (source metadata, rescue, corrupt record)
            # keep their place after the data columns; the data columns
            # only grow at their end.
            system = {args.metadata, "_corrupt_record", rescue}
            data = lambda fs: [f for f in fs if f["name"] not in system]  # noqa: E731
            problems += prefix_problems(data(prev[1]), data(fields), f"version {version}", mode == WIDEN)
            gone = [f["name"] for f in prev[1] if f["name"] not in {g["name"] for g in fields}]
            if gone:
                problems.append(f"version {version} drops columns {gone}")
            added = [p for p in leaf_paths(fields) if p not in set(leaf_paths(prev[1]))]
        rows = sum(json.loads(a.get("stats") or "{}").get("numRecords", 0) for a in adds)
        out["history"].append({"version": version, "columns": [[f["name"], delta_type(f["type"])] for f in fields],
                               "added": added, "rows": rows, "files": [a["path"] for a in adds]})
        prev = (version, fields)
    if prev is None:
        problems.append("the log has no metaData action")
        print(json.dumps(out, default=str))
        return
    final = prev[1]
    out["columns"] = [[f["name"], delta_type(f["type"])] for f in final]
    out["protocol"], out["configuration"] = protocol, configuration
    out["metadata"] = {f["name"]: f.get("metadata") or {} for f in final}
    mapping = physical_names(final)

    # Schemas by version, to check each data file against the schema of
    # the commit that added it, and each added column against the commit
    # that needed it.
    schema_at = []
    for h in out["history"]:
        schema_at.append((h["version"], {c[0] for c in h["columns"]}))

    def schema_of(version):
        cols = None
        for v, c in schema_at:
            if v <= version:
                cols = c
        return cols

    for h in out["history"][1:]:
        if not h["files"]:
            problems.append(f"version {h['version']} changes the schema (adds {h['added']}) without rows")
            continue
        for path in h["added"]:
            found = False
            for f in h["files"]:
                t = to_logical(pq.read_table(os.path.join(root, f)).to_pylist(), mapping)
                for r in t:
                    v = r
                    for part in split_path(path, h["columns"]):
                        v = v.get(part) if isinstance(v, dict) else None
                    if v is not None:
                        found = True
                        break
                if found:
                    break
            if not found:
                problems.append(f"version {h['version']} adds {path} but none of its rows has a value there")

    # A data file has the columns of the schema of the commit that added
    # it, or fewer: the rows before a record that asks for new columns are
    # written with the columns they had, in a file the change closes, and
    # a commit may hold several changes' files (Delta reads a column a
    # file lacks as nulls). It never has a column the schema lacks, nor
    # lacks one of the first schema.
    first = schema_at[0][1] if schema_at else set()
    dt = DeltaTable(args.table)
    files = [u.removeprefix("file://") for u in dt.file_uris()]
    for f in files:
        rel = os.path.relpath(f, root)
        v = files_at.get(rel)
        want = schema_of(v) if v is not None else None
        have = {to_logical_name(n, mapping) for n in pq.read_schema(f).names}
        if want is not None and not first <= have <= want:
            problems.append(f"{rel} (version {v}) has columns {sorted(have)}, the schema then {sorted(want)}")

    # The columns decoded from the value (not the Kafka key's).
    data_cols = [f["name"] for f in final if f["name"] not in (args.metadata, "_corrupt_record", "key")]

    widened = "typeWidening" in (out.get("protocol") or {}).get("readerFeatures", [])

    def run(name, read):
        try:
            rows = read()
        except Exception as e:  # a reader that cannot open the table is a finding, not a crash
            if name == "delta-rs" and widened and "TypeWidening" in str(e):
                # deltalake 1.6.6 (the newest) does not implement Delta's
                # typeWidening reader feature and says so rather than
                # reading wrong values: a known limit of that reader.
                out["readers"][name] = {"rows": 0, "corrupt": 0, "problems": [], "refused": str(e)}
                return
            out["readers"][name] = {"rows": 0, "corrupt": 0, "problems": [f"{type(e).__name__}: {e}"]}
            return
        out["readers"][name] = compare_rows(name, rows, entries, expect, rescue, args.metadata, data_cols)

    # delta-rs's DataFusion reader, which applies column mapping.
    run("delta-rs", lambda: pa.table(QueryBuilder().register("t", dt).execute("SELECT * FROM t").read_all()).to_pylist())

    def duck():
        con = duckdb.connect()
        rel = con.execute("SELECT * FROM read_parquet(?, union_by_name=true)", [files])
        cols = [d[0] for d in rel.description]
        return [to_logical(dict(zip(cols, t)), mapping) for t in rel.fetchall()]
    run("duckdb", duck)

    def arrow():
        schema = pa.unify_schemas([pq.read_schema(f) for f in files], promote_options="permissive")
        return [to_logical(r, mapping) for r in pads.dataset(files, schema=schema, format="parquet").to_table().to_pylist()]
    run("pyarrow", arrow)
    print(json.dumps(out, default=str))


def split_path(path, columns):
    """The parts of a dotted column path, where a top-level column's name
    may itself hold a dot (from the history's column list)."""
    for name, _ in columns:
        if path == name:
            return [name]
        if path.startswith(name + "."):
            return [name] + path[len(name) + 1:].split(".")
    return path.split(".")


def to_logical_name(name, mapping):
    return mapping.get(name, (name, {}))[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("produce")
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--manifest", required=True)
    p.add_argument("--stream", choices=["evo", "hints"], required=True)
    p.add_argument("--phase", type=int, required=True)
    p.add_argument("--partitions", type=int, default=3)
    c = sub.add_parser("check")
    c.add_argument("table")
    c.add_argument("--manifest", action="append", required=True)
    c.add_argument("--stream", choices=["evo", "hints"], required=True)
    c.add_argument("--mode", required=True)
    c.add_argument("--rescue", default="")
    c.add_argument("--metadata", default="_kafka")
    args = ap.parse_args()
    produce(args) if args.cmd == "produce" else check(args)


if __name__ == "__main__":
    main()
