package observe

import (
	"context"
	"sync"
)

// Recorder is an Observer that keeps every record, for tests and for
// inspection. It is safe for concurrent use.
type Recorder struct {
	mu          sync.Mutex
	Appends     []Append
	StoreWrites []StoreWrite
	Compactions []Compaction
	Prunes      []Prune
	Repairs     []Repair
	Resumes     []Resume
	Forks       []Fork
}

func (r *Recorder) Append(_ context.Context, a Append) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Appends = append(r.Appends, a)
}

func (r *Recorder) StoreWrite(_ context.Context, w StoreWrite) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.StoreWrites = append(r.StoreWrites, w)
}

func (r *Recorder) Compaction(_ context.Context, c Compaction) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Compactions = append(r.Compactions, c)
}

func (r *Recorder) Prune(_ context.Context, p Prune) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Prunes = append(r.Prunes, p)
}

func (r *Recorder) Repair(_ context.Context, p Repair) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Repairs = append(r.Repairs, p)
}

func (r *Recorder) Resume(_ context.Context, p Resume) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Resumes = append(r.Resumes, p)
}

func (r *Recorder) Fork(_ context.Context, f Fork) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Forks = append(r.Forks, f)
}

// Reset forgets every record.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Appends, r.StoreWrites, r.Compactions, r.Prunes = nil, nil, nil, nil
	r.Repairs, r.Resumes, r.Forks = nil, nil, nil
}
