package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/karpgate/karpgate/webhook"
	conversionwebhook "github.com/karpgate/karpgate/webhook/conversion"
)

type serveOptions struct {
	certDir    string
	host       string
	port       int
	healthAddr string
	kubeconfig string
}

func newServeCommand(s streams) *cobra.Command {
	var opts serveOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve karpgate's webhooks to the API server over TLS",
		Long: `serve runs the HTTPS endpoints the API server calls:

  /convert   the conversion webhook for NodePools, NodeClaims and EC2NodeClasses
             (point the Karpenter CRDs' spec.conversion.webhook.clientConfig here)

The serving certificate is read from --cert-dir (tls.crt, tls.key) and
reloaded when it changes. Plain-HTTP health endpoints /healthz and /readyz
listen on --health-addr. The cluster is read (NodePools, to fill a v1
NodeClaim's expireAfter) with --kubeconfig, $KUBECONFIG, the in-cluster
service account or ~/.kube/config, in that order.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return serve(ctx, s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.certDir, "cert-dir", "", "folder with the serving certificate tls.crt and key tls.key (required)")
	f.StringVar(&opts.host, "host", "", "address to listen on for webhooks (default all)")
	f.IntVar(&opts.port, "port", webhook.DefaultPort, "port to listen on for webhooks")
	f.StringVar(&opts.healthAddr, "health-addr", ":8081", "address of the plain-HTTP /healthz and /readyz endpoints; empty turns them off")
	f.StringVar(&opts.kubeconfig, "kubeconfig", "", "kubeconfig for reading NodePools")
	return cmd
}

// webhookRoutes lists every endpoint `karpgate serve` offers.
func webhookRoutes(c client.Reader, log logr.Logger) []webhook.Route {
	return []webhook.Route{
		{Path: "/convert", Handler: &conversionwebhook.Handler{
			NodePools: conversionwebhook.ClientNodePools{Reader: c},
			Log:       log.WithName("conversion"),
		}},
	}
}

func serve(ctx context.Context, s streams, opts serveOptions) error {
	log := funcr.New(func(prefix, args string) {
		fmt.Fprintln(s.err, time.Now().UTC().Format(time.RFC3339), prefix, args)
	}, funcr.Options{})
	ctrllog.SetLogger(log)
	if opts.certDir == "" {
		return &ExitError{Code: ExitUsage, Err: errors.New("--cert-dir is required: a folder with tls.crt and tls.key")}
	}
	cfg, err := restConfig(opts.kubeconfig)
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("cluster client: %w", err)}
	}
	srv, err := webhook.New(webhook.Options{
		CertDir: opts.certDir,
		Host:    opts.host,
		Port:    opts.port,
		Routes:  webhookRoutes(c, log),
	})
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: err}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, 2)
	running := 1
	go func() { errs <- srv.Start(ctx) }()
	if opts.healthAddr != "" {
		health, err := healthServer(opts.healthAddr, srv.StartedChecker())
		if err != nil {
			cancel()
			<-errs
			return &ExitError{Code: ExitUsage, Err: err}
		}
		running++
		go func() { errs <- health(ctx) }()
	}
	log.Info("serving webhooks", "port", opts.port, "certDir", opts.certDir, "healthAddr", opts.healthAddr)
	var first error
	for range running {
		if err := <-errs; err != nil && first == nil {
			first = err
			cancel() // one server failing stops the other
		}
	}
	return first
}

// healthServer listens at once, so a taken port is reported before serving.
func healthServer(addr string, webhookStarted healthz.Checker) (func(context.Context) error, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--health-addr %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	live := &healthz.Handler{Checks: map[string]healthz.Checker{"ping": healthz.Ping}}
	ready := &healthz.Handler{Checks: map[string]healthz.Checker{"webhook": webhookStarted}}
	mux.Handle("/healthz", http.StripPrefix("/healthz", live))
	mux.Handle("/healthz/", http.StripPrefix("/healthz", live))
	mux.Handle("/readyz", http.StripPrefix("/readyz", ready))
	mux.Handle("/readyz/", http.StripPrefix("/readyz", ready))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return func(ctx context.Context) error {
		go func() {
			<-ctx.Done()
			shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(shutdown)
		}()
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}, nil
}

// restConfig prefers an explicit kubeconfig, then controller-runtime's
// usual order ($KUBECONFIG, in-cluster, ~/.kube/config).
func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
		}
		return cfg, nil
	}
	cfg, err := ctrlconfig.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("no cluster to read NodePools from (%w); pass --kubeconfig", err)
	}
	return cfg, nil
}
