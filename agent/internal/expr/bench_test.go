package expr

import "testing"

// TestEvalAllocations checks that comparisons, logic, literals and columns
// evaluate without allocating.
func TestEvalAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	for _, src := range []string{
		`topic = 'x' AND partition > 1`,
		`partition IN (1, 2, 3) OR offset BETWEEN 10 AND 50`,
		`topic LIKE 'ord%s' AND key IS NOT NULL`,
		`CASE WHEN partition > 1 THEN topic ELSE 'low' END`,
		`coalesce(NULL, topic)`,
		`partition + offset * 2 > 10.5`,
	} {
		p, err := Compile(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		r := sample()
		allocs := testing.AllocsPerRun(100, func() {
			if _, err := p.Eval(r); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per evaluation, want 0", src, allocs)
		}
	}
}

// BenchmarkRoute evaluates the example fanout_by on a JSON value.
func BenchmarkRoute(b *testing.B) {
	p, err := Compile(`cast(value as string):event_type::string`)
	if err != nil {
		b.Fatal(err)
	}
	r := sample()
	r.Value = []byte(`{"id":123456,"user":{"name":"ada","tags":["a","b"]},"event_type":"page_view","ts":"2024-01-02T03:04:05Z"}`)
	b.SetBytes(int64(len(r.Value)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := p.EvalString(r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFilter evaluates a comparison and a conjunction.
func BenchmarkFilter(b *testing.B) {
	p, err := Compile(`topic = 'x' AND partition > 1`)
	if err != nil {
		b.Fatal(err)
	}
	r := sample()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Eval(r); err != nil {
			b.Fatal(err)
		}
	}
}
