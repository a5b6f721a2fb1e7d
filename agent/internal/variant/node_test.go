package variant

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// nodeTexts are texts whose structure TestNode reads back: nesting, keys
// with escapes, members after nested containers, empty containers.
var nodeTexts = []string{
	`{"a":1,"b":{"c":[1,{"d":"x"},[]],"e":{}},"f":"g\u00e9\n","h":null,"i":true,"j":false,"k":-1.5e3}`,
	` [ {"x":{"y":{"z":[[],[{}]]}}}, "s", 0 ] `,
	`{"k\"ey":{"in":1},"next":{"deeper":{"k":2}},"last":[{"a":1},{"b":2}]}`,
	`"just a string"`,
	`12.50`,
	`null`,
	`{}`,
	`[]`,
}

// TestNode reads the structure of texts through Node and checks it against
// encoding/json's tokens of the same texts.
func TestNode(t *testing.T) {
	var e Encoder
	for _, text := range nodeTexts {
		if _, _, err := e.Encode([]byte(text)); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		root, ok := e.Root([]byte(text))
		if !ok {
			t.Fatalf("%s: no root", text)
		}
		got, want := nodeTokens(t, root), jsonTokens(t, text)
		if got != want {
			t.Errorf("%s:\n got %s\nwant %s", text, got, want)
		}
	}
}

// TestNodeChildren checks that Children reads an object's members past a
// nested one, and that a scalar has none.
func TestNodeChildren(t *testing.T) {
	var e Encoder
	text := []byte(`{"a":{"x":1},"b":2,"c":3}`)
	if _, _, err := e.Encode(text); err != nil {
		t.Fatal(err)
	}
	root, _ := e.Root(text)
	var keys []string
	for c := root.Children(); ; {
		key, _, ok := c.Next()
		if !ok {
			break
		}
		keys = append(keys, string(key))
	}
	if got := strings.Join(keys, ","); got != "a,b,c" {
		t.Errorf("visited %s, want a,b,c", got)
	}
	for _, scalar := range []string{"1", `"s"`, "null"} {
		if _, _, err := e.Encode([]byte(scalar)); err != nil {
			t.Fatal(err)
		}
		root, _ := e.Root([]byte(scalar))
		c := root.Children()
		if _, _, ok := c.Next(); ok {
			t.Errorf("%s has children", scalar)
		}
	}
}

// TestNodeNotKept checks that Root refuses after an error and after a text
// of more tokens than an Encoder keeps.
func TestNodeNotKept(t *testing.T) {
	var e Encoder
	bad := []byte(`{"a":1,"a":2}`)
	if _, _, err := e.Encode(bad); err == nil {
		t.Fatal("duplicate keys encoded")
	}
	if _, ok := e.Root(bad); ok {
		t.Error("Root after an error")
	}
	big := []byte("[" + strings.Repeat("1,", keepOccurrences) + "1]")
	if _, _, err := e.Encode(big); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.Root(big); ok {
		t.Error("Root of a text whose tokens were dropped")
	}
}

// FuzzNode checks Node against encoding/json on every text both accept.
func FuzzNode(f *testing.F) {
	for _, text := range nodeTexts {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var e Encoder
		if _, _, err := e.Encode([]byte(text)); err != nil || !json.Valid([]byte(text)) || !utf8.ValidString(text) {
			return
		}
		root, ok := e.Root([]byte(text))
		if !ok {
			return
		}
		if got, want := nodeTokens(t, root), jsonTokens(t, text); got != want {
			t.Errorf("%q:\n got %s\nwant %s", text, got, want)
		}
	})
}

// nodeTokens lists the structure of n as jsonTokens does.
func nodeTokens(t testing.TB, n Node) string {
	var b strings.Builder
	var walk func(n Node)
	walk = func(n Node) {
		switch n.Kind() {
		case Object, Array:
			open, shut := "{ ", "} "
			if n.Kind() == Array {
				open, shut = "[ ", "] "
			}
			b.WriteString(open)
			for c := n.Children(); ; {
				key, v, ok := c.Next()
				if !ok {
					break
				}
				if n.Kind() == Object {
					fmt.Fprintf(&b, "%q: ", key)
				}
				walk(v)
			}
			b.WriteString(shut)
		case String:
			var s string
			if err := json.Unmarshal(n.Text(), &s); err != nil {
				t.Fatalf("string %s: %v", n.Text(), err)
			}
			if body := n.Text()[1 : len(n.Text())-1]; !n.Escaped() && !bytes.Equal(body, []byte(s)) {
				t.Errorf("string %s is not marked escaped", n.Text())
			}
			fmt.Fprintf(&b, "%q ", s)
		default:
			fmt.Fprintf(&b, "%s ", n.Text())
		}
	}
	walk(n)
	return b.String()
}

// jsonTokens lists the structure of text from encoding/json's tokens:
// brackets, keys, strings unescaped and other values as written.
func jsonTokens(t testing.TB, text string) string {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var b strings.Builder
	inObject := []bool{false}
	key := false // the next string in an object is a key
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return b.String()
		}
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		switch v := tok.(type) {
		case json.Delim:
			fmt.Fprintf(&b, "%s ", v)
			switch v {
			case '{':
				inObject = append(inObject, true)
			case '[':
				inObject = append(inObject, false)
			default:
				inObject = inObject[:len(inObject)-1]
			}
			key = v == '{'
			if v == '}' || v == ']' {
				key = inObject[len(inObject)-1]
			}
			continue
		case string:
			if key {
				fmt.Fprintf(&b, "%q: ", v)
				key = false
				continue
			}
			fmt.Fprintf(&b, "%q ", v)
		case json.Number:
			fmt.Fprintf(&b, "%s ", v)
		case bool:
			fmt.Fprintf(&b, "%t ", v)
		case nil:
			b.WriteString("null ")
		}
		key = inObject[len(inObject)-1]
	}
}
