// Package view holds the derived view of a surface: its nodes' seqs and
// messages, in surface order, as immutable snapshots that cost O(1) to take
// and never change afterwards (SURF-19, SURF-26).
//
// A Builder keeps the entries (order label, message) in a persistent,
// height-balanced rope of small leaves plus a mutable tail:
//
//   - an append goes to the tail, frozen into the rope every 64 entries:
//     O(1) amortised;
//   - a replace of k nodes is a split at its first label, a split after
//     its last one and a join around the new entry: O(log n) new nodes,
//     whatever k or the surface's length (the k nodes are dropped with
//     the subtree that held them);
//   - a snapshot is the rope's root and the tail's current prefix.
//
// Nothing is ever written into memory a snapshot can see: the rope's
// nodes are copied on write along the path an update touches, and the
// tail's array only grows past the length a snapshot holds. A session
// hands out Messages and Seqs views, with Len, At, All (an iter.Seq2) and
// AppendTo; At costs O(log n).
package view
