// Command registry serves a Confluent-compatible schema registry on one
// loopback address for tests: franz-go's in-memory srfake (the Confluent
// REST API: POST /subjects/{s}/versions, GET /schemas/ids/{id},
// GET /subjects/{s}/versions/{v|latest}, references, config, ...) behind
// HTTP basic auth, as Confluent Cloud asks for an API key and secret.
// tools/registry.sh builds and starts it; it holds its state in memory, so
// a restart forgets every schema.
//
//	registry -addr 127.0.0.1:18081 -key K -secret S [-tls-cert F -tls-key F]
//
// With -tls-cert and -tls-key (PEM files) it serves HTTPS only, as
// tools/registry.sh runs it with a certificate of the test CA.
// Every request must carry `Authorization: Basic base64(K:S)`; a missing or
// wrong one gets 401 and {"error_code":401,"message":"Unauthorized"}, as
// from Confluent's registry. GET /healthz answers 200 without credentials.
// An empty -key serves without auth. Each request is logged on stderr.
package main

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/sr/srfake"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18081", "listen address")
	key := flag.String("key", "", "basic-auth user (API key) every request must carry; empty: no auth")
	secret := flag.String("secret", "", "basic-auth password (API secret)")
	quiet := flag.Bool("quiet", false, "do not log each request")
	tlsCert := flag.String("tls-cert", "", "serve HTTPS with this PEM certificate (needs -tls-key)")
	tlsKey := flag.String("tls-key", "", "PEM private key of -tls-cert")
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	if (*tlsCert == "") != (*tlsKey == "") {
		log.Fatal("-tls-cert and -tls-key go together")
	}

	reg := srfake.NewRegistry()
	h := reg.Handler()
	if *key != "" {
		h = basicAuth(h, *key, *secret)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}\n"))
	})
	mux.Handle("/", h)
	h = mux
	if !*quiet {
		h = logRequests(h)
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
		_ = srv.Close()
	}()
	if *tlsCert != "" {
		log.Printf("schema registry (srfake) on https://%s, auth %v", ln.Addr(), *key != "")
		err = srv.ServeTLS(ln, *tlsCert, *tlsKey)
	} else {
		log.Printf("schema registry (srfake) on http://%s, auth %v", ln.Addr(), *key != "")
		err = srv.Serve(ln)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

// basicAuth lets through requests whose basic-auth user and password are
// key and secret, and answers the others as Confluent's registry does.
func basicAuth(next http.Handler, key, secret string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(key)) != 1 ||
			subtle.ConstantTimeCompare([]byte(p), []byte(secret)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="schema-registry"`)
			w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(map[string]any{"error_code": 401, "message": "Unauthorized"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		start := time.Now()
		next.ServeHTTP(sw, r)
		log.Printf("%s %s %d %s", r.Method, r.URL.RequestURI(), sw.status, time.Since(start).Round(time.Microsecond))
	})
}
