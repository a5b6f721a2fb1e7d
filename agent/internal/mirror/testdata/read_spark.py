"""Reads an Iceberg mirror with Spark through the REST catalog (Iceberg's
Spark runtime), and the Delta table it mirrors with Spark's Delta reader,
and prints one JSON object: each reader's rows, as lists of the columns
named in argv[3], sorted.

Usage: read_spark.py CATALOG_URI NAMESPACE.TABLE COLUMN,... DELTA_PATH WORK_DIR
Environment: TRIBUTARY_SPARK (tools/spark), ICEBERG_SPARK_JAR.
"""
import glob
import json
import os
import sys

import spark_session


def main():
    uri, name, columns, delta_path, work = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4], sys.argv[5]
    jars = glob.glob(os.path.join(os.environ["TRIBUTARY_SPARK"], "jars", "*.jar")) + [os.environ["ICEBERG_SPARK_JAR"]]
    spark = spark_session.start(jars, "read_iceberg", work, conf={
        "spark.sql.catalog.ice": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.ice.type": "rest",
        "spark.sql.catalog.ice.uri": uri,
    })
    quoted = ", ".join("`" + c + "`" for c in columns)
    out = {}
    for reader, table in (("spark_iceberg", f"ice.{name}"), ("spark_delta", f"delta.`{delta_path}`")):
        rows = [list(r) for r in spark.sql(f"SELECT {quoted} FROM {table}").collect()]
        out[reader] = sorted(rows, key=lambda r: json.dumps(r, default=str))
    print(json.dumps(out, default=str, separators=(",", ":")))
    spark.stop()


if __name__ == "__main__":
    main()
