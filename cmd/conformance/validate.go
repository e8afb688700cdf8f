package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/importer/harness"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/released"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/model"
)

// Exit status of validate (STORE-12).
const (
	validOK      = 0 // every log is valid
	validInvalid = 1 // a log breaks a rule or is not a session log (an empty file included)
	validInput   = 2 // usage or input error: missing file, unknown session, empty database
)

// validateCmd checks persisted logs, written by any implementation,
// against the spec: the file format (STORE-1, STORE-2, STORE-5, STORE-9)
// and every rule of every event, through the library's seed constructor,
// in one pass linear in the log's size (STORE-12). It never changes the
// files. With --model the model checks each log too (its rescans make it
// quadratic: for small logs) and must reach the same verdict.
type validateOptions struct {
	sessionID, progressMode, pgSchema, from *string
	withModel, strict                       *bool
}

func validateFlags(stderr io.Writer) (*flag.FlagSet, validateOptions) {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs, validateOptions{
		sessionID:    fs.String("session", "", "SQLite or Postgres: only this session (default: every session)"),
		pgSchema:     fs.String("pg-schema", "surface", "Postgres: the schema that holds the store's tables"),
		withModel:    fs.Bool("model", false, "also check each log with the model (quadratic: small logs only) and require the same verdict"),
		strict:       fs.Bool("strict", false, "also apply strict mode's rules (STRICT-2 to STRICT-8) to each log, as a resume with session.WithStrict() does; released logs are converted first"),
		progressMode: fs.String("progress", "auto", "progress bar on stderr: auto (on a terminal, for runs over a second), always, never"),
		from:         fs.String("from", "", "the files are another harness's session logs: codex (Codex CLI rollouts) or claude-code (Claude Code transcripts); checked by that harness's rules, imported, and the import checked by this library's strict rules (spec/harnesses.md)"),
	}
}

func validateCmd(args []string, stdout, stderr io.Writer) int {
	fs, o := validateFlags(stderr)
	sessionID, withModel, progressMode := o.sessionID, o.withModel, o.progressMode
	paths, code := parseInterleaved(fs, "validate", args, stderr)
	if code >= 0 {
		return code
	}
	pgSchema = *o.pgSchema
	if len(paths) == 0 {
		fs.Usage()
		return validInput
	}
	prog, err := newProgress(stderr, *progressMode)
	if err != nil {
		fmt.Fprintln(stderr, "conformance validate:", err)
		return validInput
	}
	v := &validator{sessionID: *sessionID, withModel: *withModel, strict: *o.strict, prog: prog, out: stdout}
	status := validOK
	if *o.from != "" {
		if !harness.Known(*o.from) {
			fmt.Fprintf(stderr, "conformance validate: --from %q: want codex or claude-code\n", *o.from)
			return validInput
		}
		for _, path := range paths {
			status = max(status, v.validateHarness(path, *o.from))
		}
		return status
	}
	for _, path := range paths {
		status = max(status, v.validatePath(path))
	}
	return status
}

// validator is one validate run: its options, its progress bar and where
// it reports.
type validator struct {
	sessionID string
	withModel bool // the model checks each log too
	strict    bool // the strict rules apply to each log (STRICT-8)
	prog      *progress
	out       io.Writer
}

// pgSchema is the --pg-schema of the run.
var pgSchema = "surface"

