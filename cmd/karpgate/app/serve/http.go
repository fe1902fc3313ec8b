package serve

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"

	"github.com/karpgate/karpgate/disruption/controller"
	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/serving"
	"github.com/karpgate/karpgate/webhook"
)

// healthChecks are the probes /healthz and /readyz run.
type healthChecks struct {
	healthz, readyz map[string]func(*http.Request) error
}

// httpServers are the metrics and probe servers, as manager runnables
// that stop after the webhooks (so a scrape or probe during the drain is
// still answered), each listening through package serving.
func httpServers(opts Options, probes healthChecks, loop *loopEndpoints) ([]manager.Runnable, error) {
	var out []manager.Runnable
	if addr := opts.metricsAddr(); addr != "0" {
		handler, certs, err := metricsHandler(opts, loop)
		if err != nil {
			return nil, err
		}
		var tlsConfig *tls.Config
		if certs != nil {
			tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.GetCertificate, NextProtos: []string{"http/1.1"}}
			out = append(out, certs) // reloads the certificate as it changes
		}
		l, err := serving.Listen("metrics server (--metrics-addr)", addr, serving.ConnLimits{Max: opts.MaxConnections}, tlsConfig)
		if err != nil {
			return nil, err
		}
		out = append(out, server("metrics", handler, l, opts))
	}
	if opts.HealthAddr != "" && opts.HealthAddr != "0" {
		l, err := serving.Listen("health probe server (--health-addr)", opts.HealthAddr, serving.ConnLimits{Max: opts.MaxConnections}, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, server("health probes", probes.handler(), l, opts))
	}
	return out, nil
}

func server(name string, handler http.Handler, l net.Listener, opts Options) *manager.Server {
	shutdown := shutdownTimeout(opts)
	return &manager.Server{Name: name, Server: serving.NewServer(handler, opts.Log.WithName(name)), Listener: l, ShutdownTimeout: &shutdown}
}

// metricsHandler serves /metrics (the registry controller-runtime and
// karpgate share, and the serve's own loop and audit), /status and /explain. Secure, it answers over TLS with the serving
// certificate, and only to callers the API server authenticates
// (TokenReview) and authorizes for get on the path (SubjectAccessReview):
// the ClusterRole deploy.MetricsReaderClusterRole grants that.
func metricsHandler(opts Options, loop *loopEndpoints) (http.Handler, *certwatcher.CertWatcher, error) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(loop.gatherer(), promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	mux.Handle(deploy.StatusPath, loop.serve((*controller.Loop).StatusHandler))
	mux.Handle(deploy.ExplainPath, loop.serve((*controller.Loop).ExplainHandler))
	if !opts.MetricsSecure {
		return mux, nil, nil
	}
	httpClient, err := rest.HTTPClientFor(opts.RestConfig)
	if err != nil {
		return nil, nil, fmt.Errorf("metrics server: %w", err)
	}
	filter, err := filters.WithAuthenticationAndAuthorization(opts.RestConfig, httpClient)
	if err != nil {
		return nil, nil, fmt.Errorf("metrics server: authentication and authorization: %w", err)
	}
	secured, err := filter(opts.Log.WithName("metrics"), mux)
	if err != nil {
		return nil, nil, fmt.Errorf("metrics server: %w", err)
	}
	certs, err := certwatcher.New(filepath.Join(opts.CertDir, webhook.CertFile), filepath.Join(opts.CertDir, webhook.KeyFile))
	if err != nil {
		return nil, nil, fmt.Errorf("metrics server: loading the serving certificate from %s (--metrics-secure=false serves plain HTTP on loopback instead): %w", opts.CertDir, err)
	}
	if opts.CertReloadInterval > 0 {
		certs = certs.WithWatchInterval(opts.CertReloadInterval)
	}
	return secured, certs, nil
}

// handler serves /healthz and /readyz as controller-runtime's probe server
// does: the checks' verdicts, and /readyz/<check> for one of them.
func (h healthChecks) handler() http.Handler {
	mux := http.NewServeMux()
	for path, checks := range map[string]map[string]func(*http.Request) error{"/healthz": h.healthz, "/readyz": h.readyz} {
		typed := map[string]healthz.Checker{}
		for name, c := range checks {
			typed[name] = c
		}
		handler := http.StripPrefix(path, &healthz.Handler{Checks: typed})
		mux.Handle(path, handler)
		mux.Handle(path+"/", handler)
	}
	return mux
}
