// Package columns decides the columns a table starts with, before its
// writer (package deltasink) opens it: the columns of an inferred part
// (json_options with a schema_evolution_mode), from json_options'
// initial_schemas, the records sampled from Kafka and the schema hints;
// the columns of change events' row images; and the columns a table keeps
// when its options change. It also holds the one limit every change of
// columns is checked against (TooWide). It sits between the decode stage
// below (package ingest's decoders, which it runs on sampled records) and
// the runners and the table writer above.
package columns
