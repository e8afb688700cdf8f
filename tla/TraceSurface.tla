---------------------------- MODULE TraceSurface ----------------------------
(***************************************************************************)
(* Trace validation, in the manner of etcd-io/raft: the implementation     *)
(* (impl/session with session.WithTrace) writes an NDJSON trace of what it *)
(* did and of its surface after each step; this spec replays the trace    *)
(* through the definitions of Surface.tla and checks that every step is   *)
(* one the spec allows and ends in the surface the spec computes. TLC      *)
(* accepts the trace when the whole of it is matched (TraceMatched).       *)
(*                                                                         *)
(* Trace lines (records of the sequence Trace, which the module TraceData  *)
(* defines; tla/explore/tlc_test.go writes it from an NDJSON trace, so no  *)
(* module outside TLC's standard ones is needed):                          *)
(*   action "append"  one accepted event: its abstract type t, marker op   *)
(*                    (start, end), sources src, tool call (call, and the  *)
(*                    number ncalls of calls an assistant message makes),  *)
(*                    and the surface after it                             *)
(*   action "seed"    the end of a seed                                    *)
(*   action "repair"  the end of a repair that appended `closers` events   *)
(***************************************************************************)
EXTENDS Surface, TraceData, TLC

TraceCalls == {Trace[i].call : i \in DOMAIN Trace} \ {0}

VARIABLE l  \* the next trace line to match

TraceVars == <<log, surface, shadowed, crashed, l>>

ToOp(r) == CASE r.op = "append" -> AppendOp
             [] r.op = "replace" -> ReplaceOp(r.start, r.end)
             [] OTHER -> NoOp

ToEvent(r) == Ev(r.t, ToOp(r), {r.src[i] : i \in DOMAIN r.src}, r.call)

(* An accepted event is a step of Offer, the action of Surface.tla that
   appends a candidate passing every rule (SURF-6 to SURF-14) and leaves
   the state unchanged otherwise: here it must have appended. Guards of the
   actions that write such events apply too: an assistant message
   registers at most one call; a compaction starts only when none is open
   (COMP-2) and ends only when one is (CompactAbort, CompactCommit, a
   repair's first closer); a summary is written under the lock and folds a
   range whose edges no unanswered call crosses (COMP-4) and that starts
   after the last provider compaction on the surface (PROV-4); an appended
   result answers a pending call (AppendResult, a repair's closers). The
   last is the strict ledger's STRICT-4: the traces come from sessions in
   strict mode, since a loose session accepts a result for any call id,
   which Surface.tla does not model. The surface after it is the one the
   implementation reported. (A trace once held a compaction's end with
   none open: an abort after a repair had ended the compaction wrote a
   second end. Such a commit or abort is now compaction.finished and
   writes nothing; the guard on "cend" and COMP2_BracketsDecl reject any
   trace that has one, tla/explore's stray-end trace shows it.) *)
TraceAppend(r) ==
    LET e == ToEvent(r)
    IN /\ r.action = "append"
       /\ r.ncalls <= 1
       /\ e.t = "cstart" => ~Locked(log)
       /\ e.t = "cend" => Locked(log)
       /\ (e.t = "result" /\ e.op.kind = "append") => e.call \in Pending(log)
       /\ e.t = "summary" =>
            /\ Locked(log)
            /\ Valid(surface, e)
            /\ IndexOf(surface, e.op.start) > LastProviderCompaction(log, surface)
            /\ BalancedCut(log, surface, IndexOf(surface, e.op.start) - 1)
            /\ BalancedCut(log, surface, IndexOf(surface, e.op.end))
       /\ Offer(e)
       /\ log' = Append(log, e)
       /\ surface' = r.surface

(* The end of a seed: the surface is the fold of the log (SURF-18, SURF-25). *)
TraceSeed(r) == r.action = "seed" /\ surface = Fold(log) /\ r.surface = surface /\ UNCHANGED <<log, surface, shadowed, crashed>>

(* The end of a repair: the events it appended are exactly the closers
   Surface.tla prescribes for the log before them (ClosersExact: REP-3,
   REP-4, REP-6), and nothing is left open or to close (REP-1, REP-5). *)
TraceRepair(r) ==
    LET n == r.closers
        before == SubSeq(log, 1, Len(log) - n)
    IN /\ r.action = "repair"
       /\ n <= Len(log)
       /\ ClosersExact(before, Fold(before), SubSeq(log, Len(log) - n + 1, Len(log)))
       /\ ~OpenTurn(log)
       /\ ~Locked(log)
       /\ Closers(log, surface) = <<>>
       /\ r.surface = surface
       /\ UNCHANGED <<log, surface, shadowed, crashed>>

TraceInit == Init /\ l = 1

(* COMP-5 (COMP5_CommitEndsDecl): a commit writes its summary and its end
   together, so the line after a summary is the compaction's end. *)
CommitEnds(r) == (Len(log) > 0 /\ log[Len(log)].t = "summary") => (r.action = "append" /\ r.t = "cend")

TraceNext ==
    /\ l <= Len(Trace)
    /\ LET r == Trace[l] IN CommitEnds(r) /\ (TraceAppend(r) \/ TraceSeed(r) \/ TraceRepair(r))
    /\ l' = l + 1

TraceSpec == TraceInit /\ [][TraceNext]_TraceVars

(* Every line was matched: the longest behaviour has one state per line,
   plus the initial state. *)
TraceMatched ==
    LET d == TLCGet("stats").diameter
    IN IF d - 1 = Len(Trace) THEN TRUE
       ELSE Print(<<"trace line not matched", d, Trace[d]>>, FALSE)

(* The surface invariants of Surface.tla hold along the trace too, and so
   do its declarative restatements that hold after every single event (a
   commit's summary and end are two trace lines, so COMP5_CommitEndsDecl
   is checked line by line, in CommitEnds). *)
TraceInvariants ==
    /\ SURF15_NodesDistinctInLog /\ SURF15_NoResurrection /\ SURF25_SurfaceIsFold
    /\ REP1_TurnsDecl /\ REP3_ResultsAnswerDecl /\ COMP2_BracketsDecl
    /\ COMP5_SummaryInBracketDecl /\ COMP4_BalancedDecl /\ PROV4_SummaryAfterProviderDecl
=============================================================================
