// Package variant encodes JSON texts as Parquet VARIANT values: the metadata
// and value binaries of the Apache Parquet VariantEncoding specification;
// and [AppendJSON] renders such a value back as JSON text (see there for its
// forms), for a Kafka sink that writes a table's VARIANT column.
//
// The encoding follows Spark 4's parse_json so that Spark, DuckDB and other
// readers see the same values Spark itself would have written:
//
//   - null, true and false are the null and boolean primitives;
//   - integers that fit int64 are int8, int16, int32 or int64, the smallest
//     that holds the value;
//   - other numbers without an exponent are decimals when their significant
//     digits and their digits after the point each number at most 38
//     (decimal4 up to 9, decimal8 up to 18, else decimal16; the scale is the
//     number of digits after the point, so 1.50 keeps scale 2);
//   - every other number (an exponent, more digits) is a double, ±Inf when
//     out of range;
//   - negative zero survives only as a double: -0 is the int8 0 and -0.0 the
//     decimal 0.0, while -0e0 is the double -0;
//   - strings are short strings below 64 bytes, long strings from 64 bytes;
//   - objects list their fields by key in byte order, and arrays keep their
//     order; both use the narrowest offsets and field ids that fit, and the
//     4-byte element count only above 255 elements;
//   - the metadata dictionary holds each key once, sorted by bytes, with the
//     sorted_strings bit set and the narrowest offsets that fit.
//
// Strings are UTF-8, and broken text is replaced as Spark replaces it (Spark
// decodes the input with Java's UTF-8 decoder and encodes the parsed strings
// with Java's encoder): bytes that are not valid UTF-8 become U+FFFD, one for
// each run Java's decoder replaces (a truncated sequence is one, an overlong
// form one per byte), and a \u escape of a lone UTF-16 surrogate becomes '?'.
//
// Encode differs from parse_json in three ways. It wants exactly one JSON
// value, where Spark reads the first value and silently drops what follows.
// It refuses an object whose keys differ only in lone surrogates ("\ud800"
// and "?"), where Spark writes two fields named "?", which the specification
// forbids. And it reads integers of any length, where Spark's JSON parser
// refuses those of more than 1000 digits. testdata/spark_parse_json.jsonl
// holds what Spark 4.0.1 made of a corpus of tricky inputs; the tests compare
// the Encoder with it.
//
// # Implementation
//
// Encode reads the text once and writes the value from what it read. The
// first pass checks the text, collects the object keys, sorts them into the
// dictionary and gives each key occurrence its id; it notes each value and
// each end of an object or array in a tape (its kind and where it lies in
// the text). The second pass walks the tape and writes the value with those
// ids (a writer of its own, which writes the bytes parquet-go's
// variant.Builder writes, without looking keys up), reading only the bytes
// of strings and numbers again. The dictionary and the ids depend only on
// the text's keys in order (its shape), and records of one kind come in a
// few shapes: the Encoder keeps the dictionaries of up to 128 recent shapes
// (in at most 256 KiB), so a text of a kept shape neither builds nor sorts
// one. Once its buffers have grown, Encode does not allocate.
//
// Cost (BenchmarkEncode, go test -bench, time per call on a shared 2-core
// AMD EPYC, 5 December 2026): about 0.26 µs for a 94-byte flat object and
// 2.6 µs for a 970-byte nested one, both with 0 allocations (0.34 µs and
// 3.7 µs in the same run when the second pass read the text's syntax
// again). The generic route it replaces, encoding/json into Go values then
// parquet-go's variant.Marshal (BenchmarkMarshalGeneric), took 3.1 µs with
// 52 allocations and 29 µs with 379 allocations, and is not even correct:
// it writes numbers as strings and leaves the dictionary unsorted.
// AppendJSON (BenchmarkAppendJSON) renders the two objects back in about
// 0.32 µs and 3.3 µs, with 0 allocations into a buffer that has grown.
package variant
