package decode

// sqlTimestamp reports whether s has the shape of Flink's SQL timestamp
// format (json_options.timestamp_format "SQL"): "yyyy-MM-dd HH:mm:ss", then
// optionally a fraction of one to nine digits, then optionally "Z". The
// lenient parser then reads the value; ISO 8601 text, with its 'T', is not
// this shape.
func sqlTimestamp(s []byte) bool {
	const shape = "dddd-dd-dd dd:dd:dd"
	if len(s) < len(shape) {
		return false
	}
	for i := range len(shape) {
		if c := s[i]; shape[i] == 'd' && (c < '0' || c > '9') || shape[i] != 'd' && c != shape[i] {
			return false
		}
	}
	rest := s[len(shape):]
	if len(rest) > 0 && rest[0] == '.' {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 1 || n > 10 {
			return false
		}
		rest = rest[n:]
	}
	return len(rest) == 0 || len(rest) == 1 && rest[0] == 'Z'
}
