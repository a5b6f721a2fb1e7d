package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/flock"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/pipeline"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/server"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Defaults shared by serve and dev.
const (
	defaultListen          = "127.0.0.1:8470"
	defaultShutdownTimeout = 30 * time.Second
	// tokenEnv holds the API token when --token-file is not given; the
	// provider reads the same variable.
	tokenEnv = "TRIBUTARY_TOKEN"
	// defaultMemoryLimit is the memory the agent may use in all by
	// default: a 512 MiB container's. Half of it is the buffer budget (see
	// bufferBudget), 7/8 the Go runtime's soft limit (see goMemoryLimit),
	// and the rest is for what the Go heap does not hold.
	defaultMemoryLimit = 512 << 20
	// minMemoryLimit leaves a buffer budget of a few fetches of 1 MiB and an
	// open file; below it every fetch would wait for every file to flush.
	minMemoryLimit = 32 << 20
)

// bufferBudget is the part of the memory limit every table's fetched data
// and open files' buffers share: half of it. The budget counts those bytes
// as they are used; the heap also holds what it does not count (Parquet
// buffers grow in steps of 1.5x, decoding scratch, connections, goroutines)
// and garbage not yet collected. Measured with 50 tables of 8 partitions
// and the budget full, the live heap reached 1.35 times the budget.
func bufferBudget(limit memory.Size) int64 { return int64(limit) / 2 }

// goMemoryLimit is the Go runtime's soft memory limit for a memory limit:
// 7/8 of it, leaving the rest for memory the Go heap does not hold. Near the
// soft limit the garbage collector runs more often rather than let the heap
// double.
func goMemoryLimit(limit memory.Size) int64 { return int64(limit) / 8 * 7 }

// agentOptions configures one agent process.
type agentOptions struct {
	listen    string
	dataDir   string
	warehouse string // "" means <dataDir>/warehouse
	// warehouseAllow are the other roots a pipeline's storage_location may
	// lie under.
	warehouseAllow locations
	// oauthTokenDirs are the folders a connection's OAuth token_file may
	// lie in.
	oauthTokenDirs folders
	// gcGrace overrides the garbage collection grace period; 0 keeps the
	// default.
	gcGrace time.Duration
	// warehouseMode is the permission of files in local table folders;
	// folders get it plus x wherever it has r.
	warehouseMode fileMode
	// tokens are the accepted API tokens; tokenFile, when set, is where
	// they come from, read again on SIGHUP and when it changes, and
	// tokenWatch holds it as it was before the tokens were read.
	tokens         []string
	tokenFile      string
	tokenWatch     *fileWatch
	insecureNoAuth bool
	// tlsCert and tlsKey, when set, are the files of the key pair the API
	// serves HTTPS with (reloaded on SIGHUP and when they change);
	// tlsClientCA, when set, the CAs a client certificate must be signed
	// by.
	tlsCert, tlsKey, tlsClientCA string
	// maxConnections caps the API's open connections; 0 is the server's
	// default.
	maxConnections  int
	shutdownTimeout time.Duration
	// memoryLimit is the memory the agent may use in all, such as its
	// container's limit.
	memoryLimit memory.Size
	log         *slog.Logger
	// onListen is called once the API accepts connections, with its URL.
	onListen func(url string)

	// secretsKeyFile holds the key of the connections' secrets; "" means
	// the key generated in the data folder.
	secretsKeyFile string

	// cluster, when set, makes the agent one of the agents of that name,
	// which share their state under the warehouse; agentName names it
	// among them, and followEvery is how often it reads their changes.
	cluster, agentName string
	followEvery        time.Duration
}

// locations is a repeatable flag of storage locations.
type locations []string

// String lists the locations.
func (l *locations) String() string { return strings.Join(*l, ", ") }

// Set adds a location, which must be a folder or a URL of a store the
// agent can write to.
func (l *locations) Set(s string) error {
	if err := checkRoot(s); err != nil {
		return err
	}
	*l = append(*l, s)
	return nil
}

// folders is a repeatable flag of folder paths.
type folders []string

