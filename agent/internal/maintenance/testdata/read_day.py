"""Read the simulated day's table (day_test.go) with delta-rs (its own
query engine), DuckDB's delta_scan and, given the Spark install's jars
folder, Spark with Delta.

    read_day.py TABLE [SPARK_JARS]

Prints one JSON object: per reader {"rows", "distinct", "sum"}: the rows,
the distinct (partition, offset) pairs and the sum of the offsets, or the
reader's error. Run with the e2e tests' testdata on PYTHONPATH (duckext,
spark_session).
"""
import glob
import json
import os
import sys
import tempfile

QUERY = "SELECT count(*), count(DISTINCT (partition, \"offset\")), sum(\"offset\") FROM t"


def shape(r):
    return {"rows": r[0], "distinct": r[1], "sum": r[2]}


def main():
    path = sys.argv[1]
    out = {}
    try:
        import pyarrow as pa
        from deltalake import DeltaTable, QueryBuilder

        dq = QUERY.replace("count(DISTINCT (partition, \"offset\"))", "count(DISTINCT partition * 4294967296 + \"offset\")")
        r = pa.table(QueryBuilder().register("t", DeltaTable(path)).execute(dq).read_all()).to_pylist()[0]
        out["delta-rs"] = shape(list(r.values()))
    except Exception as e:  # noqa: BLE001 - reported, the test decides
        out["delta-rs"] = "error: " + str(e).splitlines()[0]
    try:
        import duckext

        out["duckdb"] = shape(duckext.connect().execute(QUERY.replace("FROM t", "FROM delta_scan(?)"), [path]).fetchone())
    except Exception as e:  # noqa: BLE001
        out["duckdb"] = "error: " + str(e).splitlines()[0]
    if len(sys.argv) > 2:
        import spark_session

        spark = spark_session.start(sorted(glob.glob(os.path.join(sys.argv[2], "*.jar"))), "tributary-day",
                                    tempfile.mkdtemp(prefix="tributary-day-"))
        spark.read.format("delta").load(path).createOrReplaceTempView("t")
        r = spark.sql("SELECT count(*), count(DISTINCT partition, `offset`), sum(`offset`) FROM t").collect()[0]
        out["spark"] = shape(r)
        spark.stop()
    print(json.dumps(out), flush=True)
    os._exit(0)


if __name__ == "__main__":
    main()
