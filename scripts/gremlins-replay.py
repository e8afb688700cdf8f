#!/usr/bin/env python3
"""Replay go-gremlins' LIVED mutants against the tests as they are now.

    python3 scripts/gremlins-replay.py LOG PKGDIR [MODULE_DIR]

LOG is a gremlins log (scripts/gremlins.sh writes one per package); each
LIVED mutation is applied at its file:line:col in PKGDIR, the package's
tests run (or the packages in TESTPKGS, space-separated, e.g. the packages
whose differential tests use the model), and the file restored. With
OLD_COMMIT, the log's lines are mapped from that commit's file to the
current one (a rewritten line is reported as gone). RAPID_CHECKS defaults
to 100. Run it in a clone: it edits the working tree while it runs.

REPLAY_STATUS (a regexp, default LIVED) picks the rows to replay: a
package whose tests live in other packages (internal/ops, the harness of
the differential tests) has every mutant NOT COVERED in its own run, so
'LIVED|NOT COVERED' with TESTPKGS naming the packages that use it scores
it against those. REPLAY_BUDGET (seconds) stops starting mutants after
that long; REPLAY_TIMEOUT (default 300s) is go test's -timeout for
each mutant; with REPLAY_SEED the rows are taken in a random order drawn
from that seed, so a run cut by its budget is a fair sample."""
import re, subprocess, sys, os
sys.stdout.reconfigure(line_buffering=True)
log, pkgdir = sys.argv[1], sys.argv[2]
moddir = sys.argv[3] if len(sys.argv) > 3 else '/work/main'
swap = {
 'CONDITIONALS_BOUNDARY': {'<': '<=', '<=': '<', '>': '>=', '>=': '>'},
 'CONDITIONALS_NEGATION': {'==': '!=', '!=': '==', '<': '>=', '>=': '<', '>': '<=', '<=': '>'},
 'ARITHMETIC_BASE': {'+': '-', '-': '+', '*': '/', '/': '*', '%': '*'},
 'INCREMENT_DECREMENT': {'++': '--', '--': '++'},
 'INVERT_NEGATIVES': {'-': '+'},
}
rows = []
status = os.environ.get('REPLAY_STATUS', 'LIVED')
for line in open(log):
    m = re.match(r'\s*(?:' + status + r') (\w+) at ([\w./]+):(\d+):(\d+)', line)
    if m: rows.append((m.group(1), m.group(2), int(m.group(3)), int(m.group(4))))
if os.environ.get('REPLAY_SEED'):
    import random
    random.Random(int(os.environ['REPLAY_SEED'])).shuffle(rows)
import time
budget = float(os.environ.get('REPLAY_BUDGET', '0'))
started = time.monotonic()
old = os.environ.get('OLD_COMMIT')
import difflib
maps = {}
def mapline(f, ln):
    """The line of the current file that old line ln of f became, or None."""
    if not old: return ln
    if f not in maps:
        a = subprocess.run(['git', 'show', f'{old}:{pkgdir}/{f}'], cwd=moddir, capture_output=True, text=True).stdout.split('\n')
        b = open(os.path.join(moddir, pkgdir, f)).read().split('\n')
        m = {}
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
            if tag == 'equal':
                for k in range(i2 - i1): m[i1 + k + 1] = j1 + k + 1
        maps[f] = m
    return maps[f].get(ln)
env = dict(os.environ, RAPID_CHECKS=os.environ.get('RAPID_CHECKS', '100'))
killed = lived = 0
done = 0
for kind, f, ln0, col in rows:
    if budget and time.monotonic() - started > budget:
        print(f'budget of {budget:.0f}s reached: {done} of {len(rows)} replayed')
        break
    done += 1
    ln = mapline(f, ln0)
    if ln is None:
        print(f'gone   {kind} {f}:{ln0}:{col} (the line was rewritten)'); continue
    path = os.path.join(moddir, pkgdir, f)
    src = open(path).read()
    lines = src.split('\n')
    L = lines[ln-1]
    i = col - 1
    tok = L[i:i+2] if L[i:i+2] in swap[kind] else L[i:i+1]
    if tok not in swap[kind]:
        print(f'?? {kind} {f}:{ln}:{col} token {L[i:i+3]!r}'); continue
    lines[ln-1] = L[:i] + swap[kind][tok] + L[i+len(tok):]
    open(path, 'w').write('\n'.join(lines))
    try:
        pkgs = os.environ.get('TESTPKGS', './' + pkgdir).split()
        r = subprocess.run(['go', 'test', '-count=1', '-failfast', '-timeout', os.environ.get('REPLAY_TIMEOUT', '300s')] + pkgs, cwd=moddir, env=env, capture_output=True, text=True, errors='replace')
        ok = r.returncode == 0
    finally:
        open(path, 'w').write(src)
    if ok:
        lived += 1; print(f'LIVED  {kind} {f}:{ln}:{col}  {L.strip()[:90]}')
    else:
        killed += 1; print(f'killed {kind} {f}:{ln}:{col}')
print(f'replayed {done} of {len(rows)}: {killed} now killed, {lived} still lived')
