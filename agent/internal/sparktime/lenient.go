// Package sparktime parses date and timestamp text as Spark's JSON reader
// does: leniently when no format is given (Spark's stringToDate and
// stringToTimestamp, with their fallbacks), or with a Spark datetime
// pattern (timestampFormat, dateFormat) compiled once by [Compile]. Parsing
// allocates nothing.
package sparktime

// Time is parsed date or timestamp text.
type Time struct {
	// Days is the date: days since 1970-01-01 (proleptic Gregorian).
	Days int64
	// Micros is the time of day in microseconds, before the zone applies.
	Micros int64
	// Zone says the text named a zone or offset; Offset is that offset
	// east of UTC in seconds.
	Zone   bool
	Offset int64
}

// UnixMicros returns the instant t names in microseconds since the epoch;
// text without a zone is UTC, the agent's session zone.
func (t *Time) UnixMicros() int64 {
	return (t.Days*86400-t.Offset)*1_000_000 + t.Micros
}

// ParseDate parses DATE text as Spark does without a dateFormat: trimmed,
// `[+-]yyyy[y..]`, `-[m]m`, `-[d]d`, then anything after a ' ' or 'T'; failing
// that, the same without the text "GMT"; failing that, a 32-bit integer, the
// days since the epoch (as Spark 1.5 stored dates; Spark also moves those
// before 1582-10-15 from the Julian calendar, which the agent does not).
func ParseDate(s []byte) (int64, bool) {
	if d, ok := stringToDate(s); ok {
		return d, true
	}
	if gmtIndex(s) >= 0 {
		var buf [64]byte
		if d, ok := stringToDate(dropGMT(buf[:0], s)); ok {
			return d, true
		}
	}
	return parseInt32(s)
}

// ParseTimestamp parses TIMESTAMP text as Spark does without a
// timestampFormat (stringToTimestamp after removing "GMT"): a date as
// [ParseDate] reads it, then ' ' or 'T', [h]h:[m]m[:[s]s[.fraction]] and an
// optional zone: Z, UTC, UT, GMT, or an offset (+h, +hh, +hh:mm, +hhmm,
// +hh:mm:ss), alone or after UTC/UT/GMT. A fraction beyond microseconds is
// truncated. Time without a date, which Spark puts on the current day, and
// region zone names (Europe/Paris) are not accepted.
func ParseTimestamp(s []byte) (Time, bool) {
	if t, ok := iso(s); ok {
		return t, true
	}
	if gmtIndex(s) >= 0 {
		var buf [64]byte
		s = dropGMT(buf[:0], s)
	}
	return stringToTimestamp(s)
}

// ParseTimestampNTZ parses TIMESTAMP_NTZ text as Spark does: as
// [ParseTimestamp], and text with a zone does not fit.
func ParseTimestampNTZ(s []byte) (Time, bool) {
	t, ok := iso(s)
	if !ok {
		t, ok = stringToTimestamp(s)
	}
	return t, ok && !t.Zone
}

