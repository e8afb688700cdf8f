package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/surfacelog/surface/conformance"
)

// --- stores (STORE-*): session files handed to the testee (FeatureStore) ---

// stores returns the vectors of the store steps: JSONL files, well formed
// and not, opened, resumed and written through.
func stores() []conformance.Vector {
	const created = int64(1767225600000)
	header := func(rest string) string {
		return `{"type":"session","version":0,"id":"s1","createdAt":1767225600000` + rest + `}`
	}
	line := func(seq int, t, data, rest string) string {
		return fmt.Sprintf(`{"type":%q,"seq":%d,"time":1,"data":%s%s}`, t, seq, data, rest)
	}
	u := func(seq int) string { return line(seq, "user/message", user, `,"surfaceOp":"append"`) }
	file := func(lines ...string) *[]byte { // complete lines
		b := []byte(strings.Join(lines, "\n") + "\n")
		return &b
	}
	raw := func(text string) *[]byte {
		b := []byte(text)
		return &b
	}
	s1 := "s1"
	openAs := func(id string, f *[]byte, beside map[string][]byte) conformance.Step {
		return conformance.Step{Op: "store_open", Format: "jsonl", File: f, Beside: beside, ID: &id, CreatedAt: ptr(created)}
	}
	open := func(f *[]byte) conformance.Step { return openAs(s1, f, nil) }
	show := conformance.Step{Op: "store_file"}
	exact := conformance.Step{Op: "store_file", Exact: true}
	userType, tm, userData := "user/message", int64(conformance.BaseTime), user
	appendUser := conformance.Step{Op: "append", Type: &userType, Time: &tm, DataText: &userData, SurfaceOp: []byte(`"append"`)}
	torn := `{"type":"user/message","seq":2,"ti`
	good := header("") + "\n" + u(0) + "\n" + u(1) + "\n"
	tornAt := fmt.Sprintf(".torn-%d", len(good))
	turn := []string{header(""), line(0, "turn/start", turnStart, ""), u(1),
		line(2, "assistant/message", `{"turn":1,"step":1,"content":[{"type":"tool-call","id":"c1","name":"read","arguments":{}}]}`, `,"surfaceOp":"append"`),
		line(3, "tool/call", `{"turn":1,"step":1,"callId":"c1","name":"read","arguments":"{}"}`, "")}
	// A log of two closed turns, the first holding a replace, and the
	// checkpoints this library's store keeps of it (STORE-18): of a
	// prefix, of every event, one damaged, one of a longer log.
	turnN := func(data string, n int) string {
		return strings.Replace(data, `"turn":1`, fmt.Sprintf(`"turn":%d`, n), 1)
	}
	closed := []string{header(""), line(0, "turn/start", turnStart, ""), u(1), u(2), u(3),
		line(4, "user/message", user, `,"surfaceOp":{"op":"replace","start":1,"end":3},"sourceEventSeqs":[1,2,3]`),
		line(5, "turn/end", turnEnd, ""), line(6, "turn/start", turnN(turnStart, 2), ""), u(7), u(8), line(9, "turn/end", turnN(turnEnd, 2), "")}
	ofAll := checkpointOf(closed, 10)
	checkpoints := map[string][]byte{
		"prefix":  checkpointOf(closed, 6),
		"all":     ofAll,
		"damaged": []byte(strings.Replace(string(ofAll), `"events":10`, `"events":9`, 1)),
		"ahead":   checkpointOf(append(slices.Clone(closed), u(10), line(11, "turn/start", turnN(turnStart, 3), ""), line(12, "turn/end", turnN(turnEnd, 3), "")), 13),
	}
	withCheckpoint := func(which string) conformance.Step {
		return openAs(s1, file(closed...), map[string][]byte{".checkpoint": checkpoints[which]})
	}
	deep := `{"todos":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`
	cases := []struct {
		name  string
		desc  string
		steps []conformance.Step
		rules []string
	}{
		{"new_file", "STORE-1: with no file, the store writes a session header and then each event on a line of its own", []conformance.Step{
			open(nil), appendUser, show}, []string{"STORE-1"}},
		{"resume_repairs", "STORE-3, STORE-7: resuming a file whose last turn is open loads it as a seed and appends the closers through the store, before any later append", []conformance.Step{
			open(file(turn...)), show, appendUser, show}, []string{"STORE-3", "STORE-7"}},
		{"torn_no_newline", "STORE-2 (a), STORE-8: a last line without its newline is a torn tail: reported, copied to NAME.torn-OFFSET, and cut off before the next append", []conformance.Step{
			open(raw(good + torn)), appendUser, show}, []string{"STORE-2", "STORE-8"}},
		{"torn_not_json", "STORE-2 (b): a complete last line that is not JSON text (NUL bytes a crash left) is a torn tail too", []conformance.Step{
			open(raw(good + "\x00\x00\x00\x00\n")), appendUser, show}, []string{"STORE-2", "STORE-8"}},
		{"torn_name_taken", "STORE-8: the quarantine never overwrites: a NAME.torn-OFFSET holding other bytes is left alone and .2 is taken; one holding the same bytes (the same torn tail, opened again) is reused", []conformance.Step{
			openAs(s1, raw(good+torn), map[string][]byte{tornAt: []byte("other bytes")}), appendUser, show,
			openAs(s1, raw(good+torn), map[string][]byte{tornAt: []byte(torn)}), appendUser, show}, []string{"STORE-8"}},
		{"complete_last_line_breaks_a_rule", "STORE-2: a complete last line that is JSON but not an event (an unknown envelope member), of an unknown type, or whose data is nested too deep is not torn: refused with its rule's code at its index, and the file is left as it was", []conformance.Step{
			open(file(header(""), u(0), line(1, "user/message", user, `,"surfaceOp":"append","extra":1`))), exact,
			open(file(header(""), u(0), line(1, "x/unknown", `{}`, ""))), exact,
			open(file(header(""), u(0), line(1, "todo/write", deep, "")))}, []string{"STORE-2", "STORE-3"}},
		{"corrupt_middle_line", "STORE-2: a line other than the last that is not JSON is persist.corrupt; one that is JSON but not an event is event.invalid_envelope at its index; nothing is skipped or cut", []conformance.Step{
			open(file(header(""), u(0), "not json", u(2))), exact,
			open(file(header(""), u(0), "[1]", u(2))), exact}, []string{"STORE-2"}},
		{"rule_broken", "STORE-3: a stored log that breaks a rule of the surface is refused with that rule's code, and no session is made", []conformance.Step{
			open(file(header(""), u(0), u(2))), exact,
			open(file(header(""), u(0), line(1, "user/message", user, `,"surfaceOp":{"op":"replace","start":5,"end":5},"sourceEventSeqs":[5]`)))}, []string{"STORE-3"}},
		{"format_version", "STORE-1: the header's version must be the number 0 as JSON.parse reads it: 1, -1, 0.5 and 1e-400's neighbour 1e-300 are persist.format_version and the file is left as it was; 0.0, 0e0 and -0 are 0 and load", []conformance.Step{
			open(file(strings.Replace(header(""), `"version":0`, `"version":1`, 1), u(0))), exact,
			open(file(strings.Replace(header(""), `"version":0`, `"version":-1`, 1))),
			open(file(strings.Replace(header(""), `"version":0`, `"version":0.5`, 1))),
			open(file(strings.Replace(header(""), `"version":0`, `"version":1e-300`, 1))),
			open(file(strings.Replace(header(""), `"version":0`, `"version":0.0`, 1), u(0))),
			open(file(strings.Replace(header(""), `"version":0`, `"version":0e0`, 1), u(0))),
			open(file(strings.Replace(header(""), `"version":0`, `"version":-0`, 1), u(0))), appendUser, show}, []string{"STORE-1"}},
		{"not_a_session", "STORE-1, STORE-9: an empty file, a first line without its newline, a first line that is not a session header, or a header whose version is not a JSON number (the string \"0\", null, true, an object) is persist.not_a_session, and the file is left byte for byte", []conformance.Step{
			open(raw("")), exact,
			open(raw(header(""))), exact,
			open(file(`{"hello":"world"}`, u(0))), exact,
			open(file(strings.Replace(header(""), `"version":0`, `"version":"0"`, 1))), exact,
			open(file(strings.Replace(header(""), `"version":0`, `"version":null`, 1))), exact,
			open(file(strings.Replace(header(""), `"version":0`, `"version":true`, 1))), exact,
			open(file(strings.Replace(header(""), `"version":0`, `"version":{"v":0}`, 1))), exact}, []string{"STORE-1", "STORE-9"}},
		{"wrong_session", "STORE-15: opening a file with the header of another session is persist.wrong_session, and nothing is written beside it either (its torn tail is not quarantined)", []conformance.Step{
			openAs("s2", raw(good+torn), nil), exact}, []string{"STORE-15", "STORE-8"}},
		{"header_invalid", "STORE-15: a store is opened with a header whose id is a non-empty string", []conformance.Step{
			openAs("", file(header("")), nil)}, []string{"STORE-15"}},
		{"fork_incomplete", "STORE-14: a fork child holding fewer events than its header's seedLength promises is persist.fork_incomplete; one holding them all loads", []conformance.Step{
			open(file(header(`,"parentSession":"p","seedLength":3`), u(0), u(1))), exact,
			open(file(header(`,"parentSession":"p","seedLength":2`), u(0), u(1))), appendUser, show}, []string{"STORE-14"}},
		{"ignorable_round_trip", "STORE-1, SURF-3: an event of an unknown type marked ignorable loads from a file and stays in it as written", []conformance.Step{
			open(file(header(""), u(0), line(1, "x/audit", `{"who":"ann","n":1.50}`, `,"ignorable":true`))), appendUser, show}, []string{"STORE-1", "SURF-3"}},
		{"invalid_utf8", "SURF-1, SURF-4, SURF-18: in a stored line, a byte that is not UTF-8 inside data is event.data_not_json; inside the type string it reads as U+FFFD, so the type is unknown (event.unknown_type); the file is left as it was", []conformance.Step{
			open(raw(header("") + "\n" + u(0) + "\n" + `{"type":"todo/write","seq":1,"time":1,"data":{"todos":["a` + "\xff" + `b"]}}` + "\n")), exact,
			open(raw(header("") + "\n" + u(0) + "\n" + `{"type":"todo/wr` + "\xff" + `ite","seq":1,"time":1,"data":{"todos":[]}}` + "\n")), exact}, []string{"SURF-1", "SURF-4", "SURF-18"}},
		{"registered_type", "SURF-3: the types a program registered are known when it opens a store", []conformance.Step{
			{Op: "register", Types: []conformance.TypeDef{{Type: "app/note"}}}, open(file(header(""), line(0, "app/note", `{"text":"kept"}`, ""))), show}, []string{"SURF-3"}},
		{"checkpoint_beside", "STORE-18: a file opened with a checkpoint beside it (PATH.checkpoint) is the same log as without one, whether the checkpoint is true (of a prefix with a replace in it, or of every event), damaged, or of a longer log than the file: the same report, surface, messages and appends; a reader may ignore it, and one that uses it gives what a replay gives", []conformance.Step{
			withCheckpoint("prefix"), show, appendUser, show,
			withCheckpoint("all"), appendUser, show,
			withCheckpoint("damaged"), appendUser, show,
			withCheckpoint("ahead"), appendUser, show}, []string{"STORE-18"}},
	}
	var out []conformance.Vector
	for _, c := range cases {
		out = append(out, vector("persist.store.jsonl."+c.name+".001", conformance.TierRequired, c.desc, c.steps, c.rules...))
	}
	return append(out, sqliteStores()...)
}

