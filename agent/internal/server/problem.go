package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// maxBodyBytes is the largest request body accepted; a pipeline spec with
// inline schemas stays far below it.
const maxBodyBytes = 4 << 20

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
	p.Errors = errs
	return p
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
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	_, _ = w.Write(data) // the client went away; nothing to do
}

// writeJSON writes v as the JSON body of a status answer.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	data, err := encodeJSON(v)
	if err != nil {
		return fmt.Errorf("encoding the answer: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data) // the client went away; nothing to do
	return nil
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

// decodeBody reads the request body into v strictly: one JSON object of at
// most maxBodyBytes with no field v does not have. what names the object in
// messages ("pipeline").
func decodeBody(w http.ResponseWriter, r *http.Request, what string, v any) error {
	body := http.MaxBytesReader(w, r.Body, maxBodyBytes)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, tokErr := dec.Token(); tokErr != io.EOF {
			err = errTrailingData
			if tokErr != nil {
				err = tokErr
			}
		}
	}
	var (
		tooLarge *http.MaxBytesError
		typeErr  *json.UnmarshalTypeError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &tooLarge):
		return problemf(http.StatusRequestEntityTooLarge, "the request body is larger than %d MiB", maxBodyBytes>>20)
	case errors.Is(err, io.EOF):
		return problemf(http.StatusBadRequest, "the request body is empty; send the %s as a JSON object", what)
	case errors.As(err, &typeErr) && typeErr.Field != "":
		p := problemf(http.StatusBadRequest, "the request body is not a valid %s", what)
		p.Errors = spec.Errors{{Path: typeErr.Field, Detail: fmt.Sprintf("a JSON %s cannot be a %s", typeErr.Value, typeErr.Type)}}
		return p
	default:
		return problemf(http.StatusBadRequest, "the request body is not a valid %s: %v", what, err)
	}
}

var errTrailingData = errors.New("data after the JSON object")
