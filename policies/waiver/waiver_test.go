package waiver

import (
	"testing"
	"time"
)

var now = time.Date(2027, 1, 31, 12, 0, 0, 0, time.UTC)

func TestParseValue(t *testing.T) {
	at := func(s string) *time.Time { t, _ := time.Parse(time.RFC3339, s); return &t }
	tests := []struct {
		value, reason string
		until         *time.Time
		problem       string
	}{
		{"staging account", "staging account", nil, ""},
		{"  padded  ", "padded", nil, ""},
		{"", "", nil, ""},
		{"until 2027-01-31: migrating", "migrating", at("2027-02-01T00:00:00Z"), ""},
		{"until 2027-01-31 migrating", "migrating", at("2027-02-01T00:00:00Z"), ""},
		{"until  2027-01-31:   two spaces", "two spaces", at("2027-02-01T00:00:00Z"), ""},
		{"until 2027-01-31T18:00:00Z: window", "window", at("2027-01-31T18:00:00Z"), ""},
		{"until 2027-01-31T18:00:00+02:00: zone", "zone", at("2027-01-31T16:00:00Z"), ""},
		{"until 2027-01-31:", "", at("2027-02-01T00:00:00Z"), ""},
		{"until 31/01/2027: reason", "reason", nil, `"31/01/2027" is not a date`},
		{"until : reason", "reason", nil, `"until" is not followed by a date`},
		{"until", "until", nil, ""}, // no space: a reason that happens to be the word
		{"Until 2027-01-31: capital", "Until 2027-01-31: capital", nil, ""},
	}
	for _, tt := range tests {
		reason, until, problem := ParseValue(tt.value)
		if reason != tt.reason || !sameTime(until, tt.until) || !startsWith(problem, tt.problem) {
			t.Errorf("ParseValue(%q) = %q, %v, %q; want %q, %v, %q", tt.value, reason, until, problem, tt.reason, tt.until, tt.problem)
		}
	}
}

func sameTime(a, b *time.Time) bool {
	return (a == nil) == (b == nil) && (a == nil || a.Equal(*b))
}

func startsWith(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }

func object(annotations map[string]any) map[string]any {
	return map[string]any{"metadata": map[string]any{"annotations": annotations}}
}

func TestReadAppliesExpiryAndRecord(t *testing.T) {
	ws := Read(object(map[string]any{
		"karpgate.io/waive-KG102": "until 2027-01-30: yesterday",
		"karpgate.io/waive-KG101": "until 2027-01-31: today, UTC",
		"karpgate.io/waive-KG103": "until 2027-01-31T12:00:00Z: this instant",
		"karpgate.io/waive-KG104": "",
		"karpgate.io/waive-KG105": map[string]any{"not": "a string"},
		"team.io/other":           "x",
		RecordAnnotation:          `{"KG101":{"user":"alice","at":"2027-01-02T03:04:05Z"}}`,
	}), now)
	got := map[string]bool{}
	for _, w := range ws {
		got[w.Rule] = w.Active()
	}
	want := map[string]bool{"KG101": true, "KG102": false, "KG103": false, "KG104": false, "KG105": false}
	if len(got) != len(want) {
		t.Fatalf("read %v, want %v", got, want)
	}
	for rule, active := range want {
		if got[rule] != active {
			t.Errorf("%s active = %v, want %v", rule, got[rule], active)
		}
	}
	if ws[0].Rule != "KG101" || ws[0].SetBy != "alice" || ws[0].SetAt == nil || ws[1].SetBy != "" {
		t.Errorf("record not applied: %+v", ws[:2])
	}
	if !ws[1].Expired || !ws[2].Expired || ws[0].Expired {
		t.Errorf("expiry: %+v", ws[:3])
	}
}

func TestNextRecordKeepsUnchangedAndStampsChanged(t *testing.T) {
	old := object(map[string]any{
		"karpgate.io/waive-KG101": "kept",
		"karpgate.io/waive-KG102": "old reason",
		"karpgate.io/waive-KG103": "removed",
		RecordAnnotation:          `{"KG101":{"user":"alice","at":"2027-01-01T00:00:00Z"},"KG102":{"user":"alice","at":"2027-01-01T00:00:00Z"},"KG103":{"user":"alice","at":"2027-01-01T00:00:00Z"}}`,
	})
	next := object(map[string]any{
		"karpgate.io/waive-KG101": "kept",
		"karpgate.io/waive-KG102": "new reason",
		"karpgate.io/waive-KG104": "added",
		// a forged record is ignored
		RecordAnnotation: `{"KG101":{"user":"mallory","at":"2020-01-01T00:00:00Z"}}`,
	})
	got := NextRecord(next, old, "bob", now.Add(500*time.Millisecond)).Encode()
	want := `{"KG101":{"user":"alice","at":"2027-01-01T00:00:00Z"},"KG102":{"user":"bob","at":"2027-01-31T12:00:00Z"},"KG104":{"user":"bob","at":"2027-01-31T12:00:00Z"}}`
	if got != want {
		t.Errorf("NextRecord = %s\nwant          %s", got, want)
	}
	if got := NextRecord(object(nil), old, "bob", now).Encode(); got != "" {
		t.Errorf("no waivers left: record %q, want none", got)
	}
	if got := NextRecord(object(map[string]any{"karpgate.io/waive-KG101": "x"}), nil, "carol", now).Encode(); got != `{"KG101":{"user":"carol","at":"2027-01-31T12:00:00Z"}}` {
		t.Errorf("CREATE: %s", got)
	}
	if r := ReadRecord(map[string]any{RecordAnnotation: "{broken"}); len(r) != 0 {
		t.Errorf("a broken record reads as %v, want empty", r)
	}
}

func TestChangedNeverComparesNonStrings(t *testing.T) {
	m := map[string]any{"a": "b"}
	got := Changed(object(map[string]any{"karpgate.io/waive-KG101": m}), object(map[string]any{"karpgate.io/waive-KG101": m}))
	if !got["karpgate.io/waive-KG101"] {
		t.Errorf("a non-string value counts as changed, got %v", got)
	}
}

func FuzzParseValue(f *testing.F) {
	for _, s := range []string{"", "reason", "until 2027-01-31: x", "until 2027-01-31T18:00:00Z: y", "until ::", "until \t2027"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		reason, until, problem := ParseValue(value)
		if until != nil && problem != "" {
			t.Fatalf("%q: both an expiry and a problem", value)
		}
		if len(reason) > len(value) {
			t.Fatalf("%q: reason %q is longer than the value", value, reason)
		}
	})
}
