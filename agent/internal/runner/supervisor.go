package runner

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Supervisor runs the attempts of one runner (a table loop, a fanout
// schema, a Kafka sink) in its goroutine, and holds the runner's state and
// last error: it starts an attempt again after the errors the runner's
// classification says restart, with backoff, and ends in FAILED or
// STOPPED (see errors.go for the classes). Every runner has one.
type Supervisor struct {
	// kind names the runner in the log: "table", "fanout", "kafka sink".
	kind string
	// restarts is the log message of a restart, which says where the
	// next attempt resumes from.
	restarts   string
	maxBackoff time.Duration
	log        *slog.Logger
	cancel     context.CancelFunc
	done       chan struct{}

	mu        sync.Mutex
	state     string
	lastError string
	// failing holds the partitions whose fetches fail and are retried;
	// while any does, the runner reports STARTING with the error.
	failing map[kafka.TopicPartition]bool
}

// NewSupervisor returns the supervisor of a runner of kind, STARTING;
// restarts is its log message of a restart.
func NewSupervisor(kind, restarts string, maxBackoff time.Duration, log *slog.Logger) *Supervisor {
	return &Supervisor{kind: kind, restarts: restarts, maxBackoff: maxBackoff, log: log, done: make(chan struct{}),
		state: spec.StateStarting, failing: map[kafka.TopicPartition]bool{}}
}

// Start runs attempt in a goroutine until it ends for good: without an
// error (a triggered run completed, or the runner stopped), or with one
// classify puts in [Fail], or when Stop is called. classify also returns
// the error as the runner's status shows it. ctx's values reach attempt;
// its end does not stop it (Stop does).
func (s *Supervisor) Start(ctx context.Context, attempt func(context.Context) error, classify func(error) (Failure, error)) {
	ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	go s.run(ctx, attempt, classify)
}

// Stop ends the runner's attempt, after a final flush and commit of what
// it buffered, and waits for it.
func (s *Supervisor) Stop() {
	s.cancel()
	<-s.done
}

func (s *Supervisor) run(ctx context.Context, attempt func(context.Context) error, classify func(error) (Failure, error)) {
	defer close(s.done)
	defer func() {
		state, _ := s.Status()
		s.log.Info(s.kind+" stopped", "state", state)
	}()
	backoff := time.Second
	var quickAt time.Time // when the last RestartNow started an attempt
	for {
		err := attempt(ctx)
		if err == nil { // triggered run completed, or stopped
			if ctx.Err() != nil {
				s.SetState(spec.StateStopped, nil)
			}
			return
		}
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			// Stopping cut short a read (the attempt was starting, or
			// fetching): the final flush runs under a context stopping
			// does not cancel, so this is not one that failed.
			s.SetState(spec.StateStopped, nil)
			return
		}
		if ctx.Err() != nil {
			// Stopping failed to write or commit what was buffered;
			// nothing is lost (the next start reads it again), but say so.
			s.log.Error("final flush failed; the next start reads those records again", "err", err)
			s.SetState(spec.StateStopped, err)
			return
		}
		class, err := classify(err)
		switch class {
		case Fail:
			s.log.Error(s.kind+" failed", "err", err)
			s.SetState(spec.StateFailed, err)
			return
		case RestartNow:
			if time.Since(quickAt) > time.Minute {
				backoff = time.Second
			} else if !s.wait(ctx, backoff) {
				return
			} else {
				backoff = min(backoff*2, s.maxBackoff)
			}
			quickAt = time.Now()
			continue
		}
		s.log.Warn(s.restarts, "err", err, "in", backoff)
		s.SetState(spec.StateStarting, err)
		if !s.wait(ctx, backoff) {
			return
		}
		backoff = min(backoff*2, s.maxBackoff)
	}
}

// wait waits d before the runner starts again; false, with the runner
// STOPPED, when ctx ends first.
func (s *Supervisor) wait(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		s.SetState(spec.StateStopped, nil)
		return false
	case <-time.After(d):
		return true
	}
}

// SetState records the runner's state and, when err is not nil, its last
// error.
func (s *Supervisor) SetState(state string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state = state
	if err != nil {
		s.lastError = err.Error()
	}
}

// Status returns the runner's state and last error.
func (s *Supervisor) Status() (state, lastError string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state, s.lastError
}

// AttemptStarts forgets the failing fetches of an attempt that ended: the
// next one starts its own fetches.
func (s *Supervisor) AttemptStarts() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.failing)
}

// SetRunning reports the runner RUNNING, unless a fetch fails: an error
// from before the restart is history.
func (s *Supervisor) SetRunning() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.failing) == 0 {
		s.state, s.lastError = spec.StateRunning, ""
	}
}

// FetchFailing records that tp's fetcher retries after err: the runner is
// not reading, so it reports STARTING with the error until tp fetches again
// (a deleted topic, an unreachable leader, a denied authorization). Called
// from the fetcher's goroutine.
func (s *Supervisor) FetchFailing(tp kafka.TopicPartition, err error) {
	s.log.Warn("fetch retries", "err", err)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != spec.StateRunning && s.state != spec.StateStarting {
		return // a completed, failed or stopped runner stays so
	}
	s.failing[tp] = true
	s.state, s.lastError = spec.StateStarting, err.Error()
}

// FetchRecovered records that tp fetched again; once no partition fails,
// the runner is RUNNING again and its last error is history.
func (s *Supervisor) FetchRecovered(tp kafka.TopicPartition) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.failing[tp] {
		return
	}
	delete(s.failing, tp)
	if len(s.failing) == 0 && s.state == spec.StateStarting {
		s.state, s.lastError = spec.StateRunning, ""
	}
}
