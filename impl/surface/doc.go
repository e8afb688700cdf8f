// Package surface maintains the surface of a session log: the ordered list
// of nodes (seqs of message-producing events) from which the LLM messages
// are derived.
//
// A Manager keeps the surface as a doubly linked list with an index by seq
// and folds the log incrementally: it remembers how many events it has
// processed and, on each access, applies only the events appended since
// (SURF-26). Appending a node costs O(1); a replace of k nodes costs
// O(k + |sourceEventSeqs|) whatever the surface's length, because
//
//   - the endpoints are found through the seq index, not by searching;
//   - every node carries an order label, strictly increasing from head to
//     tail, so "start comes after end" (SURF-13) is one comparison. A
//     replacement node takes its start node's label, which keeps the labels
//     increasing without ever relabelling;
//   - only the shadowed range is walked, to check coverage (SURF-14) and to
//     unlink it.
//
// Validation never mutates: Validate checks a candidate against the current
// surface and remembers the plan, and the plan is applied when the event is
// folded. A rejected candidate leaves the Manager as it was (SURF-17).
//
// A Manager is not safe for concurrent use; impl/session serialises access.
package surface
