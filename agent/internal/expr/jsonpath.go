package expr

// jsonPath extracts the value at path from the JSON text doc with the
// semantics of Databricks' : operator on STRING: a bare name matches a
// field case-insensitively (the first match), a bracketed one exactly; a
// missing field, a JSON null or invalid JSON is NULL (ok false); a string
// gives its unescaped text, any other value its JSON text as written.
func jsonPath(doc []byte, path []PathStep) (s string, ok bool) {
	return "", false // replaced by the JSON path evaluator
}
