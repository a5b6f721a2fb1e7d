"""Open a table with Delta column mapping and type widening with Spark.

    check_spark_mapping.py --jars DIR --table PATH

The table (see spark_mapping_test.go) has columns id BIGINT, `first name`
STRING, `a.b` BIGINT (widened from INT), s STRUCT<`x y`: DOUBLE> (widened
from FLOAT) and `new col` STRING (added by the second commit), with rows
id 0 and 1 in the first file and id 2 in the second. Spark (local mode, the
Delta jars of DIR) must read every row by the real names, with the first
file's values widened, and report the columnMapping and typeWidening
features; it then appends the row id 3, which the agent's next commit
follows. Exits non-zero on the first failure.
"""
import argparse
import glob
import os
import sys
import tempfile

import spark_session


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jars", required=True)
    ap.add_argument("--table", required=True)
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="spark-mapping-")
    spark = spark_session.start(sorted(glob.glob(os.path.join(args.jars, "*.jar"))), "tributary-e2e-mapping", work)

    df = spark.read.format("delta").load(args.table)
    names = df.schema.fieldNames()
    if names != ["id", "first name", "a.b", "s", "new col"]:
        fail(f"Spark sees columns {names}")
    rows = [r.asDict(recursive=True) for r in df.orderBy("id").collect()]
    want = [
        {"id": 0, "first name": "user-0", "a.b": 0, "s": {"x y": 0.5}, "new col": None},
        {"id": 1, "first name": "user-1", "a.b": 1, "s": {"x y": 1.5}, "new col": None},
        {"id": 2, "first name": "user-2", "a.b": 1 << 40, "s": {"x y": 0.1}, "new col": "n2"},
    ]
    if rows != want:
        fail(f"Spark reads {rows}, want {want}")
    detail = spark.sql(f"DESCRIBE DETAIL delta.`{args.table}`").collect()[0]
    features = set(detail["tableFeatures"])
    if not {"columnMapping", "typeWidening"} <= features:
        fail(f"table features {features}")
    print(f"Spark reads {len(rows)} rows by name; protocol {detail['minReaderVersion']}/{detail['minWriterVersion']}, "
          f"features {sorted(features)}")

    spark.sql(f"INSERT INTO delta.`{args.table}` VALUES (3, 'user-3', 3, named_struct('x y', 3.5D), 'n3')")
    n = spark.read.format("delta").load(args.table).where("`first name` = 'user-3' AND `a.b` = 3").count()
    if n != 1:
        fail(f"Spark's own row reads back {n} times")
    print("Spark appended row 3")
    spark.stop()


if __name__ == "__main__":
    main()
