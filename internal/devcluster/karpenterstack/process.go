package karpenterstack

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// process is one running child with its output going to a log file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error // how it ended; valid once done is closed
}

// startProcess starts bin with args and env (added to a copy of this
// process's environment without KUBECONFIG), its output appended to logPath.
func startProcess(name, logPath, bin string, args, env []string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(inheritedEnv(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// inheritedEnv drops KUBECONFIG so that no child talks to a cluster the
// caller's environment names instead of the stack's own.
func inheritedEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !bytes.HasPrefix([]byte(kv), []byte("KUBECONFIG=")) {
			env = append(env, kv)
		}
	}
	return env
}

// exited reports whether the process has ended, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// stop asks the process to end with SIGTERM, kills it after grace, and
// waits. However it ends once asked (kube-scheduler and kwok exit 1 on
// SIGTERM), that is a normal stop; an exit before it was asked is reported.
func (p *process) stop(grace time.Duration) error {
	if done, err := p.exited(); done {
		return p.unexpected(exitError(err))
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	return nil
}

// unexpected describes an exit the stack did not ask for, nil for none.
func (p *process) unexpected(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s exited: %w (log: %s)", p.name, err, p.logPath)
}

// logTail returns the end of the process's log, for error messages.
func (p *process) logTail() string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return ""
	}
	const keep = 4 << 10
	if len(data) > keep {
		data = data[len(data)-keep:]
	}
	return string(data)
}
