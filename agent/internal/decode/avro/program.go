package avro

// op is what a node of a compiled program does: read one value of the
// writer's schema and write it to the Builder's current position, or skip
// it.
type op uint8

const (
	opNull         op = iota // a null: write a null
	opBool                   // boolean → BOOLEAN
	opInt32                  // int → INT, DATE
	opInt64                  // int or long → BIGINT, TIMESTAMP, TIMESTAMP_NTZ
	opMicros                 // int or long milliseconds → TIMESTAMP, TIMESTAMP_NTZ microseconds
	opLongFloat              // int or long → FLOAT
	opLongDouble             // int or long → DOUBLE
	opFloat                  // float → FLOAT
	opFloatDouble            // float → DOUBLE
	opDouble                 // double → DOUBLE
	opString                 // string or bytes → STRING (valid UTF-8)
	opBinary                 // string or bytes → BINARY
	opFixed                  // fixed → BINARY
	opEnum                   // enum → STRING, the reader's symbol
	opDecimal                // bytes decimal → DECIMAL
	opDecimalFixed           // fixed decimal → DECIMAL
	opRecord                 // record → STRUCT (or the row's top-level fields)
	opArray                  // array → ARRAY
	opMap                    // map → MAP<STRING, T>
	opUnion                  // union: a branch index, then that branch's node
	opMember                 // a union branch into its member field of a STRUCT
	opFail                   // a union branch the reader cannot resolve

	opSkipNull   // skip a null: nothing
	opSkipBool   // skip a boolean
	opSkipVarint // skip an int, long or enum
	opSkipN      // skip a float, double or fixed: size bytes
	opSkipBytes  // skip a string or bytes
	opSkipRecord // skip a record's fields
	opSkipArray  // skip an array's blocks
	opSkipMap    // skip a map's blocks
	opSkipUnion  // skip a union's branch
)

// node is one compiled step: a writer schema resolved to the reader's and
// to the column it fills.
type node struct {
	op op
	// path names the value for errors: field names from the top, with
	// [] for array items and {} for map values.
	path string
	// isInt says an opInt64, opMicros, opLongFloat or opLongDouble reads a
	// writer int, which must fit 32 bits.
	isInt bool
	// size is the length of a fixed, or of a skipped float or double.
	size int
	// precision of a DECIMAL column; width the length of its fixed bytes
	// (precision above 18).
	precision, width int
	// symbols maps a writer enum index to the reader's symbol, nil where
	// the reader has none (nor a default).
	symbols [][]byte
	// fields are a record's writer fields in order; defaults the reader
	// fields the writer lacks.
	fields   []field
	defaults []field
	// elem is an array's items, a map's values, a member's value.
	elem *node
	// member is the Builder field of a union member.
	member int
	// top says a record's fields are the row's top-level fields, which
	// Decode's first offsets; it opens no struct.
	top bool
	// branches are a union's, by writer branch index.
	branches []*node
	// minSize is the fewest bytes an encoded value takes; items of size 0
	// draw on Decoder's budget of free items.
	minSize int
	// msg is an opFail's error.
	msg string
}

// field is a record field: the Builder field it fills (-1 for a skipped
// writer field), its node, and for a reader-only field the Avro encoding of
// its default, which n decodes.
type field struct {
	index   int
	n       *node
	encoded []byte
}
