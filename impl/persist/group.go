package persist

import "time"

// Group commit (SyncGroup): an append is acknowledged once its events are
// written, and one sync makes every append of a window durable. The
// window closes delay after its first unsynced append, or as soon as its
// appends hold bytes bytes, whichever comes first; a turn/end, a batch of
// several events, Sync and Close sync at once.

// Defaults of WithSyncWindow and WithSQLiteSyncWindow.
const (
	DefaultSyncDelay = 50 * time.Millisecond
	DefaultSyncBytes = 1 << 20
)

// groupCommit is a store's open window: what it wrote since its last sync
// and the timer that will sync it. The store's mutex guards it.
type groupCommit struct {
	delay    time.Duration
	bytes    int64
	unsynced int64 // bytes written since the last sync
	timer    *time.Timer
}

func newGroupCommit(delay time.Duration, bytes int64) groupCommit {
	if delay <= 0 {
		delay = DefaultSyncDelay
	}
	if bytes <= 0 {
		bytes = DefaultSyncBytes
	}
	return groupCommit{delay: delay, bytes: bytes}
}

// wrote records an unsynced write of n bytes and reports whether the
// window is full, so the write must sync now.
func (g *groupCommit) wrote(n int64) bool {
	g.unsynced += n
	return g.unsynced >= g.bytes
}

// arm starts the window's timer, if it is not running: sync runs after
// the delay (taking the store's mutex itself).
func (g *groupCommit) arm(sync func()) {
	if g.timer == nil && g.unsynced > 0 {
		g.timer = time.AfterFunc(g.delay, sync)
	}
}

// synced closes the window: everything written is durable.
func (g *groupCommit) synced() {
	g.unsynced = 0
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
}
