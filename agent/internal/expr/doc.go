// Package expr is the subset of Databricks SQL that fanout_by is written in:
// it parses an expression once (at plan time, and again in the agent),
// resolves its columns and functions against the raw Kafka record, checks
// its types and compiles it to a tree of typed closures that evaluate one
// record at a time without reflection.
//
// The raw record's columns are key and value (BINARY), topic (STRING),
// partition (INT), offset (BIGINT), timestamp (TIMESTAMP), timestampType
// (INT) and headers (ARRAY<STRUCT<key: STRING, value: BINARY>>).
package expr
