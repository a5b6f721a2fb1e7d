// Package variant encodes JSON texts as Parquet VARIANT values: the metadata
// and value binaries of the Apache Parquet VariantEncoding specification.
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
//   - every other number (an exponent, more digits) is a double;
//   - strings are short strings below 64 bytes, long strings from 64 bytes;
//   - objects list their fields by key in byte order, and arrays keep their
//     order; both use the narrowest offsets and field ids that fit, and the
//     4-byte element count only above 255 elements;
//   - the metadata dictionary holds each key once, sorted by bytes, with the
//     sorted_strings bit set and the narrowest offsets that fit.
//
// Strings are UTF-8. A byte that is not part of valid UTF-8 becomes U+FFFD,
// one per byte, and so does a \u escape of a lone UTF-16 surrogate. Spark
// also writes U+FFFD for invalid bytes (sometimes one for a whole broken
// sequence) but writes '?' for a lone surrogate; U+FFFD is what Go's
// encoding/json writes and says more plainly that a character was lost.
//
// Where Encode is stricter than parse_json: it wants exactly one JSON value
// (Spark ignores what follows the first one), and it has no limit on the
// length of a number (Spark's parser refuses numbers over 1000 characters).
// Negative zero survives only as a double: -0 is the int8 0 and -0.0 the
// decimal 0.0, as in Spark, while -0e0 is the double -0.
//
// # Implementation
//
// The value is written with parquet-go's variant.Builder, which already
// picks the narrowest widths and sorts object fields. It interns keys in
// first-seen order and so cannot produce a sorted dictionary on its own;
// Encode therefore reads the text twice, collecting and sorting the keys
// first and writing the value second.
package variant
