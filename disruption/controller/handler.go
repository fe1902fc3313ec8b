package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/karpgate/karpgate/disruption/state"
	"github.com/karpgate/karpgate/disruption/status"
)

// StatusResponse is what /status serves: the report names the release
// judged (Options.Judged) as `karpgate status -o json` does.
type StatusResponse struct {
	// Leader: this replica runs the loop; metrics and events come from it.
	Leader bool `json:"leader"`
	status.Report
}

// Status computes the status of every NodePool from the loop's cache now,
// with the lanes of the release judged, which it names.
func (l *Loop) Status(ctx context.Context) (status.Report, error) {
	snap, err := state.List(ctx, l.cache, 0)
	if err != nil {
		return status.Report{}, err
	}
	reasons, judged := l.opts.judged()
	report := status.ComputeAll(snap, reasons, l.opts.Clock.Now())
	report.Judged = judged
	return report, nil
}

// StatusHandler serves the status of every NodePool as JSON, or of one with
// ?nodepool=NAME. Every replica answers from its own cache.
func (l *Loop) StatusHandler() http.Handler {
	return l.fromCache(func(ctx context.Context, w http.ResponseWriter, req *http.Request) {
		report, err := l.Status(ctx)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if name := req.URL.Query().Get("nodepool"); name != "" {
			report.NodePools = onlyNamed(report.NodePools, name)
			if len(report.NodePools) == 0 {
				http.Error(w, fmt.Sprintf("NodePool %q not found", name), http.StatusNotFound)
				return
			}
		}
		resp := StatusResponse{Leader: l.isLeader(), Report: report}
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(resp)
	})
}

// fromCache wraps the loop's read-only endpoints: GET or HEAD only, served
// once the loop's cache has synced (waiting up to 5 s for it).
func (l *Loop) fromCache(serve func(ctx context.Context, w http.ResponseWriter, req *http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "use GET", http.StatusMethodNotAllowed)
			return
		}
		ctx, cancel := context.WithTimeout(req.Context(), 5*time.Second)
		defer cancel()
		if !l.synced(ctx) {
			http.Error(w, "the disruption loop's cache has not synced yet; retry shortly", http.StatusServiceUnavailable)
			return
		}
		serve(ctx, w, req)
	})
}

func (l *Loop) isLeader() bool {
	select {
	case <-l.elected:
		return true
	default:
		return false
	}
}

func onlyNamed(pools []status.NodePool, name string) []status.NodePool {
	for _, p := range pools {
		if p.Name == name {
			return []status.NodePool{p}
		}
	}
	return nil
}
