//go:build unix

package store

import (
	"errors"
	"syscall"
)

// processAlive reports whether process pid runs on this machine (signal
// 0 tests it without touching it; EPERM: it runs as another user).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
