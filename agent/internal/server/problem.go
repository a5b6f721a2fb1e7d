package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// problemError is an answer other than 2xx, written as a [spec.Problem].
type problemError struct {
	spec.Problem
}

// Error implements error with the detail and every problem.
func (e *problemError) Error() string {
	msg := e.Title
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if len(e.Errors) > 0 {
		msg += "\n" + spec.Errors(e.Errors).Error()
	}
	return msg
}

// problemf returns a problem with the status's text as title and a detail
// saying what to do.
func problemf(status int, format string, args ...any) *problemError {
	return &problemError{spec.Problem{Title: http.StatusText(status), Status: status, Detail: fmt.Sprintf(format, args...)}}
}

// invalid returns a 422 problem listing errs.
func invalid(detail string, errs spec.Errors) *problemError {
	p := problemf(http.StatusUnprocessableEntity, "%s", detail)
	p.Errors = capProblems(errs)
	return p
}

// maxProblems is how many problems an answer lists at most: a request can
// hold many more (a key repeated a million times), and the answer must
// stay small.
const maxProblems = 100

// capProblems returns the first maxProblems of errs, and a last one that
// counts the others.
func capProblems(errs spec.Errors) spec.Errors {
	if len(errs) <= maxProblems {
		return errs
	}
	return append(errs[:maxProblems:maxProblems], spec.FieldError{Detail: fmt.Sprintf("and %d more problems", len(errs)-maxProblems)})
}

// writeError writes err as a problem: a *problemError as it is, anything else
// as a 500 whose detail is the error, logged at level error. Either is
// scrubbed of secrets first.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var p *problemError
	if !errors.As(err, &p) {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", s.secrets.String(err.Error()))
		p = problemf(http.StatusInternalServerError, "%v", err)
	}
	problem := s.redactProblem(p.Problem)
	data, err := encodeJSON(&problem)
	if err != nil {
		// A Problem is strings and ints; this cannot happen, but answer.
		data = []byte(`{"title":"Internal Server Error","status":500}`)
		p.Status = http.StatusInternalServerError
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	writeBody(w, p.Status, "application/problem+json", data)
}

// writeJSON writes v as the JSON body of a status answer.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	data, err := encodeJSON(v)
	if err != nil {
		return fmt.Errorf("encoding the answer: %w", err)
	}
	writeBody(w, status, "application/json", data)
	return nil
}

// writeBody writes a status answer whose whole body is data, with its
// Content-Length, so that once the handler flushes it (see [markBusy]) the
// client has all of it, whatever happens to the connection next.
func writeBody(w http.ResponseWriter, status int, contentType string, data []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(status)
	_, _ = w.Write(data) // the client went away; nothing to do
}

// encodeJSON encodes v followed by a newline, leaving <, > and & as they
// are: answers are read by programs and people, never embedded in HTML.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
