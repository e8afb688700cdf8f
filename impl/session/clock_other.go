//go:build !(linux && amd64)

package session

import "time"

// wallMillis is the wall clock in milliseconds since the Unix epoch, the
// default clock of an append.
func wallMillis() int64 { return time.Now().UnixMilli() }
