// Package junit writes JUnit XML, the test report format CI systems
// display, for both `karpgate lint` and `karpgate verify`.
package junit