// String lists the folders.
func (f *folders) String() string { return strings.Join(*f, ", ") }

// Set adds a folder, which must exist.
func (f *folders) Set(s string) error {
	if st, err := os.Stat(s); err != nil || !st.IsDir() {
		return fmt.Errorf("%q is not a folder", s)
	}
	*f = append(*f, s)
	return nil
}

// defaultWarehouseMode keeps table files from other users but the group's
// (a reader such as Spark in the agent's group).
const defaultWarehouseMode = fileMode(table.DefaultFileMode)

// fileMode is a flag of permission bits in octal, such as 0640.
type fileMode os.FileMode

// String returns the mode in octal.
func (m *fileMode) String() string { return fmt.Sprintf("%#o", uint32(*m)) }

// Set parses an octal mode, which must let the owner read and write.
func (m *fileMode) Set(s string) error {
	v, err := strconv.ParseUint(s, 8, 32)
	if err != nil || v > 0o777 {
		return fmt.Errorf("%q is not an octal permission like 0640", s)
	}
	if v&0o600 != 0o600 {
		return fmt.Errorf("%#o does not let the agent read and write its own files; the owner needs rw (0600)", v)
	}
	*m = fileMode(v)
	return nil
}

// checkRoot refuses a warehouse root that is neither a folder nor the URL
// of a bucket (or container) of a store the agent writes to.
func checkRoot(root string) error {
	if dir, local := spec.LocalPath(root); local {
		if dir == "" && root != "" {
			return fmt.Errorf("%q: a file URL names a folder: file:///path", root)
		}
		return nil
	}
	u, _ := url.Parse(root) // LocalPath has parsed it
	switch u.Scheme {
	case "s3", "gs", "azblob", "abfss":
		if u.Host == "" {
			return fmt.Errorf("%q names no bucket: %s://<bucket>/<prefix>", root, u.Scheme)
		}
	default:
		return fmt.Errorf("%q: unsupported scheme %q; a root is a folder or an s3, gs, azblob, abfss or file URL", root, u.Scheme)
	}
	return nil
}

// commonFlags registers the flags serve and dev share.
func commonFlags(fs *flag.FlagSet, o *agentOptions, logLevel *slog.Level) {
	fs.StringVar(&o.listen, "listen", defaultListen, "`address` the API listens on; port 0 picks a free port")
	fs.StringVar(&o.warehouse, "warehouse", "", "`location` tables are written under: a folder, or an object store URL "+
		"(s3://bucket/prefix, gs://bucket/prefix, azblob://container/prefix, abfss://container@account.dfs.core.windows.net/prefix; "+
		"driver options as query parameters, e.g. ?endpoint=http://127.0.0.1:9000&use_path_style=true&region=us-east-1; "+
		"credentials from the cloud's standard chain) (default <data-dir>/warehouse)")
	fs.DurationVar(&o.gcGrace, "gc-grace", 0, "how old a data file the agent wrote but never committed (a crash "+
		"between its upload and its commit) must be before garbage collection deletes it; longer than any writer's "+
		"flush interval plus a slow commit (default an hour, or ten flush intervals when those are longer)")
	fs.Var(&o.warehouseAllow, "warehouse-allow", "a `root` a pipeline's storage_location may lie under, besides --warehouse: "+
		"a folder or an object store URL as for --warehouse; repeat for more")
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", defaultShutdownTimeout,
		"how long a shutdown waits for requests and the final flush and commit of every table")
	fs.StringVar(&o.secretsKeyFile, "secrets-key-file", "", secretsKeyFlagUsage)
	fs.Var(&o.oauthTokenDirs, "oauth-token-dir", "a `folder` whose files a connection's sasl.oauth.token_file may name; "+
		"repeat for more (default none: token_file is refused, so that API clients cannot make the agent send other files)")
	fs.TextVar(logLevel, "log-level", slog.LevelInfo, "log `level`: debug, info, warn or error")
	o.warehouseMode = defaultWarehouseMode
	fs.Var(&o.warehouseMode, "warehouse-mode", "permission `bits` (octal) of the files the agent writes in local table folders; "+
		"folders get the same bits plus x wherever r is set, e.g. 0640 makes folders 0750; the umask still applies")
	fs.TextVar(&o.memoryLimit, "memory-limit", memory.Size(defaultMemoryLimit),
		"memory `size` the agent may use in all, like 512MiB or 2GiB (its container's limit): half of it is the budget "+
			"every table's fetched data, open files' buffers and idle decoders share, and the Go runtime's soft limit is set to 7/8 of it "+
			"unless GOMEMLIMIT is set")
}

