package table

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Table properties (keys of the metaData configuration) that govern the
// log, honoured whoever set them, with Delta's defaults.
const (
	// propCheckpointInterval: a checkpoint follows every commit whose
	// version is a multiple of it.
	propCheckpointInterval    = "delta.checkpointInterval"
	defaultCheckpointInterval = 10
	// propLogRetention: how long log entries and checkpoints are kept
	// once a newer checkpoint covers them.
	propLogRetention    = "delta.logRetentionDuration"
	defaultLogRetention = 30 * 24 * time.Hour
	// propDeletedFileRetention: how long a removed data file is kept
	// before [Table.Vacuum] deletes it (time travel reaches that far).
	propDeletedFileRetention    = "delta.deletedFileRetentionDuration"
	defaultDeletedFileRetention = 7 * 24 * time.Hour
	// propExpiredLogCleanup = "false" turns log cleanup off.
	propExpiredLogCleanup = "delta.enableExpiredLogCleanup"
)

// DeletedFileRetention returns how long the table with configuration
// conf keeps a removed data file before [Table.Vacuum] deletes it: its
// delta.deletedFileRetentionDuration, a week unless it says otherwise (or
// says it in a form that does not parse).
func DeletedFileRetention(conf map[string]string) time.Duration {
	c, _ := readLogConfig(conf)
	return c.deletedFileRetention
}

// logConfig is how a table's configuration asks its log to be kept.
type logConfig struct {
	checkpointInterval   int64
	logRetention         time.Duration
	deletedFileRetention time.Duration
	cleanup              bool
}

// readLogConfig reads the log settings from a table's configuration. A
// value it cannot parse falls back to Delta's default and is reported in
// errs, so that one bad property never stops a table.
func readLogConfig(conf map[string]string) (c logConfig, errs []error) {
	c = logConfig{
		checkpointInterval:   defaultCheckpointInterval,
		logRetention:         defaultLogRetention,
		deletedFileRetention: defaultDeletedFileRetention,
		cleanup:              true,
	}
	if s, ok := conf[propCheckpointInterval]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err == nil && n > 0 {
			c.checkpointInterval = n
		} else {
			errs = append(errs, fmt.Errorf("table property %s = %q is not a positive integer; using %d", propCheckpointInterval, s, c.checkpointInterval))
		}
	}
	for _, d := range []struct {
		key string
		dst *time.Duration
	}{{propLogRetention, &c.logRetention}, {propDeletedFileRetention, &c.deletedFileRetention}} {
		s, ok := conf[d.key]
		if !ok {
			continue
		}
		v, err := parseInterval(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("table property %s: %w; using %v", d.key, err, *d.dst))
			continue
		}
		*d.dst = v
	}
	if s, ok := conf[propExpiredLogCleanup]; ok {
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err == nil {
			c.cleanup = b
		} else {
			errs = append(errs, fmt.Errorf("table property %s = %q is not a boolean; cleaning up", propExpiredLogCleanup, s))
		}
	}
	return c, errs
}

// intervalUnits are the units of the calendar intervals Delta's duration
// properties take, singular and plural. Months and years are not allowed
// there, as in Delta, since their length varies.
var intervalUnits = map[string]time.Duration{
	"microsecond": time.Microsecond,
	"millisecond": time.Millisecond,
	"second":      time.Second,
	"minute":      time.Minute,
	"hour":        time.Hour,
	"day":         24 * time.Hour,
	"week":        7 * 24 * time.Hour,
}

// parseInterval parses a Spark calendar interval as Delta's duration
// properties hold it: "interval 30 days", "interval 1 week 2 days",
// "12 hours" (the word interval is optional, case does not matter).
func parseInterval(s string) (time.Duration, error) {
	words := strings.Fields(strings.ToLower(s))
	if len(words) > 0 && words[0] == "interval" {
		words = words[1:]
	}
	if len(words) == 0 || len(words)%2 != 0 {
		return 0, fmt.Errorf("%q is not an interval such as \"interval 30 days\"", s)
	}
	var total time.Duration
	for i := 0; i < len(words); i += 2 {
		n, err := strconv.ParseInt(words[i], 10, 64)
		unit, ok := intervalUnits[strings.TrimSuffix(words[i+1], "s")]
		if err != nil || n < 0 || !ok {
			return 0, fmt.Errorf("%q is not an interval such as \"interval 30 days\" (units: weeks, days, hours, minutes, seconds, milliseconds, microseconds)", s)
		}
		if n > int64((1<<63-1-total)/unit) {
			return 0, fmt.Errorf("interval %q is too long", s)
		}
		total += time.Duration(n) * unit
	}
	return total, nil
}

// propTargetFileSize is the size in bytes compaction aims its files at, as
// Delta's OPTIMIZE reads it; another engine may have set it on the table.
const propTargetFileSize = "delta.targetFileSize"

// byteUnits are the units of Spark's byte strings, binary multiples as in
// Spark's JavaUtils.byteStringAsBytes: "k" and "kb" are 1024 bytes.
var byteUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40,
}

// TargetFileSize returns the table property delta.targetFileSize of conf (a
// table's [Snapshot.Configuration]) in bytes, and whether it is set. It
// takes a number of bytes or a Spark byte string such as "128mb" or "1g";
// a value it cannot read is an error naming the property.
func TargetFileSize(conf map[string]string) (int64, bool, error) {
	s, ok := conf[propTargetFileSize]
	if !ok {
		return 0, false, nil
	}
	v := strings.ToLower(strings.TrimSpace(s))
	digits := strings.TrimRightFunc(v, func(r rune) bool { return r < '0' || r > '9' })
	unit, known := byteUnits[strings.TrimSpace(v[len(digits):])]
	n, err := strconv.ParseInt(digits, 10, 64)
	if !known || err != nil || n <= 0 || n > (1<<62)/unit {
		return 0, true, fmt.Errorf("table property %s = %q is not a positive size in bytes such as 134217728 or \"128mb\"", propTargetFileSize, s)
	}
	return n * unit, true, nil
}