// stringToDate is Spark's DateTimeUtils.stringToDate.
func stringToDate(s []byte) (int64, bool) {
	s = trim(s)
	if len(s) == 0 {
		return 0, false
	}
	sign := int64(1)
	if s[0] == '-' || s[0] == '+' {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	seg := [3]int64{1, 1, 1}
	i, n := 0, 0
	var v int64
	j := 0
	for ; j < len(s) && s[j] != ' ' && s[j] != 'T'; j++ {
		c := s[j]
		if i < 2 && c == '-' {
			if !dateDigits(i, n) {
				return 0, false
			}
			seg[i], v, n = v, 0, 0
			i++
			continue
		}
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
		n++
		if n > 7 {
			return 0, false
		}
	}
	if !dateDigits(i, n) || (i < 2 && j < len(s)) {
		return 0, false
	}
	seg[i] = v
	return civilDays(sign*seg[0], seg[1], seg[2])
}

// dateDigits says how many digits each date segment may have.
func dateDigits(seg, n int) bool {
	if seg == 0 {
		return n >= 4 && n <= 7
	}
	return n >= 1 && n <= 2
}

// stringToTimestamp is Spark's DateTimeUtils.stringToTimestamp, the date
// and time segments of parseTimestampString.
func stringToTimestamp(s []byte) (Time, bool) {
	var t Time
	s = trim(s)
	if len(s) == 0 {
		return t, false
	}
	sign := int64(1)
	if s[0] == '-' || s[0] == '+' {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	// year, month, day, hour, minute, second, microseconds
	seg := [7]int64{1, 1, 1, 0, 0, 0, 0}
	i, n, fracDigits := 0, 0, 0
	var v int64
	var zone []byte
	valid := func(i, n int) bool {
		switch i {
		case 0:
			return n >= 4 && n <= 6
		case 6:
			return true
		}
		return n >= 1 && n <= 2
	}
loop:
	for j := 0; j < len(s); j++ {
		c := s[j]
		if c >= '0' && c <= '9' {
			if i == 6 {
				fracDigits++
				if n >= 6 {
					n++
					continue // digits beyond microseconds are truncated
				}
			}
			v = v*10 + int64(c-'0')
			n++
			if n > 6 && i != 6 {
				return t, false
			}
			continue
		}
		var next bool
		switch {
		case i < 2:
			next = c == '-'
		case i == 2:
			next = c == ' ' || c == 'T'
		case i == 3 || i == 4:
			next = c == ':'
		case i == 5 && c == '.':
			next = true
		case i == 5 || i == 6:
			zone = s[j:]
			break loop
		}
		if !next || !valid(i, n) {
			return t, false
		}
		seg[i], v, n = v, 0, 0
		i++
	}
	if !valid(i, n) {
		return t, false
	}
	seg[i] = v
	for k := min(fracDigits, 6); k < 6; k++ {
		seg[6] *= 10
	}
	days, ok := civilDays(sign*seg[0], seg[1], seg[2])
	if !ok || seg[3] > 23 || seg[4] > 59 || seg[5] > 59 {
		return t, false
	}
	t.Days = days
	t.Micros = ((seg[3]*60+seg[4])*60+seg[5])*1_000_000 + seg[6]
	if zone != nil {
		off, ok := zoneOffset(trim(zone))
		if !ok {
			return t, false
		}
		t.Zone, t.Offset = true, off
	}
	return t, true
}

// zoneOffset parses a zone of stringToTimestamp: Z, UTC, UT, GMT, or an
// offset, alone or after UTC, UT or GMT.
func zoneOffset(z []byte) (int64, bool) {
	switch string(z) {
	case "Z", "UTC", "UT", "GMT":
		return 0, true
	}
	for _, p := range []string{"UTC", "GMT", "UT"} {
		if len(z) > len(p) && string(z[:len(p)]) == p && (z[len(p)] == '+' || z[len(p)] == '-') {
			z = z[len(p):]
			break
		}
	}
	if len(z) < 2 || (z[0] != '+' && z[0] != '-') {
		return 0, false
	}
	sign := int64(1)
	if z[0] == '-' {
		sign = -1
	}
	z = z[1:]
	// Spark pads a one-digit hour ("+1:00") and minute ("+01:3").
	var parts [3]int64
	k, n := 0, 0
	colons := false
	for _, c := range z {
		switch {
		case c == ':':
			if n == 0 || k == 2 || (n > 2) {
				return 0, false
			}
			colons = true
			k, n = k+1, 0
		case c >= '0' && c <= '9':
			if !colons && n == 2 && k < 2 {
				k, n = k+1, 0 // +hhmm[ss]
			}
			parts[k] = parts[k]*10 + int64(c-'0')
			n++
			if n > 2 {
				return 0, false
			}
		default:
			return 0, false
		}
	}
	if n == 0 || parts[0] > 18 || parts[1] > 59 || parts[2] > 59 {
		return 0, false
	}
	off := parts[0]*3600 + parts[1]*60 + parts[2]
	if off > 18*3600 {
		return 0, false
	}
	return sign * off, true
}

// trim drops leading and trailing whitespace and control characters, as
// Spark's UTF8String.trimAll.
func trim(s []byte) []byte {
	for len(s) > 0 && (s[0] <= ' ' || s[0] == 0x7F) {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] <= ' ' || s[len(s)-1] == 0x7F) {
		s = s[:len(s)-1]
	}
	return s
}

// gmtIndex returns the index of "GMT" in s, or -1.
func gmtIndex(s []byte) int {
	for i := 0; i+3 <= len(s); i++ {
		if s[i] == 'G' && s[i+1] == 'M' && s[i+2] == 'T' {
			return i
		}
	}
	return -1
}

// dropGMT appends s without every "GMT" to dst (Spark's
// cleanLegacyTimestampStr).
func dropGMT(dst, s []byte) []byte {
	for {
		i := gmtIndex(s)
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i]...)
		s = s[i+3:]
	}
}

