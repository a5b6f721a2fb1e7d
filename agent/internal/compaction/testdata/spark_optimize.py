"""Spark with Delta beside the compaction tests: it runs OPTIMIZE on a table
while the agent compacts it, then reads it.

    spark_optimize.py JARS WORK TABLE

It starts one Spark session (the e2e tests' spark_session, the Delta jars of
the folder JARS, scratch space under WORK), prints "ready", then serves
commands read one per line on stdin, answering each with one JSON line:

    optimize   OPTIMIZE the table: {"optimized": true, "metrics": {...}}, or
               {"optimized": false, "error": "<exception class>: ..."} when
               Delta refused it (a conflict with a concurrent commit)
    read       {"rows": n, "distinct": ids, "sum": sum of ids}

and exits at the end of its input.
"""
import glob
import json
import os
import sys

import spark_session


def main():
    jars_dir, work, path = sys.argv[1:4]
    jars = sorted(glob.glob(os.path.join(jars_dir, "*.jar")))
    spark = spark_session.start(jars, "tributary-compaction", work)
    print("ready", flush=True)
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "optimize":
            try:
                row = spark.sql(f"OPTIMIZE delta.`{path}`").collect()[0]
                out = {"optimized": True, "metrics": str(row["metrics"])}
            except Exception as e:  # a concurrent commit conflicts with OPTIMIZE
                out = {"optimized": False, "error": type(e).__name__ + ": " + str(e).splitlines()[0]}
        elif cmd == "read":
            r = spark.sql(f"SELECT count(*), count(DISTINCT id), sum(id) FROM delta.`{path}`").collect()[0]
            out = {"rows": r[0], "distinct": r[1], "sum": r[2]}
        else:
            out = {"error": f"unknown command {cmd!r}"}
        print(json.dumps(out), flush=True)
    spark.stop()
    os._exit(0)


if __name__ == "__main__":
    main()
