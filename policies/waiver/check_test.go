package waiver

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// withRecord is annotations plus the record, "" for none.
func withRecord(annotations map[string]any, record string) map[string]any {
	out := map[string]any{}
	for k, v := range annotations {
		out[k] = v
	}
	if record != "" {
		out[RecordAnnotation] = record
	}
	return object(out)
}

// TestCheckRecord: the validating webhook admits the record the mutating
// webhook writes for a write, and nothing else; a stored record carried
// through by a write that leaves the waivers as they are passes too.
func TestCheckRecord(t *testing.T) {
	const (
		alice      = `{"KG101":{"user":"alice","at":"2027-01-01T00:00:00Z"}}`
		bobNow     = `{"KG101":{"user":"bob","at":"2027-01-31T12:00:00Z"}}`
		aliceBoth  = `{"KG101":{"user":"alice","at":"2027-01-01T00:00:00Z"},"KG102":{"user":"alice","at":"2027-01-01T00:00:00Z"}}`
		mallory    = `{"KG101":{"user":"mallory","at":"2027-01-31T12:00:00Z"}}`
		aliceSpace = `{ "KG101": {"user": "alice", "at": "2027-01-01T00:00:00Z"} }`
	)
	kg101 := func(reason string) map[string]any { return map[string]any{"karpgate.io/waive-KG101": reason} }
	both := map[string]any{"karpgate.io/waive-KG101": "x", "karpgate.io/waive-KG102": "y"}
	tests := []struct {
		name      string
		object    map[string]any
		old       map[string]any // nil: a CREATE
		want      []string       // the start of each problem
		untouched bool
	}{
		{"no waivers, no record", withRecord(nil, ""), withRecord(nil, ""), nil, true},
		{"a stored waiver, the stored record", withRecord(kg101("x"), alice), withRecord(kg101("x"), alice), nil, true},
		{"a legacy spelling of the stored record, carried through", withRecord(kg101("x"), aliceSpace), withRecord(kg101("x"), aliceSpace), nil, true},
		{"a waiver added, stamped for its writer", withRecord(kg101("x"), bobNow), withRecord(nil, ""), nil, false},
		{"a waiver added on CREATE", withRecord(kg101("x"), bobNow), nil, nil, false},
		{"a waiver changed, stamped again", withRecord(kg101("y"), bobNow), withRecord(kg101("x"), alice), nil, false},
		{"a waiver removed with its entry", withRecord(nil, ""), withRecord(kg101("x"), alice), nil, false},
		{"a waiver removed, its entry left by a write the mutating webhook missed", withRecord(nil, alice), withRecord(kg101("x"), alice), nil, true},

		{"a forged entry for a stored waiver", withRecord(kg101("x"), mallory), withRecord(kg101("x"), alice), []string{`KG101: the write leaves the waiver as stored, and changes its entry to {"user":"mallory"`}, false},
		{"an entry for a stored waiver that had none", withRecord(kg101("x"), mallory), withRecord(kg101("x"), ""), []string{"KG101: the write leaves the waiver as stored, and adds its entry (stored: none)"}, false},
		{"the record dropped", withRecord(both, ""), withRecord(both, aliceBoth), []string{"KG101: the write leaves the waiver as stored, and drops its entry", "KG102: the write leaves the waiver as stored, and drops its entry"}, false},
		{"a waiver added, no entry: the mutating webhook did not run", withRecord(kg101("x"), ""), withRecord(nil, ""), []string{"KG101: the write adds or changes the waiver, and the record has no entry for it"}, true},
		{"a waiver changed, the old entry carried through", withRecord(kg101("y"), alice), withRecord(kg101("x"), alice), []string{`KG101: the entry names "alice", but the write that adds or changes the waiver is made by "bob"`}, true},
		{"a waiver added in someone else's name", withRecord(kg101("x"), mallory), withRecord(nil, ""), []string{`KG101: the entry names "mallory", but the write`}, false},
		{"a waiver added, dated long ago", withRecord(kg101("x"), `{"KG101":{"user":"bob","at":"2020-01-01T00:00:00Z"}}`), withRecord(nil, ""), []string{"KG101: the entry's time 2020-01-01T00:00:00Z is not this write's: karpgate's clock says 2027-01-31T12:00:00Z, more than 5m0s apart"}, false},
		{"a waiver added, dated in another zone", withRecord(kg101("x"), `{"KG101":{"user":"bob","at":"2027-01-31T13:00:00+01:00"}}`), withRecord(nil, ""), []string{`KG101: the entry's time "2027-01-31T13:00:00+01:00" is not an RFC 3339 time in UTC`}, false},
		{"an entry with more fields", withRecord(kg101("x"), `{"KG101":{"user":"bob","at":"2027-01-31T12:00:00Z","role":"admin"}}`), withRecord(nil, ""), []string{`it does not read as karpgate's record ({"<rule ID>": {"user": "...", "at": "..."}}): json: unknown field "role"`}, false},
		{"two records", withRecord(kg101("x"), bobNow+bobNow), withRecord(nil, ""), []string{"it does not read as karpgate's record: more follows the JSON object"}, false},
		{"not JSON", withRecord(kg101("x"), "alice"), withRecord(nil, ""), []string{"it does not read as karpgate's record"}, false},
		{"an entry for a waiver the object lacks", withRecord(nil, `{"KG999":{"user":"ceo","at":"2027-01-31T12:00:00Z"}}`), withRecord(nil, ""), []string{`KG999: the object has no waiver of KG999, and the record gains an entry for it: {"user":"ceo"`}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var old map[string]any
			if tt.old != nil {
				old = tt.old
			}
			got := CheckRecord(tt.object, old, "bob", now.Add(700*time.Millisecond))
			if len(got.Problems) != len(tt.want) {
				t.Fatalf("problems %q, want %d starting %q", got.Problems, len(tt.want), tt.want)
			}
			for i, want := range tt.want {
				if !strings.HasPrefix(got.Problems[i], want) {
					t.Errorf("problem %q\nwant it to start %q", got.Problems[i], want)
				}
			}
			if len(tt.want) > 0 && got.Untouched != tt.untouched {
				t.Errorf("untouched = %v, want %v", got.Untouched, tt.untouched)
			}
		})
	}
}

