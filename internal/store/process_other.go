//go:build !unix

package store

import "os"

// processAlive reports whether process pid runs on this machine: on
// Windows finding a process opens it, which fails once it has exited.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
