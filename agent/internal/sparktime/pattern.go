package sparktime

import (
	"fmt"
	"strings"
)

// Pattern is a compiled Spark datetime pattern (the timestampFormat and
// dateFormat of Spark's JSON reader), parsed as Spark's formatter parses:
// every field strictly, case-insensitively, with nothing left over.
type Pattern struct {
	elems []elem
	// hour12 says the pattern's hour is h, ampm that it has a: they go
	// together.
	hour12, ampm bool
}

// elem is one element of a pattern: a literal or a field.
type elem struct {
	kind byte // the pattern letter, 0 for a literal
	// min and max digits of a numeric field; for S, the most fraction
	// digits; for zones the letter count.
	min, max int
	lit      string
}

// Letters lists the pattern letters Compile accepts.
const Letters = "y M d H h m s S a X x Z"

// Compile compiles a Spark datetime pattern. It accepts the letters y
// (year: yy is 2000-2099, yyyy four digits, y or yyy one to nine), M and d
// (MM, dd two digits; M, d one or two), H and h (hour of day 0-23, hour of
// AM/PM 1-12 with a), m, s, S (fraction: S..S up to that many digits, at
// most nine, truncated to microseconds), a (AM/PM), X and x (offsets: X, x
// +HH[mm]; XX, xx +HHmm; XXX, xxx +HH:mm; XXXX, xxxx +HHmm[ss]; XXXXX,
// xxxxx +HH:mm[:ss]; X also Z for zero), Z (Z, ZZ, ZZZ +HHmm; ZZZZZ
// +HH:mm[:ss] or Z), text in single quotes (two single quotes are one) and any other
// character that is not a letter as literals. Other letters and optional
// sections ([...]) are refused.
func Compile(pattern string) (*Pattern, error) {
	p := &Pattern{}
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case c == '\'':
			j := i + 1
			var lit strings.Builder
			for {
				k := strings.IndexByte(pattern[j:], '\'')
				if k < 0 {
					return nil, fmt.Errorf("unterminated quote at position %d", i+1)
				}
				lit.WriteString(pattern[j : j+k])
				j += k + 1
				if j < len(pattern) && pattern[j] == '\'' {
					lit.WriteByte('\'')
					j++
					continue
				}
				break
			}
			if lit.Len() == 0 && j == i+2 {
				lit.WriteByte('\'')
			}
			p.elems = append(p.elems, elem{lit: lit.String()})
			i = j
		case c == '[' || c == ']' || c == '{' || c == '}' || c == '#':
			return nil, fmt.Errorf("%q at position %d: optional sections and reserved characters are not supported", c, i+1)
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			n := 1
			for i+n < len(pattern) && pattern[i+n] == c {
				n++
			}
			e, err := p.field(c, n)
			if err != nil {
				return nil, fmt.Errorf("%q at position %d: %w", strings.Repeat(string(c), n), i+1, err)
			}
			p.elems = append(p.elems, e)
			i += n
		default:
			p.elems = append(p.elems, elem{lit: string(c)})
			i++
		}
	}
	if p.hour12 != p.ampm {
		return nil, fmt.Errorf("h (hour of AM/PM) and a (AM/PM) go together")
	}
	return p, nil
}

// field compiles n letters c.
func (p *Pattern) field(c byte, n int) (elem, error) {
	e := elem{kind: c, min: n, max: n}
	switch c {
	case 'y':
		switch {
		case n == 1 || n == 3:
			e.min, e.max = 1, 9
		case n > 9:
			return e, fmt.Errorf("too many letters")
		}
	case 'M', 'd', 'H', 'h', 'm', 's':
		if n > 2 {
			return e, fmt.Errorf("too many letters (text months are not supported)")
		}
		if n == 1 {
			e.max = 2
		}
		p.hour12 = p.hour12 || c == 'h'
	case 'S':
		if n > 9 {
			return e, fmt.Errorf("at most 9 fraction digits")
		}
		e.min = 1
	case 'a':
		if n > 1 {
			return e, fmt.Errorf("too many letters")
		}
		p.ampm = true
	case 'X', 'x':
		if n > 5 {
			return e, fmt.Errorf("too many letters")
		}
	case 'Z':
		if n == 4 || n > 5 {
			return e, fmt.Errorf("only Z, ZZ, ZZZ and ZZZZZ are supported")
		}
	default:
		return e, fmt.Errorf("unsupported pattern letter (supported: %s)", Letters)
	}
	return e, nil
}

