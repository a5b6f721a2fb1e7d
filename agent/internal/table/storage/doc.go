// Package storage is where a table's files live: a folder on local disk or
// a prefix in an object store (S3, Google Cloud Storage, Azure Blob
// Storage). It sits at the bottom of the data flow, below the table:
//
//	Kafka -> ingest/decode -> writers (deltasink, fanout) -> table -> storage
//
// Package table decides what to write (Parquet data files, the Delta log's
// entries and checkpoints) and storage decides how a name becomes durable
// bytes; it is the one place that touches local disk or the object store
// for a table. It knows nothing of Delta or Kafka.
//
// [Open] returns the [Store] of a location. Every Store keeps one contract,
// the same on every backend, so that writers on several machines can share
// a location through it:
//
//   - Names are slash-separated and relative to the location
//     ("_delta_log/00000000000000000003.json").
//   - Nothing half-written is ever visible: an object appears under its
//     name whole ([Store.PutIfAbsent], [Writer.Commit]) or not at all.
//   - Put-if-absent is atomic: of any number of writers creating one name,
//     at once or one after another, exactly one succeeds; every other gets
//     an error wrapping [io/fs.ErrExist] and the name keeps the winner's
//     bytes. Table commits rest on this: a log version is taken once.
//   - A missing name is an error wrapping [io/fs.ErrNotExist].
//   - What a call reports written is durable: on local disk the file and
//     its folder are fsynced before the call returns; an object store
//     acknowledges only what it stored.
//
// The local store writes every object under a temporary name (see
// [TempName]), fsyncs it, then hard-links it to its name: link(2) never
// replaces a file, which makes put-if-absent atomic without a lock. It also
// has a writer lock ([Store.Lock]), a lock file that keeps a second writer
// of the folder out, in this process or another. Object stores use
// conditional writes instead (S3 If-None-Match: *, GCS
// ifGenerationMatch=0, Azure If-None-Match: *) and have no lock. The
// stores of one bucket share its client, for a minute after it was opened
// or until the store refuses its credentials (see [bucketReuse]):
// checking, starting and running the tables of a pipeline resolves the
// credentials and opens connections once rather than at each step.
package storage
