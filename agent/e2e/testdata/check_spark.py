"""Open Tributary tables with Spark (PySpark and Delta Lake) and with delta-rs.

    check_spark.py produce --bootstrap HOST:PORT --topic T --count N [--malformed i,j,...]
    check_spark.py check --jars DIR --tables JSON
    check_spark.py maintain --jars DIR --table PATH --ready FILE --go FILE --count N

produce writes records like produce.py's (key str(i), header
'source: produce.py') whose JSON value also has "local", a timestamp without a
time zone, for TIMESTAMP_NTZ columns: {"id", "name", "ts", "local", "tags"}.

check starts ONE Spark session (local mode, the Delta jars of DIR on
spark.jars, nothing resolved at run time) and, for every table of JSON (a list
of {"name", "path", "count", "append_only": bool, "append": bool, "error"}):
  - with "error", checks that Spark refuses to read it with that error;
  - reads it with Spark and with delta-rs: both see exactly count rows, and
    the same rows (every column, nested ones too; timestamps compared in UTC);
  - with "append_only", checks that the table is append-only (delta.appendOnly =
    true) as Spark's DESCRIBE DETAIL reports it;
  - with "append", copies the table and has Spark append 3 rows that lack
    the source metadata column and _corrupt_record (legal now that the
    metadata column's nested fields are nullable), reads the copy with both
    readers, and (with "append_only") checks that Spark refuses to DELETE from it.

maintain does to a table the agent is writing what a data platform's Spark
job does (see maintenance_test.go): it sets delta.checkpointInterval = 1 and
runs OPTIMIZE, so Spark writes checkpoints and Hadoop's checksum side file
_delta_log/._last_checkpoint.crc; it writes the version of its last
checkpoint to the file --ready and waits for the file --go, which the test
writes once the agent has committed (and so checkpointed) after Spark. Then
Spark's local file system must read _last_checkpoint without a checksum
error, and Spark and delta-rs must read the same count rows.

Prints one line per check; exits non-zero on the first failure.
"""
import argparse
import datetime
import glob
import json
import os
import shutil
import sys
import tempfile
import time

import spark_session

UTC = datetime.timezone.utc
BASE = datetime.datetime(2024, 5, 1, 12, 0, 0)


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def local_ts(i):
    return BASE + datetime.timedelta(milliseconds=i * 37)


def value(i):
    ts = local_ts(i)
    ms = f"{ts.microsecond // 1000:03d}"
    return json.dumps({
        "id": i,
        "name": f"user-{i}",
        "ts": ts.strftime("%Y-%m-%dT%H:%M:%S.") + ms + "Z",
        "local": ts.strftime("%Y-%m-%dT%H:%M:%S.") + ms,
        "tags": ["t%d" % (i % 3), "all"],
    }, separators=(",", ":")).encode()


def produce(args):
    from confluent_kafka import Producer
    from kafka_admin import create_topic

    bad = {int(x) for x in args.malformed.split(",") if x}
    create_topic(args.bootstrap, args.topic, 4)
    p = Producer({"bootstrap.servers": args.bootstrap, "linger.ms": 20, "enable.idempotence": True})
    failed = []
    for i in range(args.count):
        v = b'{"id": %d, "local": "broken' % i if i in bad else value(i)
        p.produce(args.topic, key=str(i).encode(), value=v, headers=[("source", b"produce.py")],
                  on_delivery=lambda err, msg: err and failed.append(err))
        if i % 1000 == 0:
            p.poll(0)
    p.flush(60)
    if failed:
        fail(f"{len(failed)} records failed: {failed[:3]}")
    print(f"produced {args.count} records to {args.topic}")


