package redact

import (
	"context"
	"fmt"
	"log/slog"
)

// Handler is a [slog.Handler] that scrubs the secrets its [Redactor] knows
// from every record's message and attribute values (string values, errors
// and any other value as it prints) before passing the record on.
//
// Attributes given to [Handler.WithAttrs] are scrubbed when they are given,
// with the secrets known then; attributes of a record are scrubbed when it
// is logged.
type Handler struct {
	next slog.Handler
	r    *Redactor
}

// NewHandler returns a Handler that scrubs with r and passes records on to
// next.
func NewHandler(next slog.Handler, r *Redactor) *Handler {
	return &Handler{next: next, r: r}
}

// Enabled reports whether the next handler handles level.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

// Handle scrubs rec and passes the result on.
func (h *Handler) Handle(ctx context.Context, rec slog.Record) error {
	if !h.r.active() {
		return h.next.Handle(ctx, rec)
	}
	out := slog.NewRecord(rec.Time, rec.Level, h.r.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

// WithAttrs returns a Handler whose next handler has attrs, scrubbed.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	scrubbed := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		scrubbed[i] = h.attr(a)
	}
	return &Handler{next: h.next.WithAttrs(scrubbed), r: h.r}
}

// WithGroup returns a Handler whose next handler opens group name.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name), r: h.r}
}

// attr returns a with its value scrubbed. A value that prints without any
// secret is passed on as it is, so handlers still see its kind (a number,
// a time, a structure a JSON handler encodes).
func (h *Handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.String(v.String()))
	case slog.KindGroup:
		group := v.Group()
		scrubbed := make([]slog.Attr, len(group))
		for i, g := range group {
			scrubbed[i] = h.attr(g)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(scrubbed...)}
	case slog.KindAny:
		var text string
		if err, ok := v.Any().(error); ok {
			text = err.Error()
		} else {
			text = fmt.Sprintf("%+v", v.Any())
		}
		if scrubbed := h.r.String(text); scrubbed != text {
			return slog.String(a.Key, scrubbed)
		}
		return slog.Attr{Key: a.Key, Value: v}
	default:
		// Numbers, booleans, durations and times carry no secret.
		return slog.Attr{Key: a.Key, Value: v}
	}
}