// validatePath checks one file (or Postgres database) and returns its exit
// status.
func (v *validator) validatePath(path string) int {
	sessionID, prog, stdout := v.sessionID, v.prog, v.out
	if strings.HasPrefix(path, "postgres://") || strings.HasPrefix(path, "postgresql://") {
		return v.validatePostgres(path)
	}
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(stdout, "%s: ERROR %v\n", path, err)
		return validInput
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		fmt.Fprintf(stdout, "%s: ERROR a directory, not a session file\n", path)
		return validInput
	}
	magic := make([]byte, 16)
	n, _ := io.ReadFull(f, magic)
	if n == 0 {
		f.Close()
		fmt.Fprintf(stdout, "%s: INVALID persist.not_a_session: the file is empty: a session log begins with its header line\n", path)
		return validInvalid
	}
	if bytes.Equal(magic[:n], []byte("SQLite format 3\x00")) {
		f.Close()
		if released.IsReleasedSQLite(context.Background(), path) {
			return v.validateReleasedSQLite(path)
		}
		return v.validateSQLite(path)
	}
	if releasedJSONL(path) {
		f.Close()
		if sessionID != "" {
			fmt.Fprintf(stdout, "%s: ERROR --session applies to databases; this is a JSONL file\n", path)
			return validInput
		}
		return v.validateReleasedFile(path)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		fmt.Fprintf(stdout, "%s: ERROR %v\n", path, err)
		return validInput
	}
	if sessionID != "" {
		f.Close()
		fmt.Fprintf(stdout, "%s: ERROR --session applies to SQLite databases; this is a JSONL file\n", path)
		return validInput
	}
	size := int64(-1)
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	prog.phase("reading "+path, size)
	h, log, torn, err := persist.DecodeJSONLLog(prog.reader(f), path, size)
	f.Close()
	if err == nil {
		err = persist.CheckSeedLength(h, log.Len())
	}
	if err != nil {
		fmt.Fprintf(stdout, "%s: INVALID %s\n", path, err)
		return exitFor(err)
	}
	note := ""
	if torn > 0 {
		note = fmt.Sprintf(" (a torn last line of %d bytes, from a crash during a write: the next writer copies it to %s and cuts it)", torn, persist.QuarantineName(path, size-torn))
	}
	// The decoder checked each event's data as it read it: SeedLog checks
	// every rule without scanning the data again, as Resume does.
	events := log.Events()
	status := v.checkLogWith(path, events, note, func(opts ...session.Option) (*session.Session, error) { return session.SeedLog(log, opts...) })
	if status != validOK {
		return status
	}
	return v.checkCheckpoint(path, events)
}

// checkCheckpoint checks the checkpoint beside a JSONL log, if any
// (STORE-18): one a resume would use must be true of the log.
func (v *validator) checkCheckpoint(path string, events []event.Event) int {
	c, err := persist.CheckJSONLCheckpoint(path, events)
	return v.reportCheckpoint(path, c, err)
}

// reportCheckpoint says what the check of a log's checkpoint found.
func (v *validator) reportCheckpoint(path string, c persist.CheckpointCheck, err error) int {
	switch {
	case err != nil:
		fmt.Fprintf(v.out, "%s: INVALID %s\n", path, err)
		return validInvalid
	case !c.Found:
	case c.Ignored != "":
		fmt.Fprintf(v.out, "%s: checkpoint ignored (a resume reads every event): %s\n", path, c.Ignored)
	default:
		fmt.Fprintf(v.out, "%s: checkpoint of %d events OK\n", path, c.Events)
	}
	return validOK
}

func (v *validator) validateSQLite(path string) int {
	stdout := v.out
	r, err := persist.OpenSQLiteReader(path)
	if err != nil {
		fmt.Fprintf(stdout, "%s: INVALID %s\n", path, err)
		return exitFor(err)
	}
	defer r.Close()
	ids, err := r.Sessions()
	if err != nil {
		fmt.Fprintf(stdout, "%s: INVALID %s\n", path, err)
		return exitFor(err)
	}
	if len(ids) == 0 {
		fmt.Fprintf(stdout, "%s: ERROR the database has no sessions\n", path)
		return validInput
	}
	return v.validateSessions(path, ids, func(id string) ([]event.Event, error) {
		events, err := r.Events(id)
		if err != nil {
			return nil, err
		}
		h, err := r.Header(id)
		if err != nil {
			return nil, err
		}
		return events, persist.CheckSeedLength(h, len(events))
	}, func(id string, events []event.Event) (persist.CheckpointCheck, error) {
		return r.Checkpoint(id, events)
	})
}

// validatePostgres checks the sessions of a Postgres store's database.
func (v *validator) validatePostgres(url string) int {
	stdout := v.out
	name := "postgres"
	ids, err := persist.PostgresSessions(url, persist.WithPostgresSchema(pgSchema))
	if err != nil {
		fmt.Fprintf(stdout, "%s: ERROR %s\n", name, err)
		return validInput
	}
	if len(ids) == 0 {
		fmt.Fprintf(stdout, "%s: ERROR the database has no sessions (in schema %q)\n", name, pgSchema)
		return validInput
	}
	return v.validateSessions(name, ids, func(id string) ([]event.Event, error) {
		return persist.ReadPostgres(url, id, persist.WithPostgresSchema(pgSchema))
	}, func(id string, events []event.Event) (persist.CheckpointCheck, error) {
		return persist.CheckPostgresCheckpoint(url, id, events, persist.WithPostgresSchema(pgSchema))
	})
}

