package variant

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"unsafe"
)

// MaxDepth is the deepest nesting of objects and arrays that Encode accepts,
// the same limit as the JSON parser behind Spark's parse_json.
const MaxDepth = 1000

// ErrSyntax is wrapped by every error Encode returns: the input is not one
// JSON text that a VARIANT can hold (malformed JSON, trailing data, a
// duplicate key in an object, or nesting deeper than [MaxDepth]).
var ErrSyntax = errors.New("invalid JSON for a VARIANT")

// Encoded is one VARIANT value as [Encoder.Encode] returns it: its
// metadata and value binaries.
type Encoded struct {
	Metadata, Value []byte
}

// Encoder turns JSON texts into VARIANT values; reusable, not safe for
// concurrent use. The zero value is ready to use. Its buffers grow to the
// largest text seen and are kept, so a long-lived Encoder does not allocate
// once it has warmed up, but for texts of more keys than it keeps from one
// text to the next (keepOccurrences) and for shapes it has not kept. It
// keeps the dictionaries of up to 128 recent shapes, in at most 256 KiB.
type Encoder struct {
	in    []byte // the text being encoded, only during Encode
	pos   int    // where in in an error is, for its message
	depth int    // objects and arrays open, in the first pass

	// tape holds the first pass's tokens, the text's values and container
	// ends in the order they come, which the second pass writes without
	// reading the text's syntax again.
	tape []token
	// kept says that tape and the key occurrences (occ) describe the text
	// Encode encoded last, with no error: what a [Node] reads.
	kept bool
	// root is that text, as Root was given it; a Node reads its values'
	// bytes there. Encode forgets it.
	root []byte

	// occ holds the object keys of the first pass as they come, back to
	// back, and occLen their lengths: the text's shape, which decides its
	// dictionary and the id of every key occurrence.
	occ    []byte
	occLen []int
	// shapes holds the dictionaries of recent shapes (see shapeSet):
	// records of one kind mostly come in a few shapes, and a text of a
	// shape seen before takes its ids and metadata from there rather than
	// building and sorting a dictionary. last is the shape used last,
	// looked at first; shapeBytes is what the shapes hold; use holds the
	// ids the second pass writes: ids, or a shape's. tick counts the
	// texts, so that a set knows which of its shapes was used longest ago.
	shapes     [shapeSets]shapeSet
	last       *shape
	shapeBytes int
	tick       uint64
	seed       maphash.Seed
	seeded     bool
	use        []int

	// seen deduplicates the keys of occ while the dictionary is built: the
	// index of each distinct key, first seen first, under a view of its
	// bytes in occ (emptied before occ changes).
	seen  map[string]int
	keys  []byte    // the distinct keys, back to back, first seen first
	spans []keySpan // one span of keys per distinct key
	// first holds, for each key occurrence of occ, the index of its key
	// among the distinct keys, first seen first; rank holds the id in the
	// sorted dictionary of each distinct key, and ids the id of each
	// occurrence, which the second pass writes: the second pass meets the
	// keys in the order of the first.
	first, rank, ids []int
	// dictKeys and dictLens are the distinct keys of the dictionary in meta
	// as keys and the spans' lengths held them, when dictOK: a text with
	// other occurrences of the same keys (an array one item longer, say)
	// keeps the dictionary too.
	dictKeys []byte
	dictLens []int
	dictOK   bool
	str      []byte // scratch for a string with escapes or invalid UTF-8

	b       writer // writes the value
	metaBuf []byte // the encoded metadata (the sorted dictionary) Encode returns
}

// token is one value of a text, or the end of an object or array: its
// kind, and where it starts and ends in the text (a string's quotes
// included). Positions fit 32 bits: Encode refuses longer texts, which no
// Kafka record holds.
type token struct {
	start, end int32
	kind       tokenKind
}

// tokenKind says what a token is, and whether it is the value of an
// object's field (member).
type tokenKind uint8

// The kinds of tokens. A number's kind says which of its forms it has,
// which decides the VARIANT type it can take.
const (
	tokObject    tokenKind = iota // an object's '{'
	tokEndObject                  // an object's '}'
	tokArray                      // an array's '['
	tokEndArray                   // an array's ']'
	tokString                     // a string whose text is its bytes
	tokRepaired                   // a string with escapes, or bytes that are not UTF-8
	tokInteger                    // a number without fraction or exponent
	tokFraction                   // a number with a fraction and no exponent
	tokExponent                   // a number with an exponent
	tokTrue
	tokFalse
	tokNull

	// member marks the value of an object's field: the second pass names
	// it by the id of the next key occurrence.
	member tokenKind = 0x80
)

// keepOccurrences bounds the key occurrences (with their ids) and the
// tokens an Encoder keeps from one text to the next: a text with more
// leaves them to be collected.
const keepOccurrences = 4096

// shapeSets is how many sets of shapes an Encoder keeps, shapeWays in
// each (shapeSet), and maxShapeBytes how many bytes they may hold in all:
// a shape of more is not kept. Eight ways keep a few dozen shapes from
// evicting each other however their hashes fall: with two, the 31 shapes
// of the 1 KB benchmark events met in one set often enough to rebuild a
// dictionary every few texts, depending on the hash seed.
const (
	shapeSets     = 16
	shapeWays     = 8
	maxShapeBytes = 256 << 10
)

// shapeSet holds recent shapes whose key bytes hash to the set; a new
// shape replaces the one used longest ago.
type shapeSet [shapeWays]shape

// shape is the dictionary of one shape, when ok: hash is the hash of its
// key bytes, occ and lens are its key occurrences, as Encoder.occ and
// Encoder.occLen hold them, ids the id of each occurrence and meta the
// encoded dictionary; used is when it was last used (an Encoder tick).
type shape struct {
	hash uint64
	used uint64
	occ  []byte
	lens []int
	ids  []int
	meta []byte
	ok   bool
}

// holds reports whether s is the dictionary of the key occurrences occ,
// of lengths lens.
func (s *shape) holds(occ []byte, lens []int) bool {
	return s.ok && bytes.Equal(s.occ, occ) && slices.Equal(s.lens, lens)
}

// size is what s holds, in bytes.
func (s *shape) size() int {
	return cap(s.occ) + cap(s.meta) + (cap(s.lens)+cap(s.ids))*int(unsafe.Sizeof(0))
}

// keySpan locates one distinct key in Encoder.keys; seen is its index among
// the distinct keys, first seen first.
type keySpan struct{ start, end, seen int }

// Encode parses one complete JSON text (any JSON value, leading/trailing
// whitespace allowed) and returns its metadata and value binaries, valid
// until the next call to Encode. Malformed JSON, duplicate keys in an object
// and nesting deeper than [MaxDepth] return an error wrapping [ErrSyntax].
//
// Encode reads the text once and writes it from what it read. The first
// pass checks the syntax, collects the object keys, which are then sorted
// into the metadata dictionary, and notes each value in the tape; the
// second pass writes the values of the tape with field ids that already
// follow key order, so the dictionary can be both sorted and final before
// any id is written.
func (e *Encoder) Encode(json []byte) (metadata, value []byte, err error) {
	defer func() { e.in = nil }()

	e.kept, e.root = false, nil
	if len(json) > math.MaxInt32 {
		return nil, nil, fmt.Errorf("%w: a text of %d bytes, 2 GiB or more, longer than a record holds", ErrSyntax, len(json))
	}
	e.occ, e.occLen = e.occ[:0], e.occLen[:0]
	if err := e.parse(json); err != nil {
		return nil, nil, err
	}
	metadata, err = e.dictionaryOf()
	if err != nil {
		return nil, nil, err
	}
	if err := e.write(); err != nil {
		return nil, nil, err
	}
	if len(e.occLen) > keepOccurrences {
		// A text of very many keys (a large array of objects): the next
		// text has no use for this one's buffers.
		e.occ, e.occLen, e.first, e.ids, e.use = nil, nil, nil, nil, nil
		e.b.fields, e.b.slots, e.b.moved = nil, nil, nil
	}
	if len(e.tape) > keepOccurrences {
		e.tape = nil // the tokens of such a text, likewise
	}
	// A text of more tokens than keepOccurrences also has more of them
	// than key occurrences, and so lost both.
	e.kept = e.tape != nil
	return metadata, e.b.buf, nil
}

// dictionaryOf returns the metadata of the text whose first pass filled
// occ and sets use to the ids of its key occurrences: from the shapes kept
// when one matches, else from a dictionary built anew and kept.
func (e *Encoder) dictionaryOf() ([]byte, error) {
	e.tick++
	if s := e.last; s != nil && s.holds(e.occ, e.occLen) {
		s.used, e.use = e.tick, s.ids
		return s.meta, nil
	}
	if !e.seeded {
		e.seed, e.seeded = maphash.MakeSeed(), true
	}
	hash := maphash.Bytes(e.seed, e.occ)
	set := &e.shapes[hash%shapeSets]
	for w := range set {
		if s := &set[w]; s.hash == hash && s.holds(e.occ, e.occLen) {
			s.used, e.last, e.use = e.tick, s, s.ids
			return s.meta, nil
		}
	}
	if err := e.dictionary(); err != nil {
		return nil, err
	}
	e.ids = e.ids[:0]
	for _, k := range e.first {
		e.ids = append(e.ids, e.rank[k])
	}
	e.use = e.ids
	if len(e.occLen) <= keepOccurrences {
		e.keep(set, hash) // a text of more keys is rare, and large to keep
	}
	return e.metaBuf, nil
}

// keep stores the dictionary just built, of the shape in occ whose key
// bytes hash to hash, in set in place of the shape used longest ago,
// unless that would make the shapes hold more than maxShapeBytes.
func (e *Encoder) keep(set *shapeSet, hash uint64) {
	s := &set[0]
	for w := range set {
		if set[w].used < s.used {
			s = &set[w]
		}
	}
	if e.last == s {
		e.last = nil
	}
	if fits := func(n, c int) bool { return n <= c && c <= 2*n+64 }; !fits(len(e.occ), cap(s.occ)) ||
		!fits(len(e.occLen), cap(s.lens)) || !fits(len(e.metaBuf), cap(s.meta)) || !fits(len(e.ids), cap(s.ids)) {
		// Too small, or so much larger than needed that the slots could
		// fill the bytes allowed with little: buffers of the size needed.
		grown := shape{occ: make([]byte, 0, len(e.occ)), lens: make([]int, 0, len(e.occLen)),
			meta: make([]byte, 0, len(e.metaBuf)), ids: make([]int, 0, len(e.ids))}
		if e.shapeBytes-s.size()+grown.size() > maxShapeBytes {
			return
		}
		e.shapeBytes += grown.size() - s.size()
		*s = grown
	}
	s.occ = append(s.occ[:0], e.occ...)
	s.lens = append(s.lens[:0], e.occLen...)
	s.meta = append(s.meta[:0], e.metaBuf...)
	s.ids = append(s.ids[:0], e.ids...)
	s.hash, s.used, s.ok = hash, e.tick, true
	e.last = s
}

// dictionary makes metaBuf the encoded sorted dictionary of the keys of
// occ, unless it holds the same keys already, first the index of each
// occurrence's key among the distinct keys, and rank the id of each.
func (e *Encoder) dictionary() error {
	if e.seen == nil {
		e.seen = map[string]int{}
	}
	defer clear(e.seen) // its keys are views of occ
	e.keys = e.keys[:0]
	e.spans = e.spans[:0]
	e.first = e.first[:0]
	start := 0
	for _, n := range e.occLen {
		key := e.occ[start : start+n]
		start += n
		k, ok := e.seen[view(key)]
		if !ok {
			k = len(e.spans)
			e.seen[view(key)] = k
			e.keys = append(e.keys, key...)
			e.spans = append(e.spans, keySpan{len(e.keys) - n, len(e.keys), k})
		}
		e.first = append(e.first, k)
	}
	if e.dictOK && bytes.Equal(e.keys, e.dictKeys) && slices.EqualFunc(e.spans, e.dictLens, func(s keySpan, n int) bool { return s.end-s.start == n }) {
		return nil // the same distinct keys, first seen in the same order: the same ranks
	}
	e.dictOK = false // until metaBuf holds the keys
	e.dictKeys = append(e.dictKeys[:0], e.keys...)
	e.dictLens = e.dictLens[:0]
	for _, s := range e.spans {
		e.dictLens = append(e.dictLens, s.end-s.start)
	}
	slices.SortFunc(e.spans, func(a, b keySpan) int {
		return bytes.Compare(e.keys[a.start:a.end], e.keys[b.start:b.end])
	})
	e.rank = slices.Grow(e.rank[:0], len(e.spans))[:len(e.spans)]
	for id, s := range e.spans {
		e.rank[s.seen] = id
	}
	if uint64(len(e.keys)) > math.MaxUint32 {
		return fmt.Errorf("%w: object keys total %d bytes, over the 4 GiB a VARIANT dictionary holds", ErrSyntax, len(e.keys))
	}
	e.metaBuf = appendMetadata(e.metaBuf[:0], e.keys, e.spans)
	e.dictOK = true
	return nil
}

// parse reads the whole text: the first pass (see Encode). Its functions
// carry the position in the text from one to the next rather than in the
// Encoder (pos is only set for an error): stored in the Encoder, each token
// would load and store it again.
func (e *Encoder) parse(json []byte) error {
	e.in, e.pos, e.depth = json, 0, 0
	e.tape = e.tape[:0]
	pos, err := e.value(0, 0)
	if err != nil {
		return err
	}
	if pos = skipSpace(e.in, pos); pos < len(e.in) {
		return e.errorAt(pos, "unexpected %q after the JSON value", e.in[pos])
	}
	return nil
}

// errorf returns an error wrapping ErrSyntax that names the byte offset pos.
func (e *Encoder) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s at byte %d", ErrSyntax, fmt.Sprintf(format, args...), e.pos)
}

// errorAt is errorf at byte offset pos.
func (e *Encoder) errorAt(pos int, format string, args ...any) error {
	e.pos = pos
	return e.errorf(format, args...)
}

// skipSpace returns where the JSON whitespace (space, tab, line feed,
// carriage return) at pos in text ends.
func skipSpace(text []byte, pos int) int {
	for pos < len(text) && text[pos] <= ' ' {
		switch text[pos] {
		case ' ', '\t', '\n', '\r':
			pos++
		default:
			return pos
		}
	}
	return pos
}

// value reads one JSON value starting at pos (after optional whitespace),
// notes it in the tape, with flags (member or none), and returns where it
// ends.
func (e *Encoder) value(pos int, flags tokenKind) (int, error) {
	in := e.in
	start := skipSpace(in, pos)
	if start >= len(in) {
		return 0, e.errorAt(start, "unexpected end of input")
	}
	var kind tokenKind
	var err error
	switch c := in[start]; {
	case c == '{':
		return e.object(start, flags)
	case c == '[':
		return e.array(start, flags)
	case c == '"':
		var same bool
		pos, _, same, err = e.readString(start)
		kind = tokRepaired
		if same {
			kind = tokString
		}
	case c == 't':
		kind = tokTrue
		pos, err = e.literal(start, "true")
	case c == 'f':
		kind = tokFalse
		pos, err = e.literal(start, "false")
	case c == 'n':
		kind = tokNull
		pos, err = e.literal(start, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		pos, kind, err = e.number(start)
	default:
		return 0, e.errorAt(start, "unexpected %q", c)
	}
	if err != nil {
		return 0, err
	}
	e.tape = append(e.tape, token{start: int32(start), end: int32(pos), kind: kind | flags})
	return pos, nil
}

// literal reads true, false or null at pos and returns where it ends.
func (e *Encoder) literal(pos int, word string) (int, error) {
	if !bytes.HasPrefix(e.in[pos:], []byte(word)) {
		return 0, e.errorAt(pos, "invalid literal, expected %s", word)
	}
	return pos + len(word), nil
}

// open enters the object or array at pos, enforcing MaxDepth, notes it in
// the tape as kind, and returns where its content starts.
func (e *Encoder) open(pos int, kind tokenKind) (int, error) {
	if e.depth++; e.depth > MaxDepth {
		return 0, e.errorAt(pos, "nesting deeper than %d", MaxDepth)
	}
	e.tape = append(e.tape, token{start: int32(pos), end: int32(pos + 1), kind: kind})
	return skipSpace(e.in, pos+1), nil
}

// shut notes the end of an object or array, whose closing byte is before
// pos, in the tape as kind.
func (e *Encoder) shut(pos int, kind tokenKind) {
	e.tape = append(e.tape, token{start: int32(pos - 1), end: int32(pos), kind: kind})
	e.depth--
}

// object reads the object at pos (its '{') and returns where it ends.
func (e *Encoder) object(pos int, flags tokenKind) (int, error) {
	pos, err := e.open(pos, tokObject|flags)
	if err != nil {
		return 0, err
	}
	if pos < len(e.in) && e.in[pos] == '}' {
		pos++
	} else if pos, err = e.members(pos); err != nil {
		return 0, err
	}
	e.shut(pos, tokEndObject)
	return pos, nil
}

// members reads an object's "key": value pairs from pos and its closing
// '}', and returns where it ends.
func (e *Encoder) members(pos int) (int, error) {
	in := e.in
	for {
		pos = skipSpace(in, pos)
		if pos >= len(in) || in[pos] != '"' {
			return 0, e.errorAt(pos, "expected an object key")
		}
		end, raw, same, err := e.readString(pos)
		if err != nil {
			return 0, err
		}
		key := e.text(raw, same)
		e.occ = append(e.occ, key...)
		e.occLen = append(e.occLen, len(key))
		pos = skipSpace(in, end)
		if pos >= len(in) || in[pos] != ':' {
			return 0, e.errorAt(pos, "expected ':' after an object key")
		}
		if pos, err = e.value(pos+1, member); err != nil {
			return 0, err
		}
		done := false
		if pos, done, err = e.next(pos, '}'); done || err != nil {
			return pos, err
		}
	}
}

// array reads the array at pos (its '[') and returns where it ends.
func (e *Encoder) array(pos int, flags tokenKind) (int, error) {
	pos, err := e.open(pos, tokArray|flags)
	if err != nil {
		return 0, err
	}
	if pos < len(e.in) && e.in[pos] == ']' {
		pos++
	} else if pos, err = e.elements(pos); err != nil {
		return 0, err
	}
	e.shut(pos, tokEndArray)
	return pos, nil
}

// elements reads an array's values from pos and its closing ']', and
// returns where it ends.
func (e *Encoder) elements(pos int) (int, error) {
	for {
		var err error
		if pos, err = e.value(pos, 0); err != nil {
			return 0, err
		}
		done := false
		if pos, done, err = e.next(pos, ']'); done || err != nil {
			return pos, err
		}
	}
}

// next reads the ',' between two members of a container or its closing
// byte at pos (after optional whitespace), reporting done on the latter,
// and returns where it ends.
func (e *Encoder) next(pos int, closing byte) (int, bool, error) {
	in := e.in
	if pos = skipSpace(in, pos); pos < len(in) {
		switch in[pos] {
		case ',':
			return pos + 1, false, nil
		case closing:
			return pos + 1, true, nil
		}
	}
	return 0, false, e.errorAt(pos, "expected ',' or %q", closing)
}

// write writes the value of the tape the first pass filled: the second
// pass (see Encode).
func (e *Encoder) write() error {
	e.b.reset()
	next := 0 // the next key occurrence
	for _, t := range e.tape {
		if t.kind&member != 0 {
			e.b.field(e.use[next])
			next++
		}
		switch t.kind &^ member {
		case tokObject:
			e.b.beginObject()
		case tokEndObject:
			// The writer sorts the fields by key and fails on a repeated one.
			if err := e.b.endObject(); err != nil {
				e.pos = int(t.end)
				return e.objectError(err)
			}
		case tokArray:
			e.b.beginArray()
		case tokEndArray:
			if err := e.b.endArray(); err != nil {
				e.pos = int(t.end)
				return e.errorf("%v", err)
			}
		case tokString:
			e.b.String(e.in[t.start+1 : t.end-1])
		case tokRepaired:
			e.b.String(e.text(e.in[t.start+1:t.end-1], false))
		case tokTrue:
			e.b.Bool(true)
		case tokFalse:
			e.b.Bool(false)
		case tokNull:
			e.b.Null()
		default:
			e.writeNumber(e.in[t.start:t.end], t.kind&^member)
		}
	}
	return nil
}

// objectError is the error of an object the writer could not close: one
// that has a key twice names it.
func (e *Encoder) objectError(err error) error {
	var dup duplicateKeyError
	if !errors.As(err, &dup) {
		return e.errorf("%v", err)
	}
	start := 0
	for i, id := range e.use {
		if id == dup.id {
			return e.errorf("duplicate object key %q", e.occ[start:start+e.occLen[i]])
		}
		start += e.occLen[i]
	}
	return e.errorf("duplicate object key")
}

// view returns b as a string without copying. The string is only valid while
// b's bytes are unchanged; it is passed to callees that copy what they keep.
func view(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}
