package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// benchRow is a line measured by a go test benchmark of the repository
// rather than by an agent: its name, the benchmark (package and name, as
// go test prints it) and the metrics it reported, by unit.
type benchRow struct {
	Name      string             `json:"name"`
	Package   string             `json:"package"`
	Benchmark string             `json:"benchmark"`
	BenchTime string             `json:"benchtime"`
	Metrics   map[string]float64 `json:"metrics"`
}

// benchLine is one result line of go test -bench: the benchmark's name,
// without the GOMAXPROCS suffix, and its metrics by unit.
type benchLine struct {
	name    string
	metrics map[string]float64
}

// procsSuffix is the -GOMAXPROCS suffix go test adds to a benchmark's name.
var procsSuffix = regexp.MustCompile(`-\d+$`)

// goBench runs the benchmarks of pkg (a package path relative to the
// repository, the working folder) matching pattern, benchtime each, with
// env added to the harness's environment, and returns their result lines
// in order. It fails when none ran (a benchmark that skips, without its
// server, reports none).
func goBench(ctx context.Context, pkg, pattern, benchtime string, env []string) ([]benchLine, error) {
	log.Printf("go test -bench %s -benchtime %s %s", pattern, benchtime, pkg)
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-run", "^$", "-bench", pattern, "-benchtime", benchtime, pkg)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go test -bench %s %s: %w\n%s", pattern, pkg, err, out.String())
	}
	lines := parseBench(out.String())
	if len(lines) == 0 {
		return nil, fmt.Errorf("go test -bench %s %s reported no result (skipped?):\n%s", pattern, pkg, out.String())
	}
	return lines, nil
}

// parseBench returns the result lines of go test -bench's output: a name,
// the number of iterations, then pairs of a value and its unit, of which
// it keeps all but ns/op. Other lines (logs, PASS, ok) are left out.
func parseBench(out string) []benchLine {
	var lines []benchLine
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || len(f)%2 != 0 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
			continue
		}
		l := benchLine{name: procsSuffix.ReplaceAllString(f[0], ""), metrics: map[string]float64{}}
		for i := 2; i < len(f); i += 2 {
			// ns/op is the time of one iteration, which these benchmarks
			// report better in their own metrics.
			if v, err := strconv.ParseFloat(f[i], 64); err == nil && f[i+1] != "ns/op" {
				l.metrics[f[i+1]] = v
			}
		}
		lines = append(lines, l)
	}
	return lines
}

// writersPkg and rebalancePkg hold the benchmarks of the commit rate of
// one table and of the rebalance pause.
const (
	writersPkg   = "./agent/internal/table"
	rebalancePkg = "./agent/internal/membership"
)

// writersRows runs BenchmarkConcurrentWriters (commits/s of one table
// from 1, 2, 4 and 8 writers) on the object store of s3Root, the S3
// server's settings (keys) coming from the environment, and returns a
// row per writer count.
func writersRows(ctx context.Context, s3Root, benchtime string) ([]benchRow, error) {
	u, err := url.Parse(s3Root)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		return nil, fmt.Errorf("-s3-root %q is not an s3://bucket URL", s3Root)
	}
	// What agent/internal/objstoretest reads: the bucket, the endpoint
	// and the region.
	env := []string{"TRIBUTARY_S3_BUCKET=" + u.Host}
	if e := u.Query().Get("endpoint"); e != "" {
		env = append(env, "AWS_ENDPOINT_URL="+e)
	}
	if r := u.Query().Get("region"); r != "" {
		env = append(env, "AWS_REGION="+r)
	}
	lines, err := goBench(ctx, writersPkg, "^BenchmarkConcurrentWriters$", benchtime, env)
	if err != nil {
		return nil, err
	}
	var rows []benchRow
	for _, l := range lines {
		_, writers, _ := strings.Cut(l.name, "writers=")
		name := "one table on S3, " + writers + " writers"
		if writers == "1" {
			name = "one table on S3, 1 writer"
		}
		rows = append(rows, benchRow{Name: name, Package: writersPkg, Benchmark: l.name, BenchTime: benchtime, Metrics: l.metrics})
	}
	return rows, nil
}

// rebalanceRows runs BenchmarkRebalancePause (how long a partition goes
// without an owner when its agent is killed or leaves, three agents on an
// in-process Kafka) and returns a row for a kill and one for a leave.
func rebalanceRows(ctx context.Context, benchtime string) ([]benchRow, error) {
	lines, err := goBench(ctx, rebalancePkg, "^BenchmarkRebalancePause$", benchtime, nil)
	if err != nil {
		return nil, err
	}
	l := lines[len(lines)-1]
	var rows []benchRow
	for _, what := range []string{"kill", "leave"} {
		rows = append(rows, benchRow{Name: "rebalance pause after a " + what, Package: rebalancePkg, Benchmark: l.name,
			BenchTime: benchtime, Metrics: map[string]float64{"p50 ms": l.metrics[what+"-p50-ms"], "p99 ms": l.metrics[what+"-p99-ms"]}})
	}
	return rows, nil
}
