"""Have Spark compact a table the agent wrote, then check what it reads
after the agent's Vacuum deleted the compacted files.

    check_spark_vacuum.py optimize --jars DIR --table PATH --files N
    check_spark_vacuum.py read --jars DIR --table PATH --rows N

optimize runs OPTIMIZE (Spark local mode, the Delta jars of DIR), which must
remove the table's N small files and add one. read checks that Spark and
delta-rs both read ids 0 to N-1 once each, from files that all exist.
Exits non-zero on the first failure.
"""
import argparse
import glob
import os
import sys
import tempfile

from deltalake import DeltaTable

import spark_session


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["optimize", "read"])
    ap.add_argument("--jars", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--files", type=int)
    ap.add_argument("--rows", type=int)
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="spark-vacuum-")
    spark = spark_session.start(sorted(glob.glob(os.path.join(args.jars, "*.jar"))), "tributary-e2e-vacuum", work)
    if args.cmd == "optimize":
        metrics = spark.sql(f"OPTIMIZE delta.`{args.table}`").collect()[0]["metrics"]
        if metrics["numFilesRemoved"] != args.files or metrics["numFilesAdded"] != 1:
            fail(f"OPTIMIZE removed {metrics['numFilesRemoved']} files and added {metrics['numFilesAdded']}, "
                 f"want {args.files} and 1")
        print(f"Spark OPTIMIZE compacted {args.files} files into one")
    else:
        want = list(range(args.rows))
        ids = sorted(r["id"] for r in spark.read.format("delta").load(args.table).select("id").collect())
        if ids != want:
            fail(f"Spark reads ids {ids}, want 0 to {args.rows - 1}")
        ids = sorted(DeltaTable(args.table).to_pyarrow_table(columns=["id"]).column("id").to_pylist())
        if ids != want:
            fail(f"delta-rs reads ids {ids}, want 0 to {args.rows - 1}")
        print(f"Spark and delta-rs read the {args.rows} rows")
    spark.stop()


if __name__ == "__main__":
    main()