// TestCheckRecordToleratesTheClocks: an entry the mutating webhook
// stamped a little before, or on a replica whose clock runs a little
// ahead, passes; beyond RecordClockTolerance it does not.
func TestCheckRecordToleratesTheClocks(t *testing.T) {
	for _, tt := range []struct {
		stamped time.Duration // relative to the validating webhook's clock
		ok      bool
	}{
		{0, true}, {-30 * time.Second, true}, {2 * time.Second, true},
		{-RecordClockTolerance, true}, {RecordClockTolerance, true},
		{-RecordClockTolerance - time.Second, false}, {RecordClockTolerance + time.Second, false},
	} {
		stamp := now.Add(tt.stamped).Format(time.RFC3339)
		obj := withRecord(map[string]any{"karpgate.io/waive-KG101": "x"}, `{"KG101":{"user":"bob","at":"`+stamp+`"}}`)
		if got := CheckRecord(obj, withRecord(nil, ""), "bob", now); (len(got.Problems) == 0) != tt.ok {
			t.Errorf("stamped %v from the validating webhook's clock: problems %q, want ok=%v", tt.stamped, got.Problems, tt.ok)
		}
	}
}

// FuzzCheckRecordAdmitsWhatTheMutatingWebhookWrites: whatever the stored
// object and the write, the record NextRecord writes passes CheckRecord,
// so that no honest write through both webhooks is refused.
func FuzzCheckRecordAdmitsWhatTheMutatingWebhookWrites(f *testing.F) {
	f.Add("KG101=x;KG102=y", "KG101=x;KG103=z", `{"KG101":{"user":"alice","at":"2027-01-01T00:00:00Z"}}`, "bob", int64(0))
	f.Add("", "KG101=x", "", "", int64(1))
	f.Add("KG101=x", "", "{broken", "system:serviceaccount:argocd:argocd-application-controller", int64(-299))
	f.Fuzz(func(t *testing.T, stored, written, storedRecord, user string, skew int64) {
		if !utf8.ValidString(stored) || !utf8.ValidString(written) || !utf8.ValidString(storedRecord) || !utf8.ValidString(user) {
			t.Skip("the API server's objects and users come from JSON: valid UTF-8")
		}
		parse := func(spec string) map[string]any {
			out := map[string]any{}
			for _, pair := range strings.Split(spec, ";") {
				if rule, reason, ok := strings.Cut(pair, "="); ok && rule != "" {
					out["karpgate.io/waive-"+rule] = reason
				}
			}
			return out
		}
		old := withRecord(parse(stored), storedRecord)
		object := withRecord(parse(written), "")
		stamped := now.Add(time.Duration(skew%300) * time.Second)
		if r := NextRecord(object, old, user, stamped).Encode(); r != "" {
			object["metadata"].(map[string]any)["annotations"].(map[string]any)[RecordAnnotation] = r
		}
		if got := CheckRecord(object, old, user, now); len(got.Problems) > 0 {
			t.Fatalf("the mutating webhook's record is refused: %q\nold %v\nnew %v", got.Problems, old, object)
		}
	})
}
