// Command sessionconvert converts a session log between this library's
// vocabulary (the seed system at b736889ac7; a JSONL file of
// impl/persist) and the released seed system's (a JSONL or .jsonl.zstd
// file, or a session of a released SQLite database), REL-6 and REL-7:
//
//	sessionconvert -to released [-zstd] [-provider P -model M] IN.jsonl OUT
//	sessionconvert -to b736 [-session ID] [-drop-header-extras] IN OUT.jsonl
//	sessionconvert -from codex|claude-code IN OUT.jsonl
//
// -from imports another harness's session log (a Codex CLI rollout, a
// Claude Code transcript; spec/harnesses.md): the imported log must pass
// this library's strict rules (a line that breaks one is reported with
// its line); what the harness's own rules find is printed as notes, since
// the harness itself resumes such files (conformance validate --from
// reports them as findings).
//
// IN is read and never changed; OUT must not exist (nothing is
// overwritten). The converted log is checked by the rules of its
// vocabulary before it is written. An event that cannot be converted is
// reported with its code (convert.not_convertible) and seq.
//
// IN is checked by the rules of its own vocabulary first: an input that
// breaks one is INVALID with that rule's code (the input's fault), never
// convert.not_convertible. A torn last line of IN (a crash during a
// write) is not converted, and the report says so.
//
// Exit status (the same table as conformance validate, docs/cli.md): 0
// converted; 1 the input breaks a rule, is not a session log (an empty
// file included) or cannot be converted; 2 usage, or an input that cannot
// be read or an output that cannot be written.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/surfacelog/surface/impl/convert"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/released"
	"github.com/surfacelog/surface/impl/session"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("sessionconvert", flag.ContinueOnError)
	fl.SetOutput(stderr)
	to := fl.String("to", "", "the vocabulary to convert to: released or b736")
	zstd := fl.Bool("zstd", false, "-to released: write a .jsonl.zstd (checksummed zstd frames) instead of plain JSONL")
	provider := fl.String("provider", "", "-to released: provider to name on assistant messages without provenance")
	model := fl.String("model", "", "-to released: model to name on assistant messages without provenance")
	sessionID := fl.String("session", "", "-to b736 from a released SQLite database: the session to convert (default: its only one)")
	dropExtras := fl.Bool("drop-header-extras", false, "-to b736: drop the released header's origin, agentPreset and delegationDepth instead of refusing")
	from := fl.String("from", "", "import another harness's log into this library's vocabulary: codex or claude-code")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if *from != "" {
		return importCmd(*from, *to, fl.Args(), stdout, stderr)
	}
	if fl.NArg() != 2 || (*to != "released" && *to != "b736") {
		fmt.Fprintln(stderr, "usage: sessionconvert -to released|b736 [flags] IN OUT")
		fl.PrintDefaults()
		return 2
	}
	in, out := fl.Arg(0), fl.Arg(1)
	if _, err := os.Lstat(out); err == nil {
		fmt.Fprintf(stderr, "sessionconvert: %s exists; nothing is overwritten\n", out)
		return 2
	}
	opts := convert.Options{Provider: *provider, Model: *model, DropHeaderExtras: *dropExtras}
	var data []byte
	var n int
	var err error
	var torn int64
	if *to == "released" {
		data, n, torn, err = toReleased(in, opts, *zstd)
	} else {
		data, n, err = toB736(in, *sessionID, opts)
	}
	if err != nil {
		var bad inputError
		switch {
		case errors.As(err, &bad):
			fmt.Fprintf(stderr, "sessionconvert: %s: INVALID (the input breaks a rule; nothing was converted): %v\n", in, bad.err)
			return 1
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, event.CodePersistIO):
			fmt.Fprintf(stderr, "sessionconvert: %s: ERROR %v\n", in, err)
			return 2
		}
		if errors.Is(err, event.CodeConvertNotConvertible) {
			fmt.Fprintf(stderr, "sessionconvert: %s: CANNOT CONVERT %v\n", in, err)
		} else {
			fmt.Fprintf(stderr, "sessionconvert: %s: INVALID %v\n", in, err)
		}
		return 1
	}
	if err := writeNew(out, data); err != nil {
		fmt.Fprintf(stderr, "sessionconvert: %s: ERROR cannot write it: %v\n", out, bareCause(err))
		return 2
	}
	note := ""
	if torn > 0 {
		note = fmt.Sprintf(" (the input's torn last line of %d bytes, from a crash during a write, was not converted: no writer acknowledged it)", torn)
	}
	fmt.Fprintf(stdout, "%s: %d events converted to the %s vocabulary%s\n", out, n, *to, note)
	return 0
}

// inputError is an input that was read and breaks a rule of its own
// vocabulary: the input's fault, not the conversion's (exit status 1).
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }
func (e inputError) Unwrap() error { return e.err }

// bareCause is err without the name of a temporary file an
// *fs.PathError carries: the user named the output, not it.
func bareCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// toReleased reads a JSONL file of this library, checks it by this
// library's rules (a resume's: STORE-3, STORE-14), and returns the
// released file, its number of events and the length of a torn last line
// of the input, which is not converted.
func toReleased(in string, o convert.Options, compressed bool) ([]byte, int, int64, error) {
	h, events, torn, err := persist.ReadJSONL(in)
	if err != nil {
		return nil, 0, 0, err
	}
	if err := persist.CheckSeedLength(h, len(events)); err != nil {
		return nil, 0, 0, inputError{err}
	}
	if _, err := session.Seed(events); err != nil {
		return nil, 0, 0, inputError{err}
	}
	rel, err := convert.ToReleased(h.ID, events, o)
	if err != nil {
		return nil, 0, 0, err
	}
	data, err := released.Encode(convert.HeaderToReleased(h), [][]event.Event{rel}, compressed)
	return data, len(rel), torn, err
}

// toB736 reads a released file or database and returns this library's JSONL.
func toB736(in, sessionID string, o convert.Options) ([]byte, int, error) {
	raw, err := os.ReadFile(in)
	if err != nil {
		return nil, 0, err
	}
	var l *released.Log
	if released.IsSQLite(raw) {
		l, err = released.ReadSQLite(context.Background(), in, sessionID)
	} else {
		l, err = released.Read(raw)
	}
	if err != nil {
		return nil, 0, err
	}
	s, err := released.Check(l)
	if err != nil {
		return nil, 0, inputError{err}
	}
	h, err := convert.HeaderFromReleased(l.Header, o)
	if err != nil {
		return nil, 0, err
	}
	events, err := convert.FromReleased(h.ID, s.Events)
	if err != nil {
		return nil, 0, err
	}
	return encodeJSONL(h, events)
}

// encodeJSONL is a JSONL file of impl/persist (STORE-1): the header line,
// then one event per line.
func encodeJSONL(h persist.Header, events []event.Event) ([]byte, int, error) {
	head, err := json.Marshal(struct {
		Type string `json:"type"`
		persist.Header
	}{"session", h})
	if err != nil {
		return nil, 0, err
	}
	var b bytes.Buffer
	b.Write(head)
	b.WriteByte('\n')
	for i := range events {
		line, err := events[i].AppendJSON(nil)
		if err != nil {
			return nil, 0, err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes(), len(events), nil
}

// writeNew writes data to a new file at path, whole or not at all: a
// temporary file beside it, synced, then linked into place (failing if
// path appeared meanwhile).
func writeNew(path string, data []byte) error {
	tmp, err := os.CreateTemp(dirOf(path), ".sessionconvert-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Link(tmp.Name(), path)
}

func dirOf(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if os.IsPathSeparator(path[i]) {
			return path[:i+1]
		}
	}
	return "."
}
