package holdrecord

import (
	"strings"
	"testing"
	"time"

	"github.com/karpgate/karpgate/internal/karpenter"
)

const (
	recordKey  = karpenter.RolloutGuardAnnotation
	resumedKey = karpenter.RolloutGuardResumedAnnotation
	freezeOf   = `{"budget":{"nodes":"0","reasons":["Drifted"]},"index":1,"since":"%s","reason":"incident 42","by":"freeze"}`
)

func record(since string) string { return strings.Replace(freezeOf, "%s", since, 1) }

// TestResumesEndsAHoldWhateverItsSince: a resume is the record removed
// and a new resumed instant in one write; neither the hold's since nor the
// clocks of the machines involved decide it, and no write a GitOps apply
// of Git's version makes is one.
func TestResumesEndsAHoldWhateverItsSince(t *testing.T) {
	held := map[string]string{recordKey: record("2026-01-05T08:00:00Z"), resumedKey: "2026-01-01T00:00:00Z"}
	forged := map[string]string{recordKey: record("2099-01-01T00:00:00Z")}
	for _, tt := range []struct {
		name          string
		before, after map[string]string
		want          bool
	}{
		{"resume (record removed, a new instant)", held, map[string]string{resumedKey: "2026-01-05T09:00:00Z"}, true},
		{"a hold since 2099, resumed now", forged, map[string]string{resumedKey: "2026-11-28T08:00:00Z"}, true},
		{"an instant earlier than since (the resuming clock is behind)", held, map[string]string{resumedKey: "2026-01-05T07:59:00Z"}, true},
		{"the stored instant again is no resume", held, map[string]string{resumedKey: "2026-01-01T00:00:00Z"}, false},
		{"replace of Git's version (both annotations dropped)", held, map[string]string{}, false},
		{"server-side apply of Git's version (both kept)", held, held, false},
		{"a new instant with the record kept", held, map[string]string{recordKey: held[recordKey], resumedKey: "2026-01-05T09:00:00Z"}, false},
		{"a new instant with the record handed to another holder", held, map[string]string{recordKey: record("2026-01-05T08:30:00Z"), resumedKey: "2026-01-05T09:00:00Z"}, true},
		{"an older instant than the stored one (Git exported after an earlier resume)", map[string]string{recordKey: held[recordKey], resumedKey: "2026-01-06T00:00:00Z"}, map[string]string{resumedKey: "2026-01-05T09:00:00Z"}, false},
		{"a stored instant no clock wrote binds nothing", map[string]string{recordKey: held[recordKey], resumedKey: "2099-01-01T00:00:00Z"}, map[string]string{resumedKey: "2026-11-28T08:00:00Z"}, true},
		{"an instant that does not parse", held, map[string]string{resumedKey: "tomorrow"}, false},
		{"an empty instant", held, map[string]string{resumedKey: ""}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Resumes(tt.before, tt.after, time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)); got != tt.want {
				t.Fatalf("Resumes = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNextResumeIsAlwaysANewValue(t *testing.T) {
	now := time.Date(2026, 11, 28, 8, 0, 0, 400_000_000, time.UTC)
	for _, tt := range []struct {
		name, stored, want string
	}{
		{"never resumed", "", "2026-11-28T08:00:00Z"},
		{"resumed before", "2026-11-28T07:00:00Z", "2026-11-28T08:00:00Z"},
		{"resumed in this second", "2026-11-28T08:00:00Z", "2026-11-28T08:00:01Z"},
		{"resumed by a clock ahead of this one", "2026-11-28T08:03:00Z", "2026-11-28T08:03:01Z"},
		{"resumed at an instant no clock wrote", "2099-01-01T00:00:00Z", "2026-11-28T08:00:00Z"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			annotations := map[string]string{}
			if tt.stored != "" {
				annotations[resumedKey] = tt.stored
			}
			got := NextResume(annotations, now)
			if got != tt.want {
				t.Fatalf("NextResume = %s, want %s", got, tt.want)
			}
			if !Resumes(map[string]string{recordKey: record("2026-11-28T07:30:00Z"), resumedKey: tt.stored}, map[string]string{resumedKey: got}, now) {
				t.Fatalf("a write of %s over %q is no resume", got, tt.stored)
			}
			if err := CheckDates(map[string]string{resumedKey: tt.stored}, map[string]string{resumedKey: got}, now); err != nil {
				t.Fatalf("admission refuses the resume NextResume writes: %v", err)
			}
		})
	}
}

// TestCheckDatesRefusesHoldsDatedInTheFuture: what a write sets is
// judged against karpgate's clock with MaxSkew to spare; what it leaves as
// stored is not judged again.
func TestCheckDatesRefusesHoldsDatedInTheFuture(t *testing.T) {
	now := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	stored := map[string]string{recordKey: record("2099-01-01T00:00:00Z"), resumedKey: "2099-01-01T00:00:00Z"}
	for _, tt := range []struct {
		name          string
		before, after map[string]string
		want          string // "" means admitted
	}{
		{"no hold", nil, map[string]string{"team": "web"}, ""},
		{"a freeze now", nil, map[string]string{recordKey: record("2026-11-28T08:00:00Z")}, ""},
		{"a freeze from a clock ahead within the skew", nil, map[string]string{recordKey: record("2026-11-28T08:05:00Z")}, ""},
		{"a freeze in 2099", nil, map[string]string{recordKey: record("2099-01-01T00:00:00Z")},
			`metadata.annotations[karpgate.io/rollout-guard]: "since" is 2099-01-01T00:00:00Z, later than karpgate's clock (2026-11-28T08:00:00Z) by more than the 5m0s it allows`},
		{"a freeze just past the skew", nil, map[string]string{recordKey: record("2026-11-28T08:05:01Z")}, `"since" is 2026-11-28T08:05:01Z`},
		{"a record changed to 2099", map[string]string{recordKey: record("2026-11-28T07:00:00Z")}, map[string]string{recordKey: record("2099-01-01T00:00:00Z")}, `set "since" to the current time`},
		{"a stored record of 2099 left as it is", stored, map[string]string{recordKey: stored[recordKey], "team": "web"}, ""},
		{"a record that does not parse (the rules judge it)", nil, map[string]string{recordKey: "held by hand"}, ""},
		{"a resume now", nil, map[string]string{resumedKey: "2026-11-28T08:00:00Z"}, ""},
		{"a resume in 2099", nil, map[string]string{resumedKey: "2099-01-01T00:00:00Z"},
			"metadata.annotations[karpgate.io/rollout-guard-resumed]: 2099-01-01T00:00:00Z is later than karpgate's clock"},
		{"a stored resume of 2099 left as it is", stored, map[string]string{resumedKey: stored[resumedKey]}, ""},
		{"a resume that is no instant", nil, map[string]string{resumedKey: "now"}, `metadata.annotations[karpgate.io/rollout-guard-resumed]: "now" is not an RFC 3339 instant`},
		{"a resume removed", stored, map[string]string{}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckDates(tt.before, tt.after, now)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// FuzzCheckDates: whatever a write's annotations hold, judging them never
// panics, and a resume never keeps a record.
func FuzzCheckDates(f *testing.F) {
	f.Add(record("2099-01-01T00:00:00Z"), "", "2026-11-28T08:00:00Z", true)
	f.Add(`{"budget":{},"since":"x"}`, "2026-11-28T08:00:00Z", "2026-11-28T08:00:00.5+01:00", false)
	f.Fuzz(func(t *testing.T, rec, storedResume, resume string, keepRecord bool) {
		before := map[string]string{recordKey: rec, resumedKey: storedResume}
		after := map[string]string{resumedKey: resume}
		if keepRecord {
			after[recordKey] = rec
		}
		_ = CheckDates(nil, after, time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC))
		if Resumes(before, after, time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)) && keepRecord {
			t.Fatalf("a write that keeps the record resumed")
		}
	})
}
