package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/surfacelog/surface/impl/convert"
	"github.com/surfacelog/surface/impl/released"
	"github.com/surfacelog/surface/impl/session"
)

// releasedJSONL reports whether the file at path holds a released session
// file (REL-1): a .jsonl.zstd (the zstd magic) or plain JSONL whose header
// carries delegationDepth, which this library's header never does.
func releasedJSONL(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<16)
	head, _ := r.Peek(4)
	if released.IsZstd(head) {
		return true
	}
	line, err := r.ReadSlice('\n')
	if err != nil {
		return false
	}
	var h map[string]json.RawMessage
	return json.Unmarshal(bytes.TrimSpace(line), &h) == nil && string(h["type"]) == `"session"` && h["delegationDepth"] != nil
}

// validateReleasedFile checks a released JSONL or .jsonl.zstd file by the
// released rules (REL-1 to REL-5), read-only.
func (v *validator) validateReleasedFile(path string) int {
	prog, stdout := v.prog, v.out
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(stdout, "%s: ERROR %v\n", path, err)
		return validInput
	}
	size := int64(-1)
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	prog.phase("reading "+path, size)
	data, err := io.ReadAll(prog.reader(f))
	f.Close()
	if err != nil {
		fmt.Fprintf(stdout, "%s: ERROR %v\n", path, err)
		return validInput
	}
	l, err := released.Read(data)
	if err != nil {
		prog.finish()
		fmt.Fprintf(stdout, "%s: INVALID released: %s\n", path, err)
		return exitFor(err)
	}
	note := ""
	if l.TornBytes > 0 {
		what := "last line"
		if l.Compressed {
			what = "last zstd frame"
		}
		note = fmt.Sprintf(" (a torn %s of %d bytes, from a crash during a write: the released system cuts it on resume)", what, l.TornBytes)
	}
	return v.checkReleased(path, l, note)
}

// validateReleasedSQLite checks the sessions of a released database.
func (v *validator) validateReleasedSQLite(path string) int {
	sessionID, prog, stdout := v.sessionID, v.prog, v.out
	ids, err := released.SQLiteSessions(context.Background(), path)
	if err != nil {
		fmt.Fprintf(stdout, "%s: INVALID released: %s\n", path, err)
		return exitFor(err)
	}
	if len(ids) == 0 {
		fmt.Fprintf(stdout, "%s: ERROR the database has no sessions\n", path)
		return validInput
	}
	return validateSessionsWith(path, ids, sessionID, func(id string, label string) int {
		prog.phase("reading "+label, -1)
		l, err := released.ReadSQLite(context.Background(), path, id)
		if err != nil {
			prog.finish()
			fmt.Fprintf(stdout, "%s: INVALID released: %s\n", label, err)
			return exitFor(err)
		}
		note := ""
		if l.TornBytes > 0 {
			note = fmt.Sprintf(" (%d rows after a hole, from a crash: the released system deletes them on resume)", l.TornBytes)
		}
		return v.checkReleased(label, l, note)
	}, stdout)
}

// checkReleased applies the released rules to a read log and reports.
func (v *validator) checkReleased(name string, l *released.Log, note string) int {
	prog, stdout := v.prog, v.out
	prog.phase("checking "+name, int64(len(l.Events)))
	s, err := released.Check(l)
	prog.set(int64(len(l.Events)))
	prog.finish()
	if err != nil {
		fmt.Fprintf(stdout, "%s: INVALID released: %s\n", name, err)
		return validInvalid
	}
	if v.strict {
		// STRICT-8 on the log in this library's form: the conversion
		// maps each released event to one event at the same index.
		events, err := convert.FromReleased(l.Header.ID, s.Events)
		if err == nil {
			_, err = session.Seed(events, session.WithStrict())
		}
		if err != nil {
			fmt.Fprintf(stdout, "%s: INVALID strict: %s\n", name, err)
			return validInvalid
		}
	}
	fmt.Fprintf(stdout, "%s: OK released format, %d events, %d surface nodes, %d messages%s\n", name, len(s.Events), len(s.Surface), len(s.Messages), note)
	return validOK
}
