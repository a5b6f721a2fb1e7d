// Package systemd holds the agent's systemd unit and its environment file;
// its tests check the unit with systemd's own checker and run the agent with
// the command line the unit gives it.
package systemd

import (
	"bufio"
	"cmp"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/deploy/internal/deploytest"
)

const (
	unitFile = "tributary-agent.service"
	envFile  = "tributary-agent.env"
	// binaryPath is where the unit runs the agent from.
	binaryPath = "/usr/local/bin/tributary-agent"
)

// agentBin is the agent binary the tests run, set by TestMain.
var agentBin string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

// buildAndRun builds the agent (unless $TRIBUTARY_TEST_AGENT names one) and
// runs the tests.
func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "tributary-systemd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if agentBin, err = deploytest.Agent(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// setting is one Key=Value line of a unit, continuation lines joined.
type setting struct{ section, key, value string }

// unit is a parsed unit file.
type unit []setting

// dropIns are the drop-ins of this folder, each checked with the unit.
var dropIns = []string{"https.conf", "local-warehouse.conf"}

// readUnit parses the unit file and then the drop-ins extra as systemd does for
// what they hold: comments start with # or ;, a line ending in a backslash
// goes on on the next one.
func readUnit(t *testing.T, extra ...string) unit {
	t.Helper()
	var u unit
	for _, file := range append([]string{unitFile}, extra...) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		section, pending := "", ""
		for n, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			if pending == "" && (line == "" || line[0] == '#' || line[0] == ';') {
				continue
			}
			if cont, ok := strings.CutSuffix(line, `\`); ok {
				pending += cont + " "
				continue
			}
			line, pending = pending+line, ""
			if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
				section = line[1 : len(line)-1]
				continue
			}
			key, value, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("%s:%d: %q is neither a section nor Key=Value", file, n+1, line)
			}
			u = append(u, setting{section, strings.TrimSpace(key), strings.TrimSpace(value)})
		}
	}
	return u
}

// all returns the values of key in the Service section, in order.
func (u unit) all(key string) []string {
	var values []string
	for _, s := range u {
		if s.section == "Service" && s.key == key {
			values = append(values, s.value)
		}
	}
	return values
}

// one returns the single value of key in the Service section.
func (u unit) one(t *testing.T, key string) string {
	t.Helper()
	values := u.all(key)
	if len(values) != 1 {
		t.Fatalf("%s has %d %s= lines in [Service], want 1", unitFile, len(values), key)
	}
	return values[0]
}

// specifiers replaces the unit specifiers the unit uses: %S (the state
// folders' root, /var/lib for a system service), %d (the credentials
// folder) and %%. Any other is a test failure, so that a new one is not run
// unexpanded.
func specifiers(t *testing.T, s, stateRoot, credentials string) string {
	t.Helper()
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			out.WriteByte(s[i])
			continue
		}
		if i++; i == len(s) {
			t.Fatalf("%q ends in a lone %%", s)
		}
		switch s[i] {
		case 'S':
			out.WriteString(stateRoot)
		case 'd':
			out.WriteString(credentials)
		case '%':
			out.WriteByte('%')
		default:
			t.Fatalf("%q uses the specifier %%%c, which this test does not know: add it to specifiers", s, s[i])
		}
	}
	return out.String()
}

// environment returns the service's environment from its Environment=
// lines, later ones overriding earlier ones, with specifiers expanded. A
// line holds assignments separated by spaces, each KEY=VALUE or, with spaces
// in the value, "KEY=VALUE".
func environment(t *testing.T, u unit, stateRoot, credentials string) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, line := range u.all("Environment") {
		if strings.ContainsAny(line, `'\`) {
			t.Fatalf("Environment=%s: this test knows only double quotes", line)
		}
		for rest := strings.TrimSpace(line); rest != ""; rest = strings.TrimSpace(rest) {
			var assignment string
			if quoted, ok := strings.CutPrefix(rest, `"`); ok {
				var closed bool
				if assignment, rest, closed = strings.Cut(quoted, `"`); !closed {
					t.Fatalf("Environment=%s: unterminated quote", line)
				}
			} else {
				assignment, rest, _ = strings.Cut(rest, " ")
			}
			key, value, ok := strings.Cut(assignment, "=")
			if !ok {
				t.Fatalf("Environment=%s: %q is not KEY=VALUE", line, assignment)
			}
			env[key] = specifiers(t, value, stateRoot, credentials)
		}
	}
	return env
}

