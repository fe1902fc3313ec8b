// Package corpus generates Karpenter manifests the way a GitOps repository
// holds them, for benchmarks that compare karpgate lint with itself and with
// other tools: mostly valid NodePools and EC2NodeClasses, and a known share
// with exactly one problem each, cycling through problems that different
// tools can see (an invalid cron only karpgate reads, an unknown field a
// schema refuses, an @latest alias a policy flags).
package corpus
