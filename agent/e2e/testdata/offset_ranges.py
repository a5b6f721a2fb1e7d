"""Print the offsets a Tributary table holds, read with delta-rs through
its transaction log, as JSON {"topic/partition": [[from, to), ...]}: the
runs of consecutive offsets of each partition, from the metadata column.
Exits non-zero when an offset is in the table twice.

    offset_ranges.py TABLE_DIR [--metadata COLUMN]
"""
import argparse
import collections
import json
import sys

from deltalake import DeltaTable


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("table")
    ap.add_argument("--metadata", default="_kafka")
    args = ap.parse_args()
    rows = DeltaTable(args.table).to_pyarrow_table(columns=[args.metadata]).column(args.metadata).to_pylist()
    offsets = collections.defaultdict(list)
    for m in rows:
        offsets[f"{m['topic']}/{m['partition']}"].append(m["offset"])
    out = {}
    for tp, offs in sorted(offsets.items()):
        offs.sort()
        ranges = []
        for o in offs:
            if ranges and o == ranges[-1][1]:
                ranges[-1][1] = o + 1
            elif ranges and o < ranges[-1][1]:
                sys.exit(f"{tp}: offset {o} is in the table twice")
            else:
                ranges.append([o, o + 1])
        out[tp] = ranges
    print(json.dumps(out))


if __name__ == "__main__":
    main()
