package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Defaults of the dev command.
const (
	defaultDevKafkaPort = 19192
	devTopic            = "events"
	devPartitions       = 4
	defaultDevRate      = 200
	// devMalformedEvery makes every n-th sample event malformed JSON, so
	// _corrupt_record has something to show.
	devMalformedEvery = 97
)

func devCommand(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		o            agentOptions
		logLevel     slog.Level
		kafkaPort    int
		rate         int
		tokenFileOut string
	)
	commonFlags(fs, &o, &logLevel)
	fs.StringVar(&o.dataDir, "data-dir", "", "`folder` for the agent's state (default: a new temporary folder, kept after exit)")
	fs.IntVar(&kafkaPort, "kafka-port", defaultDevKafkaPort, "`port` of the in-process Kafka broker on 127.0.0.1; 0 picks a free port")
	fs.IntVar(&rate, "rate", defaultDevRate, "sample `events` produced per second to topic "+devTopic+"; 0 produces none")
	fs.StringVar(&tokenFileOut, "token-file-out", "", "also write the generated API token to this `file` (mode 0600)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: tributary-agent dev [flags]")
		fmt.Fprintln(fs.Output(), "Runs the agent with an in-process Kafka broker and a sample producer of JSON events.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkCommonFlags(&o, stderr); err != nil {
		return err
	}
	if rate < 0 {
		fmt.Fprintln(stderr, "--rate must be 0 or more")
		return errUsage
	}
	if o.dataDir == "" {
		dir, err := os.MkdirTemp("", "tributary-dev-")
		if err != nil {
			return fmt.Errorf("creating a data folder: %w", err)
		}
		o.dataDir = dir
	}
	lock, err := lockDataDir(o.dataDir, "tributary-agent dev")
	if err != nil {
		return err
	}
	defer lock.Release()
	fmt.Fprintf(stdout, "data dir: %s\n", o.dataDir)
	token, err := randomToken()
	if err != nil {
		return err
	}
	if tokenFileOut != "" {
		if err := writePrivateFile(tokenFileOut, []byte(token+"\n")); err != nil {
			return fmt.Errorf("writing --token-file-out: %w", err)
		}
	}
	o.tokens = []string{token}
	o.log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: logLevel}))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	cluster, err := kfake.NewCluster(
		kfake.Ports(kafkaPort),
		kfake.SeedTopics(devPartitions, devTopic),
		kfake.AllowAutoTopicCreation(),
	)
	if err != nil {
		return fmt.Errorf("starting the Kafka broker on port %d (pass --kafka-port 0 for a free port): %w", kafkaPort, err)
	}
	defer cluster.Close()
	bootstrap := cluster.ListenAddrs()

	producer, err := kgo.NewClient(kgo.SeedBrokers(bootstrap...), kgo.DefaultProduceTopic(devTopic), kgo.ProducerLinger(50*time.Millisecond))
	if err != nil {
		return fmt.Errorf("starting the sample producer: %w", err)
	}
	defer producer.Close()
	produceCtx, stopProducing := context.WithCancel(ctx)
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		produceSamples(produceCtx, producer, rate, o.log)
	}()
	// The agent stops first (its final commit may still talk to the
	// broker), then the producer, then the broker (deferred above).
	defer func() {
		stopProducing()
		<-produced
	}()

	o.onListen = func(url string) {
		fmt.Fprintf(stdout, "Kafka bootstrap servers: %s (topic %q: %d partitions, about %d JSON events/s)\n",
			strings.Join(bootstrap, ","), devTopic, devPartitions, rate)
		if tokenFileOut != "" {
			fmt.Fprintf(stdout, "token written to %s\n", tokenFileOut)
		}
		fmt.Fprintf(stdout, "tributary-agent listening on %s\n\n", url)
		fmt.Fprintf(stdout, "export TRIBUTARY_ENDPOINT=%s TRIBUTARY_TOKEN=%s\n\n", url, token)
	}
	return runAgent(ctx, o)
}

// randomToken returns 32 random bytes in hex.
func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating a token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// writePrivateFile writes data to file with mode 0600, replacing the file
// if it exists (whatever its mode): it is written under a temporary name
// created 0600 in the same folder, then renamed, so that no other user can
// read it at any moment.
func writePrivateFile(file string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), file)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// sampleEvent is one record of the sample producer.
type sampleEvent struct {
	ID     int64    `json:"id"`
	User   string   `json:"user"`
	Action string   `json:"action"`
	Amount float64  `json:"amount"`
	TS     string   `json:"ts"`
	Tags   []string `json:"tags"`
}

var sampleActions = []string{"click", "view", "buy"}

// sampleRecord returns the value of event n: JSON keyed by its user, or,
// every devMalformedEvery-th event, JSON cut short.
func sampleRecord(n int64, now time.Time) *kgo.Record {
	ev := sampleEvent{
		ID:     n,
		User:   "user-" + strconv.FormatInt(n%50, 10),
		Action: sampleActions[n%int64(len(sampleActions))],
		Amount: float64(n%10000) / 100,
		TS:     now.UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		Tags:   []string{"a", "b"},
	}
	value, err := json.Marshal(ev)
	if err != nil {
		// A struct of strings and numbers always encodes; keep a
		// record anyway rather than drop it.
		value = []byte(`{"id":` + strconv.FormatInt(n, 10) + `}`)
	}
	if n%devMalformedEvery == devMalformedEvery-1 {
		value = value[:len(value)/2]
	}
	return &kgo.Record{Key: []byte(ev.User), Value: value}
}

// produceSamples produces about rate sample events per second until ctx is
// done, logging produce errors at most every 10 seconds.
func produceSamples(ctx context.Context, cl *kgo.Client, rate int, log *slog.Logger) {
	if rate == 0 {
		return
	}
	const ticksPerSecond = 10
	ticker := time.NewTicker(time.Second / ticksPerSecond)
	defer ticker.Stop()
	var (
		n, ticks   int64
		lastLogged atomic.Int64
		failed     atomic.Int64
	)
	onDone := func(_ *kgo.Record, err error) {
		if err == nil || errors.Is(err, context.Canceled) {
			return
		}
		count := failed.Add(1)
		now := time.Now().UnixNano()
		if last := lastLogged.Load(); now-last > int64(10*time.Second) && lastLogged.CompareAndSwap(last, now) {
			log.Warn("sample producer failed", "failed_so_far", count, "err", err)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-ticker.C:
			// Catch up to rate*elapsed, which spreads any remainder of
			// rate/ticksPerSecond evenly.
			ticks++
			for due := int64(rate) * ticks / ticksPerSecond; n < due; n++ {
				cl.Produce(ctx, sampleRecord(n, now), onDone)
			}
		}
	}
}
