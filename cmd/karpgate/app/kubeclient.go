package app

import (
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/disruption/state"
)

// kubeFlags are the flags of commands that talk to a cluster.
type kubeFlags struct {
	kubeconfig string
	context    string
}

func (k *kubeFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&k.kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, then ~/.kube/config, then the pod's service account)")
	fs.StringVar(&k.context, "context", "", "kubeconfig context (default the current context)")
}

// restConfig reads --kubeconfig, else $KUBECONFIG or ~/.kube/config, else
// the pod's service account.
func (k *kubeFlags) restConfig() (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if k.kubeconfig != "" {
		rules.ExplicitPath = k.kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: k.context}).ClientConfig()
	if err != nil {
		return nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("reading kubeconfig: %w", err)}
	}
	return cfg, nil
}

// client returns a direct client that decodes Karpenter's kinds into the
// disruption loop's views.
func (k *kubeFlags) client() (client.Client, error) {
	cfg, err := k.restConfig()
	if err != nil {
		return nil, err
	}
	c, err := client.New(state.RESTConfig(cfg), client.Options{Scheme: state.NewScheme()})
	if err != nil {
		return nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("connecting to %s: %w", cfg.Host, err)}
	}
	return c, nil
}

// apiClient returns a direct client for Kubernetes' own types and
// unstructured objects of any kind, and the API server's address.
func (k *kubeFlags) apiClient() (client.Client, string, error) {
	cfg, err := k.restConfig()
	if err != nil {
		return nil, "", err
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, "", &ExitError{Code: ExitUsage, Err: fmt.Errorf("connecting to %s: %w", cfg.Host, err)}
	}
	return c, cfg.Host, nil
}