// parseInt32 parses Java's Integer.parseInt text: an optional sign and
// decimal digits, within 32 bits.
func parseInt32(s []byte) (int64, bool) {
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 10 {
		return 0, false
	}
	var v int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, v >= -1<<31 && v < 1<<31
}

// civilDays returns the days since 1970-01-01 of a proleptic Gregorian
// date, false when the date does not exist.
func civilDays(y, m, d int64) (int64, bool) {
	if m < 1 || m > 12 || d < 1 || d > DaysInMonth(y, m) {
		return 0, false
	}
	return daysFromCivil(y, m, d), true
}

// DaysInMonth returns the number of days in month m (1 to 12) of year y in
// the proleptic Gregorian calendar, which Spark uses for every year.
func DaysInMonth(y, m int64) int64 {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil returns the days since 1970-01-01 of a proleptic Gregorian
// date (Howard Hinnant's algorithm), for any year.
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// iso parses the common ISO 8601 forms quickly: yyyy-MM-dd, then 'T' or a
// space, HH:mm[:ss[.fraction]] and a zone Z, UTC, GMT, +HH, +HH:mm or
// +HHmm. Text it does not take goes through the general parser, which
// accepts all of these too.
func iso(s []byte) (Time, bool) {
	var t Time
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return t, false
	}
	y, ok1 := fixed(s[0:4])
	m, ok2 := fixed(s[5:7])
	d, ok3 := fixed(s[8:10])
	days, ok := civilDays(y, m, d)
	if !ok1 || !ok2 || !ok3 || !ok {
		return t, false
	}
	t.Days = days
	s = s[10:]
	if len(s) == 0 {
		return t, true
	}
	if len(s) < 6 || (s[0] != 'T' && s[0] != ' ') || s[3] != ':' {
		return t, false
	}
	hh, ok1 := fixed(s[1:3])
	mm, ok2 := fixed(s[4:6])
	if !ok1 || !ok2 || hh > 23 || mm > 59 {
		return t, false
	}
	var ss, frac int64
	s = s[6:]
	if len(s) > 0 && s[0] != ':' {
		return t, false // Spark wants seconds before a zone
	}
	if len(s) > 0 {
		if len(s) < 3 {
			return t, false
		}
		if ss, ok = fixed(s[1:3]); !ok || ss > 59 {
			return t, false
		}
		s = s[3:]
		if len(s) > 0 && s[0] == '.' {
			n := 1
			for n < len(s) && s[n] >= '0' && s[n] <= '9' {
				n++
			}
			if n == 1 || n > 10 {
				return t, false
			}
			for i := 1; i < 7; i++ {
				frac *= 10
				if i < n {
					frac += int64(s[i] - '0')
				}
			}
			s = s[n:]
		}
	}
	t.Micros = ((hh*60+mm)*60+ss)*1_000_000 + frac
	if len(s) == 0 {
		return t, true
	}
	switch string(s) {
	case "Z", "UTC", "GMT":
		t.Zone = true
		return t, true
	}
	if len(s) != 3 && len(s) != 5 && len(s) != 6 || (s[0] != '+' && s[0] != '-') {
		return t, false
	}
	zh, ok1 := fixed(s[1:3])
	var zm int64
	ok2 = true
	switch len(s) {
	case 5:
		zm, ok2 = fixed(s[3:5])
	case 6:
		ok2 = s[3] == ':'
		if ok2 {
			zm, ok2 = fixed(s[4:6])
		}
	}
	if !ok1 || !ok2 || zh > 18 || zm > 59 {
		return t, false
	}
	t.Zone, t.Offset = true, zh*3600+zm*60
	if s[0] == '-' {
		t.Offset = -t.Offset
	}
	return t, true
}

// fixed parses ASCII digits only.
func fixed(s []byte) (int64, bool) {
	var v int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, len(s) > 0
}
