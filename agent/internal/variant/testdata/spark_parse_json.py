"""Writes what Spark's parse_json makes of each input in CORPUS.

The output, spark_parse_json.jsonl beside this script, is checked in and
compared with the Encoder on every test run (TestSparkParseJSON). Each line
holds the input as hex and Spark's VARIANT metadata and value as hex, or
null for both when Spark refuses the input (try_parse_json gives null).

Run from the repository root after `tools/tools.sh py spark`:

    PYTHONPATH=.tools/spark/python .tools/py/bin/python \
        agent/internal/variant/testdata/spark_parse_json.py \
        > agent/internal/variant/testdata/spark_parse_json.jsonl
"""

import json

from pyspark.sql import SparkSession


def many_keys(n):
    return "{" + ",".join('"k%04d":%d' % (n - i, i * 1000) for i in range(n)) + "}"


CORPUS = [s.encode() if isinstance(s, str) else s for s in [
    # Scalars and the smallest integer type.
    "null", "true", "false", " 0 ", "-0", "1", "127", "128", "-128", "-129", "32767", "32768",
    "2147483647", "2147483648", "-9223372036854775808", "9223372036854775807",
    # Past int64: a decimal up to 38 digits, then a double.
    "9223372036854775808", "-9223372036854775809", "9" * 38, "-" + "9" * 38, "1" + "0" * 38,
    # Numbers with a fraction: decimals by precision and scale, else doubles.
    "0.0", "-0.0", "1.0", "1.50", "-2.50", "0.001", "0.000000001", "0.0000000001",
    "123456789.123456789", "1234567890.1234567890", "0." + "1" * 38, "0." + "1" * 39,
    "1." + "0" * 37, "1." + "0" * 38,
    # Exponents are always doubles.
    "1e2", "1E2", "-0e0", "1.5e-3", "2.50E+1", "1e400", "-1e400", "1e-400",
    # Strings: short below 64 bytes, long from 64; escapes; broken text.
    '""', '"hi"', '"' + "a" * 63 + '"', '"' + "a" * 64 + '"', '"' + "é" * 40 + '"',
    r'"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"', r'"\u0000"',
    r'"\ud800"', r'"\udc00x"', r'"\ud800\u0041"', r'"\ud800\ud800"',
    b'"\xff"', b'"a\xe2\x82b"', b'"\xc0\xaf"', b'"\xed\xa0\x80"', b'"\xf0\x9f\x98"',
    # Objects and arrays.
    "{}", "[]", '{"c": 3, "b": 2, "a": 1}', '[1, "x", null, true, [], {}]',
    '{"user":{"name":"Ada","tags":["x",{"deep":[1,2,[3]]}],"age":36},"ok":true,"n":null}',
    '{"ключ":"значение","emoji":"😀","中文":["汉字"],"a.b c":"(cost)","":0}',
    '[{"é":null,"a":true},{"a":false,"B":null}]', many_keys(300),
    "[" + ",".join(['"v"'] * 300) + "]",
    "[" * 999 + "]" * 999, "[" * 1000 + "]" * 1000, "[" * 1001 + "]" * 1001,
    '{"a":' * 1000 + "1" + "}" * 1000, '{"a":' * 1001 + "1" + "}" * 1001,
    '{"b\\u0000":1,"b":2,"\\u00e9":3,"e\\u0301":4}', '{"\\ud800":1,"?":2}',
    # Number length: Spark's JSON parser limits numbers to 1000 characters.
    "1" * 1000, "1" * 1001, "0." + "5" * 998, "0." + "5" * 999,
    # Refused by both.
    '{"a":1,"a":2}', '{"a":1,"\\u0061":2}', "", " ", "[1,]", "01", "+1", "1.", ".5", "NaN",
    "Infinity", "{'a':1}", "{a:1}", '"a\x01b"', r'"\x41"', "nul", "[1", '{"a" 1}',
    # Spark reads the first value and ignores the rest; the Encoder refuses.
    '{"id":1} xyz', '{"id":1}{"id":2}', "1 2",
]]


def main():
    spark = (SparkSession.builder.master("local[1]")
             .config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "1")
             .getOrCreate())
    rows = spark.createDataFrame([(i, bytearray(s)) for i, s in enumerate(CORPUS)], "i int, b binary")
    rows.createOrReplaceTempView("corpus")
    out = spark.sql("select i, try_parse_json(cast(b as string)) as v from corpus order by i").collect()
    for row in out:
        v = row["v"]
        print(json.dumps({
            "input": CORPUS[row["i"]].hex(),
            "metadata": None if v is None else bytes(v.metadata).hex(),
            "value": None if v is None else bytes(v.value).hex(),
        }))
    spark.stop()


if __name__ == "__main__":
    main()
