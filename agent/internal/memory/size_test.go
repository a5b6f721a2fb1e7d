package memory_test

import (
	"flag"
	"io"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]memory.Size{
		"0":          0,
		"1048576":    1 << 20,
		"512B":       512,
		"384MiB":     384 << 20,
		"1GiB":       1 << 30,
		" 2 KiB ":    2048,
		"512Mi":      512 << 20,
		"1Ti":        1 << 40,
		"500MB":      500_000_000,
		"3kB":        3000,
		"3KB":        3000,
		"8EiB":       -1, // no such unit
		"1.5GiB":     -1,
		"-1MiB":      -1,
		"MiB":        -1,
		"":           -1,
		"1 potato":   -1,
		"9000000TiB": -1, // overflows
	} {
		got, err := memory.ParseSize(in)
		if want < 0 {
			if err == nil {
				t.Errorf("ParseSize(%q) = %d, want an error", in, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}

func TestSizeString(t *testing.T) {
	for s, want := range map[memory.Size]string{
		0: "0B", 100: "100B", 1536: "1536B", 3072: "3KiB", 384 << 20: "384MiB", 1 << 30: "1GiB", 3 << 40: "3TiB",
		1_000_000: "1000000B",
	} {
		if got := s.String(); got != want {
			t.Errorf("Size(%d).String() = %q, want %q", int64(s), got, want)
		}
	}
}

// A Size is a flag.TextVar whose default prints in its unit.
func TestSizeFlag(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var s memory.Size
	fs.TextVar(&s, "memory-limit", memory.Size(384<<20), "budget")
	if got := fs.Lookup("memory-limit").DefValue; got != "384MiB" {
		t.Fatalf("default prints as %q", got)
	}
	if err := fs.Parse([]string{"--memory-limit", "1GiB"}); err != nil || s != 1<<30 {
		t.Fatalf("parsed %d, %v", s, err)
	}
	if err := fs.Parse([]string{"--memory-limit", "lots"}); err == nil {
		t.Fatal("want an error for a size without a number")
	}
}
