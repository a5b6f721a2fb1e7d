package decode

// Date and timestamp text, parsed without time.Parse: it allocates and
// accepts neither a space for 'T' nor a missing zone.

// dateTime is the parsed form of "yyyy-MM-dd[(T| )HH:mm[:ss[.f{1,9}]][zone]]".
type dateTime struct {
	days   int64 // days since 1970-01-01 of the written date
	micros int64 // microseconds into the day, zone not applied
	zone   bool  // a zone was written
	offset int64 // the zone's offset east of UTC, in seconds
}

// unixMicros returns the instant, in microseconds since the epoch, that dt
// names; a dateTime without a zone is UTC.
func (dt *dateTime) unixMicros() int64 {
	return (dt.days*86400-dt.offset)*1_000_000 + dt.micros
}

// parseDateTime parses ISO-8601 date and date-time text: a date alone, or a
// date, 'T' or a space, hours and minutes, optional seconds with an optional
// fraction of up to nine digits (truncated to microseconds, as Spark does),
// and an optional zone: Z, UTC, GMT, +HH, +HH:mm or +HHmm.
func parseDateTime(s []byte) (dateTime, bool) {
	var dt dateTime
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return dt, false
	}
	y, ok1 := digits(s[0:4])
	m, ok2 := digits(s[5:7])
	d, ok3 := digits(s[8:10])
	if !ok1 || !ok2 || !ok3 || y < 1 || m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return dt, false
	}
	dt.days = daysFromCivil(y, m, d)
	s = s[10:]
	if len(s) == 0 {
		return dt, true
	}
	if s[0] != 'T' && s[0] != ' ' {
		return dt, false
	}
	s = s[1:]
	if len(s) < 5 || s[2] != ':' {
		return dt, false
	}
	hh, ok1 := digits(s[0:2])
	mm, ok2 := digits(s[3:5])
	if !ok1 || !ok2 || hh > 23 || mm > 59 {
		return dt, false
	}
	var ss, frac int64
	s = s[5:]
	if len(s) > 0 && s[0] == ':' {
		var ok bool
		if len(s) < 3 {
			return dt, false
		}
		if ss, ok = digits(s[1:3]); !ok || ss > 59 {
			return dt, false
		}
		s = s[3:]
		if len(s) > 0 && s[0] == '.' {
			n := 1
			for n < len(s) && s[n] >= '0' && s[n] <= '9' {
				n++
			}
			if n == 1 || n > 10 {
				return dt, false
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
	dt.micros = ((hh*60+mm)*60+ss)*1_000_000 + frac
	if len(s) == 0 {
		return dt, true
	}
	dt.zone = true
	switch string(s) {
	case "Z", "UTC", "GMT":
		return dt, true
	}
	sign := int64(1)
	switch s[0] {
	case '+':
	case '-':
		sign = -1
	default:
		return dt, false
	}
	s = s[1:]
	var zh, zm int64
	var ok bool
	switch {
	case len(s) == 2:
		zh, ok = digits(s)
	case len(s) == 5 && s[2] == ':':
		zh, ok1 = digits(s[0:2])
		zm, ok2 = digits(s[3:5])
		ok = ok1 && ok2
	case len(s) == 4:
		zh, ok1 = digits(s[0:2])
		zm, ok2 = digits(s[2:4])
		ok = ok1 && ok2
	}
	if !ok || zh > 18 || zm > 59 {
		return dt, false
	}
	dt.offset = sign * (zh*3600 + zm*60)
	return dt, true
}

// digits parses an unsigned decimal of ASCII digits only.
func digits(s []byte) (int64, bool) {
	var v int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, len(s) > 0
}

// daysIn returns the number of days in month m of year y.
func daysIn(y, m int64) int64 {
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
// date (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400 // y >= 0 here: years start at 1
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}
