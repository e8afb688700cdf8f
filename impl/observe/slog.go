package observe

import (
	"context"
	"log/slog"
)

// Logger returns an Observer that writes each record to l: appends and
// store writes at debug level, compactions, prunes, repairs, resumes and
// forks at info, and any of them that failed at warn. A record whose level
// l does not enable costs one Enabled call.
func Logger(l *slog.Logger) Observer { return logger{l} }

type logger struct{ l *slog.Logger }

// log writes one record; its caller has checked enabled already.
func (g logger) log(ctx context.Context, level slog.Level, err error, msg string, attrs ...slog.Attr) {
	if err != nil {
		level = slog.LevelWarn
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	g.l.LogAttrs(ctx, level, msg, attrs...)
}

func (g logger) enabled(ctx context.Context, err error, level slog.Level) bool {
	if err != nil {
		level = slog.LevelWarn
	}
	return g.l.Enabled(ctx, level)
}

func (g logger) Append(ctx context.Context, r Append) {
	if r.Replaced && g.enabled(ctx, nil, slog.LevelInfo) {
		// Cache churn: the prompt changed before its tail.
		g.log(ctx, slog.LevelInfo, nil, "surface prompt changed before its tail",
			slog.String("type", string(r.Type)), slog.Int64("seq", r.Seq), slog.Int("from_position", r.ReplacedAt), slog.Int64("from_seq", r.ReplacedSeq))
	}
	if !g.enabled(ctx, r.Err, slog.LevelDebug) {
		return
	}
	g.log(ctx, slog.LevelDebug, r.Err, "surface append",
		slog.String("type", string(r.Type)), slog.Int64("seq", r.Seq), slog.Int("events", r.Events),
		slog.Duration("duration", r.Duration), slog.Duration("lock_wait", r.LockWait), slog.Duration("write", r.Write))
}

func (g logger) StoreWrite(ctx context.Context, r StoreWrite) {
	if !g.enabled(ctx, r.Err, slog.LevelDebug) {
		return
	}
	g.log(ctx, slog.LevelDebug, r.Err, "surface store write",
		slog.String("store", r.Store), slog.Int64("seq", r.Seq), slog.Int("events", r.Events),
		slog.Bool("synced", r.Synced), slog.Duration("sync", r.Sync), slog.Duration("duration", r.Duration))
}

func (g logger) Compaction(ctx context.Context, r Compaction) {
	if !g.enabled(ctx, r.Err, slog.LevelInfo) {
		return
	}
	g.log(ctx, slog.LevelInfo, r.Err, "surface compaction",
		slog.String("outcome", r.Outcome), slog.Int64("start_seq", r.StartSeq), slog.Int("nodes", r.Nodes),
		slog.Int("tokens_before", r.TokensBefore), slog.Int("tokens_after", r.TokensAfter),
		slog.Duration("duration", r.Duration), slog.Duration("lock_wait", r.LockWait))
}

func (g logger) Prune(ctx context.Context, r Prune) {
	if !g.enabled(ctx, r.Err, slog.LevelInfo) {
		return
	}
	g.log(ctx, slog.LevelInfo, r.Err, "surface prune",
		slog.Int64("seq", r.Seq), slog.Int("tokens_before", r.TokensBefore), slog.Int("tokens_after", r.TokensAfter),
		slog.Duration("duration", r.Duration))
}

func (g logger) Repair(ctx context.Context, r Repair) {
	if !g.enabled(ctx, r.Err, slog.LevelInfo) {
		return
	}
	g.log(ctx, slog.LevelInfo, r.Err, "surface repair", slog.Int("closers", r.Closers), slog.Duration("duration", r.Duration))
}

func (g logger) Resume(ctx context.Context, r Resume) {
	if !g.enabled(ctx, r.Err, slog.LevelInfo) {
		return
	}
	g.log(ctx, slog.LevelInfo, r.Err, "surface resume",
		slog.String("store", r.Store), slog.Int("events", r.Events), slog.Int64("torn_bytes", r.TornBytes),
		slog.Int("closers", r.Closers), slog.Duration("duration", r.Duration))
}

func (g logger) Fork(ctx context.Context, r Fork) {
	if !g.enabled(ctx, r.Err, slog.LevelInfo) {
		return
	}
	g.log(ctx, slog.LevelInfo, r.Err, "surface fork",
		slog.String("store", r.Store), slog.Int64("boundary", r.Boundary), slog.Int("events", r.Events),
		slog.Duration("duration", r.Duration))
}
