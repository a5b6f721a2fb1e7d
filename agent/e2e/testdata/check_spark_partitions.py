"""Read a table partitioned by date(_kafka.timestamp) with Spark and check
that it prunes partitions on a filter of the source column.

    check_spark_partitions.py --jars DIR --table PATH --count N --since TS

Checks: Spark reads N rows, each (topic, partition, offset) of _kafka once;
a filter _kafka.timestamp >= TS (a timestamp literal, UTC) plans a
partition filter on the generated date column and reads fewer files than
the whole table, and counts the same rows as without pruning would.
Exits non-zero on the first failure.
"""
import argparse
import glob
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import spark_session  # noqa: E402


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jars", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--since", required=True)
    ap.add_argument("--since-count", type=int, required=True)
    args = ap.parse_args()
    jars = sorted(glob.glob(os.path.join(args.jars, "*.jar")))
    with tempfile.TemporaryDirectory() as work:
        spark = spark_session.start(jars, "tributary-e2e-partitions", work)
        df = spark.read.format("delta").load(args.table)
        n = df.count()
        if n != args.count:
            fail(f"Spark reads {n} rows, want {args.count}")
        distinct = df.select("_kafka.topic", "_kafka.partition", "_kafka.offset").distinct().count()
        if distinct != args.count:
            fail(f"Spark reads {distinct} distinct offsets, want {args.count}")
        all_files = len(df.inputFiles())
        since = df.filter(f"_kafka.timestamp >= TIMESTAMP '{args.since}'")
        plan = since._jdf.queryExecution().executedPlan().toString()
        print(plan)
        if "PartitionFilters: [" not in plan or "_kafka_timestamp_date" not in plan.split("PartitionFilters: [", 1)[1].split("]", 1)[0]:
            fail("the plan of a filter on _kafka.timestamp has no partition filter on _kafka_timestamp_date")
        pruned = len(since.inputFiles())
        if not 0 < pruned < all_files:
            fail(f"the filter reads {pruned} of {all_files} files, want fewer than all")
        got = since.count()
        if got != args.since_count:
            fail(f"the filter counts {got} rows, want {args.since_count}")
        print(f"spark: {n} rows, {all_files} files; since {args.since}: {got} rows in {pruned} files")


if __name__ == "__main__":
    main()
