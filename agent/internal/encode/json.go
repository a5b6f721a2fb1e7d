package encode

// plainJSON writes each row as a JSON object of its image, as Flink's json
// format does. A delete row is a tombstone: its key with no value, which
// a table reading the topic with json_options.empty_value_as_delete takes
// as a delete again.
type plainJSON struct{ options }

// Value appends r's image as a JSON object to dst; nil for a delete.
func (e *plainJSON) Value(dst []byte, r *Row) ([]byte, error) {
	if r.Op == 'd' {
		return nil, nil
	}
	return appendObject(dst, r.Fields, r.Values, nil, false)
}
