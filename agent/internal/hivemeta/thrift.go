package hivemeta

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Thrift binary protocol (strict) type ids.
const (
	tStop   = 0
	tBool   = 2
	tByte   = 3
	tDouble = 4
	tI16    = 6
	tI32    = 8
	tI64    = 10
	tString = 11
	tStruct = 12
	tMap    = 13
	tSet    = 14
	tList   = 15
)

// Message types of the protocol.
const (
	msgCall      = 1
	msgReply     = 2
	msgException = 3
)

// strictVersion marks a strict binary protocol message header.
const strictVersion = 0x80010000

// maxLength bounds a string or container length read from the server, so
// a broken answer cannot make the client allocate without end.
const maxLength = 64 << 20

// enc writes Thrift binary protocol values into a buffer.
type enc struct{ b []byte }

func (e *enc) byte1(v byte) { e.b = append(e.b, v) }
func (e *enc) i16(v int16)  { e.b = binary.BigEndian.AppendUint16(e.b, uint16(v)) }
func (e *enc) i32(v int32)  { e.b = binary.BigEndian.AppendUint32(e.b, uint32(v)) }
func (e *enc) str(s string) { e.i32(int32(len(s))); e.b = append(e.b, s...) }
func (e *enc) field(t byte, id int16) {
	e.byte1(t)
	e.i16(id)
}
func (e *enc) stop() { e.byte1(tStop) }

// message starts a call of method name with sequence id seq.
func (e *enc) message(name string, seq int32) {
	e.b = binary.BigEndian.AppendUint32(e.b, strictVersion|msgCall)
	e.str(name)
	e.i32(seq)
}

func (e *enc) strField(id int16, s string) {
	e.field(tString, id)
	e.str(s)
}

func (e *enc) i32Field(id int16, v int32) {
	e.field(tI32, id)
	e.i32(v)
}

func (e *enc) boolField(id int16, v bool) {
	e.field(tBool, id)
	if v {
		e.byte1(1)
	} else {
		e.byte1(0)
	}
}

// strMapField writes map<string,string> m as field id, in key order.
func (e *enc) strMapField(id int16, m map[string]string, keys []string) {
	e.field(tMap, id)
	e.byte1(tString)
	e.byte1(tString)
	e.i32(int32(len(keys)))
	for _, k := range keys {
		e.str(k)
		e.str(m[k])
	}
}

// dec reads Thrift binary protocol values.
type dec struct{ r *bufio.Reader }

func (d *dec) byte1() (byte, error) { return d.r.ReadByte() }

func (d *dec) i16() (int16, error) {
	var b [2]byte
	_, err := io.ReadFull(d.r, b[:])
	return int16(binary.BigEndian.Uint16(b[:])), err
}

func (d *dec) i32() (int32, error) {
	var b [4]byte
	_, err := io.ReadFull(d.r, b[:])
	return int32(binary.BigEndian.Uint32(b[:])), err
}

func (d *dec) length() (int, error) {
	n, err := d.i32()
	if err != nil {
		return 0, err
	}
	if n < 0 || n > maxLength {
		return 0, fmt.Errorf("thrift: length %d out of range", n)
	}
	return int(n), nil
}

func (d *dec) str() (string, error) {
	n, err := d.length()
	if err != nil {
		return "", err
	}
	b := make([]byte, n)
	_, err = io.ReadFull(d.r, b)
	return string(b), err
}

// skip reads and drops a value of type t, nested at most depth deep.
func (d *dec) skip(t byte, depth int) error {
	if depth > 64 {
		return errors.New("thrift: values nested too deep")
	}
	var n int
	switch t {
	case tBool, tByte:
		n = 1
	case tI16:
		n = 2
	case tI32:
		n = 4
	case tDouble, tI64:
		n = 8
	case tString:
		_, err := d.str()
		return err
	case tStruct:
		for {
			ft, err := d.byte1()
			if err != nil || ft == tStop {
				return err
			}
			if _, err := d.i16(); err != nil {
				return err
			}
			if err := d.skip(ft, depth+1); err != nil {
				return err
			}
		}
	case tMap, tSet, tList:
		types := make([]byte, 1, 2)
		var err error
		if types[0], err = d.byte1(); err != nil {
			return err
		}
		if t == tMap { // a key type, then a value type
			vt, err := d.byte1()
			if err != nil {
				return err
			}
			types = append(types, vt)
		}
		count, err := d.length()
		if err != nil {
			return err
		}
		for range count {
			for _, et := range types {
				if err := d.skip(et, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	default:
		return fmt.Errorf("thrift: unknown type %d", t)
	}
	_, err := d.r.Discard(n)
	return err
}

// fields reads a struct, calling f for each field; f reads the field's
// value or returns false to have it skipped.
func (d *dec) fields(f func(t byte, id int16) (bool, error)) error {
	for {
		t, err := d.byte1()
		if err != nil || t == tStop {
			return err
		}
		id, err := d.i16()
		if err != nil {
			return err
		}
		read, err := f(t, id)
		if err != nil {
			return err
		}
		if !read {
			if err := d.skip(t, 0); err != nil {
				return err
			}
		}
	}
}

// reply reads the header of an answer to call seq, failing on a Thrift
// application exception (an unknown method, say).
func (d *dec) reply(seq int32) error {
	v, err := d.i32()
	if err != nil {
		return err
	}
	if uint32(v)&0xffff0000 != strictVersion {
		return fmt.Errorf("thrift: not a strict binary protocol answer (header %#x)", uint32(v))
	}
	if _, err := d.str(); err != nil {
		return err
	}
	got, err := d.i32()
	if err != nil {
		return err
	}
	if got != seq {
		return fmt.Errorf("thrift: answer to call %d, want %d", got, seq)
	}
	switch uint32(v) & 0xff {
	case msgReply:
		return nil
	case msgException: // a TApplicationException: its message is field 1, as an exception's
		msg, err := d.exception()
		if err != nil {
			return err
		}
		return fmt.Errorf("the metastore refused the call: %s", msg)
	}
	return fmt.Errorf("thrift: unexpected message type %d", uint32(v)&0xff)
}

// exception reads an exception struct of the metastore's (field 1 is its
// message).
func (d *dec) exception() (string, error) {
	var msg string
	err := d.fields(func(t byte, id int16) (bool, error) {
		if id == 1 && t == tString {
			var err error
			msg, err = d.str()
			return true, err
		}
		return false, nil
	})
	return msg, err
}
