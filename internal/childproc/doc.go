// Package childproc runs a command as a child process held to a memory
// limit and a timeout: the parent watches the child's resident memory and
// kills it past the limit, and kills it at the timeout. karpgate serve
// checks new policies this way, so that a policy that allocates without
// bound or never finishes costs a child process, not the replica that
// answers the webhooks.
package childproc
