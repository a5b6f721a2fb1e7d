package jsontext_test

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/jsontext"
)

// TestAppendUnescaped checks escapes and broken text against what Spark
// reads (Jackson over Java's UTF-8 decoder, written back with Java's UTF-8
// encoder).
func TestAppendUnescaped(t *testing.T) {
	tests := []struct {
		name, raw, want string
	}{
		{"plain", "héllo", "héllo"},
		{"empty", "", ""},
		{"short escapes", `\"\\\/\b\f\n\r\t\'`, "\"\\/\b\f\n\r\t'"},
		{"unicode escape", `a\u00e9\u0041z`, "aéAz"},
		{"upper-case hex", `\u00C9`, "É"},
		{"surrogate pair", `\ud83d\ude00`, "😀"},
		{"lone high surrogate", `\ud83dx`, "?x"},
		{"lone low surrogate", `\ude00`, "?"},
		{"high then high", `\ud83d\ud83d\ude00`, "?😀"},
		{"low then high", `\ude00\ud83d`, "??"},
		{"high then other escape", `\ud83d\n`, "?\n"},
		{"high at the end", `\ud83d`, "?"},
		{"invalid byte", "a\xffb", "a\uFFFDb"},
		{"each invalid byte", "\xff\xfe", "\uFFFD\uFFFD"},
		{"truncated 3-byte sequence", "\xe2\x82z", "\uFFFDz"},
		{"truncated 4-byte sequence", "\xf0\x9f\x98z", "\uFFFDz"},
		{"truncated at the end", "\xe2\x82", "\uFFFD"},
		{"overlong", "\xe0\x80\x80", "\uFFFD\uFFFD\uFFFD"},
		{"encoded surrogate", "\xed\xa0\x80", "\uFFFD"},
		{"start of an encoded surrogate", "\xed\xa0A", "\uFFFDA"},
		{"above U+10FFFF", "\xf4\x90\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD"},
		{"invalid then escape", "\xff\\n", "\uFFFD\n"},
		// Unchecked input: a backslash that starts no escape stands for itself.
		{"bad escape", `\x`, `\x`},
		{"short unicode escape", `\u12`, `\u12`},
		{"trailing backslash", `a\`, `a\`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := jsontext.AppendUnescaped([]byte("pre"), []byte(tc.raw))
			if string(got) != "pre"+tc.want {
				t.Errorf("AppendUnescaped(%q) = %q, want %q", tc.raw, got[3:], tc.want)
			}
		})
	}
}

// TestInvalidLen checks the runs Java's UTF-8 decoder replaces with one
// U+FFFD.
func TestInvalidLen(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"\x80", 1},
		{"\xc0\x80", 1},
		{"\xc3", 1},
		{"\xe2", 1},
		{"\xe2\x82", 2},
		{"\xe2\x82z", 2},
		{"\xe0\x9f\x80", 1},
		{"\xed\xa0\x80", 3},
		{"\xed\xa0z", 2},
		{"\xf0\x8f\x80\x80", 1},
		{"\xf0\x9f", 2},
		{"\xf0\x9f\x98", 3},
		{"\xf4\x90\x80\x80", 1},
		{"\xf5\x80", 1},
		{"\xff", 1},
	}
	for _, tc := range tests {
		if got := jsontext.InvalidLen([]byte(tc.in)); got != tc.want {
			t.Errorf("InvalidLen(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// TestHex4 checks the value of four hex digits and the -1 of anything
// else.
// TestAppendValidUTF8 checks that broken text becomes U+FFFD as Java's
// decoder replaces it, and valid text is kept.
func TestAppendValidUTF8(t *testing.T) {
	for in, want := range map[string]string{
		"":                 "",
		"héllo 日本":         "héllo 日本",
		"a\xffb":           "a\uFFFDb",
		"\xe2\x82":         "\uFFFD",       // truncated: one
		"\xc0\xaf":         "\uFFFD\uFFFD", // overlong: one per byte
		"\xed\xa0\x80x":    "\uFFFDx",      // an encoded surrogate: one
		"\xf0\x9f\x98x":    "\uFFFDx",
		"ok\xef\xbf\xbdok": "ok\uFFFDok", // U+FFFD itself is valid
	} {
		if got := string(jsontext.AppendValidUTF8([]byte("<"), []byte(in))); got != "<"+want {
			t.Errorf("%q: got %q, want %q", in, got, "<"+want)
		}
	}
}

func TestHex4(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"0000", 0},
		{"00e9", 0xe9},
		{"ABCDEF", 0xabcd},
		{"fFfF", 0xffff},
		{"12g4", -1},
		{"123", -1},
		{"", -1},
	}
	for _, tc := range tests {
		if got := jsontext.Hex4([]byte(tc.in)); got != tc.want {
			t.Errorf("Hex4(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// TestEscapeLen checks which escapes are valid and their lengths.
func TestEscapeLen(t *testing.T) {
	tests := []struct {
		in          string
		singleQuote bool
		want        int
	}{
		{`\n"`, false, 2},
		{`\"`, false, 2},
		{`\/`, false, 2},
		{`\\`, false, 2},
		{`\'`, false, 0},
		{`\'`, true, 2},
		{`\u00e9"`, false, 6},
		{`\u00g9"`, false, 0},
		{`\u00e`, false, 0},
		{`\x`, false, 0},
		{`\`, false, 0},
	}
	for _, tc := range tests {
		if got := jsontext.EscapeLen([]byte(tc.in), tc.singleQuote); got != tc.want {
			t.Errorf("EscapeLen(%q, %v) = %d, want %d", tc.in, tc.singleQuote, got, tc.want)
		}
	}
}

// TestAppendQuoted checks Jackson's escapes.
func TestAppendQuoted(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", `""`},
		{`say "hi" \ /`, `"say \"hi\" \\ /"`},
		{"\b\t\n\f\r", `"\b\t\n\f\r"`},
		{"\x00\x01\x1f\x7f", "\"\\u0000\\u0001\\u001F\x7f\""},
		{"é😀", `"é😀"`},
	}
	for _, tc := range tests {
		if got := jsontext.AppendQuoted([]byte("pre"), []byte(tc.in)); string(got) != "pre"+tc.want {
			t.Errorf("AppendQuoted(%q) = %s, want %s", tc.in, got[3:], tc.want)
		}
	}
}

// TestAllocs checks that both appends allocate nothing when dst has room.
func TestAllocs(t *testing.T) {
	raw := []byte(`a\u00e9\ud83d\ude00\n` + "\xffé")
	dst := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() {
		dst = jsontext.AppendUnescaped(dst[:0], raw)
		dst = jsontext.AppendQuoted(dst[:0], raw)
	}); n != 0 {
		t.Errorf("%v allocations per run, want 0", n)
	}
}

// FuzzAppendUnescaped checks, on any input, that the text is valid UTF-8,
// that text without backslashes or broken bytes is kept as it is, and that
// quoting valid text and unescaping it gives it back.
func FuzzAppendUnescaped(f *testing.F) {
	for _, s := range []string{"", "plain", `\ud83d\ude00`, `\ud800`, `\"\\\/\b\f\n\r\t`, "\xed\xa0\x80", "\xf0\x9f\x98", `\u12`, `a\`, "é\x01"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got := jsontext.AppendUnescaped(nil, raw)
		if !utf8.Valid(got) {
			t.Fatalf("AppendUnescaped(%q) = %q, not valid UTF-8", raw, got)
		}
		if !bytes.Contains(raw, []byte{'\\'}) && utf8.Valid(raw) && !bytes.Equal(got, raw) {
			t.Fatalf("AppendUnescaped(%q) = %q, want it unchanged", raw, got)
		}
		if !utf8.Valid(raw) {
			return
		}
		quoted := jsontext.AppendQuoted(nil, raw)
		if back := jsontext.AppendUnescaped(nil, quoted[1:len(quoted)-1]); !bytes.Equal(back, raw) {
			t.Fatalf("AppendUnescaped(AppendQuoted(%q)) = %q", raw, back)
		}
	})
}

// TestAppendQuotedString checks that each byte that is not valid UTF-8
// becomes U+FFFD and that the rest is escaped as AppendQuoted escapes it.
func TestAppendQuotedString(t *testing.T) {
	for in, want := range map[string]string{
		"":                      `""`,
		"a\"\\\n\r\t\x01é\xff<": `"a\"\\\n\r\t\u0001é` + "\ufffd" + `<"`,
		"\xe2\x82x\b\f\x1b":     `"` + "\ufffd\ufffd" + `x\b\f\u001B"`,
		"\xff\xfe":              `"` + "\ufffd\ufffd" + `"`,
		"日本":                    `"日本"`,
	} {
		if got := string(jsontext.AppendQuotedString(nil, in)); got != want {
			t.Errorf("AppendQuotedString(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestPlainLen checks PlainLen against a byte-by-byte loop: every byte
// value at every position of a word, for both quotes, and random texts.
func TestPlainLen(t *testing.T) {
	naive := func(s []byte, quote byte) int {
		n := 0
		for n < len(s) && s[n] >= 0x20 && s[n] < 0x80 && s[n] != quote && s[n] != '\\' {
			n++
		}
		return n
	}
	check := func(s []byte, quote byte) {
		t.Helper()
		// PlainLen looks at whole words only: where the loop stops, or
		// at the last word's end.
		got, want := jsontext.PlainLen(s, quote), min(naive(s, quote), len(s)/8*8)
		if got != want {
			t.Fatalf("PlainLen(%q, %q) = %d, want %d", s, quote, got, want)
		}
	}
	for _, quote := range []byte{'"', '\''} {
		for c := range 256 {
			for at := range 17 {
				s := []byte(strings.Repeat("a", 24))
				s[at] = byte(c)
				check(s, quote)
				s[at+1] = 0x1f // a second special byte after the first
				check(s, quote)
			}
		}
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("abc \"'\\\x00\x1f\x7f\x80\xff")
	for range 10000 {
		s := make([]byte, rnd.IntN(40))
		for i := range s {
			s[i] = 'a'
			if rnd.IntN(8) == 0 {
				s[i] = alphabet[rnd.IntN(len(alphabet))]
			}
		}
		check(s, '"')
	}
}

// TestIsPlain checks which names a document spells with their own bytes.
func TestIsPlain(t *testing.T) {
	for s, want := range map[string]bool{
		"": true, "name": true, "héllo": true, "it's": true, "a b": true, "\x7f": true,
		`a"b`: false, `a\b`: false, "a\nb": false, "\x1f": false, "\xff": false, "\xed\xa0\x80": false,
	} {
		if got := jsontext.IsPlain(s); got != want {
			t.Errorf("IsPlain(%q) = %v, want %v", s, got, want)
		}
	}
}
