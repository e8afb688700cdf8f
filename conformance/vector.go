package conformance

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
)

// Tiers of a vector.
const (
	TierRequired    = "required"
	TierRecommended = "recommended"
)

// Features a testee may support. Every testee supports FeatureCore.
const (
	FeatureCore    = "core"    // append, seed, fork, provenance
	FeatureRepair  = "repair"  // the repair step (REP-*)
	FeaturePersist = "persist" // the crash_reopen step (STORE-*)
	// FeatureCompaction is the compaction steps (COMP-*): compact_begin,
	// compact_commit, compact_abort, prune, compact_select and balance.
	FeatureCompaction = "compaction"
	// FeatureStrict is the strict step: strict mode (STRICT-*).
	FeatureStrict = "strict"
	// FeatureStore is the store steps (STORE-*): store_open hands the
	// testee the bytes of a session file to open and resume, store_file
	// asks for what the file holds now.
	FeatureStore = "store"
)

// Vector is one conformance test: a sequence of steps, each with its
// expected result (spec/schemas/vector.schema.json).
type Vector struct {
	ID       string   `json:"id"`
	Tier     string   `json:"tier"`
	Rules    []string `json:"rules"`
	Features []string `json:"features"`
	// Differences are the rows of spec/DIFFERENCES.md the vector shows:
	// where the seed system, as a testee, is expected to fail it.
	Differences []string `json:"differences,omitempty"`
	Description string   `json:"description,omitempty"`
	Steps       []Step   `json:"steps"`
}

// Step is one operation of a vector, and (in a vector) its expectation.
type Step struct {
	// Op is append, seed, fork, provenance, repair or crash_reopen.
	Op string `json:"op"`
	// append: a candidate event of Type at Time, its data as exact text
	// (DataText, or DataBase64 when it is not UTF-8), and its markers as
	// they would appear on the wire (absent when nil).
	Type            *string         `json:"type,omitempty"`
	Time            *int64          `json:"time,omitempty"`
	DataText        *string         `json:"dataText,omitempty"`
	DataBase64      []byte          `json:"dataBase64,omitempty"`
	SurfaceOp       json.RawMessage `json:"surfaceOp,omitempty"`
	SourceEventSeqs json.RawMessage `json:"sourceEventSeqs,omitempty"`
	// Ignorable is the append's envelope member "ignorable": true.
	Ignorable bool `json:"ignorable,omitempty"`
	// seed: the log, one wire-form event per line (lines may be broken).
	Lines *[]string `json:"lines,omitempty"`
	// register: the log-only types the session knows besides the catalog
	// (SURF-3); only as the first step of a vector.
	Types []TypeDef `json:"types,omitempty"`
	// compact_begin: the range (node seqs), Snap to shrink it to balanced
	// cuts, and the records' vocabulary ("compact", the default, or
	// "compaction").
	Start      *int64 `json:"start,omitempty"`
	End        *int64 `json:"end,omitempty"`
	Snap       bool   `json:"snap,omitempty"`
	Vocabulary string `json:"vocabulary,omitempty"`
	// Concurrent allows appends between a compact/* compaction's begin
	// and its commit (an option of this library: the seed system's commit
	// is then refused, COMP-5).
	Concurrent bool `json:"concurrent,omitempty"`
	// Opaque says the summariser handles providers' opaque items
	// (compact_begin), or lets a selection fold them (compact_select):
	// PROV-4.
	Opaque bool `json:"opaque,omitempty"`
	// compact_commit: the summary blocks and the summariser.
	Summary   []json.RawMessage `json:"summary,omitzero"` // an empty list is sent: COMP-9 refuses it
	Provider  *string           `json:"provider,omitempty"`
	Model     *string           `json:"model,omitempty"`
	MaxTokens *int64            `json:"maxTokens,omitempty"`
	// Plain commits the summary unframed and without the size check
	// (COMP-11: an option of this library, not the seed system's).
	Plain bool `json:"plain,omitempty"`
	// compact_abort: the reason.
	Reason *string `json:"reason,omitempty"`
	// prune: the node (Seq) and its new content.
	Content []json.RawMessage `json:"content,omitempty"`
	// compact_select: keep the last KeepLast nodes, or a tail of at least
	// KeepTokens estimated tokens.
	KeepLast   *int `json:"keepLast,omitempty"`
	KeepTokens *int `json:"keepTokens,omitempty"`
	// balance: the cut after node Seq (else the cut before it).
	After bool `json:"after,omitempty"`
	// fork: the boundary; Continue makes the rest of the vector run on the
	// child.
	Boundary *int64 `json:"boundary,omitempty"`
	Continue bool   `json:"continue,omitempty"`
	// provenance, prune, balance: the seq asked about.
	Seq *int64 `json:"seq,omitempty"`
	// store_open: the store's Format ("jsonl"), the bytes of its file
	// (File; nil: no file, a new store), files to put beside it first
	// (Beside: a suffix of the file's name, such as ".torn-57", and the
	// bytes), and the header the testee opens it with (ID, CreatedAt).
	Format    string            `json:"format,omitempty"`
	File      *[]byte           `json:"fileBase64,omitempty"`
	Beside    map[string][]byte `json:"beside,omitempty"`
	ID        *string           `json:"id,omitempty"`
	CreatedAt *int64            `json:"createdAt,omitempty"`
	// store_open of format "sqlite" in a vector: the SQL statements that
	// make the database; the runner runs them on an empty database and
	// sends its bytes as File (Step.Prepared).
	SQL []string `json:"sql,omitempty"`
	// store_file: Exact asks for the file's bytes as well.
	Exact bool `json:"exact,omitempty"`
	// Expect is the expected result.
	Expect *Result `json:"expect,omitempty"`
}

