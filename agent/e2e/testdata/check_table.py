"""Read a Tributary table with three independent readers and check it.

    check_table.py TABLE_DIR --count N [--malformed i,j,...] [--values]
                   [--metadata COLUMN] [--exactly-once]

Readers: delta-rs (deltalake.DeltaTable, through the transaction log), DuckDB
(read_parquet over the data files; for a table on S3, delta_scan of its URL)
and pyarrow.parquet (the data files). TABLE_DIR may be an s3:// URL, read
with the client settings tools/s3.sh prints (AWS_ENDPOINT_URL and keys).
Checks: each reader sees exactly N rows; with --malformed, exactly those
records (by key) have _corrupt_record set to the bytes produce.py wrote and
null parsed columns; with --values, every other row equals what produce.py
wrote; with --exactly-once, every (topic, partition, offset) of the metadata
column appears once and each partition's offsets are 0..max without a gap;
with --compacted, the log's history holds an OPTIMIZE commit. With
--files-only, only the checks of files are made (--no-orphans,
--orphans-by-agent, --compacted), not those of rows.

    check_table.py TABLE_DIR --manifest FILE --kinds k1,k2,...
                   [--ends FILE] [--timestamps TYPE:MIN_MS:MAX_MS]

With --manifest (written by produce_txn.py), the table must hold exactly the
manifest's records of the listed kinds, each once, each at the partition and
offset its delivery report gave (so no row is a transaction marker or a
record of another kind); --count defaults to their number. With --ends (a
JSON {topic: {partition: end offset}}, see kafka_admin.py end-offsets),
every listed partition's offsets are exactly 0..end-1 and no other
partition has rows. With --timestamps, every row's metadata timestamp is
within [MIN_MS, MAX_MS] (epoch milliseconds) and its timestampType is TYPE.
Prints one line per reader and exits non-zero on the first failure.
"""
import argparse
import collections
import datetime
import os
import re
import sys

import urllib.parse

import duckdb
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from deltalake import DeltaTable

sys.path.insert(0, os.path.dirname(__file__))
from produce import malformed, value  # noqa: E402
import duckext  # noqa: E402
import json  # noqa: E402


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def check_manifest(reader, rows, args, want, kind_of):
    """Fails unless rows are exactly the manifest records in want
    ({id: (partition, offset)}), each once, explaining every difference."""
    problems = []
    seen = collections.Counter()
    at = collections.Counter()
    no_id = []
    unexpected = collections.defaultdict(list)
    misplaced = []
    for r in rows:
        m = r[args.metadata]
        at[(m["topic"], m["partition"], m["offset"])] += 1
        i = r.get("id")
        if i is None:
            no_id.append((m["partition"], m["offset"]))
            continue
        seen[i] += 1
        if i not in want:
            unexpected[kind_of.get(i, "unknown")].append(i)
        elif want[i] != (m["partition"], m["offset"]):
            misplaced.append((i, want[i], (m["partition"], m["offset"])))
    for kind, ids in sorted(unexpected.items()):
        problems.append(f"{len(ids)} rows of {kind!r} records the table must not hold (ids {sorted(ids)[:5]}...)")
    if no_id:
        problems.append(f"{len(no_id)} rows without an id: transaction markers or undecodable values, "
                        f"at (partition, offset) {sorted(no_id)[:5]}...")
    dup = sorted(i for i, c in seen.items() if c > 1)
    if dup:
        problems.append(f"{len(dup)} records appear more than once (ids {dup[:5]}...)")
    dup_at = sorted(k for k, c in at.items() if c > 1)
    if dup_at:
        problems.append(f"{len(dup_at)} (topic, partition, offset) appear more than once: {dup_at[:3]}...")
    missing = collections.defaultdict(list)
    for i in want:
        if i not in seen:
            missing[kind_of[i]].append(i)
    for kind, ids in sorted(missing.items()):
        problems.append(f"{len(ids)} {kind!r} records are missing (ids {sorted(ids)[:5]}...)")
    if misplaced:
        problems.append(f"{len(misplaced)} rows at another offset than produced: (id, want, got) {misplaced[:3]}")
    if problems:
        fail(f"{reader}: {len(rows)} rows, want {len(want)} (kinds {args.kinds}): " + "; ".join(problems))


