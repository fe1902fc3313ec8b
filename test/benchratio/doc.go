// Package benchratio reports a benchmark's speed as a ratio against a
// baseline measured in the same run, which is how karpgate's benchmarks
// state speed: absolute times on a shared machine mean little, ratios hold.
package benchratio
