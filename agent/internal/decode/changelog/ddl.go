package changelog

import (
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// A small reader of the MySQL DDL in Canal's DDL events (isDdl). It reads
// two statements:
//
//   - CREATE [TEMPORARY] TABLE [IF NOT EXISTS] name (definitions) ...: each
//     column definition is a column;
//   - ALTER TABLE name spec, spec, ...: each ADD [COLUMN] definition and
//     ADD [COLUMN] (definitions) is a column.
//
// A column's type is its MySQL type as [MySQLType] maps it (with
// canal_options' tinyint1_as_boolean and mysql_timestamp_as_ntz); the
// column is nullable whatever the DDL says. In an inferred part that adds
// columns (schema_evolution_mode ADD_NEW_COLUMNS and its variants), the
// columns the part lacks are new columns, asked of the table as a record's
// new fields are; the part's existing columns keep their types. Everything
// else is ignored, the event giving no row: other statements (DROP, RENAME,
// TRUNCATE, CREATE INDEX), other ALTER TABLE specs (DROP, MODIFY, CHANGE,
// RENAME, indexes and keys), index and constraint definitions, and
// statements the reader cannot follow. Dropped or retyped columns stay as
// they are: Delta tables keep every column they ever had, and values that
// no longer fit their column are rescued or corrupt as usual.

// ddlColumn is a column a DDL statement declares.
type ddlColumn struct {
	name string
	typ  *schema.Type
}

// ddlColumns returns the columns that the DDL statement sql adds.
func ddlColumns(sql string, tinyBool, ntz bool) []ddlColumn {
	toks := ddlTokens(sql)
	word := func(i int, w string) bool { return i < len(toks) && strings.EqualFold(toks[i], w) }
	i := 0
	var cols []ddlColumn
	switch {
	case word(0, "create"):
		i = 1
		if word(i, "temporary") {
			i++
		}
		if !word(i, "table") {
			return nil
		}
		i++
		if word(i, "if") && word(i+1, "not") && word(i+2, "exists") {
			i += 3
		}
		i = skipName(toks, i)
		if i >= len(toks) || toks[i] != "(" {
			return nil // CREATE TABLE ... LIKE or AS SELECT
		}
		cols, _ = ddlDefinitions(toks, i+1, tinyBool, ntz, cols)
	case word(0, "alter"):
		if !word(1, "table") {
			return nil
		}
		i = skipName(toks, 2)
		for i < len(toks) {
			if word(i, "add") {
				i++
				if word(i, "column") {
					i++
				}
				switch {
				case i < len(toks) && toks[i] == "(":
					cols, i = ddlDefinitions(toks, i+1, tinyBool, ntz, cols)
				case !isIndexWord(toks, i):
					if c, ok := ddlDefinition(toks, i, tinyBool, ntz); ok {
						cols = append(cols, c)
					}
				}
			}
			if next := skipSpec(toks, i); next > i {
				i = next
			} else {
				i++ // a stray ')'
			}
		}
	}
	return cols
}

// ddlDefinitions reads the comma-separated definitions from toks[i] up to
// the closing parenthesis, appending the columns to cols; it returns them
// and the index after the parenthesis.
func ddlDefinitions(toks []string, i int, tinyBool, ntz bool, cols []ddlColumn) ([]ddlColumn, int) {
	for i < len(toks) && toks[i] != ")" {
		if !isIndexWord(toks, i) {
			if c, ok := ddlDefinition(toks, i, tinyBool, ntz); ok {
				cols = append(cols, c)
			}
		}
		i = skipSpec(toks, i)
	}
	return cols, i + 1
}

// ddlDefinition reads the column definition at toks[i]: its name, then
// its type word, the type's arguments in parentheses and UNSIGNED.
func ddlDefinition(toks []string, i int, tinyBool, ntz bool) (ddlColumn, bool) {
	if i+1 >= len(toks) || isPunct(toks[i]) || isPunct(toks[i+1]) {
		return ddlColumn{}, false
	}
	name, typ := unquoteName(toks[i]), toks[i+1]
	j := i + 2
	if j < len(toks) && toks[j] == "(" {
		for j < len(toks) && toks[j] != ")" {
			typ += toks[j]
			j++
		}
		typ += ")"
		j++
	}
	for ; j < len(toks) && (strings.EqualFold(toks[j], "unsigned") || strings.EqualFold(toks[j], "zerofill")); j++ {
		typ += " " + strings.ToLower(toks[j])
	}
	if name == "" {
		return ddlColumn{}, false
	}
	return ddlColumn{name: name, typ: MySQLType(typ, tinyBool, ntz)}, true
}

// isIndexWord reports whether toks[i] starts an index or constraint
// definition rather than a column.
func isIndexWord(toks []string, i int) bool {
	if i >= len(toks) {
		return true
	}
	switch strings.ToLower(toks[i]) {
	case "primary", "key", "index", "unique", "constraint", "foreign", "fulltext", "spatial", "check":
		return true
	}
	return false
}

// skipName passes over a possibly qualified table name at toks[i].
func skipName(toks []string, i int) int {
	i++
	for i+1 < len(toks) && toks[i] == "." {
		i += 2
	}
	return i
}

// skipSpec passes over the definition or ALTER spec at toks[i], up to the
// next comma or closing parenthesis at its level, and past the comma of an
// ALTER spec list.
func skipSpec(toks []string, i int) int {
	depth := 0
	for ; i < len(toks); i++ {
		switch toks[i] {
		case "(":
			depth++
		case ")":
			if depth == 0 {
				return i
			}
			depth--
		case ",":
			if depth == 0 {
				return i + 1
			}
		}
	}
	return i
}

// isPunct reports whether tok is punctuation.
func isPunct(tok string) bool { return len(tok) == 1 && strings.ContainsAny(tok, "(),.;=") }

// unquoteName returns an identifier without its backticks or double
// quotes (a doubled quote inside standing for one).
func unquoteName(tok string) string {
	if len(tok) >= 2 && (tok[0] == '`' || tok[0] == '"') && tok[len(tok)-1] == tok[0] {
		q := string(tok[0])
		return strings.ReplaceAll(tok[1:len(tok)-1], q+q, q)
	}
	return tok
}

// ddlTokens splits sql into words (identifiers, keywords, numbers, quoted
// identifiers with their quotes), punctuation, and string literals, which
// are dropped; comments and whitespace are skipped.
func ddlTokens(sql string) []string {
	var toks []string
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#' || c == '-' && strings.HasPrefix(sql[i:], "-- "):
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case c == '/' && strings.HasPrefix(sql[i:], "/*"):
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				return toks
			}
			i += end + 4
		case c == '`' || c == '"' || c == '\'':
			j := i + 1
			for j < len(sql) {
				if sql[j] == '\\' && c == '\'' {
					j += 2
					continue
				}
				if sql[j] == c {
					if j+1 < len(sql) && sql[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			j = min(j, len(sql)-1)
			if c != '\'' {
				toks = append(toks, sql[i:j+1])
			}
			i = j + 1
		case strings.IndexByte("(),.;=", c) >= 0:
			toks = append(toks, sql[i:i+1])
			i++
		default:
			j := i
			for j < len(sql) && strings.IndexByte(" \t\n\r(),.;=`\"'#", sql[j]) < 0 {
				j++
			}
			if j == i {
				j++
			}
			toks = append(toks, sql[i:j])
			i = j
		}
	}
	return toks
}

// applyDDL asks, of an inferred value that adds columns, the columns that
// the DDL event just scanned declares and the value lacks.
func (c *changePart) applyDDL() {
	if !c.img.AddsColumns() {
		return
	}
	sql := string(c.unescaped(c.ev.sql, c.ev.sqlEsc))
	for _, col := range ddlColumns(sql, c.tinyBool, c.ntz) {
		c.img.AddColumn(col.name, col.typ)
	}
}