// envFileDefaults returns the first assignment of each variable in the
// example environment file, commented out or not.
func envFileDefaults(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(envFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	assignment := regexp.MustCompile(`^#?([A-Z][A-Z0-9_]*)=(.*)$`)
	values := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := assignment.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		if _, seen := values[m[1]]; !seen {
			values[m[1]] = m[2]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return values
}

// command expands ExecStart= as systemd does for what it uses: a word that
// is exactly $NAME becomes the variable's words (none when it is empty),
// ${NAME} is replaced within a word.
func command(t *testing.T, execStart string, env map[string]string) []string {
	t.Helper()
	if strings.ContainsAny(execStart, `"'\`) {
		t.Fatalf("ExecStart=%s: this test splits the command on spaces and knows no quoting", execStart)
	}
	braced := regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	whole := regexp.MustCompile(`^\$([A-Za-z_][A-Za-z0-9_]*)$`)
	var args []string
	for _, word := range strings.Fields(execStart) {
		if m := whole.FindStringSubmatch(word); m != nil {
			args = append(args, strings.Fields(env[m[1]])...)
			continue
		}
		word = braced.ReplaceAllStringFunc(word, func(v string) string { return env[v[2:len(v)-1]] })
		if strings.Contains(word, "$") {
			t.Fatalf("ExecStart word %q has a variable this test does not expand", word)
		}
		args = append(args, word)
	}
	return args
}

// Suffixes of powers of 1024 (K, M, G, T) in systemd's sizes (512M) and in
// the agent's (512MiB).
var (
	systemdUnits = []string{"K", "M", "G", "T"}
	agentUnits   = []string{"KiB", "MiB", "GiB", "TiB"}
)

// sizeBytes converts a size such as 512M, with one of units (K, M, G, T in
// that order) or none, to bytes.
func sizeBytes(t *testing.T, s string, units []string) int64 {
	t.Helper()
	digits, factor := s, int64(1)
	for i, suffix := range units {
		if rest, ok := strings.CutSuffix(s, suffix); ok {
			digits, factor = rest, int64(1)<<(10*(i+1))
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSuffix(digits, "B"), 10, 64)
	if err != nil {
		t.Fatalf("size %q: %v", s, err)
	}
	return n * factor
}

// TestUnitVerifies runs systemd's own checks on the unit, alone and with
// each drop-in, in a copy whose ExecStart names a built agent (verify wants
// the binary to exist): `systemd-analyze verify` refuses unknown settings,
// bad values and specifiers; `systemd-analyze security` rates the sandbox.
func TestUnitVerifies(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed here; the unit is checked where it is")
	}
	b, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "ExecStart="+binaryPath+" ") {
		t.Fatalf("ExecStart does not run %s", binaryPath)
	}
	for _, dropIn := range append([]string{""}, dropIns...) {
		t.Run(cmp.Or(dropIn, "unit"), func(t *testing.T) {
			dir := t.TempDir()
			copied := filepath.Join(dir, unitFile)
			if err := os.WriteFile(copied, []byte(strings.ReplaceAll(string(b), binaryPath, agentBin)), 0o600); err != nil {
				t.Fatal(err)
			}
			if dropIn != "" {
				// verify reads the drop-ins of the folder of the unit it is given.
				conf, err := os.ReadFile(dropIn)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(copied+".d", 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(copied+".d", dropIn), conf, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			out, err := exec.Command(analyze, "verify", copied).CombinedOutput()
			if err != nil {
				t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
			}
			// verify only warns about what it ignores, such as an unknown
			// setting; any line about the unit or the drop-in is a failure.
			for _, line := range strings.Split(string(out), "\n") {
				if strings.Contains(line, unitFile) {
					t.Errorf("systemd-analyze verify: %s", line)
				}
			}

			// --offline (systemd 250 and later) rates the files themselves,
			// without a running systemd. The threshold is in tenths: 20 is
			// an exposure of 2.0, the top of systemd's "OK" band; the unit
			// has 1.4.
			out, err = exec.Command(analyze, "security", "--offline=yes", "--threshold=20", copied).CombinedOutput()
			switch {
			case err != nil && strings.Contains(string(out), "--offline"):
				t.Logf("systemd-analyze security --offline is not supported here: %s", out)
			case err != nil:
				t.Errorf("systemd-analyze security: exposure above 2.0 (OK): %v\n%s", err, out)
			}
		})
	}
}

// TestUnitRunsAgent runs the agent with the command line and environment
// the unit gives it, alone and with the drop-in https.conf (the unit's
// defaults; the example environment file shows the same ones), its
// credentials as systemd lays them out (files of mode 0400 in a folder of
// mode 0500), and checks that it serves: /healthz answers (over HTTPS with
// the drop-in), the token from the credentials folder is the one /metrics
// wants, the memory limit is the unit's MemoryMax, SIGHUP (ExecReload)
// reloads the tokens, and SIGTERM (KillSignal) stops it cleanly.
func TestUnitRunsAgent(t *testing.T) {
	for _, dropIn := range []string{"", "https.conf"} {
		t.Run(cmp.Or(dropIn, "unit"), func(t *testing.T) {
			if dropIn == "" {
				runUnit(t, readUnit(t), "http")
			} else {
				runUnit(t, readUnit(t, dropIn), "https")
			}
		})
	}
}

// runUnit runs the agent as unit u says and checks it (see
// TestUnitRunsAgent); scheme is the one its URL must have.
func runUnit(t *testing.T, u unit, scheme string) {
	stateRoot, credentials := t.TempDir(), filepath.Join(t.TempDir(), "credentials")
	// systemd makes the state folder, mode 0700 (StateDirectoryMode).
	if err := os.Mkdir(filepath.Join(stateRoot, "tributary"), 0o700); err != nil {
		t.Fatal(err)
	}
	token := make([]byte, 32)
	key := make([]byte, 32)
	_, _ = rand.Read(token)
	_, _ = rand.Read(key)
	tokenHex := hex.EncodeToString(token)
	certs := deploytest.NewCerts(t)
	pool := certs.Pool
	files := map[string][]byte{
		"tokens": []byte(tokenHex + "\n"), "secrets.key": []byte(base64.StdEncoding.EncodeToString(key) + "\n"),
		"tls.crt": certs.CertPEM, "tls.key": certs.KeyPEM,
	}
	if err := os.Mkdir(credentials, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, cred := range u.all("LoadCredential") {
		id, source, _ := strings.Cut(cred, ":")
		content, ok := files[id]
		if !ok || source != "/etc/tributary/"+id {
			t.Fatalf("LoadCredential=%s: the test makes only tokens, secrets.key, tls.crt and tls.key, from /etc/tributary", cred)
		}
		if err := os.WriteFile(filepath.Join(credentials, id), content, 0o400); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(credentials, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(credentials, 0o700) })

	env := environment(t, u, stateRoot, credentials)
	for k, v := range envFileDefaults(t) {
		if def, ok := env[k]; ok && def != strings.ReplaceAll(v, "/var/lib", stateRoot) {
			t.Errorf("%s shows %s=%s as the default, the unit has %s", envFile, k, v, def)
		}
	}
	// The example's own address, 127.0.0.1:8470, may be taken here.
	env["TRIBUTARY_LISTEN"] = "127.0.0.1:0"
	args := command(t, specifiers(t, u.one(t, "ExecStart"), stateRoot, credentials), env)
	if args[0] != binaryPath {
		t.Fatalf("ExecStart runs %s, want %s", args[0], binaryPath)
	}
	stop, err := time.ParseDuration(u.one(t, "TimeoutStopSec"))
	if err != nil {
		t.Fatal(err)
	}
	shutdown, err := time.ParseDuration(env["TRIBUTARY_SHUTDOWN_TIMEOUT"])
	if err != nil {
		t.Fatal(err)
	}
	if stop <= shutdown {
		t.Errorf("TimeoutStopSec=%v is not longer than --shutdown-timeout %v: systemd would kill the agent during its final commits", stop, shutdown)
	}
	if u.one(t, "KillSignal") != "SIGTERM" || u.one(t, "ExecReload") != "/bin/kill -HUP $MAINPID" {
		t.Errorf("the agent stops on SIGTERM and reloads on SIGHUP; the unit has KillSignal=%s, ExecReload=%s",
			u.one(t, "KillSignal"), u.one(t, "ExecReload"))
	}

	cmd := exec.Command(agentBin, args[1:]...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	logFile := filepath.Join(t.TempDir(), "agent.log")
	logOut, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer logOut.Close()
	cmd.Stderr = logOut
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if url, ok := strings.CutPrefix(sc.Text(), "tributary-agent listening on "); ok {
				urls <- url
			}
		}
		exited <- cmd.Wait()
	}()
	defer func() { _ = cmd.Process.Kill() }()
	agentLog := func() string { b, _ := os.ReadFile(logFile); return string(b) }

	var url string
	select {
	case url = <-urls:
	case err := <-exited:
		t.Fatalf("the agent exited before it listened: %v\nargs: %q\n%s", err, args, agentLog())
	}
	if !strings.HasPrefix(url, scheme+"://") {
		t.Fatalf("the agent serves %s, want %s", url, scheme)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	get := func(path, bearer string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, url+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("/healthz", ""); code != http.StatusOK {
		t.Errorf("GET /healthz: %d", code)
	}
	if code := get("/metrics", ""); code != http.StatusUnauthorized {
		t.Errorf("GET /metrics without the token: %d, want 401", code)
	}
	if code := get("/metrics", tokenHex); code != http.StatusOK {
		t.Errorf("GET /metrics with the credential's token: %d, want 200", code)
	}
	limit := regexp.MustCompile(`memory_limit=(\S+)`).FindStringSubmatch(agentLog())
	if limit == nil {
		t.Fatalf("the agent did not log its memory limit:\n%s", agentLog())
	}
	if got, want := sizeBytes(t, limit[1], agentUnits), sizeBytes(t, u.one(t, "MemoryMax"), systemdUnits); got != want {
		t.Errorf("the agent's memory limit is %s (%d bytes), MemoryMax=%s is %d bytes", limit[1], got, u.one(t, "MemoryMax"), want)
	}
	if strings.Contains(agentLog(), "generated the key") {
		t.Errorf("the agent generated a secrets key instead of reading the credential:\n%s", agentLog())
	}

	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(agentLog(), "reloaded the API tokens") {
		select {
		case err := <-exited:
			t.Fatalf("the agent exited on SIGHUP: %v\n%s", err, agentLog())
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err != nil {
		t.Fatalf("the agent did not stop cleanly on SIGTERM: %v\n%s", err, agentLog())
	}
	if !strings.Contains(agentLog(), "stopped") {
		t.Errorf("the agent did not log its clean stop:\n%s", agentLog())
	}
}
