package event

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Code is a stable, language-neutral error code from spec/errors.json, such
// as "replace.start_not_on_surface". A Code is itself an error, so
//
//	errors.Is(err, event.CodeReplaceReversed)
//
// tells whether err is a rejection with that code.
type Code string

// Error implements error.
func (c Code) Error() string { return string(c) }

// Error is a rejection: the code, where it happened, and a human message.
// Only the code is stable; the message text may change.
type Error struct {
	Code Code
	// Index is the index of the offending event in a seed, or -1.
	Index int
	// Seq is the seq of the offending event, or -1 when unknown.
	Seq int64
	// Missing lists, for replace.sources_incomplete, the shadowed seqs the
	// sources lack.
	Missing []int64
	// Detail is a human-readable explanation.
	Detail string
	// Cause is the underlying error, if any (an I/O error of a store).
	Cause error
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Cause
}

// Errorf builds an *Error for the event at seq.
func Errorf(code Code, seq int64, format string, args ...any) *Error {
	return &Error{Code: code, Index: -1, Seq: seq, Detail: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	var b strings.Builder
	b.WriteString(string(e.Code))
	if e.Index >= 0 {
		b.WriteString(": seed event ")
		b.WriteString(strconv.Itoa(e.Index))
	} else if e.Seq >= 0 {
		b.WriteString(": event ")
		b.WriteString(strconv.FormatInt(e.Seq, 10))
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Is reports whether target is e's Code, so errors.Is matches by code.
func (e *Error) Is(target error) bool {
	c, ok := target.(Code)
	return ok && e != nil && c == e.Code
}

// CodeOf returns the code of err, or "" when err is nil or carries no code.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		if e == nil { // a nil *Error in a non-nil error interface
			return ""
		}
		return e.Code
	}
	var c Code
	if errors.As(err, &c) {
		return c
	}
	return ""
}
