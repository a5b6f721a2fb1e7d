// Package table writes a destination table: Parquet data files plus a
// transaction log that follows the Delta Lake protocol, so that the table
// opens as a Delta table in Spark, delta-rs and DuckDB and its files stay
// readable by any plain Parquet reader.
//
// A table is a folder, on local disk or under a prefix of an object store;
// package storage reads and writes its files (with put-if-absent writes
// and a lock file on local disk), and this package decides what they hold:
//
//	<table>/part-00000-tributary-<uuid>-c000.snappy.parquet   committed or orphaned data files
//	<table>/_tmp/...                                 files being written (ignored by readers)
//	<table>/_delta_log/00000000000000000000.json     one log entry per version
//	<table>/_delta_log/00000000000000000010.checkpoint.parquet
//	                                                 the table's state at a version
//	<table>/_delta_log/_last_checkpoint              points to the latest checkpoint
//	<table>/_tributary.lock                          the writer's lock, naming it
//
// Ingestion is exactly once because of the order of operations (see the
// "Data flow and the commit protocol" section of the architecture):
//
//  1. [Table.NewFile] streams rows into a file under _tmp/; [FileWriter.Close]
//     fsyncs it and moves it into the table folder under a name nothing
//     overwrites. Until a log entry adds it, the file is invisible to Delta
//     readers and is garbage to [Table.CollectGarbage], once older than a
//     grace period.
//  2. [Table.Commit] writes one log entry that adds the files, carries any
//     schema change and records, for every topic-partition, the next offset to
//     read (a Delta "txn" action). The entry is created put-if-absent, and
//     only if the log still holds, for every topic-partition, the offset the
//     commit's rows start from ([Commit.From]), so of two writers that read
//     the same records at most one commits them.
//  3. On start, [Open] replays the log (the newest checkpoint, then the
//     entries after it) and [Snapshot.Txns] says where every partition
//     resumes.
//
// The log is kept as Delta engines keep it, so that it stays short to read
// over months: a Parquet checkpoint follows every delta.checkpointInterval
// commits, entries and checkpoints older than delta.logRetentionDuration
// are then deleted, and every add action carries the file's statistics for
// data skipping. Other engines may compact, checkpoint, clean up and vacuum
// the table between runs: their remove actions and checkpoints are read
// like the agent's own. [Table.Vacuum] deletes the data files removed longer
// than delta.deletedFileRetentionDuration ago, whichever engine removed
// them; [Table.CollectGarbage] deletes what this package wrote and never
// committed. A log that asks for a protocol version or a table
// feature this package does not implement is refused with an
// [*UnsupportedFeatureError].
//
// Column names may hold any character. A table whose schema has a name
// plain Delta tables cannot hold (a space or any of ,;{}()= tab newline)
// gets Delta column mapping in name mode: its fields get ids and physical
// names in the log, [Table.NewFile] writes files under the physical names
// with field ids, and stats are keyed by physical name. Callers only ever
// see logical names. A commit may also widen column types as Delta's type
// widening allows, when it asks to ([Commit.AllowTypeWidening]).
//
// A crash before step 2 completes leaves only unreferenced files; a crash
// after it leaves a durable entry whose offsets the next start resumes from.
//
// One writer per table: [Open] locks the folder, so a second writer on the
// same machine fails at once with an error naming the first. Where the lock
// does not hold (network file systems), the offset preconditions of step 2
// still keep a second writer from losing or duplicating rows.
//
// A Table is safe for concurrent use by several goroutines; a [FileWriter] is
// not, and belongs to the goroutine that created it.
package table