// validateSessions checks the sessions ids of the database name, or only
// sessionID when it is set, reading each with read, and its checkpoint, if
// any, with checkpoint (STORE-18).
func (v *validator) validateSessions(name string, ids []string, read func(id string) ([]event.Event, error), checkpoint func(id string, events []event.Event) (persist.CheckpointCheck, error)) int {
	prog, stdout := v.prog, v.out
	return validateSessionsWith(name, ids, v.sessionID, func(id, label string) int {
		prog.phase("reading "+label, -1)
		events, err := read(id)
		if err != nil {
			fmt.Fprintf(stdout, "%s: INVALID %s\n", label, err)
			return exitFor(err)
		}
		if status := v.checkLog(label, events, ""); status != validOK {
			return status
		}
		c, err := checkpoint(id, events)
		return v.reportCheckpoint(label, c, err)
	}, stdout)
}

// validateSessionsWith checks the sessions ids of the database name, or
// only sessionID when it is set, each with check; the worst status wins.
func validateSessionsWith(name string, ids []string, sessionID string, check func(id, label string) int, stdout io.Writer) int {
	if sessionID != "" {
		if !slices.Contains(ids, sessionID) {
			fmt.Fprintf(stdout, "%s: ERROR no session %q in the database\n", name, sessionID)
			return validInput
		}
		ids = []string{sessionID}
	}
	status := validOK
	for _, id := range ids {
		status = max(status, check(id, fmt.Sprintf("%s session %q", name, id)))
	}
	return status
}

// checkLog seeds a session with the log (every rule, SURF-18), as a
// resume does, and reports whether repair would append closers.
func (v *validator) checkLog(name string, events []event.Event, note string) int {
	return v.checkLogWith(name, events, note, func(opts ...session.Option) (*session.Session, error) { return session.Seed(events, opts...) })
}

// checkLogWith is checkLog with the session built by seed (session.Seed of
// events, or session.SeedLog of the decoded log that holds them).
func (v *validator) checkLogWith(name string, events []event.Event, note string, seed func(...session.Option) (*session.Session, error)) int {
	prog, stdout := v.prog, v.out
	prog.phase("checking "+name, int64(len(events)))
	opts := []session.Option{session.WithSeedProgress(func(done, _ int) { prog.set(int64(done)) })}
	if v.strict {
		opts = append(opts, session.WithStrict())
	}
	s, err := seed(opts...)
	prog.finish()
	if v.withModel {
		if d := modelDisagrees(events, err, v.strict); d != "" {
			fmt.Fprintf(stdout, "%s: DISAGREE %s\n", name, d)
			return validInvalid
		}
	}
	if err != nil {
		fmt.Fprintf(stdout, "%s: INVALID %s\n", name, err)
		return validInvalid
	}
	open := ""
	if closers, err := s.Repair(context.Background()); err != nil {
		fmt.Fprintf(stdout, "%s: INVALID repair fails: %s\n", name, err)
		return validInvalid
	} else if len(closers) > 0 {
		open = fmt.Sprintf(" (%s: resume will append %d closers)", whatIsOpen(closers), len(closers))
	}
	fmt.Fprintf(stdout, "%s: OK %d events, %d surface nodes, %d messages%s%s\n", name, len(events), s.Surface().Len(), s.Messages().Len(), open, note)
	return validOK
}

// whatIsOpen names what a repair's closers close (REP-6): the last turn,
// an open compaction, or both.
func whatIsOpen(closers []event.Event) string {
	turn, compaction := false, false
	for _, c := range closers {
		switch c.Type {
		case event.TypeCompactEnd, event.TypeCompactionEnd:
			compaction = true
		default:
			turn = true
		}
	}
	switch {
	case turn && compaction:
		return "last turn and a compaction open"
	case compaction:
		return "a compaction open"
	}
	return "last turn open"
}

// modelDisagrees returns why the model's verdict on events differs from
// the library's (err), or "".
func modelDisagrees(events []event.Event, err error, strict bool) string {
	var opts []model.Option
	if strict {
		opts = append(opts, model.WithStrict())
	}
	_, merr := model.SeedSession(events, func() int64 { return 0 }, opts...)
	if event.CodeOf(merr) != event.CodeOf(err) {
		return fmt.Sprintf("the library says %q, the model %q", event.CodeOf(err), event.CodeOf(merr))
	}
	return ""
}

// exitFor maps a read error to an exit status: a file that cannot be
// read at all is an input error; anything else is an invalid log.
func exitFor(err error) int {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, event.CodePersistIO) {
		return validInput
	}
	return validInvalid
}