def check_ends(reader, rows, args, ends):
    got = collections.defaultdict(list)
    for r in rows:
        m = r[args.metadata]
        got[(m["topic"], m["partition"])].append(m["offset"])
    problems = []
    for topic, parts in sorted(ends.items()):
        for part, end in sorted(parts.items(), key=lambda kv: int(kv[0])):
            offs = got.pop((topic, int(part)), [])
            if sorted(offs) != list(range(end)):
                missing = sorted(set(range(end)) - set(offs))
                problems.append(f"{topic}/{part}: {len(offs)} rows for offsets 0..{end - 1} "
                                f"({len(missing)} missing, first {missing[:3]})")
    for (topic, part), offs in sorted(got.items()):
        problems.append(f"{topic}/{part}: {len(offs)} rows of a partition not produced to")
    if problems:
        fail(f"{reader}: " + "; ".join(problems))


def millis(ts):
    if isinstance(ts, datetime.datetime):
        if ts.tzinfo is None:
            ts = ts.replace(tzinfo=datetime.timezone.utc)
        return (ts - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)) // datetime.timedelta(milliseconds=1)
    return ts


def check_timestamps(reader, rows, args):
    typ, lo, hi = (int(x) for x in args.timestamps.split(":"))
    bad_type = collections.Counter()
    outside = []
    for r in rows:
        m = r[args.metadata]
        if m["timestampType"] != typ:
            bad_type[m["timestampType"]] += 1
        ms = millis(m["timestamp"])
        if ms is None or not lo <= ms <= hi:
            ts = m["timestamp"]
            outside.append((m["partition"], m["offset"], ts.isoformat() if ts is not None else None))
    problems = []
    if bad_type:
        problems.append(f"timestampType is {dict(bad_type)} (value: rows), want {typ} on every row")
    if outside:
        fmt = lambda ms: datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).isoformat()  # noqa: E731
        problems.append(f"{len(outside)} of {len(rows)} rows have {args.metadata}.timestamp outside "
                        f"[{fmt(lo)}, {fmt(hi)}], e.g. (partition, offset, timestamp) {outside[:2]}")
    if problems:
        fail(f"{reader}: " + "; ".join(problems))


def check_rows(reader, rows, args, bad, want=None, kind_of=None, ends=None):
    if want is not None:
        check_manifest(reader, rows, args, want, kind_of)
    if ends is not None:
        check_ends(reader, rows, args, ends)
    if args.timestamps:
        check_timestamps(reader, rows, args)
    if len(rows) != args.count:
        fail(f"{reader}: {len(rows)} rows, want {args.count}")
    if args.values or bad:
        corrupt = 0
        for r in rows:
            i = int(r["key"])
            if i in bad:
                corrupt += 1
                if bytes(r["_corrupt_record"]) != malformed(i):
                    fail(f"{reader}: record {i}: _corrupt_record is {r['_corrupt_record']!r}")
                if r["id"] is not None or r["name"] is not None:
                    fail(f"{reader}: malformed record {i} has parsed values {r['id']!r} {r['name']!r}")
                continue
            if r.get("_corrupt_record") is not None:
                fail(f"{reader}: good record {i} has _corrupt_record set")
            if args.values:
                want = json.loads(value(i))
                ts = r["ts"]
                if isinstance(ts, datetime.datetime):
                    ts = ts.astimezone(datetime.timezone.utc)
                    got_ts = ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"
                else:
                    got_ts = str(ts)
                got = {"id": r["id"], "name": r["name"], "amount": r["amount"], "ts": got_ts, "tags": list(r["tags"])}
                if got != want:
                    fail(f"{reader}: record {i}: got {got}, want {want}")
        if corrupt != len(bad):
            fail(f"{reader}: {corrupt} corrupt records, want {len(bad)}")
    if args.exactly_once:
        by_part = collections.defaultdict(list)
        for r in rows:
            m = r[args.metadata]
            by_part[(m["topic"], m["partition"])].append(m["offset"])
        for part, offs in sorted(by_part.items()):
            dup = [o for o, c in collections.Counter(offs).items() if c > 1]
            if dup:
                fail(f"{reader}: partition {part}: offsets {dup[:10]} appear more than once")
            if sorted(offs) != list(range(max(offs) + 1)):
                missing = sorted(set(range(max(offs) + 1)) - set(offs))
                fail(f"{reader}: partition {part}: offsets {missing[:10]} are missing")
    print(f"{reader}: {len(rows)} rows ok")


