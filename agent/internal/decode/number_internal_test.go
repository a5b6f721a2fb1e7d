package decode

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestParseFloatMatchesStrconv checks parseFloat, whose fast path parses
// most numbers without strconv, against strconv.ParseFloat bit for bit, at
// both sizes: numbers at the edges of the fast path (19 and 20 digits,
// 2^53 and 2^24, powers of ten 22 and 10 and one past) and random ones.
func TestParseFloatMatchesStrconv(t *testing.T) {
	texts := []string{
		"0", "-0", "0.0", "-0.0", "1", "-1", "540.46", "0.1", "0.3", "1e22", "1e23", "1e-22", "1e-23",
		"9007199254740992", "9007199254740993", "16777216", "16777217", "1e10", "1e11", "1e-10", "1e-11",
		"1234567890123456789", "12345678901234567890", "0.1234567890123456789", "1.7976931348623157e308",
		"4.9e-324", "1e400", "-1e400", "1e-400", "3.4028235e38", "3.5e38", "1E+2", "1e-0", "00.5e1",
		"123456789012345678901234567890", "0.000000000000000000001", "1.5e-5", "8.589973e9",
	}
	rnd := rand.New(rand.NewPCG(3, 4))
	for range 200000 {
		var b strings.Builder
		if rnd.IntN(3) == 0 {
			b.WriteByte('-')
		}
		b.WriteString(strconv.FormatUint(rnd.Uint64()>>rnd.IntN(64), 10))
		if rnd.IntN(2) == 0 {
			b.WriteByte('.')
			frac := strconv.FormatUint(rnd.Uint64()>>rnd.IntN(64), 10)
			b.WriteString(frac[:min(len(frac), 1+rnd.IntN(8))])
		}
		if rnd.IntN(3) == 0 {
			b.WriteString([]string{"e", "E", "e+", "e-"}[rnd.IntN(4)])
			b.WriteString(strconv.Itoa(rnd.IntN(40)))
		}
		texts = append(texts, b.String())
	}
	for _, s := range texts {
		for _, bits := range []int{32, 64} {
			want, err := strconv.ParseFloat(s, bits)
			if err != nil && !math.IsInf(want, 0) {
				t.Fatalf("strconv refuses %q: %v", s, err)
			}
			got, ok := parseFloat([]byte(s), bits)
			if !ok || math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("parseFloat(%q, %d) = %v, %v; strconv: %v", s, bits, got, ok, want)
			}
		}
	}
}

// TestShortIntMatchesTheGeneralPath checks shortInt, which reads most
// integers in one pass, against the scan and parse it stands in for: where
// it reads a number, numberTokenEnd ends it at the same byte, the text is
// integral and parseInt gives the same value; and it leaves alone what it
// must (fractions, exponents, leading zeros, 19 digits and more).
func TestShortIntMatchesTheGeneralPath(t *testing.T) {
	texts := []string{"0", "-0", "7,", "-42}", "123456789012345678", "-123456789012345678]", "1234567890123456789",
		"00", "-01", "0.5", "1e5", "1E5", "12.0", "-", "-x", "", "9 ", "5\n"}
	rnd := rand.New(rand.NewPCG(5, 6))
	for range 100000 {
		var b []byte
		if rnd.IntN(3) == 0 {
			b = append(b, '-')
		}
		for range rnd.IntN(21) {
			b = append(b, byte('0'+rnd.IntN(10)))
		}
		b = append(b, ",}] .eE0x"[rnd.IntN(9)])
		texts = append(texts, string(b))
	}
	read := 0
	for _, s := range texts {
		v, end := shortInt([]byte(s), 0)
		if end == 0 {
			continue
		}
		read++
		want := numberTokenEnd([]byte(s), 0)
		if end != want || !isIntegral([]byte(s[:end])) {
			t.Fatalf("shortInt(%q) ends at %d; numberTokenEnd at %d", s, end, want)
		}
		if w, ok := parseInt([]byte(s[:end]), math.MinInt64, math.MaxInt64); !ok || w != v {
			t.Fatalf("shortInt(%q) = %d; parseInt: %d, %v", s, v, w, ok)
		}
	}
	for _, s := range []string{"00", "-01", "0.5", "1e5", "1E5", "12.0", "1234567890123456789", "-"} {
		if _, end := shortInt([]byte(s), 0); end != 0 {
			t.Errorf("shortInt(%q) read it; the general path must", s)
		}
	}
	if read < len(texts)/4 {
		t.Fatalf("shortInt read %d of %d texts: the test must exercise it", read, len(texts))
	}
}
