"""Write the checkpointed tables of other engines that the table package's
tests read (testdata/spark-checkpoint, testdata/deltars-checkpoint).

    make_fixtures.py spark   OUT  (PYTHONPATH=.tools/spark/python; Java 17)
    make_fixtures.py deltars OUT  (the tool venv's deltalake)

Both tables have the schema (id BIGINT NOT NULL, name STRING, amount DOUBLE)
and record the offsets of "t/a/0" in txn actions, 3 rows per append: four
appends (txn versions 3, 6, 9, 12), then a compaction that removes the four
files and adds one of 12 rows. Spark creates the table at version 0 and
checkpoints every 3 commits (the table property delta.checkpointInterval =
3): at version 3, and the compaction is version 5. delta-rs creates the
table with the first append and checkpoints once, after the compaction
(version 4). The
script then deletes what log cleanup would: the entries before the
checkpoint, checksums (and Hadoop's), and the data files the log no longer
references.
"""
import glob
import os
import shutil
import sys

ROWS = [[(i * 10 + j, "n%d" % j, j / 2.0) for j in range(3)] for i in range(4)]


def spark(out):
    from pyspark.sql import SparkSession
    jars = glob.glob(os.path.join(os.path.dirname(__file__), "../../../../.tools/spark/jars/*.jar"))
    s = (SparkSession.builder.master("local[1]").appName("fixture")
         .config("spark.jars", ",".join(jars))
         .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
         .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
         .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
         .config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", "1")
         .config("spark.databricks.delta.snapshotPartitions", "1")
         .getOrCreate())
    s.sql(f"CREATE TABLE delta.`{out}` (id BIGINT NOT NULL, name STRING, amount DOUBLE) USING delta "
          "TBLPROPERTIES ('delta.checkpointInterval'='3')")
    for i, rows in enumerate(ROWS):
        (s.createDataFrame(rows, "id BIGINT, name STRING, amount DOUBLE").coalesce(1)
         .write.format("delta").mode("append")
         .option("txnAppId", "t/a/0").option("txnVersion", (i + 1) * 3).save(out))
    s.sql(f"OPTIMIZE delta.`{out}`")
    s.stop()


def deltars(out):
    import pyarrow as pa
    from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake
    schema = pa.schema([("id", pa.int64(), False), ("name", pa.string()), ("amount", pa.float64())])
    for i, rows in enumerate(ROWS):
        t = pa.Table.from_pylist([dict(zip(["id", "name", "amount"], r)) for r in rows], schema=schema)
        write_deltalake(out, t, mode="append",
                        commit_properties=CommitProperties(app_transactions=[Transaction("t/a/0", (i + 1) * 3)]))
    dt = DeltaTable(out)
    dt.optimize.compact()
    dt.create_checkpoint()


def clean(out):
    log = os.path.join(out, "_delta_log")
    for p in glob.glob(os.path.join(out, ".*.crc")) + glob.glob(os.path.join(log, ".*.crc")):
        os.remove(p)  # Hadoop's checksums of Spark's files
    cp = max(int(os.path.basename(p)[:20]) for p in glob.glob(os.path.join(log, "*.checkpoint.parquet")))
    for p in glob.glob(os.path.join(log, "*")):
        name = os.path.basename(p)
        if os.path.isdir(p):
            shutil.rmtree(p)
        elif name.endswith(".crc") or (name.endswith(".json") and int(name[:20]) < cp):
            os.remove(p)
    from deltalake import DeltaTable
    live = set(DeltaTable(out).file_uris())
    for p in glob.glob(os.path.join(out, "*.parquet")):
        if os.path.abspath(p) not in {os.path.abspath(u.removeprefix("file://")) for u in live}:
            os.remove(p)


if __name__ == "__main__":
    kind, out = sys.argv[1], os.path.abspath(sys.argv[2])
    {"spark": spark, "deltars": deltars}[kind](out)
    clean(out)
    print("ok", out)
