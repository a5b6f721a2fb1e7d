package variant

// Kind is what a [Node] is: one of JSON's kinds of value.
type Kind uint8

// The kinds of JSON value.
const (
	Object Kind = iota + 1
	Array
	String
	Number
	True
	False
	Null
)

// Node is one value of the JSON text an [Encoder] encoded last: a reader
// of that text's structure that does not parse it again, since Encode
// noted every value as it checked the text. A Node is valid until the
// Encoder's next Encode.
type Node struct {
	e *Encoder
	// i is the node's token in e.tape; next the first key occurrence
	// after it (its own key comes before it), and off where that key
	// starts in e.occ.
	i, next, off int
}

// Root returns the value that is the whole of json, which must be the
// text e encoded last, with no error (Root only checks that it is long
// enough). ok is false when e did not keep that text's tokens (a text of
// very many values, or one Encode refused): read the text itself then.
func (e *Encoder) Root(json []byte) (n Node, ok bool) {
	if !e.kept || int(e.tape[len(e.tape)-1].end) > len(json) {
		return Node{}, false
	}
	e.root = json
	return Node{e: e}, true
}

// Kind returns what n is.
func (n Node) Kind() Kind {
	switch n.e.tape[n.i].kind &^ member {
	case tokObject:
		return Object
	case tokArray:
		return Array
	case tokString, tokRepaired:
		return String
	case tokTrue:
		return True
	case tokFalse:
		return False
	case tokNull:
		return Null
	}
	return Number
}

// Text returns n's bytes in the text: a string's with its quotes, an
// object's or an array's from its opening bracket to its closing one.
func (n Node) Text() []byte {
	t := n.e.tape[n.i]
	end := t.end
	if k := t.kind &^ member; k == tokObject || k == tokArray {
		end = n.e.tape[n.e.skip(n.i)-1].end
	}
	return n.e.root[t.start:end]
}

// Escaped reports whether the string n is not the bytes between its
// quotes: it has escapes, or bytes that are not UTF-8.
func (n Node) Escaped() bool { return n.e.tape[n.i].kind&^member == tokRepaired }

// Children returns the values directly in n, an object or an array, in
// the text's order; none for another kind of value.
func (n Node) Children() Children {
	c := Children{e: n.e, i: n.i + 1, next: n.next, off: n.off}
	if k := n.e.tape[n.i].kind &^ member; k != tokObject && k != tokArray {
		c.i = len(n.e.tape)
	}
	return c
}

// Children reads the values directly in an object or an array, one
// after another (see [Node.Children]).
type Children struct {
	e *Encoder
	// i is the token of the next value, next and off its key's occurrence
	// and where the key starts in e.occ.
	i, next, off int
}

// Next returns the next value, with its key (unescaped) in an object,
// nil in an array; ok is false past the last. The key is valid until the
// Encoder's next Encode.
func (c *Children) Next() (key []byte, value Node, ok bool) {
	e := c.e
	if c.i >= len(e.tape) {
		return nil, Node{}, false
	}
	t := e.tape[c.i]
	k := t.kind &^ member
	if k == tokEndObject || k == tokEndArray {
		c.i = len(e.tape)
		return nil, Node{}, false
	}
	if t.kind&member != 0 {
		key = e.occ[c.off : c.off+e.occLen[c.next]]
		c.off += e.occLen[c.next]
		c.next++
	}
	value = Node{e: e, i: c.i, next: c.next, off: c.off}
	if k != tokObject && k != tokArray {
		c.i++
		return key, value, true
	}
	// Past the value, and past the keys of the members it holds.
	end := e.skip(c.i)
	for j := c.i + 1; j < end; j++ {
		if e.tape[j].kind&member != 0 {
			c.off += e.occLen[c.next]
			c.next++
		}
	}
	c.i = end
	return key, value, true
}

// skip returns the token after the value at token i: after its closing
// bracket for an object or an array.
func (e *Encoder) skip(i int) int {
	k := e.tape[i].kind &^ member
	if k != tokObject && k != tokArray {
		return i + 1
	}
	depth := 0
	for ; i < len(e.tape); i++ {
		switch e.tape[i].kind &^ member {
		case tokObject, tokArray:
			depth++
		case tokEndObject, tokEndArray:
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return i
}
