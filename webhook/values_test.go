package webhook

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestJSONValues(t *testing.T) {
	for _, tt := range []struct {
		body string
		want int64
	}{
		{`{}`, 2},
		{`{"a":1}`, 2},
		{`{"a":[1,2,3]}`, 5},
		{`[0,0,0,0]`, 5},
		{`{"a":"x,y[z{","b":"\"],"}`, 3},
		{`{"a":"\\","b":1}`, 3},
	} {
		if got := ValueCount([]byte(tt.body)); got != tt.want {
			t.Errorf("ValueCount(%s) = %d, want %d", tt.body, got, tt.want)
		}
	}
}

// countValues is what a decoder makes of a JSON value: the value and,
// inside it, every element and member.
func countValues(v any) int64 {
	n := int64(1)
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			n += countValues(e)
		}
	case map[string]any:
		for _, e := range v {
			n += countValues(e)
		}
	}
	return n
}

// FuzzJSONValues: on any input ValueCount returns without panicking, and
// on valid JSON it never counts fewer values than a decoder makes.
func FuzzJSONValues(f *testing.F) {
	for _, seed := range []string{`{}`, `[0,0,0]`, `{"a":{"b":["c",{"d":"e\"f"}]}}`, `"\\"`, `[[[]]]`, `{"a":"`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got := ValueCount(body)
		var v any
		if json.Unmarshal(body, &v) != nil {
			return
		}
		if want := countValues(v); got < want {
			t.Errorf("ValueCount(%q) = %d, below the %d values it decodes to", body, got, want)
		}
	})
}

// TestValuesAreCharged: a route with MemoryPerValue reserves what its
// body's values cost once the body is read, refuses (413, naming the
// budget) a body whose values alone would take more than the budget, and
// holds the charge while the request runs, so that a second wide body
// waits for it and is turned away (429) as any request is when the budget
// is taken.
func TestValuesAreCharged(t *testing.T) {
	held, release := make(chan struct{}, 1), make(chan struct{})
	budget := &Budget{MaxInFlight: 4, Memory: 10_000}
	r := startServer(t, Limits{},
		Route{Path: "/wide", Handler: http.HandlerFunc(echo), MaxBodyBytes: 1000, MemoryFactor: 2, MemoryPerValue: 100, Budget: budget},
		Route{Path: "/held", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			held <- struct{}{}
			<-release
			echo(w, r)
		}), MaxBodyBytes: 1000, MemoryFactor: 2, MemoryPerValue: 100, Budget: budget})
	array := func(n int) string { return "[" + strings.Repeat("0,", n-1) + "0]" }
	for _, tt := range []struct {
		name, body    string
		wantCode      int
		wantInMessage string
	}{
		{"a few values", `{"a":[1,2,3]}`, http.StatusOK, ""},
		{"as many values as the budget holds", array(95), http.StatusOK, ""},
		{"more values than the budget holds", array(200), http.StatusRequestEntityTooLarge,
			"the request body holds 201 JSON values (array elements and object members), which need 20KiB of memory at peak (100 bytes a value on top of 2 a byte), more than the 10KiB budget for requests (--memory-limit); send fewer elements"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, got := r.post(t, "/wide", strings.NewReader(tt.body), int64(len(tt.body)))
			if resp.StatusCode != tt.wantCode {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.wantCode, got)
			}
			if tt.wantCode != http.StatusOK {
				if s := statusMessage(t, got); s.Message != "karpgate /wide: "+tt.wantInMessage {
					t.Fatalf("message %q, want %q", s.Message, tt.wantInMessage)
				}
			}
		})
	}

	// 60 values and 121 bytes: 6,242 bytes charged, so a second such body
	// does not fit beside the first while the first is held.
	body := array(60)
	first := make(chan int, 1)
	go func() {
		resp, err := r.client.Post(r.base+"/held", "application/json", strings.NewReader(body))
		if err != nil {
			first <- 0
			return
		}
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	<-held
	before := testutil.ToFloat64(rejectedRequests.WithLabelValues("/wide", "saturated"))
	resp, got := r.post(t, "/wide", strings.NewReader(body), int64(len(body)))
	close(release)
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a second wide body beside the first: status %d, want 429: %s", resp.StatusCode, got)
	}
	if d := testutil.ToFloat64(rejectedRequests.WithLabelValues("/wide", "saturated")) - before; d != 1 {
		t.Errorf("saturated rejections on /wide rose by %v, want 1", d)
	}
	if code := <-first; code != http.StatusOK {
		t.Errorf("the held body: status %d, want 200", code)
	}
}
