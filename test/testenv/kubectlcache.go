package testenv

import "os"

// KubectlCacheEnv is the variable kubectl reads for its cache folder
// (--cache-dir's default, otherwise ~/.kube/cache).
const KubectlCacheEnv = "KUBECACHEDIR"

// IsolateKubectlCache points kubectl's cache at a folder of this test
// process's own, for a TestMain to call before m.Run, and returns what
// removes it. kubectl keeps each API server's discovery for hours, keyed by
// host and port, and every test cluster listens on a fresh port; the ports
// come round again across runs, so a cluster on a port an earlier run's
// cluster used (one whose CRDs served karpenter.sh/v1beta1, say) would be
// answered from that cluster's discovery, and kubectl would post to a
// version this server does not serve and print NotFound instead of the
// "no matches for kind" the server's own discovery gives.
func IsolateKubectlCache() (cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "karpgate-kubectl-cache-")
	if err != nil {
		return nil, err
	}
	if err := os.Setenv(KubectlCacheEnv, dir); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return func() { _ = os.RemoveAll(dir) }, nil
}