// checkCommonFlags refuses values of the shared flags that cannot work.
func checkCommonFlags(o *agentOptions, stderr io.Writer) error {
	if o.memoryLimit < minMemoryLimit {
		fmt.Fprintf(stderr, "--memory-limit %s is below the minimum of %s\n", o.memoryLimit, memory.Size(minMemoryLimit))
		return errUsage
	}
	if err := checkRoot(o.warehouse); err != nil {
		fmt.Fprintf(stderr, "--warehouse %v\n", err)
		return errUsage
	}
	if o.gcGrace < 0 {
		fmt.Fprintf(stderr, "--gc-grace %v is negative\n", o.gcGrace)
		return errUsage
	}
	return nil
}

func serveCommand(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		o        agentOptions
		logLevel slog.Level
	)
	commonFlags(fs, &o, &logLevel)
	fs.StringVar(&o.dataDir, "data-dir", "", "`folder` for the agent's state (connections, pipelines); required")
	fs.StringVar(&o.tokenFile, "token-file", "", "`file` holding the API tokens, one a line (# starts a comment), each at least "+
		fmt.Sprint(server.MinTokenLength)+" bytes: any of them is accepted, so a new one can be added before the old one is removed; "+
		"read again on SIGHUP and when it changes (default: the "+tokenEnv+" environment variable)")
	fs.BoolVar(&o.insecureNoAuth, "insecure-no-auth", false, "accept API requests without a token; only on a trusted machine")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "PEM `file` of the certificate (and its chain) the API serves HTTPS with; "+
		"reloaded on SIGHUP and when it changes")
	fs.StringVar(&o.tlsKey, "tls-key", "", "PEM `file` of the private key of --tls-cert; reloaded with it")
	fs.StringVar(&o.tlsClientCA, "tls-client-ca", "", "PEM `file` of the CAs a client certificate must be signed by: "+
		"with it, every client must present one (needs --tls-cert); read again on SIGHUP and when it changes")
	clusterFlags(fs, &o)
	fs.IntVar(&o.maxConnections, "max-connections", server.DefaultMaxConnections, "`count` of API connections kept open at most; "+
		"at the cap, idle and still-arriving connections are closed first, so /healthz keeps answering")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: tributary-agent serve --data-dir DIR [flags]")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkCommonFlags(&o, stderr); err != nil {
		return err
	}
	if o.dataDir == "" {
		fmt.Fprintln(stderr, "serve needs --data-dir, the folder the agent keeps its state in")
		fs.Usage()
		return errUsage
	}
	if (o.tlsCert == "") != (o.tlsKey == "") || (o.tlsClientCA != "" && o.tlsCert == "") {
		fmt.Fprintln(stderr, "--tls-cert and --tls-key go together, and --tls-client-ca needs them")
		return errUsage
	}
	if err := checkClusterFlags(&o, stderr); err != nil {
		return err
	}
	if o.maxConnections < 1 {
		fmt.Fprintf(stderr, "--max-connections %d must be 1 or more\n", o.maxConnections)
		return errUsage
	}
	var err error
	if o.tokenFile != "" {
		o.tokenWatch = newFileWatch(o.tokenFile)
		o.tokens, err = readTokens(o.tokenFile)
	} else {
		o.tokens, err = envToken(os.Getenv(tokenEnv))
	}
	if err != nil {
		return err
	}
	if len(o.tokens) == 0 && !o.insecureNoAuth {
		return fmt.Errorf("no API token: pass --token-file FILE (a file holding a random secret, e.g. made with `openssl rand -hex 32 > FILE`) " +
			"or set " + tokenEnv + "; or pass --insecure-no-auth to accept requests without a token, on a trusted machine only")
	}
	lock, err := lockDataDir(o.dataDir, "tributary-agent serve")
	if err != nil {
		return err
	}
	defer lock.Release()
	o.log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: logLevel}))
	o.onListen = func(url string) { fmt.Fprintf(stdout, "tributary-agent listening on %s\n", url) }

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runAgent(ctx, o)
}