def open_location(location):
    """Returns the table's URI for delta-rs, its storage options, a pyarrow
    filesystem and the table's path in it. A location on S3 (as the agent
    reports it: s3://bucket/prefix?store options) is read with the client
    settings tools/s3.sh prints (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, ...)."""
    u = urllib.parse.urlsplit(location)
    if u.scheme != "s3":
        return location, None, pafs.LocalFileSystem(), location
    endpoint = urllib.parse.urlsplit(os.environ["AWS_ENDPOINT_URL"])
    options = {
        "AWS_ENDPOINT_URL": os.environ["AWS_ENDPOINT_URL"],
        "AWS_ACCESS_KEY_ID": os.environ["AWS_ACCESS_KEY_ID"],
        "AWS_SECRET_ACCESS_KEY": os.environ["AWS_SECRET_ACCESS_KEY"],
        "AWS_REGION": os.environ.get("AWS_REGION", "us-east-1"),
        "AWS_ALLOW_HTTP": "true",
        "AWS_S3_ALLOW_UNSAFE_RENAME": "true",  # delta-rs only reads here
    }
    fs = pafs.S3FileSystem(endpoint_override=endpoint.netloc, scheme=endpoint.scheme,
                           access_key=options["AWS_ACCESS_KEY_ID"], secret_key=options["AWS_SECRET_ACCESS_KEY"],
                           region=options["AWS_REGION"])
    path = u.netloc + u.path
    return f"s3://{path}", options, fs, path


def fs_path(uri):
    """The path of a data file URI delta-rs gives in the table's pyarrow
    filesystem."""
    if uri.startswith("s3://"):
        u = urllib.parse.urlsplit(uri)
        return urllib.parse.unquote(u.netloc + u.path)
    return uri.removeprefix("file://")


def duck_connect(options):
    """A DuckDB connection; with S3 storage options, with the httpfs and
    delta extensions and a secret for the server."""
    if options is None:
        return duckdb.connect()
    con = duckext.connect(httpfs=True)
    ep = urllib.parse.urlsplit(options["AWS_ENDPOINT_URL"])
    con.execute("CREATE SECRET s3 (TYPE s3, KEY_ID ?, SECRET ?, REGION ?, ENDPOINT ?, URL_STYLE 'path', USE_SSL ?)",
                [options["AWS_ACCESS_KEY_ID"], options["AWS_SECRET_ACCESS_KEY"], options["AWS_REGION"], ep.netloc,
                 ep.scheme == "https"])
    return con


# The names the agent gives data files (agent/internal/table/names.go).
AGENT_FILE = re.compile(r"^part-[0-9]{5}-tributary-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}-c000(\.[a-z0-9_]+)?\.parquet$")


def removed_paths(fs, root):
    """The data files the remove actions of the log's entries name, as
    paths on fs (the table's root is root)."""
    out = set()
    for i in fs.get_file_info(pafs.FileSelector(root.rstrip("/") + "/_delta_log")):
        name = os.path.basename(i.path)
        if i.type != pafs.FileType.File or not name.endswith(".json") or name.startswith(".") or name.startswith("_"):
            continue
        with fs.open_input_stream(i.path) as f:
            for line in f.read().decode().splitlines():
                action = json.loads(line) if line.strip() else {}
                if "remove" in action:
                    out.add(root.rstrip("/") + "/" + urllib.parse.unquote(action["remove"]["path"]))
    return out