def norm(v):
    """A value as Spark and delta-rs both can give it: bytes, naive UTC
    datetimes, dicts for structs, lists."""
    from pyspark.sql import Row

    if isinstance(v, Row):
        v = v.asDict(recursive=False)
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [norm(x) for x in v]
    if isinstance(v, (bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, datetime.datetime) and v.tzinfo is not None:
        return v.astimezone(UTC).replace(tzinfo=None)
    return v


def sort_key(r):
    k = r["key"]
    return (k is None, k if isinstance(k, bytes) else (k or "").encode())


def spark_rows(spark, path):
    return sorted((norm(r) for r in spark.read.format("delta").load(path).collect()), key=sort_key)


def deltars_rows(path):
    from deltalake import DeltaTable

    return sorted((norm(r) for r in DeltaTable(path).to_pyarrow_table().to_pylist()), key=sort_key)


def compare(name, spark, path, count):
    t0 = time.monotonic()
    s = spark_rows(spark, path)
    d = deltars_rows(path)
    if len(s) != count:
        fail(f"{name}: Spark reads {len(s)} rows, want {count}")
    if len(d) != count:
        fail(f"{name}: delta-rs reads {len(d)} rows, want {count}")
    for a, b in zip(s, d):
        if a != b:
            fail(f"{name}: Spark and delta-rs differ:\n  spark    {a}\n  delta-rs {b}")
    print(f"{name}: Spark and delta-rs read the same {count} rows ({time.monotonic() - t0:.1f}s)")
    return s


def check_values(name, rows):
    """Spot checks of what Spark reads against what produce wrote."""
    for r in rows:
        key = r["key"].decode() if isinstance(r["key"], bytes) else r["key"]
        if not key.isdigit():
            continue  # not produced by this test
        if "local" in r and r.get("_corrupt_record") is None:
            want = local_ts(int(key))
            if r["local"] != want or r["ts"] != want:
                fail(f"{name}: record {key}: ts {r['ts']}, local {r['local']}, want {want} for both")
        for col, v in r.items():
            if isinstance(v, dict) and "headers" in v and v["headers"] != [{"key": "source", "value": b"produce.py"}]:
                fail(f"{name}: record {key}: {col}.headers is {v['headers']}")


def check(args):
    # PySpark turns TIMESTAMP values into naive datetimes in the local zone.
    os.environ["TZ"] = "UTC"
    time.tzset()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from delta.tables import DeltaTable

    tables = json.loads(args.tables)
    jars = sorted(glob.glob(os.path.join(args.jars, "*.jar")))
    if not any("delta-spark" in os.path.basename(j) for j in jars):
        fail(f"no delta-spark jar in {args.jars}")
    work = tempfile.mkdtemp(prefix="tributary-spark-")
    t0 = time.monotonic()
    spark = spark_session.start(jars, "tributary-e2e", work)
    print(f"spark {spark.version} started in {time.monotonic() - t0:.1f}s")
    try:
        for t in tables:
            name, path, count = t["name"], t["path"], t["count"]
            if t.get("error"):
                try:
                    spark.read.format("delta").load(path).count()
                except Exception as e:  # noqa: BLE001 - Spark raises its own classes
                    if t["error"] not in str(e):
                        fail(f"{name}: Spark fails with {e}, want {t['error']}")
                    print(f"{name}: Spark refuses it with {t['error']}")
                    continue
                fail(f"{name}: Spark reads it, want {t['error']}")
            t1 = time.monotonic()
            detail = DeltaTable.forPath(spark, path).detail().collect()[0]
            print(f"{name}: protocol {detail['minReaderVersion']}/{detail['minWriterVersion']} "
                  f"features {sorted(detail['tableFeatures'] or [])} properties {dict(detail['properties'])} "
                  f"({time.monotonic() - t1:.1f}s)")
            if t.get("append_only") and detail["properties"].get("delta.appendOnly") != "true":
                fail(f"{name}: delta.appendOnly is not true: {dict(detail['properties'])}")
            rows = compare(name, spark, path, count)
            check_values(name, rows)
            if t.get("append"):
                append(spark, name, path, count, work, t.get("append_only"))
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(f"spark checks done in {time.monotonic() - t0:.1f}s")


def append(spark, name, path, count, work, append_only):
    """Spark appends 3 rows without the metadata column to a copy of path
    and, if append_only, fails to delete one."""
    copy = os.path.join(work, name + "-copy")
    shutil.copytree(path, copy, ignore=shutil.ignore_patterns("_tmp", "_tributary*"))
    schema = spark.read.format("delta").load(copy).schema
    keep = [f for f in schema.fields if f.name in ("key", "id", "name", "ts", "local", "tags")]
    from pyspark.sql.types import StructType

    def val(f, i):
        return {"key": f"spark-{i}", "id": 10_000_000 + i, "name": f"spark-{i}", "ts": local_ts(i),
                "local": local_ts(i), "tags": ["spark"]}[f.name]

    rows = [tuple(val(f, i) for f in keep) for i in range(3)]
    spark.createDataFrame(rows, StructType(keep)).write.format("delta").mode("append").save(copy)
    got = compare(name + " + Spark append", spark, copy, count + 3)
    added = [r for r in got if str(r["key"]).startswith("spark-")]
    meta = [f.name for f in schema.fields if f.name not in [k.name for k in keep] and f.name != "_corrupt_record"]
    if len(added) != 3 or any(r[m] is not None for r in added for m in meta):
        fail(f"{name}: appended rows {added}, want 3 with {meta} null")
    if not append_only:
        return
    try:
        spark.sql(f"DELETE FROM delta.`{copy}` WHERE key = 'spark-0'")
    except Exception as e:  # noqa: BLE001 - Spark raises its own classes
        if "APPEND_ONLY" not in str(e).upper() and "append-only" not in str(e):
            fail(f"{name}: DELETE failed, but not because the table is append-only: {e}")
        print(f"{name}: Spark refuses DELETE on the append-only table")
    else:
        fail(f"{name}: Spark deleted from an append-only table")


def maintain(args):
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    path = args.table
    log = os.path.join(path, "_delta_log")
    work = tempfile.mkdtemp(prefix="tributary-spark-")
    spark = spark_session.start(sorted(glob.glob(os.path.join(args.jars, "*.jar"))), "tributary-e2e-maintain", work)
    try:
        spark.sql(f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES ('delta.checkpointInterval' = '1')")
        optimized = spark.sql(f"OPTIMIZE delta.`{path}`").collect()[0]["metrics"]
        print(f"Spark OPTIMIZE: {optimized['numFilesRemoved']} files into {optimized['numFilesAdded']}")
        if not os.path.exists(os.path.join(log, "._last_checkpoint.crc")):
            fail(f"Spark wrote no ._last_checkpoint.crc in {log}: the premise of this check is gone")
        with open(os.path.join(log, "_last_checkpoint")) as f:
            version = json.load(f)["version"]
        print(f"Spark checkpointed version {version}")
        with open(args.ready, "w") as f:
            f.write(str(version))
        deadline = time.monotonic() + 120
        while not os.path.exists(args.go):
            if time.monotonic() > deadline:
                fail(f"no {args.go} after 120s")
            time.sleep(0.2)

        # Hadoop's local file system checks a file against its side file on
        # every read; a stale side file raises ChecksumException here, and
        # makes Spark's log reads sleep and retry.
        jvm = spark._jvm
        fs = jvm.org.apache.hadoop.fs.FileSystem.getLocal(spark._jsc.hadoopConfiguration())
        stream = fs.open(jvm.org.apache.hadoop.fs.Path(os.path.join(log, "_last_checkpoint")))
        try:
            text = bytes(jvm.org.apache.commons.io.IOUtils.toByteArray(stream)).decode()
        except Exception as e:  # noqa: BLE001 - py4j raises Java's exceptions wrapped
            fail(f"Spark's file system fails reading _last_checkpoint: {e}")
        finally:
            stream.close()
        now = json.loads(text)["version"]
        if now <= version:
            fail(f"_last_checkpoint is at version {now}, not past Spark's {version}")
        print(f"Spark's file system reads the agent's _last_checkpoint (version {now}) without a checksum error")
        compare("after Spark's maintenance", spark, path, args.count)
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("produce")
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--malformed", default="")
    c = sub.add_parser("check")
    c.add_argument("--jars", required=True)
    c.add_argument("--tables", required=True)
    m = sub.add_parser("maintain")
    m.add_argument("--jars", required=True)
    m.add_argument("--table", required=True)
    m.add_argument("--ready", required=True)
    m.add_argument("--go", required=True)
    m.add_argument("--count", type=int, required=True)
    args = ap.parse_args()
    {"produce": produce, "check": check, "maintain": maintain}[args.cmd](args)


if __name__ == "__main__":
    main()