// dataDirLock is the lock file in the data folder; it names the agent
// holding it.
const dataDirLock = "agent.lock"

// lockDataDir creates the data folder if needed and locks it for this
// process, which owner describes. Two agents on one data folder would
// resume the same pipelines into the same tables and remove each other's
// unfinished state writes, so a second one is refused with a message naming
// the first. The kernel releases the lock when the process exits, however
// it exits.
func lockDataDir(dir, owner string) (*flock.Lock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the data folder: %w", err)
	}
	lock, err := flock.Acquire(filepath.Join(dir, dataDirLock), owner, 0o600)
	var held *flock.HeldError
	if errors.As(err, &held) {
		return nil, fmt.Errorf("data folder %s is in use by another agent: %s; stop that agent, or pass another --data-dir",
			dir, held.HolderOrUnknown())
	}
	if err != nil {
		return nil, fmt.Errorf("locking the data folder: %w", err)
	}
	return lock, nil
}

// runAgent runs the agent until ctx is done, then shuts down gracefully:
// stop accepting requests, let running ones finish, and close the engine,
// which flushes and commits every table, all within o.shutdownTimeout. The
// caller holds the data folder's lock (see lockDataDir).
func runAgent(ctx context.Context, o agentOptions) error {
	if o.warehouse == "" {
		o.warehouse = filepath.Join(o.dataDir, "warehouse")
	}
	if o.insecureNoAuth && len(o.tokens) == 0 {
		o.log.Warn("the API accepts requests without a token (--insecure-no-auth)", "listen", o.listen)
	}
	if o.tokenFile != "" {
		warnIfReadable(o.tokenFile, o.log)
	}
	var tlsCfg *tls.Config
	var certs *certReloader
	var cas *clientCAs
	if o.tlsCert != "" {
		var err error
		if certs, err = newCertReloader(o.tlsCert, o.tlsKey, o.log); err != nil {
			return err
		}
		if tlsCfg, cas, err = tlsConfig(certs, o.tlsClientCA, o.log); err != nil {
			return err
		}
	}
	st, secrets, err := openState(&o)
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	budget := memory.New(bufferBudget(o.memoryLimit))
	goLimit := debug.SetMemoryLimit(-1) // GOMEMLIMIT, if set, wins
	if os.Getenv("GOMEMLIMIT") == "" {
		goLimit = goMemoryLimit(o.memoryLimit)
		debug.SetMemoryLimit(goLimit)
	}
	engine := pipeline.NewManager(pipeline.Config{Warehouse: o.warehouse, AllowedRoots: o.warehouseAllow, Logger: o.log, Memory: budget,
		GCGrace: o.gcGrace, WarehouseMode: os.FileMode(o.warehouseMode), Members: members(&o, budget),
		Catalog: st.Catalog})
	srv, err := server.New(server.Config{
		Store: st, Engine: engine, Tokens: o.tokens, InsecureNoAuth: o.insecureNoAuth, Logger: o.log, Memory: budget,
		TLS: tlsCfg, MaxConnections: o.maxConnections, Redactor: secrets, TokenFileDirs: o.oauthTokenDirs, AgentName: o.agentName,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("listening on %s (is another agent running? pick another --listen address): %w", o.listen, err)
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	url := "http://" + ln.Addr().String()
	if tlsCfg != nil {
		url = "https://" + ln.Addr().String()
	} else if !isLoopback(ln.Addr()) {
		o.log.Warn("INSECURE: the API is served over plain HTTP on a non-loopback address: the token and the connections' "+
			"secrets cross the network in clear text, readable by anyone on the way; pass --tls-cert and --tls-key to serve HTTPS",
			"listen", ln.Addr().String())
	}
	o.log.Info("agent started", "url", url, "data_dir", o.dataDir, "warehouse", o.warehouse, "version", version,
		"memory_limit", o.memoryLimit, "buffer_budget", memory.Size(bufferBudget(o.memoryLimit)),
		"go_memory_limit", memory.Size(goLimit), "tokens", fingerprints(o.tokens), "client_certificates", o.tlsClientCA != "")
	var watched []watchedFile
	if o.tokenFile != "" {
		watched = append(watched, watchedFile{watch: o.tokenWatch, load: func() { reloadTokens(o, srv) }})
	}
	if cas != nil {
		watched = append(watched, watchedFile{watch: cas.watch, load: cas.reload})
	}
	if len(watched) > 0 || certs != nil {
		stopReloads := reloadFiles(certs, watched)
		defer stopReloads()
	}
	if o.onListen != nil {
		o.onListen(url)
	}
	// Resume after listening, so health checks answer while pipelines
	// start; API changes wait for it (the server serialises them).
	resumed := make(chan struct{})
	go func() {
		defer close(resumed)
		if err := srv.Resume(ctx); err != nil {
			o.log.Error("some pipelines did not resume; fix them with a PUT", "err", err)
		}
	}()

	// The other agents' changes are applied once the stored state resumed.
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		<-resumed
		srv.Follow(ctx, o.followEvery)
	}()
	select {
	case err := <-serveErr:
		return fmt.Errorf("serving the API: %w", err)
	case <-ctx.Done():
	}
	o.log.Info("shutting down")
	// ctx is done by now: the shutdown keeps its values but not its end.
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.shutdownTimeout)
	defer cancel()
	var errs []error
	if err := srv.Shutdown(shutdownCtx); err != nil {
		errs = append(errs, err)
	}
	// Closing the engine while Resume or Follow still applies would race
	// it.
	for _, done := range []chan struct{}{resumed, followed} {
		select {
		case <-done:
		case <-shutdownCtx.Done():
		}
	}
	if err := engine.Close(shutdownCtx); err != nil {
		errs = append(errs, fmt.Errorf("stopping the pipelines: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	o.log.Info("stopped")
	return nil
}

// watchedFile is a file the agent reads again when it changes and on
// SIGHUP.
type watchedFile struct {
	watch *fileWatch
	// load reads the file and puts what it holds in force, or logs why it
	// cannot and keeps what the file gave before.
	load func()
}

// reload marks the file, then loads it.
func (f watchedFile) reload() {
	f.watch.mark()
	f.load()
}

// reloadFiles reloads, on every SIGHUP, the TLS key pair (when certs is
// set) and the watched files; it also reloads a watched file when it
// changes, looking every checkEvery, since nothing sends a signal when, say,
// the kubelet updates a mounted Secret. (The key pair is looked at on TLS
// handshakes.) The returned function stops it.
func reloadFiles(certs *certReloader, watched []watchedFile) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		var tick <-chan time.Time
		if len(watched) > 0 {
			ticker := time.NewTicker(checkEvery)
			defer ticker.Stop()
			tick = ticker.C
		}
		for {
			select {
			case <-done:
				return
			case <-tick:
				for _, f := range watched {
					if f.watch.changed() {
						f.reload()
					}
				}
			case <-hup:
				if certs != nil {
					certs.reload()
				}
				for _, f := range watched {
					f.reload()
				}
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
	}
}

// reloadTokens reads o's token file again into srv; a file that no longer
// reads, or holds no valid token, keeps the previous tokens and logs why
// (never a token).
func reloadTokens(o agentOptions, srv *server.Server) {
	tokens, err := readTokens(o.tokenFile)
	if err == nil {
		err = srv.SetTokens(tokens)
	}
	if err != nil {
		o.log.Error("the token file did not reload; still accepting the previous tokens", "err", err)
		return
	}
	warnIfReadable(o.tokenFile, o.log)
	o.log.Info("reloaded the API tokens", "tokens", fingerprints(tokens))
}
