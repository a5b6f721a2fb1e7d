"""DuckDB connections with the delta (httpfs, iceberg) extensions loaded from
their wheels (tools/requirements.txt). DuckDB's own INSTALL, and the
autoload that delta_scan triggers, download the extension, and the test
machines have no route to that download."""

import glob
import os

import duckdb


def connect(httpfs=False, iceberg=False):
    """A DuckDB connection where delta_scan works; with httpfs, S3 URLs too;
    with iceberg, Iceberg tables and REST catalogs (ATTACH ... TYPE iceberg)."""
    import duckdb_extension_delta

    mods = [duckdb_extension_delta]
    if httpfs:
        import duckdb_extension_httpfs

        mods.insert(0, duckdb_extension_httpfs)
    if iceberg:
        import duckdb_extension_avro
        import duckdb_extension_httpfs
        import duckdb_extension_iceberg

        for mod in (duckdb_extension_httpfs, duckdb_extension_avro, duckdb_extension_iceberg):
            if mod not in mods:
                mods.append(mod)
    con = duckdb.connect()
    for mod in mods:
        for f in glob.glob(os.path.join(os.path.dirname(mod.__file__), "extensions", "*", "*.duckdb_extension")):
            con.load_extension(f)
    return con
