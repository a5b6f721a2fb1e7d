package schema

import (
	"fmt"
	"strconv"
	"strings"
)

// kindNames holds the canonical DDL name of each kind.
var kindNames = [...]string{
	Boolean:      "BOOLEAN",
	Byte:         "TINYINT",
	Short:        "SMALLINT",
	Int:          "INT",
	Long:         "BIGINT",
	Float:        "FLOAT",
	Double:       "DOUBLE",
	Decimal:      "DECIMAL",
	String:       "STRING",
	Binary:       "BINARY",
	Date:         "DATE",
	Timestamp:    "TIMESTAMP",
	TimestampNTZ: "TIMESTAMP_NTZ",
	Array:        "ARRAY",
	Map:          "MAP",
	Struct:       "STRUCT",
	Variant:      "VARIANT",
}

// String returns the kind's canonical DDL name ("BIGINT", "TIMESTAMP_NTZ"),
// or "Kind(n)" for a value that is not a kind.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// String returns t in canonical Spark DDL ("DECIMAL(10,2)",
// "MAP<STRING, ARRAY<INT>>", "STRUCT<a: INT NOT NULL COMMENT 'x'>"), which
// ParseDDL reads back to an equal type. A nil type prints as "<nil>".
func (t *Type) String() string {
	var b strings.Builder
	writeType(&b, t, false)
	return b.String()
}

// FormatDDL returns fields as a canonical Spark DDL column list
// ("id BIGINT NOT NULL, name STRING COMMENT 'who'"): ParseDDL(FormatDDL(f))
// gives fields equal to f, comments included, for any f that ParseDDL can
// produce.
func FormatDDL(fields []Field) string {
	var b strings.Builder
	writeFields(&b, fields, " ", false)
	return b.String()
}

// catalogString returns t the way Spark's DataType.catalogString does
// ("array<varchar(5)>", "struct<a:int,`b c`:string>"): lower case, without
// spaces, nullability or comments. Spark stores it in field metadata to
// remember CHAR and VARCHAR types.
func catalogString(t *Type) string {
	var b strings.Builder
	writeType(&b, t, true)
	return b.String()
}

// writeFields writes a column list or the inside of a struct type; nameSep
// goes between each name and its type.
func writeFields(b *strings.Builder, fields []Field, nameSep string, catalog bool) {
	for i, f := range fields {
		switch {
		case i > 0 && catalog:
			b.WriteByte(',')
		case i > 0:
			b.WriteString(", ")
		}
		b.WriteString(QuoteName(f.Name))
		b.WriteString(nameSep)
		writeType(b, f.Type, catalog)
		if catalog {
			continue
		}
		if !f.Nullable {
			b.WriteString(" NOT NULL")
		}
		if f.Comment != "" {
			b.WriteString(" COMMENT ")
			b.WriteString(quoteString(f.Comment))
		}
	}
}

// writeType writes t in DDL or, when catalog is set, as a catalog string.
func writeType(b *strings.Builder, t *Type, catalog bool) {
	if t == nil {
		b.WriteString("<nil>")
		return
	}
	name := t.Kind.String()
	switch {
	case t.Kind == String && t.Length > 0 && t.Fixed:
		name = fmt.Sprintf("CHAR(%d)", t.Length)
	case t.Kind == String && t.Length > 0:
		name = fmt.Sprintf("VARCHAR(%d)", t.Length)
	case t.Kind == Decimal:
		name = fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale)
	}
	if catalog {
		name = strings.ToLower(name)
	}
	b.WriteString(name)
	sep, nameSep := ", ", ": "
	if catalog {
		sep, nameSep = ",", ":"
	}
	switch t.Kind {
	case Array:
		b.WriteByte('<')
		writeType(b, t.Elem, catalog)
		b.WriteByte('>')
	case Map:
		b.WriteByte('<')
		writeType(b, t.Key, catalog)
		b.WriteString(sep)
		writeType(b, t.Value, catalog)
		b.WriteByte('>')
	case Struct:
		b.WriteByte('<')
		writeFields(b, t.Fields, nameSep, catalog)
		b.WriteByte('>')
	}
}

// QuoteName returns name as a DDL identifier: unchanged when it is made of
// ASCII letters, digits and underscores and does not start with a digit, and
// in backquotes otherwise. (Spark's quoteIfNeeded leaves names such as "1e5"
// bare, which Spark then reads as numbers.)
func QuoteName(name string) string {
	plain := name != "" && (name[0] < '0' || name[0] > '9')
	for i := 0; plain && i < len(name); i++ {
		plain = isWordByte(name[i])
	}
	if plain {
		return name
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// quoteString returns s as a single-quoted DDL string literal. Backslashes
// and quotes are escaped, and so are control characters, so that the literal
// stays on one line.
func quoteString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range s {
		switch {
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == 0x2028 || r == 0x2029:
			b.WriteString(`\u`)
			s := strconv.FormatInt(int64(r), 16)
			b.WriteString(strings.Repeat("0", 4-len(s)) + s)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}
