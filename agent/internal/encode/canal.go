package encode

import (
	"fmt"
	"strconv"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/jsontext"
)

// canal writes Canal change events, as Canal's flat messages and Flink's
// canal-json format have them:
//
//	{"data": [{...}], "old": [{...}]|null, "type": "INSERT"|"UPDATE"|"DELETE",
//	 "database": "inventory", "table": "products", "es": 1700000000000,
//	 "ts": 1700000000123, "isDdl": false}
//
// c and r rows are INSERTs. An update's old holds its before image when
// the row has one (only the changed fields with keep_changed_fields_only),
// else it is null. Values keep their JSON types rather than Canal's
// strings; Canal readers (this agent's CANAL_JSON, Flink's canal-json)
// take both.
type canal struct{ options }

// Value appends r's change event to dst.
func (e *canal) Value(dst []byte, r *Row) ([]byte, error) {
	var err error
	dst = append(dst, `{"data":[`...)
	if dst, err = appendObject(dst, r.Fields, r.Values, nil, false); err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	dst = append(dst, `],"old":`...)
	if r.Op == 'u' && r.Before != nil {
		var idx []int
		if e.changedOnly {
			idx = changed(r)
		}
		dst = append(dst, '[')
		if dst, err = appendObject(dst, r.Fields, r.Before, idx, false); err != nil {
			return nil, fmt.Errorf("old: %w", err)
		}
		dst = append(dst, ']')
	} else {
		dst = append(dst, "null"...)
	}
	typ := "INSERT"
	switch r.Op {
	case 'u':
		typ = "UPDATE"
	case 'd':
		typ = "DELETE"
	}
	dst = append(dst, `,"type":`...)
	dst = jsontext.AppendQuotedString(dst, typ)
	dst = append(dst, `,"database":`...)
	dst = appendNullableString(dst, r.DB)
	dst = append(dst, `,"table":`...)
	dst = jsontext.AppendQuotedString(dst, e.table(r))
	dst = append(dst, `,"es":`...)
	es := r.TS
	if es.IsZero() {
		es = e.now()
	}
	dst = strconv.AppendInt(dst, es.UnixMilli(), 10)
	dst = append(dst, `,"ts":`...)
	dst = strconv.AppendInt(dst, e.now().UnixMilli(), 10)
	return append(dst, `,"isDdl":false}`...), nil
}