// Result is the outcome of a step: an error code, or what the step
// produced and the state after it.
type Result struct {
	Error string `json:"error,omitempty"`
	// Index is, for a rejected seed, the index of the first bad event or
	// line (SURF-18).
	Index *int `json:"index,omitempty"`
	// Event is the appended event in wire form (append).
	Event json.RawMessage `json:"event,omitempty"`
	// Seqs is the provenance (provenance).
	Seqs *[]int64 `json:"seqs,omitempty"`
	// Closers are the repair closers in wire form (repair, crash_reopen).
	Closers *[]json.RawMessage `json:"closers,omitempty"`
	// Events are the events a compaction step appended, in wire form.
	Events *[]json.RawMessage `json:"events,omitempty"`
	// Range is what compact_select proposed.
	Range *Range `json:"range,omitempty"`
	// Balanced and OnSurface are what balance found.
	Balanced  *bool `json:"balanced,omitempty"`
	OnSurface *bool `json:"onSurface,omitempty"`
	// Report is what store_open loaded (STORE-2, STORE-8).
	Report *StoreReport `json:"report,omitempty"`
	// File is what the store's file holds (store_file).
	File *StoreFile `json:"file,omitempty"`
	// Surface and Messages are the state after a step that changed it.
	Surface  *[]int64        `json:"surface,omitempty"`
	Messages json.RawMessage `json:"messages,omitempty"`
}

// StoreReport is what a store_open loaded: the number of events, and the
// length of a torn last line (STORE-2) with the suffix of the file it was
// copied to (STORE-8, "" when there was none).
type StoreReport struct {
	Events     int    `json:"events"`
	TornBytes  int    `json:"tornBytes"`
	Quarantine string `json:"quarantine"`
}

// StoreFile is what a session file holds: each complete line as a JSON
// value (compared by value, so a writer may order members its own way;
// absent when a complete line is not JSON text), the bytes after the last
// newline, the files beside it whose names are the file's name and
// ".torn-..." (by suffix), and, when the step asked for them, all its
// bytes.
type StoreFile struct {
	Lines  *[]json.RawMessage `json:"lines,omitempty"`
	Tail   []byte             `json:"tailBase64,omitempty"`
	Beside map[string][]byte  `json:"beside"`
	Bytes  []byte             `json:"bytesBase64,omitempty"`
	// A SQLite database's tables (sorted) and user_version; its lines are
	// the session's events in wire form, read from the rows.
	Tables      []string `json:"tables,omitempty"`
	UserVersion *int64   `json:"userVersion,omitempty"`
}

// Range is a compaction range: its first and last node.
type Range struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

// TypeDef is a registered log-only event type (SURF-3).
type TypeDef struct {
	Type   string     `json:"type"`
	Fields []FieldDef `json:"fields,omitempty"`
}

// FieldDef is a data field of a registered type (SURF-5).
type FieldDef struct {
	Name     string   `json:"name"`
	Kind     string   `json:"kind"`
	Required bool     `json:"required,omitempty"`
	Nullable bool     `json:"nullable,omitempty"`
	Enum     []string `json:"enum,omitempty"`
}

// Feature returns the feature a step needs.
func (s Step) Feature() string {
	switch s.Op {
	case "repair":
		return FeatureRepair
	case "crash_reopen":
		return FeaturePersist
	case "compact_begin", "compact_commit", "compact_abort", "prune", "compact_select", "balance":
		return FeatureCompaction
	case "strict":
		return FeatureStrict
	case "store_open", "store_file":
		return FeatureStore
	case "released_open":
		return FeatureReleased
	}
	return FeatureCore
}

//go:embed vectors/*.json
var embedded embed.FS

// Embedded returns the vectors shipped with this package, sorted by id.
func Embedded() ([]Vector, error) {
	var all []Vector
	err := fs.WalkDir(embedded, "vectors", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := embedded.ReadFile(path)
		if err != nil {
			return err
		}
		vs, err := Parse(b)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		all = append(all, vs...)
		return nil
	})
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	return all, err
}

// File is the form of a vector file.
type File struct {
	Comment string   `json:"$comment,omitempty"`
	Vectors []Vector `json:"vectors"`
}

// Parse reads a vector file.
func Parse(b []byte) ([]Vector, error) {
	var f File
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	return f.Vectors, nil
}

// Filter selects vectors by id prefix, tier, rule, id set and the
// features a testee has.
type Filter struct {
	Prefix   string
	Tier     string
	Rule     string          // only vectors that cover this rule (e.g. SURF-13)
	IDs      map[string]bool // only these vectors (nil: all), e.g. the failures of an earlier report
	Features []string        // nil: all
}

// Match reports whether v passes the filter.
func (f Filter) Match(v Vector) bool {
	if f.Prefix != "" && !strings.HasPrefix(v.ID, f.Prefix) {
		return false
	}
	if f.Tier != "" && v.Tier != f.Tier {
		return false
	}
	if f.Rule != "" && !slices.Contains(v.Rules, f.Rule) {
		return false
	}
	if f.IDs != nil && !f.IDs[v.ID] {
		return false
	}
	return true
}

// narrowed reports whether the filter selects a subset of the vectors.
func (f Filter) narrowed() bool {
	return f.Prefix != "" || f.Tier != "" || f.Rule != "" || f.IDs != nil
}
