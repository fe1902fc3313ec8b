package karpenterstack

import "syscall"

// sysProcAttr puts the child in its own process group, so that a terminal's
// Ctrl-C reaches only the parent, which then stops the stack in order; and
// has the kernel kill the child if the parent dies without stopping it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