// sqliteStores returns the vectors of SQLite session databases (STORE-5,
// STORE-9, STORE-14, STORE-15), each database given as the SQL that makes
// it (the runner builds it). Recommended: a store in SQLite is optional.
func sqliteStores() []conformance.Vector {
	const created = int64(1767225600000)
	tables := []string{
		`CREATE TABLE sessions (id TEXT PRIMARY KEY, version INTEGER NOT NULL, created_at INTEGER NOT NULL, cwd TEXT, parent_session TEXT, seed_length INTEGER) STRICT`,
		`CREATE TABLE events (session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, seq INTEGER NOT NULL, type TEXT NOT NULL, time INTEGER NOT NULL, data TEXT NOT NULL, source_event_seqs TEXT, surface_op TEXT, PRIMARY KEY (session_id, seq)) STRICT`,
	}
	envelope := `CREATE TABLE event_envelope (session_id TEXT NOT NULL, seq INTEGER NOT NULL, ignorable INTEGER NOT NULL, PRIMARY KEY (session_id, seq), FOREIGN KEY (session_id, seq) REFERENCES events(session_id, seq) ON DELETE CASCADE) STRICT`
	db := func(version int, more ...string) []string {
		out := append([]string{}, tables...)
		out = append(out, fmt.Sprintf("PRAGMA user_version=%d", version))
		return append(out, more...)
	}
	session := func(id, seedLength string) string {
		return fmt.Sprintf(`INSERT INTO sessions VALUES ('%s', 0, 1767225600000, NULL, %s, %s)`, id, map[bool]string{true: "'p'", false: "NULL"}[seedLength != "NULL"], seedLength)
	}
	row := func(id string, seq int, t, data, sources, op string) string {
		q := func(v string) string {
			if v == "" {
				return "NULL"
			}
			return "'" + strings.ReplaceAll(v, "'", "''") + "'"
		}
		return fmt.Sprintf(`INSERT INTO events VALUES ('%s', %d, '%s', 1, %s, %s, %s)`, id, seq, t, q(data), q(sources), q(op))
	}
	userRow := func(id string, seq int) string { return row(id, seq, "user/message", user, "", `"append"`) }
	openAs := func(id string, stmts []string, file *[]byte) conformance.Step {
		return conformance.Step{Op: "store_open", Format: "sqlite", SQL: stmts, File: file, ID: &id, CreatedAt: ptr(created)}
	}
	open := func(stmts []string) conformance.Step { return openAs("s1", stmts, nil) }
	show := conformance.Step{Op: "store_file"}
	exact := conformance.Step{Op: "store_file", Exact: true}
	tm := int64(conformance.BaseTime)
	appendOf := func(t, data string, op string, ignorable bool) conformance.Step {
		st := conformance.Step{Op: "append", Type: &t, Time: &tm, DataText: &data, Ignorable: ignorable}
		if op != "" {
			st.SurfaceOp = []byte(op)
		}
		return st
	}
	empty := []byte{}
	text := []byte("not a database\n")
	cpSchema, cpState := sqliteCheckpoint(2)
	cpRow := func(id, state string) string {
		return fmt.Sprintf(`INSERT INTO checkpoints VALUES ('%s', '%s')`, id, strings.ReplaceAll(state, "'", "''"))
	}
	cases := []struct {
		name  string
		desc  string
		steps []conformance.Step
		rules []string
	}{
		{"new_database", "STORE-5: a missing file is a new database with the seed system's two tables and user_version 4; the table event_envelope appears with the first ignorable event", []conformance.Step{
			openAs("s1", nil, nil), appendOf("user/message", user, `"append"`, false), show, appendOf("x/audit", `{"who":"ann"}`, "", true), show}, []string{"STORE-5"}},
		{"zero_length_file", "STORE-5, STORE-9: a zero-length file is a new database too", []conformance.Step{
			openAs("s1", nil, &empty), show}, []string{"STORE-5", "STORE-9"}},
		{"loads", "STORE-3, STORE-5: a database the seed system's schema holds loads, an ignorable event flagged in event_envelope included", []conformance.Step{
			open(db(4, envelope, session("s1", "NULL"), userRow("s1", 0), row("s1", 1, "x/audit", `{"who":"ann"}`, "", ""), `INSERT INTO event_envelope VALUES ('s1', 1, 1)`, userRow("s1", 2))), show}, []string{"STORE-3", "STORE-5"}},
		{"two_sessions", "STORE-15: a database holds many sessions and the header's id chooses one: opening s1 reads none of s2's events, and a session it does not hold is new", []conformance.Step{
			open(db(4, session("s2", "NULL"), userRow("s2", 0), userRow("s2", 1))), appendOf("user/message", user, `"append"`, false), show}, []string{"STORE-15"}},
		{"resume_repairs", "STORE-7: resuming a database whose last turn is open appends the closers through the store", []conformance.Step{
			open(db(4, session("s1", "NULL"), row("s1", 0, "turn/start", turnStart, "", ""), userRow("s1", 1),
				row("s1", 2, "assistant/message", `{"turn":1,"step":1,"content":[{"type":"tool-call","id":"c1","name":"read","arguments":{}}]}`, "", `"append"`))), show}, []string{"STORE-7"}},
		{"schema_version", "STORE-5: a database with the session tables and a user_version other than 4 (3, 5, -1) is persist.schema_version, left as it was", []conformance.Step{
			open(db(3, session("s1", "NULL"))), exact, open(db(5)), exact, open(db(-1)), exact}, []string{"STORE-5"}},
		{"not_a_session", "STORE-9: a database without the session tables, and a file that is not a SQLite database, are persist.not_a_session, left as they were", []conformance.Step{
			open([]string{`CREATE TABLE notes (x TEXT)`, `INSERT INTO notes VALUES ('mine')`}), exact, openAs("s1", nil, &text), exact}, []string{"STORE-9"}},
		{"fork_incomplete", "STORE-14: a fork child holding fewer events than its seed_length is persist.fork_incomplete", []conformance.Step{
			open(db(4, session("s1", "3"), userRow("s1", 0), userRow("s1", 1)))}, []string{"STORE-14"}},
		{"header_invalid", "STORE-15: a store is opened with a header whose id is a non-empty string", []conformance.Step{
			openAs("", db(4), nil)}, []string{"STORE-15"}},
		{"checkpoint_table", "STORE-18: a database holding this library's checkpoints table beside the seed system's (a true checkpoint of the session's first two events, and one of another session) loads as the same log without it, and the table is left as it is: a reader may ignore it", []conformance.Step{
			open(db(4, cpSchema, session("s1", "NULL"), userRow("s1", 0), userRow("s1", 1), userRow("s1", 2), cpRow("s1", cpState), cpRow("s2", cpState))), show,
			appendOf("user/message", user, `"append"`, false), show}, []string{"STORE-5", "STORE-18"}},
	}
	var out []conformance.Vector
	for _, c := range cases {
		out = append(out, vector("persist.store.sqlite."+c.name+".001", conformance.TierRecommended, c.desc, c.steps, c.rules...))
	}
	return out
}

func ptr[T any](v T) *T { return &v }
