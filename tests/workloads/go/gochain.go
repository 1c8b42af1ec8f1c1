// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A Go program for the native unwinding test: three goroutines and the main
// one hash in a known chain (main.mid -> main.leaf -> crypto/sha256) for
// the seconds given (default 8). Go's goroutine stacks end under
// runtime.goexit, whose caller slot holds 0; threads begin in
// runtime.clone, without libc.
package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"sync"
	"time"
)

//go:noinline
func leaf(b []byte) [32]byte { return sha256.Sum256(b) }

//go:noinline
func mid(n int) byte {
	b := make([]byte, 4096)
	var s byte
	for i := 0; i < n; i++ {
		h := leaf(b)
		s ^= h[0]
		b[0] = s
	}
	return s
}

func main() {
	secs := 8
	if len(os.Args) > 1 {
		fmt.Sscan(os.Args[1], &secs)
	}
	end := time.Now().Add(time.Duration(secs) * time.Second)
	var wg sync.WaitGroup
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				_ = mid(100)
			}
		}()
	}
	var s byte
	for time.Now().Before(end) {
		s ^= mid(50)
	}
	wg.Wait()
	fmt.Fprintln(os.Stderr, s)
}
