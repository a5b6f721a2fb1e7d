package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Defaults of the HTTP server's limits.
const (
	// DefaultMaxConnections is the default cap on open connections.
	DefaultMaxConnections = 64
	// DefaultReadHeaderTimeout bounds reading a request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultReadTimeout bounds reading a whole request, body included: a
	// spec is a few kilobytes.
	DefaultReadTimeout = 30 * time.Second
	// DefaultWriteTimeout bounds a request from the end of its headers to
	// the end of its answer, handling included; longer than the API
	// client's own timeout (see client.DefaultTimeout).
	DefaultWriteTimeout = 2 * time.Minute
	// DefaultIdleTimeout is how long a kept-alive connection may wait for
	// its next request.
	DefaultIdleTimeout = 2 * time.Minute
	// maxHeaderBytes bounds a request's headers; the API's are small.
	maxHeaderBytes = 64 << 10
)

// Timeouts bound each phase of a request; a zero field takes its default.
type Timeouts struct {
	// ReadHeader bounds reading the headers (and the TLS handshake)
	// (default DefaultReadHeaderTimeout).
	ReadHeader time.Duration
	// Read bounds reading the whole request, from its first byte (default
	// DefaultReadTimeout). An unauthenticated request's body is not read
	// at all: its connection is closed after the 401.
	Read time.Duration
	// Write bounds handling a request and writing its answer (default
	// DefaultWriteTimeout).
	Write time.Duration
	// Idle bounds the wait for the next request on a kept-alive
	// connection (default DefaultIdleTimeout).
	Idle time.Duration
}

// withDefaults returns t with its zero fields set to their defaults.
func (t Timeouts) withDefaults() Timeouts {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&t.ReadHeader, DefaultReadHeaderTimeout)
	def(&t.Read, DefaultReadTimeout)
	def(&t.Write, DefaultWriteTimeout)
	def(&t.Idle, DefaultIdleTimeout)
	return t
}

// newHTTPServer returns the http.Server of s, with cfg's timeouts.
func (s *Server) newHTTPServer(cfg Config) *http.Server {
	t := cfg.Timeouts.withDefaults()
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if tc, ok := c.(*tls.Conn); ok {
				c = tc.NetConn()
			}
			if tc, ok := c.(*trackedConn); ok {
				ctx = context.WithValue(ctx, connKey{}, tc)
			}
			return ctx
		},
	}
}

// Serve answers the API on ln until [Server.Shutdown]: over HTTPS when
// [Config.TLS] is set (HTTP/1.1 only), with at most
// [Config.MaxConnections] connections open and every phase of a request
// bounded by [Config.Timeouts]. It returns http.ErrServerClosed after a
// Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	l := newConnLimiter(ln, s.maxConns)
	if s.tls == nil {
		return s.http.Serve(l)
	}
	cfg := s.tls.Clone()
	cfg.NextProtos = []string{"http/1.1"}
	return s.http.Serve(tls.NewListener(l, cfg))
}

// Shutdown stops Serve: it closes the listener and idle connections, then
// waits for running requests until ctx is done.
func (s *Server) Shutdown(ctx context.Context) error {
	if err := s.http.Shutdown(ctx); err != nil {
		return fmt.Errorf("stopping the API: %w", err)
	}
	return nil
}

// connKey is the context key of a request's *trackedConn.
type connKey struct{}

// markBusy marks a request's connection busy while next handles it and
// until its answer is flushed to the connection, so that the connection
// limit does not evict it before the client has the whole answer (see
// [connLimiter]; every answer carries its Content-Length, see [writeBody]).
func markBusy(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := r.Context().Value(connKey{}).(*trackedConn)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		c.setBusy(true)
		defer c.setBusy(false)
		next.ServeHTTP(w, r)
		_ = http.NewResponseController(w).Flush() // a client that went away has nothing to lose
	})
}

// connLimiter is a listener that keeps at most max connections open. When
// a new connection would exceed the cap, the oldest connection that is not
// running a handler is closed to make room: an idle kept-alive connection
// or one still sending its headers, such as a slow client's. So clients
// that connect and then send slowly, or nothing, cannot lock out a health
// check or an authenticated request: the header and idle timeouts bound
// how long they stay, and a new connection evicts them before that. Only
// when every connection runs a handler does Accept wait for one to end,
// leaving new connections in the kernel's backlog.
type connLimiter struct {
	net.Listener
	max int

	mu   sync.Mutex
	open []*trackedConn // in the order they were accepted
	// changed receives a value (without blocking) when a connection
	// closes or a handler ends, which may let a waiting Accept go on.
	changed chan struct{}
	// done is closed by Close, ending a waiting Accept.
	done      chan struct{}
	closeOnce sync.Once
}

// newConnLimiter returns ln capped at limit open connections.
func newConnLimiter(ln net.Listener, limit int) *connLimiter {
	return &connLimiter{Listener: ln, max: limit, changed: make(chan struct{}, 1), done: make(chan struct{})}
}

// Accept returns the next connection, making room for it first.
func (l *connLimiter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, l: l}
	for {
		l.mu.Lock()
		if len(l.open) < l.max {
			l.open = append(l.open, tc)
			l.mu.Unlock()
			return tc, nil
		}
		i := slices.IndexFunc(l.open, func(c *trackedConn) bool { return !c.busy })
		var victim *trackedConn
		if i >= 0 {
			victim = l.open[i]
		}
		l.mu.Unlock()
		if victim != nil {
			_ = victim.Close()
			continue
		}
		select {
		case <-l.changed:
		case <-l.done:
			_ = c.Close()
			return nil, net.ErrClosed
		}
	}
}

// Close closes the listener and ends a waiting Accept.
func (l *connLimiter) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// signal wakes a waiting Accept.
func (l *connLimiter) signal() {
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

// trackedConn is a connection the connLimiter counts.
type trackedConn struct {
	net.Conn
	l *connLimiter
	// busy is true while a handler runs on the connection; guarded by
	// l.mu.
	busy      bool
	closeOnce sync.Once
	closeErr  error
}

// setBusy marks whether a handler runs on c.
func (c *trackedConn) setBusy(busy bool) {
	c.l.mu.Lock()
	c.busy = busy
	c.l.mu.Unlock()
	if !busy {
		c.l.signal()
	}
}

// Close closes the connection and frees its place.
func (c *trackedConn) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = c.Conn.Close()
		c.l.mu.Lock()
		c.l.open = slices.DeleteFunc(c.l.open, func(o *trackedConn) bool { return o == c })
		c.l.mu.Unlock()
		c.l.signal()
	})
	return c.closeErr
}
