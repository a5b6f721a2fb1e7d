#!/usr/bin/env python3
"""Runs Spark's from_json over the JSON decoder's differential corpus.

The corpus, agent/internal/decode/testdata/spark_from_json/corpus.json, is a
list of cases: a Spark DDL schema, Spark JSON options, and records. A record
is a JSON string holding the record's text, or {"hex": "..."} for bytes that
are not UTF-8. This script parses every record as a Kafka value is parsed in
Spark, from_json(CAST(value AS STRING), schema, options) in PERMISSIVE mode
with a `_corrupt_record STRING` column added to the schema, and writes what
Spark returns to expected.json next to the corpus, which is checked in. The
Go test TestSparkFromJSONCorpus (agent/internal/decode) compares the agent's
decoder with it on every `go test`, without Spark.

Regenerate expected.json after changing the corpus (Spark 4.0.1 and Java 17,
installed by `tools/tools.sh spark py`), from the repository root:

    PYTHONPATH=.tools/spark/python .tools/py/bin/python tools/spark/from_json_corpus.py

The values are written in plain JSON: numbers as numbers (NaN and the
infinities as the strings "NaN", "Infinity", "-Infinity"), DECIMAL as its
text, BINARY as standard base64, DATE as days and TIMESTAMP and
TIMESTAMP_NTZ as microseconds since the epoch (UTC; top-level fields only),
a struct as an object, an array as a list, a map as a list of [key, value]
pairs (duplicate keys kept at the top level; a nested map goes through a
Python dict, which keeps the last). A record whose from_json result is null (empty input) has null
fields.
"""
import base64
import decimal
import json
import math
import os
import sys

CORPUS_DIR = os.path.join("agent", "internal", "decode", "testdata", "spark_from_json")
CORRUPT = "_corrupt_record"


def record_bytes(rec):
    """The bytes of a corpus record: its text, or {"hex": ...}."""
    if isinstance(rec, str):
        return rec.encode("utf-8")
    return bytes.fromhex(rec["hex"])


def plain(v):
    """A value Spark returned, in the plain JSON of expected.json."""
    from pyspark.sql import Row
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return v
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (bytes, bytearray)):
        return base64.b64encode(bytes(v)).decode("ascii")
    if isinstance(v, Row):
        return {k: plain(x) for k, x in v.asDict(recursive=False).items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return [[plain(k), plain(x)] for k, x in v.items()]
    raise TypeError(f"unexpected value {v!r} of {type(v)}")


def column(F, field):
    """The select expression of a top-level field: DATE as days and
    TIMESTAMP as microseconds since the epoch (Python's datetime cannot hold
    every year Spark parses)."""
    from pyspark.sql.types import ArrayType, DateType, MapType, StructType, TimestampNTZType, TimestampType
    c = F.col(f"r.`{field.name}`")
    t = field.dataType
    if isinstance(t, DateType):
        c = F.unix_date(c)
    elif isinstance(t, TimestampType):
        c = F.unix_micros(c)
    elif isinstance(t, TimestampNTZType):
        c = F.unix_micros(c.cast("timestamp"))  # the session zone is UTC
    elif isinstance(t, MapType):
        c = F.map_entries(c)  # a Python dict would keep one of duplicate keys
    elif isinstance(t, (ArrayType, StructType)) and any(
            x in t.simpleString() for x in ("date", "timestamp")):
        raise ValueError(f"{field.name}: DATE and TIMESTAMP are supported at the top level only")
    return c.alias(field.name)


def main():
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession, functions as F
    from pyspark.sql.types import BinaryType, MapType, StructField, StructType

    with open(os.path.join(CORPUS_DIR, "corpus.json"), encoding="utf-8") as f:
        corpus = json.load(f)
    spark = (SparkSession.builder.master("local[1]").appName("tributary-from-json-corpus")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    spark_version = spark.version
    cases = []
    try:
        for case in corpus:
            recs = [record_bytes(r) for r in case["records"]]
            df = spark.createDataFrame([(r,) for r in recs], StructType([StructField("value", BinaryType())]))
            opts = dict(case.get("options", {}))
            opts.update(mode="PERMISSIVE", columnNameOfCorruptRecord=CORRUPT)
            parsed = df.select(F.from_json(F.col("value").cast("string"),
                                           case["ddl"] + f", {CORRUPT} STRING", opts).alias("r"))
            fields = parsed.schema["r"].dataType.fields
            rows = parsed.select(F.col("r").isNull().alias("null"), F.col(f"r.{CORRUPT}").isNotNull().alias("corrupt"),
                                 *[column(F, f) for f in fields if f.name != CORRUPT]).collect()
            results = []
            for rec, row in zip(case["records"], rows):
                values = None if row["null"] else {f.name: plain(row[f.name]) for f in fields if f.name != CORRUPT}
                for f in fields:
                    if values and isinstance(f.dataType, MapType) and values[f.name] is not None:
                        values[f.name] = [[e["key"], e["value"]] for e in values[f.name]]
                results.append({"record": rec, "fields": values, "corrupt": row["corrupt"]})
            cases.append({"name": case["name"], "results": results})
            print(f"{case['name']}: {len(results)} records")
    finally:
        spark.stop()
    path = os.path.join(CORPUS_DIR, "expected.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"generated": "by tools/spark/from_json_corpus.py from corpus.json; do not edit",
                   "spark": spark_version, "cases": cases}, f, indent=1, ensure_ascii=False, allow_nan=False)
        f.write("\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
