package schema

// Fits reports whether a value whose inferred type ([InferValue]) is got
// can be written to a column of type cur as it is, by the conversions of
// Spark's from_json in PERMISSIVE mode that the JSON decoder follows:
//
//   - null fits every column, and every value fits a STRING column (which
//     takes the JSON text of non-strings);
//   - a number fits a numeric column (an integer an integer column, any
//     number a FLOAT, DOUBLE or DECIMAL column), a string does not fit an
//     integer or BOOLEAN column, a fraction does not fit an integer column;
//   - a string fits DATE, TIMESTAMP, TIMESTAMP_NTZ, BINARY (base64), FLOAT
//     and DOUBLE ("NaN", "Infinity") and DECIMAL columns, and an integer a
//     TIMESTAMP column (seconds since the epoch);
//   - an object fits a struct column whose members hold its keys (a key
//     the struct lacks fits when its value holds nothing: null, {}, [{}]),
//     and a map column whose values hold its members; an array fits an
//     array column whose element holds its elements.
//
// Conversions whose success depends on the value are reported as fitting:
// an integer into an INT or DECIMAL(p,s) column may be out of range, a
// string into a DATE column may not be a date. The decoder checks each
// value and rejects those; Fits is false only when no value of type got
// can be written. A key that names a struct member only ignoring case, or
// that is empty, does not fit (see [Lookup]).
func Fits(cur, got *Type) bool {
	_, ok := evolve(cur, got, false, false)
	return ok
}

// Extend returns the type a column of type cur becomes to hold a value of
// inferred type got when schema evolution adds new fields
// (ADD_NEW_COLUMNS): cur with the struct members that got has and cur
// lacks added at the end of their structs, nullable, at any depth (inside
// arrays and map values too), typed by [Canonical]. A new member that got
// only has as null or {} is not added: it fixes no type yet. It returns
// (cur, true) when the value [Fits] as it is, and false when no added
// member makes it fit: the value goes to the rescued data column.
func Extend(cur, got *Type) (*Type, bool) {
	return evolve(cur, got, true, false)
}

// Widen returns the type a column of type cur becomes to hold a value of
// inferred type got under ADD_NEW_COLUMNS_WITH_TYPE_WIDENING: as [Extend],
// and with each part of cur whose kind is narrower than got's widened as
// Delta's type widening allows:
//
//   - TINYINT, SMALLINT and INT to a wider integer, to DOUBLE, or to a
//     DECIMAL with room for their values and got's (3, 5 and 10 integer
//     digits);
//   - BIGINT to a DECIMAL with room for 20 integer digits and got's (not
//     to DOUBLE: Delta refuses it, since a DOUBLE cannot hold every
//     BIGINT);
//   - FLOAT to DOUBLE;
//   - DECIMAL(p,s) to a DECIMAL with as many more integer and fraction
//     digits as got needs, up to 38 digits (not to DOUBLE);
//   - DATE to TIMESTAMP_NTZ.
//
// Widening goes by kind, not by value: call Widen for a value that does not
// fit as it is ([Fits] false, or the decoder rejected it), since an INT
// column given any integer becomes BIGINT. It returns false when no
// widening holds the value: the value goes to the rescued data column. It
// returns cur itself when got's kind already fits cur (an integer into
// DECIMAL(38,0)): for a value the decoder rejected, that too means no
// widening holds it. Delta readers need the typeWidening table feature
// for a column whose type widened.
func Widen(cur, got *Type) (*Type, bool) {
	return evolve(cur, got, true, true)
}

// evolve returns the type a column of type cur becomes to hold a value of
// inferred type got: cur itself when it fits, a type with new struct
// members when extend is set, widened parts when widen is set; false when
// none holds it.
func evolve(cur, got *Type, extend, widen bool) (*Type, bool) {
	switch {
	case got == nil:
		return cur, true
	case cur == nil:
		return nil, false
	case cur.Kind == String:
		return cur, true
	case cur.Kind == Struct && got.Kind == Struct:
		return evolveStruct(cur, got, extend, widen)
	case cur.Kind == Map && got.Kind == Struct:
		v := cur.Value
		for _, f := range got.Fields {
			var ok bool
			if v, ok = evolve(v, f.Type, extend, widen); !ok {
				return nil, false
			}
		}
		if v == cur.Value {
			return cur, true
		}
		return &Type{Kind: Map, Key: cur.Key, Value: v}, true
	case cur.Kind == Array && got.Kind == Array:
		e, ok := evolve(cur.Elem, got.Elem, extend, widen)
		switch {
		case !ok:
			return nil, false
		case e == cur.Elem:
			return cur, true
		}
		return &Type{Kind: Array, Elem: e}, true
	}
	if widen {
		if w := widenScalar(cur, got); w != nil {
			return w, true
		}
	}
	if fitsScalar(cur, got) {
		return cur, true
	}
	return nil, false
}

