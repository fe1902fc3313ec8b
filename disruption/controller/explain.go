package controller

import (
	"context"
	"errors"
	"net/http"

	"github.com/karpgate/karpgate/disruption/explain"
)

// ExplainHandler serves why one NodeClaim or Node is or is not a disruption
// candidate, from the loop's cache: ?nodeclaim=NAME or ?node=NAME, as JSON,
// or as text with ?format=text (times read in karpgate.yaml's timezone),
// naming the release judged as `karpgate explain` does. Every replica
// answers, as for /status.
func (l *Loop) ExplainHandler() http.Handler {
	return l.fromCache(func(ctx context.Context, w http.ResponseWriter, req *http.Request) {
		q := req.URL.Query()
		var target explain.Target
		switch claim, node := q.Get("nodeclaim"), q.Get("node"); {
		case claim != "" && node == "":
			target = explain.Target{Kind: explain.KindNodeClaim, Name: claim}
		case node != "" && claim == "":
			target = explain.Target{Kind: explain.KindNode, Name: node}
		default:
			http.Error(w, "name one NodeClaim or one Node: /explain?nodeclaim=NAME or /explain?node=NAME (add &format=text for people)", http.StatusBadRequest)
			return
		}
		format := q.Get("format")
		if format != "" && format != "json" && format != "text" {
			http.Error(w, "format must be json or text", http.StatusBadRequest)
			return
		}
		in, err := explain.Gather(ctx, l.cache, target)
		switch {
		case errors.Is(err, explain.ErrNotFound):
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		reasons, judged := l.opts.judged()
		in.Reasons = reasons
		e := explain.Explain(in, l.opts.Clock.Now())
		e.Judged = judged
		if format == "text" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_ = explain.WriteText(w, e, l.opts.Location())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = explain.WriteJSON(w, e)
	})
}
