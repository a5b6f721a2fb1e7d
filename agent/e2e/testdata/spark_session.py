"""The Spark session of the end-to-end checks that read tables with Spark.

check_spark.py and check_spark_mapping.py import it (they run from this
folder, which Python puts first on the import path).
"""
import os


def start(jars, app, work, conf=None):
    """A local Spark session with Delta from jars (a list of jar paths),
    its warehouse and scratch space under the folder work, sized for a
    2-core machine, in the UTC session time zone, quiet; conf adds settings
    (an Iceberg catalog, say)."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    for k, v in (conf or {}).items():
        builder = builder.config(k, v)
    spark = (builder.master("local[2]").appName(app)
             .config("spark.jars", ",".join(jars))
             .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
             .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.driver.memory", "1g")
             .config("spark.driver.extraJavaOptions", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.databricks.delta.snapshotPartitions", "2")
             .config("spark.sql.warehouse.dir", os.path.join(work, "warehouse"))
             .config("spark.local.dir", os.path.join(work, "local"))
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark
