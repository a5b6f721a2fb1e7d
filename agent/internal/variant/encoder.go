package variant

import (
	"bytes"
	"errors"
	"fmt"
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

// Encoder turns JSON texts into VARIANT values; reusable, not safe for
// concurrent use. The zero value is ready to use. Its buffers grow to the
// largest text seen and are kept, so a long-lived Encoder does not allocate
// once it has warmed up, but for texts of more keys than it keeps from one
// text to the next (keepOccurrences, keepKeyBytes).
type Encoder struct {
	in    []byte // the text being encoded, only during Encode
	pos   int    // next byte of in to read
	depth int    // objects and arrays open at pos
	emit  bool   // second pass: write to b; first pass: collect keys only

	// occ holds the object keys of the first pass as they come, back to
	// back, and occLen their lengths. A text whose keys come as the last
	// one's (last and lastLen, when lastOK) did, as records of one kind
	// mostly do, has the same dictionary: Encode keeps it rather than build
	// it again.
	occ, last       []byte
	occLen, lastLen []int
	lastOK          bool

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
	nextKey          int // the second pass's next occurrence
	// ends holds where each string of the first pass ends (after its
	// closing quote), negated for one whose text is not its bytes (it has
	// escapes, or bytes that are not UTF-8): the second pass moves past
	// strings without reading them again.
	ends    []int
	nextStr int
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

// keepOccurrences and keepKeyBytes bound the key occurrences an Encoder
// keeps from one text to the next (see Encoder.occ), with their ids, and
// keepOccurrences the string ends (Encoder.ends): a text with more does not
// keep them, and the next text builds its dictionary from its own.
const (
	keepOccurrences = 4096
	keepKeyBytes    = 64 << 10
)

// keySpan locates one distinct key in Encoder.keys; seen is its index among
// the distinct keys, first seen first.
type keySpan struct{ start, end, seen int }

// Encode parses one complete JSON text (any JSON value, leading/trailing
// whitespace allowed) and returns its metadata and value binaries, valid
// until the next call to Encode. Malformed JSON, duplicate keys in an object
// and nesting deeper than [MaxDepth] return an error wrapping [ErrSyntax].
//
// Encode reads the text twice. The first pass checks the syntax and collects
// the object keys, which are then sorted into the metadata dictionary; the
// second pass writes the value with field ids that already follow key order,
// so the dictionary can be both sorted and final before any id is written.
func (e *Encoder) Encode(json []byte) (metadata, value []byte, err error) {
	defer func() { e.in = nil }()

	e.occ, e.occLen = e.occ[:0], e.occLen[:0]
	if err := e.parse(json, false); err != nil {
		return nil, nil, err
	}
	same := e.lastOK && slices.Equal(e.occLen, e.lastLen) && bytes.Equal(e.occ, e.last)
	e.lastOK = false // until this text is done
	if !same {
		if err := e.dictionary(); err != nil {
			return nil, nil, err
		}
		e.ids = e.ids[:0]
		for _, k := range e.first {
			e.ids = append(e.ids, e.rank[k])
		}
	}

	e.b.reset()
	if err := e.parse(json, true); err != nil {
		return nil, nil, err
	}
	value = e.b.buf
	e.occ, e.last = e.last, e.occ
	e.occLen, e.lastLen = e.lastLen, e.occLen
	e.lastOK = true
	if len(e.lastLen) > keepOccurrences || len(e.last) > keepKeyBytes {
		// A text of very many keys (a large array of objects): keeping
		// its occurrences twice would cost more than comparing saves.
		e.occ, e.last, e.occLen, e.lastLen, e.lastOK = nil, nil, nil, nil, false
		e.first, e.ids = nil, nil
	}
	if len(e.ends) > keepOccurrences {
		e.ends = nil // the string ends of such a text, likewise
	}
	return e.metaBuf, value, nil
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

// parse reads the whole text once; emit selects the pass (see Encode).
func (e *Encoder) parse(json []byte, emit bool) error {
	e.in, e.pos, e.depth, e.emit = json, 0, 0, emit
	if emit {
		e.nextKey, e.nextStr = 0, 0
	} else {
		e.ends = e.ends[:0]
	}
	if err := e.value(); err != nil {
		return err
	}
	e.skipSpace()
	if e.pos < len(e.in) {
		return e.errorf("unexpected %q after the JSON value", e.in[e.pos])
	}
	return nil
}

// errorf returns an error wrapping ErrSyntax that names the byte offset.
func (e *Encoder) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s at byte %d", ErrSyntax, fmt.Sprintf(format, args...), e.pos)
}

// skipSpace moves past JSON whitespace (space, tab, line feed, carriage return).
func (e *Encoder) skipSpace() {
	for e.pos < len(e.in) && e.in[e.pos] <= ' ' {
		switch e.in[e.pos] {
		case ' ', '\t', '\n', '\r':
			e.pos++
		default:
			return
		}
	}
}

// value reads one JSON value starting at pos (after optional whitespace).
func (e *Encoder) value() error {
	e.skipSpace()
	if e.pos >= len(e.in) {
		return e.errorf("unexpected end of input")
	}
	switch c := e.in[e.pos]; {
	case c == '{':
		return e.object()
	case c == '[':
		return e.array()
	case c == '"':
		if !e.emit {
			_, err := e.firstString()
			return err
		}
		e.b.String(e.secondString())
		return nil
	case c == 't':
		return e.literal("true")
	case c == 'f':
		return e.literal("false")
	case c == 'n':
		return e.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return e.number()
	default:
		return e.errorf("unexpected %q", c)
	}
}

// literal reads true, false or null.
func (e *Encoder) literal(word string) error {
	if !bytes.HasPrefix(e.in[e.pos:], []byte(word)) {
		return e.errorf("invalid literal, expected %s", word)
	}
	e.pos += len(word)
	if e.emit {
		switch word {
		case "true":
			e.b.Bool(true)
		case "false":
			e.b.Bool(false)
		default:
			e.b.Null()
		}
	}
	return nil
}

// open enters an object or array, enforcing MaxDepth.
func (e *Encoder) open() error {
	if e.depth++; e.depth > MaxDepth {
		return e.errorf("nesting deeper than %d", MaxDepth)
	}
	e.pos++
	e.skipSpace()
	return nil
}

// object reads an object; pos is at its '{'.
func (e *Encoder) object() error {
	if err := e.open(); err != nil {
		return err
	}
	if e.emit {
		e.b.beginObject()
	}
	if e.pos < len(e.in) && e.in[e.pos] == '}' {
		e.pos++
	} else {
		if err := e.members(); err != nil {
			return err
		}
	}
	if e.emit {
		// The writer sorts the fields by key and fails on a repeated one.
		if err := e.b.endObject(); err != nil {
			return e.objectError(err)
		}
	}
	e.depth--
	return nil
}

// members reads an object's "key": value pairs and its closing '}'.
func (e *Encoder) members() error {
	for {
		e.skipSpace()
		if e.pos >= len(e.in) || e.in[e.pos] != '"' {
			return e.errorf("expected an object key")
		}
		if e.emit {
			e.skipString()
			e.b.field(e.ids[e.nextKey])
			e.nextKey++
		} else {
			key, err := e.firstString()
			if err != nil {
				return err
			}
			e.occ = append(e.occ, key...)
			e.occLen = append(e.occLen, len(key))
		}
		e.skipSpace()
		if e.pos >= len(e.in) || e.in[e.pos] != ':' {
			return e.errorf("expected ':' after an object key")
		}
		e.pos++
		if err := e.value(); err != nil {
			return err
		}
		if done, err := e.next('}'); done || err != nil {
			return err
		}
	}
}

// objectError is the error of an object the writer could not close: one
// that has a key twice names it.
func (e *Encoder) objectError(err error) error {
	var dup duplicateKeyError
	if !errors.As(err, &dup) {
		return e.errorf("%v", err)
	}
	start := 0
	for i, id := range e.ids {
		if id == dup.id {
			return e.errorf("duplicate object key %q", e.occ[start:start+e.occLen[i]])
		}
		start += e.occLen[i]
	}
	return e.errorf("duplicate object key")
}

// array reads an array; pos is at its '['.
func (e *Encoder) array() error {
	if err := e.open(); err != nil {
		return err
	}
	if e.emit {
		e.b.beginArray()
	}
	if e.pos < len(e.in) && e.in[e.pos] == ']' {
		e.pos++
	} else {
		if err := e.elements(); err != nil {
			return err
		}
	}
	if e.emit {
		if err := e.b.endArray(); err != nil {
			return e.errorf("%v", err)
		}
	}
	e.depth--
	return nil
}

// elements reads an array's values and its closing ']'.
func (e *Encoder) elements() error {
	for {
		if err := e.value(); err != nil {
			return err
		}
		if done, err := e.next(']'); done || err != nil {
			return err
		}
	}
}

// next reads the ',' between two members of a container or its closing byte,
// reporting done on the latter.
func (e *Encoder) next(closing byte) (done bool, err error) {
	e.skipSpace()
	if e.pos < len(e.in) {
		switch e.in[e.pos] {
		case ',':
			e.pos++
			return false, nil
		case closing:
			e.pos++
			return true, nil
		}
	}
	return false, e.errorf("expected ',' or %q", closing)
}

// view returns b as a string without copying. The string is only valid while
// b's bytes are unchanged; it is passed to callees that copy what they keep.
func view(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}
