package expr

import "errors"

// castValue converts v to type to as cast(v AS to) does under ANSI rules:
// an error when the value does not convert (try_cast turns it into NULL).
// NULL casts to NULL of any type.
func castValue(v Value, to Type) (Value, error) {
	return Value{}, errors.New("not implemented yet") // replaced by the core
}