def check_readers(check, options, uri, fs, files):
    """Reads the table's rows with DuckDB and pyarrow and checks them."""
    con = duck_connect(options)
    if options is None:
        rel = con.execute("SELECT * FROM read_parquet(?)", [files])
    else:
        # DuckDB opens the table itself, from its URL, through the log.
        rel = con.execute("SELECT * FROM delta_scan(?)", [uri])
    cols = [d[0] for d in rel.description]
    check("duckdb", [dict(zip(cols, t)) for t in rel.fetchall()])

    arrow_rows = []
    for f in files:
        arrow_rows.extend(pq.read_table(f, filesystem=fs).to_pylist())
    check("pyarrow", arrow_rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("table")
    ap.add_argument("--count", type=int)
    ap.add_argument("--manifest", help="JSON written by produce_txn.py")
    ap.add_argument("--kinds", default="", help="kinds of manifest records the table holds, comma-separated")
    ap.add_argument("--ends", help="JSON {topic: {partition: end offset}}: the offsets the table holds")
    ap.add_argument("--timestamps", help="TYPE:MIN_MS:MAX_MS every row's metadata timestamp must match")
    ap.add_argument("--malformed", default="")
    ap.add_argument("--values", action="store_true")
    ap.add_argument("--metadata", default="_kafka")
    ap.add_argument("--exactly-once", action="store_true")
    ap.add_argument("--no-orphans", action="store_true", help="fail if a data file on disk is not in the log")
    ap.add_argument("--orphans-by-agent", action="store_true",
                    help="fail if a data file on disk that is not in the log is not named like the agent's files "
                         "(a crash between a file's rename and its commit leaves one, collected after a grace period)")
    ap.add_argument("--files-only", action="store_true",
                    help="check the files only (--no-orphans, --orphans-by-agent, --compacted), not the rows")
    ap.add_argument("--compacted", action="store_true",
                    help="fail unless the log's history (as delta-rs reads it) holds an OPTIMIZE commit")
    args = ap.parse_args()
    bad = {int(x) for x in args.malformed.split(",") if x}
    want = kind_of = ends = None
    if args.manifest:
        with open(args.manifest) as f:
            records = json.load(f)["records"]
        kinds = set(args.kinds.split(","))
        kind_of = {r["id"]: r["kind"] for r in records}
        want = {r["id"]: (r["partition"], r["offset"]) for r in records if r["kind"] in kinds}
        if args.count is None:
            args.count = len(want)
    if args.ends:
        with open(args.ends) as f:
            ends = json.load(f)
    if args.count is None and not args.files_only:
        ap.error("--count is required without --manifest")
    check = lambda reader, rows: check_rows(reader, rows, args, bad, want, kind_of, ends)  # noqa: E731

    uri, options, fs, root = open_location(args.table)
    dt = DeltaTable(uri, storage_options=options)
    if not args.files_only:
        check("delta-rs", dt.to_pyarrow_table().to_pylist())

    # The plain readers read the files the log references: an uncommitted
    # file left by a crash is not part of the table until garbage collected.
    files = [fs_path(u) for u in dt.file_uris()]
    # Data files of a partitioned table are in the folders of their
    # partition values; checkpoints in _delta_log are not data files.
    on_disk = [i.path for i in fs.get_file_info(pafs.FileSelector(root, recursive=True))
               if i.type == pafs.FileType.File and i.path.endswith(".parquet") and "_delta_log/" not in i.path]
    if not args.files_only:
        check_readers(check, options, uri, fs, files)
    exists = lambda f: fs.get_file_info(f).type == pafs.FileType.File  # noqa: E731
    # Files a compaction removed stay on disk until vacuum: named by the
    # log's remove actions, they are the table's, not orphans.
    removed = removed_paths(fs, root)
    if args.no_orphans:
        orphans = sorted(set(on_disk) - set(files) - removed)
        if orphans:
            fail(f"{len(orphans)} data files on disk are neither in the table nor removed by the log: {orphans[:5]}")
    if args.orphans_by_agent:
        committed = {os.path.basename(f) for f in files}
        for f in on_disk:
            if os.path.basename(f) not in committed and not AGENT_FILE.match(os.path.basename(f)):
                fail(f"uncommitted file {f} is not named like the agent's data files")
        missing = [f for f in files if not exists(f)]
        if missing:
            fail(f"the log references missing files: {missing}")
    optimized = sum(1 for c in dt.history() if c.get("operation") == "OPTIMIZE")
    if args.compacted and optimized == 0:
        fail("the log holds no OPTIMIZE commit: the table was never compacted")
    print(f"files: {len(files)} committed, {len(removed)} removed, {len(on_disk)} on disk; {optimized} OPTIMIZE commits")


if __name__ == "__main__":
    main()
