package session_test

import "github.com/surfacelog/surface/impl/session"

// The benchmarks read a session through these three functions, so the
// same benchmark file also runs against the earlier slice-based API (for
// the before/after table of impl/session/testdata/bench).

func derive(s *session.Session) int             { return s.Messages().Len() }
func surfaceLen(s *session.Session) int         { return s.Surface().Len() }
func surfaceAt(s *session.Session, i int) int64 { return s.Surface().At(i) }
