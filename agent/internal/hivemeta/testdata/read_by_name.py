"""Reads a table by name with Spark through a Hive Metastore
(catalogImplementation=hive), with Delta, and prints its rows as one JSON
list of lists, sorted.

Usage: read_by_name.py METASTORE_URI SCHEMA.TABLE WORK_DIR
Environment: TRIBUTARY_SPARK (tools/spark).
"""
import glob
import json
import os
import sys

import spark_session


def main():
    uri, name, work = sys.argv[1], sys.argv[2], sys.argv[3]
    jars = glob.glob(os.path.join(os.environ["TRIBUTARY_SPARK"], "jars", "*.jar"))
    spark = spark_session.start(jars, "read_by_name", work, conf={
        "spark.sql.catalogImplementation": "hive",
        "spark.hadoop.hive.metastore.uris": uri,
    })
    rows = sorted([list(r) for r in spark.table(name).collect()], key=lambda r: json.dumps(r, default=str))
    print(json.dumps(rows, default=str, separators=(",", ":")))
    spark.stop()


if __name__ == "__main__":
    main()
