package finding

import (
	"encoding/json"
	"regexp"
	"testing"
)

// Every kind of the registry has a name, a severity, and a name no other
// kind has: one word, one severity, by construction.
func TestRegistryOneSeverityPerKind(t *testing.T) {
	name := regexp.MustCompile(`^[a-z]+(-[a-z]+)*$`)
	seen := map[string]Kind{}
	for k := Kind(1); k < numKinds; k++ {
		n, sev := k.String(), k.Severity()
		if !name.MatchString(n) {
			t.Errorf("kind %d: name %q", k, n)
		}
		if sev < Info || sev > Error {
			t.Errorf("%s: severity %d", n, sev)
		}
		if o, dup := seen[n]; dup {
			t.Errorf("%q is kind %d and kind %d (%s and %s)", n, o, k, o.Severity(), sev)
		}
		seen[n] = k
		if got, ok := Lookup(n); !ok || got != k {
			t.Errorf("Lookup(%q) = %d, %v", n, got, ok)
		}
	}
	if len(Kinds()) != int(numKinds)-1 || len(seen) != len(Kinds()) {
		t.Errorf("%d kinds, %d names", len(Kinds()), len(seen))
	}
	if _, ok := Lookup(""); ok {
		t.Error("the empty name is a kind")
	}
	if noKind.String() != "" || noKind.Severity() != 0 {
		t.Errorf("no kind: %q %v", noKind, noKind.Severity())
	}
}

func TestSeverityWords(t *testing.T) {
	for s, want := range map[Severity]string{Info: "info", Warning: "warning", Error: "error", 0: ""} {
		if s.String() != want {
			t.Errorf("%d: %q, want %q", s, s, want)
		}
	}
	if !(Info < Warning && Warning < Error) {
		t.Error("severities out of order")
	}
	if Error.Upper() != "ERROR" {
		t.Error(Error.Upper())
	}
}

// A Finding's JSON (a journal's plan) names its kind and severity, holds
// the fields that apply, and reads back to the same value; a repair
// finding written by an older kseg reads as it was written.
func TestFindingJSON(t *testing.T) {
	f := New(TornTail, "cut short")
	f.File, f.Position = "00000000000000000000.log", 535
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"kind":"torn-tail","severity":"error","file":"00000000000000000000.log","position":535,"message":"cut short"}`
	if string(b) != want {
		t.Errorf("%s\nwant %s", b, want)
	}
	var back Finding
	if err := json.Unmarshal(b, &back); err != nil || back != f {
		t.Errorf("%+v %v, want %+v", back, err, f)
	}
	old := `{"kind":"segment-unreachable","severity":"info","file":"00000000000000000005.log","position":-1,"message":"m"}`
	if err := json.Unmarshal([]byte(old), &back); err != nil || back.Kind != SegmentUnreachable || back.Position != -1 || back.Offset != -1 {
		t.Errorf("%+v %v", back, err)
	}
	if err := json.Unmarshal([]byte(`{"kind":"no-such-kind"}`), &back); err == nil {
		t.Error("an unknown kind reads")
	}
	if _, err := json.Marshal(Finding{}); err == nil {
		t.Error("a finding without a kind marshals")
	}
}

func TestCounts(t *testing.T) {
	fs := []Finding{New(PIDCollision, ""), New(SequenceGap, ""), New(SequenceGap, ""), New(MarkerWithoutTxn, "")}
	if e, w := Count(fs); e != 1 || w != 2 || Errors(fs) != 1 || !HasErrors(fs) || HasErrors(fs[1:]) {
		t.Errorf("%d errors, %d warnings", e, w)
	}
}