// evolveStruct is evolve for a struct column and an object value.
func evolveStruct(cur, got *Type, extend, widen bool) (*Type, bool) {
	fields := cur.Fields
	changed := false
	for _, f := range got.Fields {
		i, exact := Lookup(fields, f.Name)
		if i < 0 || !exact {
			// A key that names no member loses nothing when its value is
			// null, {} or the like, or one no column can hold ([{}]).
			t, ok := Canonical(f.Type)
			switch {
			case !ok || holdsNothing(f.Type):
				continue
			case i >= 0:
				return nil, false
			case !extend || f.Name == "":
				return nil, false
			}
			if !changed {
				fields, changed = append([]Field(nil), fields...), true
			}
			fields = append(fields, Field{Name: f.Name, Type: t, Nullable: true})
			continue
		}
		t, ok := evolve(fields[i].Type, f.Type, extend, widen)
		switch {
		case !ok:
			return nil, false
		case t == fields[i].Type:
			continue
		}
		if !changed {
			fields, changed = append([]Field(nil), fields...), true
		}
		fields[i].Type = t
	}
	if !changed {
		return cur, true
	}
	c := *cur
	c.Fields = fields
	return &c, true
}

// holdsNothing reports whether a value of inferred type t has nothing to
// write: it is null, or an object whose members are all such values.
func holdsNothing(t *Type) bool {
	if t == nil {
		return true
	}
	if t.Kind != Struct {
		return false
	}
	for _, f := range t.Fields {
		if !holdsNothing(f.Type) {
			return false
		}
	}
	return true
}

// isInteger reports whether k is TINYINT, SMALLINT, INT or BIGINT.
func isInteger(k Kind) bool { return k >= Byte && k <= Long }

// fitsScalar reports whether a value of type got converts to the scalar
// column type cur (see [Fits]).
func fitsScalar(cur, got *Type) bool {
	if cur.Equal(got) {
		return true
	}
	// integral is got's kind of JSON number: an integer (a DECIMAL inferred
	// from an integer has scale 0) or not.
	integral := isInteger(got.Kind) || got.Kind == Decimal && got.Scale == 0
	switch cur.Kind {
	case Byte, Short, Int, Long:
		return integral
	case Float, Double, Decimal:
		return isNumeric(got.Kind) || got.Kind == String
	case Binary:
		return got.Kind == String
	case Date, TimestampNTZ:
		return got.Kind == String || isDateTime(got.Kind)
	case Timestamp:
		return got.Kind == String || isDateTime(got.Kind) || integral
	}
	return false
}

// widenScalar returns the type Delta's type widening turns the scalar
// column type cur into to hold values of type got, or nil when none does
// or cur needs no widening.
func widenScalar(cur, got *Type) *Type {
	switch {
	case isInteger(cur.Kind) && isInteger(got.Kind):
		if got.Kind > cur.Kind {
			return &Type{Kind: got.Kind}
		}
	case isInteger(cur.Kind) && cur.Kind != Long && (got.Kind == Float || got.Kind == Double):
		return typeDouble
	case isInteger(cur.Kind) && got.Kind == Decimal:
		return widenDecimal(&Type{Kind: Decimal, Precision: integerDigits[cur.Kind]}, got)
	case cur.Kind == Float && isNumeric(got.Kind) && got.Kind != Float:
		return typeDouble
	case cur.Kind == Decimal && (got.Kind == Decimal || isInteger(got.Kind)):
		if got.Kind != Decimal {
			got = &Type{Kind: Decimal, Precision: integerDigits[got.Kind]}
		}
		if w := widenDecimal(cur, got); !w.Equal(cur) {
			return w
		}
	case cur.Kind == Date && got.Kind == Timestamp:
		return &Type{Kind: TimestampNTZ}
	}
	return nil
}

// widenDecimal returns the DECIMAL that holds the values of DECIMALs cur
// and got, or nil when that needs more than 38 digits.
func widenDecimal(cur, got *Type) *Type {
	w := unifyDecimals(cur, got)
	if w.Kind != Decimal {
		return nil
	}
	return w
}

// DecimalOf returns the DECIMAL(p, s) that holds the JSON number text
// exactly, with s its digits after the point, for widening a BIGINT or
// DECIMAL column to take it; false for text with an exponent, for text that
// is not a number, or when it needs more than 38 digits. Inference itself
// keeps such numbers DOUBLE (see [InferValue]): only widening, which
// starts from a column that holds exact values, asks for the decimal.
func DecimalOf(text []byte) (*Type, bool) {
	s := text
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	whole, scale, point := 0, 0, false
	leading := true
	for _, c := range s {
		switch {
		case c == '.' && !point:
			point = true
		case c >= '0' && c <= '9' && point:
			scale++
		case c >= '0' && c <= '9':
			if c == '0' && leading {
				continue
			}
			leading = false
			whole++
		default:
			return nil, false
		}
	}
	if whole+scale == 0 && !point && len(s) == 0 {
		return nil, false
	}
	if whole+scale > maxPrecision {
		return nil, false
	}
	return &Type{Kind: Decimal, Precision: max(whole+scale, 1), Scale: scale}, true
}