// Parse parses s with the pattern; fields the pattern lacks default to the
// start of their unit (month and day 1, time 00:00, year 1970), and text
// without a zone is in UTC.
func (p *Pattern) Parse(s []byte) (Time, bool) {
	var t Time
	year, month, day := int64(1970), int64(1), int64(1)
	var hour, minute, sec, frac int64
	pm := false
	for k, e := range p.elems {
		if e.kind == 0 {
			if len(s) < len(e.lit) || !strings.EqualFold(string(s[:len(e.lit)]), e.lit) {
				return t, false
			}
			s = s[len(e.lit):]
			continue
		}
		switch e.kind {
		case 'a':
			if len(s) < 2 || (s[1] != 'M' && s[1] != 'm') {
				return t, false
			}
			switch s[0] {
			case 'A', 'a':
			case 'P', 'p':
				pm = true
			default:
				return t, false
			}
			s = s[2:]
			continue
		case 'X', 'x', 'Z':
			off, rest, ok := offset(e, s)
			if !ok {
				return t, false
			}
			t.Zone, t.Offset, s = true, off, rest
			continue
		}
		// A variable-width number followed by fixed-width ones (yMMdd)
		// leaves them their digits, as java.time's adjacent value parsing.
		width := e.max
		if e.min != e.max {
			run := 0
			for run < len(s) && s[run] >= '0' && s[run] <= '9' {
				run++
			}
			reserve := 0
			for _, f := range p.elems[k+1:] {
				if f.kind == 0 || !isNumeric(f.kind) || f.min != f.max {
					break
				}
				reserve += f.min
			}
			width = min(width, run-reserve)
		}
		n := 0
		var v int64
		for n < width && n < len(s) && s[n] >= '0' && s[n] <= '9' {
			v = v*10 + int64(s[n]-'0')
			n++
		}
		if n < e.min {
			return t, false
		}
		digits := s[:n]
		s = s[n:]
		switch e.kind {
		case 'y':
			year = v
			if e.min == 2 && e.max == 2 {
				year += 2000
			}
		case 'M':
			month = v
		case 'd':
			day = v
		case 'H', 'h':
			hour = v
		case 'm':
			minute = v
		case 's':
			sec = v
		case 'S':
			frac = 0
			for i := 0; i < 6; i++ {
				frac *= 10
				if i < len(digits) {
					frac += int64(digits[i] - '0')
				}
			}
		}
	}
	if len(s) != 0 {
		return t, false
	}
	if p.hour12 {
		if hour < 1 || hour > 12 {
			return t, false
		}
		hour %= 12
		if pm {
			hour += 12
		}
	}
	days, ok := civilDays(year, month, day)
	if !ok || hour > 23 || minute > 59 || sec > 59 {
		return t, false
	}
	t.Days = days
	t.Micros = ((hour*60+minute)*60+sec)*1_000_000 + frac
	return t, true
}

// isNumeric says pattern letter c is a number.
func isNumeric(c byte) bool { return strings.IndexByte("yMdHhmsS", c) >= 0 }

// offset parses the zone offset of element e at the start of s.
func offset(e elem, s []byte) (off int64, rest []byte, ok bool) {
	n := e.min
	if len(s) > 0 && s[0] == 'Z' && (e.kind == 'X' || (e.kind == 'Z' && n == 5)) {
		return 0, s[1:], true
	}
	if len(s) < 3 || (s[0] != '+' && s[0] != '-') {
		return 0, s, false
	}
	sign := int64(1)
	if s[0] == '-' {
		sign = -1
	}
	s = s[1:]
	two := func() (int64, bool) {
		if len(s) < 2 || s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
			return 0, false
		}
		v := int64(s[0]-'0')*10 + int64(s[1]-'0')
		s = s[2:]
		return v, true
	}
	h, ok := two()
	if !ok {
		return 0, s, false
	}
	var m, sec int64
	colon := (e.kind != 'Z' && (n == 3 || n == 5)) || (e.kind == 'Z' && n == 5)
	part := func(optional bool) (int64, bool) {
		if colon {
			if len(s) == 0 || s[0] != ':' {
				return 0, optional
			}
			if !colonDigits(s) {
				return 0, optional
			}
			s = s[1:]
		} else if len(s) < 2 || s[0] < '0' || s[0] > '9' {
			return 0, optional
		}
		return two()
	}
	switch {
	case n == 1 && e.kind != 'Z': // +HH[mm]
		m, ok = part(true)
	case n <= 3: // +HHmm, +HH:mm (XX, XXX, Z..ZZZ)
		m, ok = part(false)
	default: // +HHmm[ss], +HH:mm[:ss]
		if m, ok = part(false); ok {
			sec, ok = part(true)
		}
	}
	if !ok || h > 18 || m > 59 || sec > 59 {
		return 0, s, false
	}
	return sign * (h*3600 + m*60 + sec), s, true
}

// colonDigits reports whether s starts with ':' and two digits.
func colonDigits(s []byte) bool {
	return len(s) >= 3 && s[1] >= '0' && s[1] <= '9' && s[2] >= '0' && s[2] <= '9'
}
