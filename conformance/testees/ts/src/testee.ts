// A TypeScript testee of the surface conformance suite. It implements the
// rules of spec/README.md on its own (only the event catalog is read from
// spec/events.json) and speaks the testee protocol of spec/PROTOCOL.md:
// newline-delimited JSON on stdin and stdout, logs on stderr.
//
// Features: core (with the open vocabulary: registered types and
// ignorable events), repair and persist (crash_reopen writes the log to a
// JSONL file with a session header, drops the session, reads the file back
// through the seed path and repairs it) and store (store_open opens a JSONL
// session file it is handed, STORE-1 to STORE-3, STORE-7 to STORE-9,
// STORE-14, STORE-15, and the vector goes on writing through it;
// store_file reports the file). The compaction steps are answered
// "unsupported".

import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import * as readline from 'node:readline'

const MAX_SAFE = Number.MAX_SAFE_INTEGER
const MAX_DEPTH = 10000

type Json = null | boolean | number | string | Json[] | { [k: string]: Json }

// ---- catalog ----

interface FieldSpec { name: string; kind: string; required: boolean; nullable?: boolean; enum?: string[] }
interface TypeSpec { type: string; surface: boolean; fields: FieldSpec[] }

function loadCatalog(): Map<string, TypeSpec> {
  const file = process.env.SURFACE_SPEC_EVENTS ?? path.resolve(__dirname, '../../../../spec/events.json')
  const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as { types: TypeSpec[] }
  return new Map(parsed.types.map(t => [t.type, t]))
}

const catalog = loadCatalog()

// ---- errors ----

class Reject extends Error {
  // index is, for a seed, the index of the first bad event or line.
  index?: number
  constructor(public code: string, detail: string) { super(`${code}: ${detail}`) }
}

function reject(code: string, detail = ''): never { throw new Reject(code, detail) }

// ---- lossless JSON scanning (SURF-4) ----

interface Scanned { compact: string; members: Array<[string, number, number]> }

// scan checks syntax (and, unless lenient, SURF-4: duplicate keys, numbers)
// and returns the compact text and the members of a top-level object.
// Duplicate keys of the top-level object are rejected in both modes.
function scan(text: string, lenient: boolean): Scanned | string {
  let pos = 0
  let out = ''
  const members: Array<[string, number, number]> = []
  const ws = () => { while (pos < text.length && ' \t\n\r'.includes(text[pos]!)) pos++ }
  const fail = (why: string): never => { throw new Error(why) }
  const str = (): string => {
    const start = pos
    pos++
    while (pos < text.length) {
      const c = text.charCodeAt(pos)
      if (c === 0x22) {
        pos++
        const raw = text.slice(start, pos)
        out += raw
        return JSON.parse(raw) as string
      }
      if (c === 0x5c) {
        const n = text[pos + 1]
        if (n === undefined) fail('unexpected end')
        if ('"\\/bfnrt'.includes(n!)) pos += 2
        else if (n === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(pos + 2, pos + 6))) pos += 6
        else fail('invalid escape')
      } else if (c < 0x20) {
        fail('control character in string')
      } else {
        pos++
      }
    }
    return fail('unterminated string')
  }
  const num = () => {
    const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(pos))
    if (m === null) fail('invalid number')
    const lit = m![0]
    pos += lit.length
    if (!lenient) {
      const v = Number(lit)
      if (!Number.isFinite(v)) fail('number out of range')
      if (Object.is(v, -0)) fail('negative zero')
      if (!/[.eE]/.test(lit) && Math.abs(v) > MAX_SAFE) fail('unsafe integer')
    }
    out += lit
  }
  // value scans one value iteratively (no recursion, so any depth up to
  // MAX_DEPTH fits the stack): frames hold the open containers.
  interface Frame { kind: '{' | '['; keys: Set<string>; top: boolean; key?: string; start?: number }
  const value = (): void => {
    const frames: Frame[] = []
    for (;;) {
      // a value starts here
      ws()
      if (pos >= text.length) fail('unexpected end')
      const c = text[pos]!
      let opened = false
      if (c === '{' || c === '[') {
        if (!lenient && frames.length + 1 > MAX_DEPTH) fail('too deep') // depth is SURF-4's, of data only
        pos++
        out += c
        ws()
        const closer = c === '{' ? '}' : ']'
        if (text[pos] === closer) { pos++; out += closer } else {
          const f: Frame = { kind: c, keys: new Set(), top: frames.length === 0 }
          frames.push(f)
          opened = true
          if (c === '{') memberKey(f)
        }
      } else if (c === '"') str()
      else if (c === '-' || (c >= '0' && c <= '9')) num()
      else {
        let ok = false
        for (const word of ['true', 'false', 'null']) {
          if (text.startsWith(word, pos)) { out += word; pos += word.length; ok = true; break }
        }
        if (!ok) fail('invalid character')
      }
      if (opened) continue
      // after a value: record a top-level member, then close or go on
      for (;;) {
        const f = frames[frames.length - 1]
        if (f === undefined) return
        if (f.kind === '{' && f.top) members.push([f.key!, f.start!, out.length])
        ws()
        if (text[pos] === ',') {
          pos++
          out += ','
          if (f.kind === '{') memberKey(f)
          break
        }
        const closer = f.kind === '{' ? '}' : ']'
        if (text[pos] !== closer) fail(`expected ',' or '${closer}'`)
        pos++
        out += closer
        frames.pop()
      }
    }
  }
  // memberKey reads `"key":` of object frame f.
  const memberKey = (f: Frame) => {
    ws()
    if (text[pos] !== '"') fail('expected a key')
    const key = str()
    if (f.top || !lenient) {
      if (f.keys.has(key)) fail('duplicate key')
      f.keys.add(key)
    }
    ws()
    if (text[pos] !== ':') fail("expected ':'")
    pos++
    out += ':'
    f.key = key
    f.start = out.length
  }
  try {
    ws()
    value()
    ws()
    if (pos !== text.length) fail('trailing text')
  } catch (e) {
    return (e as Error).message
  }
  return { compact: out, members }
}

// ---- events ----

type Op =
  | { kind: 'none' }
  | { kind: 'append' }
  | { kind: 'replace'; start: number; end: number }
  | { kind: 'malformed' }
  | { kind: 'malformedReplace' }

interface Candidate {
  type: string
  seq: number
  time: number
  dataText: string | null // null: not text at all (invalid UTF-8)
  sources: number[] | null // null: absent; -1 marks an invalid element
  op: Op
  ignorable: boolean
}

interface Stored { type: string; seq: number; time: number; data: Json; sources: number[] | null; op: Op; ignorable: boolean }

const isSeq = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_SAFE

function decodeOp(v: Json | undefined): Op {
  if (v === undefined) return { kind: 'none' }
  if (v === 'append') return { kind: 'append' }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return { kind: 'malformed' }
  const keys = Object.keys(v)
  if (keys.length !== 3 || v.op !== 'replace' || !isSeq(v.start) || !isSeq(v.end)) return { kind: 'malformedReplace' }
  return { kind: 'replace', start: v.start, end: v.end }
}

function decodeSources(v: Json | undefined): number[] | null {
  if (v === undefined) return null
  if (!Array.isArray(v)) return [-1]
  return v.map(x => (isSeq(x) ? x : -1))
}

// decodeLine reads the wire form of one event (SURF-1), checking the
// envelope strictly and the data for syntax only.
function decodeLine(line: string): Candidate {
  const s = scan(line, true)
  if (typeof s === 'string' || s.compact[0] !== '{') reject('event.invalid_envelope', 'not an object')
  const sc = s as Scanned
  const allowed = new Set(['type', 'seq', 'time', 'data', 'sourceEventSeqs', 'surfaceOp', 'ignorable'])
  const fields = new Map<string, string>()
  for (const [k, a, b] of sc.members) {
    if (!allowed.has(k)) reject('event.invalid_envelope', `unknown member ${k}`)
    fields.set(k, sc.compact.slice(a, b))
  }
  const type = fields.get('type')
  const seq = fields.get('seq')
  const time = fields.get('time')
  const data = fields.get('data')
  if (type === undefined || seq === undefined || time === undefined || data === undefined) reject('event.invalid_envelope', 'missing member')
  const t = JSON.parse(type!) as Json
  if (typeof t !== 'string') reject('event.invalid_envelope', 'type')
  const n = (text: string): number => {
    if (!/^-?[0-9]/.test(text)) reject('event.invalid_envelope', 'not a number')
    const v = JSON.parse(text) as number
    if (!isSeq(v)) reject('event.invalid_envelope', 'not a safe integer')
    return v
  }
  const op = fields.get('surfaceOp')
  const src = fields.get('sourceEventSeqs')
  const ign = fields.get('ignorable')
  if (ign !== undefined && ign !== 'true') reject('event.invalid_envelope', 'ignorable must be true')
  return {
    ignorable: ign !== undefined,
    type: t as string,
    seq: n(seq!),
    time: n(time!),
    dataText: data!,
    op: decodeOp(op === undefined ? undefined : JSON.parse(op) as Json),
    sources: decodeSources(src === undefined ? undefined : JSON.parse(src) as Json),
  }
}

// ---- the session ----

function kindOk(f: FieldSpec, v: Json): boolean {
  if (f.nullable === true && v === null) return true
  const isObj = (x: Json): x is { [k: string]: Json } => x !== null && typeof x === 'object' && !Array.isArray(x)
  switch (f.kind) {
    case 'any': return true
    case 'integer': return typeof v === 'number' && Number.isInteger(v)
    case 'string': return typeof v === 'string' && (f.enum === undefined || f.enum.includes(v))
    case 'boolean': return typeof v === 'boolean'
    case 'array': return Array.isArray(v)
    case 'object': return isObj(v)
    case 'blocks': return Array.isArray(v) && v.every(b => isObj(b) && typeof b.type === 'string')
    case 'tagged': return isObj(v) && typeof v.kind === 'string'
  }
  return false
}

class Session {
  log: Stored[] = []
  surface: number[] = []
  // extra holds the log-only types the program registered (SURF-3).
  constructor(public extra: Map<string, TypeSpec> = new Map()) {}

  lookup(type: string): TypeSpec | undefined { return catalog.get(type) ?? this.extra.get(type) }

  // check validates a candidate at index log.length, in the order of
  // SURF-16, and returns the stored event and the surface after it.
  check(e: Candidate, log: Stored[], surface: number[]): [Stored, number[]] {
    if (!isSeq(e.seq) || !isSeq(e.time)) reject('event.invalid_envelope', 'seq or time')
    if (e.seq !== log.length) reject('seq.not_contiguous', `${e.seq} at ${log.length}`)
    const spec = this.lookup(e.type)
    if (spec === undefined && !e.ignorable) reject('event.unknown_type', e.type)
    if (e.dataText === null) reject('event.data_not_json', 'invalid UTF-8')
    const sc = scan(e.dataText!, false)
    if (typeof sc === 'string') reject('event.data_not_json', sc)
    const data = JSON.parse((sc as Scanned).compact) as Json
    if (spec !== undefined) { // an unknown (ignorable) type has no shape to check
      if (data === null || typeof data !== 'object' || Array.isArray(data)) reject('event.data_invalid', 'not an object')
      const obj = data as { [k: string]: Json }
      for (const f of spec.fields) {
        if (!Object.hasOwn(obj, f.name)) {
          if (f.required) reject('event.data_invalid', `missing ${f.name}`)
          continue
        }
        if (!kindOk(f, obj[f.name]!)) reject('event.data_invalid', `wrong kind for ${f.name}`)
      }
    }
    const stored: Stored = { type: e.type, seq: e.seq, time: e.time, data, sources: e.sources, op: e.op, ignorable: e.ignorable }
    if (spec === undefined || !spec.surface) {
      if (e.op.kind !== 'none') reject('surface.op_forbidden')
      if (e.sources !== null) reject('surface.sources_forbidden')
      return [stored, surface]
    }
    switch (e.op.kind) {
      case 'none': reject('surface.op_missing')
      case 'malformed': reject('surface.op_invalid')
      case 'malformedReplace': reject('replace.invalid')
    }
    if (e.sources !== null) {
      if (e.sources.length === 0 && e.type !== 'assistant/message') reject('sources.empty')
      if (e.sources.some(s => !isSeq(s))) reject('sources.invalid')
      if (new Set(e.sources).size !== e.sources.length) reject('sources.duplicate')
      if (e.sources.some(s => s >= e.seq)) reject('sources.not_earlier')
    }
    if (e.op.kind === 'append') return [stored, [...surface, e.seq]]
    const op = e.op as { start: number; end: number }
    const i = surface.indexOf(op.start)
    if (i < 0) reject('replace.start_not_on_surface')
    const j = surface.indexOf(op.end)
    if (j < 0) reject('replace.end_not_on_surface')
    if (i > j) reject('replace.reversed')
    const srcs = new Set(e.sources ?? [])
    if (surface.slice(i, j + 1).some(s => !srcs.has(s))) reject('replace.sources_incomplete')
    return [stored, [...surface.slice(0, i), e.seq, ...surface.slice(j + 1)]]
  }

  append(e: Candidate): Stored {
    const [stored, surface] = this.check(e, this.log, this.surface)
    this.log.push(stored)
    this.surface = surface
    return stored
  }

  static seed(events: Candidate[], extra: Map<string, TypeSpec> = new Map()): Session {
    const s = new Session(extra)
    events.forEach((e, i) => {
      try {
        s.append(e)
      } catch (err) {
        if (err instanceof Reject) err.index = i
        throw err
      }
    })
    return s
  }

  messages(): Json[] {
    const out: Json[] = []
    for (const seq of this.surface) {
      const e = this.log[seq]!
      const d = e.data as { [k: string]: Json }
      const content = d.content as Json[]
      const tagged = (tag: string): Json[] => {
        const kind = (d.source as { kind: string }).kind
        return [{ type: 'text', text: `<${tag} source=${JSON.stringify(kind)}>` }, ...content, { type: 'text', text: `</${tag}>` }]
      }
      switch (e.type) {
        case 'user/message': out.push({ seq, role: 'user', content }); break
        case 'assistant/message': if (content.length > 0) out.push(d.provenance !== undefined ? { seq, role: 'assistant', content, provenance: d.provenance } : { seq, role: 'assistant', content }); break
        case 'tool/result': out.push({ seq, role: 'user', content: [{ type: 'tool-result', toolCallId: d.callId!, content, isError: d.isError! }] }); break
        case 'context/message': out.push({ seq, role: 'user', content: d.envelope === 'raw' ? content : tagged('context') }); break
        case 'steering/message': out.push({ seq, role: 'user', content: tagged('steering') }); break
      }
    }
    return out
  }

  provenance(seq: number): number[] {
    if (!Number.isInteger(seq) || seq < 0 || seq >= this.log.length) reject('provenance.unknown_seq')
    const seen = new Set<number>([seq])
    const todo = [seq]
    while (todo.length > 0) {
      for (const s of this.log[todo.pop()!]!.sources ?? []) {
        if (!seen.has(s)) { seen.add(s); todo.push(s) }
      }
    }
    seen.delete(seq)
    return [...seen].sort((a, b) => a - b)
  }

  fork(boundary: number): Session {
    if (!Number.isInteger(boundary) || boundary < 0 || boundary >= this.log.length) reject('fork.boundary_out_of_range')
    if (this.log[boundary]!.type !== 'turn/end') reject('fork.open_turn')
    return Session.seed(this.log.slice(0, boundary + 1).map(toCandidate), this.extra)
  }

  // closers returns the repair closers of an open compaction and an open
  // last turn (REP-1..REP-6).
  closers(): Candidate[] {
    let open: Stored | undefined // the last compaction start with no end after it (COMP-2)
    let turn: Json | undefined
    let step: Json | undefined
    let calls: Array<{ id: string; step: Json; host: number; callSeq: number; open: boolean }> = []
    for (const e of this.log) {
      const d = e.data as { [k: string]: Json }
      switch (e.type) {
        case 'turn/start': turn = d.turn; step = undefined; calls = []; break
        case 'turn/end': turn = undefined; step = undefined; calls = []; break
        case 'step/start': step = d.step; break
        case 'step/end': step = undefined; calls = []; break
        case 'assistant/message':
          for (const b of d.content as Array<{ [k: string]: Json }>) {
            if (b.type !== 'tool-call' || typeof b.id !== 'string') continue
            const fresh = { id: b.id, step: d.step!, host: e.seq, callSeq: -1, open: true }
            const i = calls.findIndex(c => c.id === b.id)
            if (i >= 0) calls[i] = fresh
            else calls.push(fresh)
          }
          break
        case 'tool/call': {
          const c = calls.find(c => c.id === d.callId)
          if (c !== undefined && c.open) c.callSeq = e.seq
          break
        }
        case 'tool/result': {
          const c = calls.find(c => c.id === d.callId)
          if (c !== undefined) c.open = false
          break
        }
        case 'compact/start': case 'compaction/start': open = e; break
        case 'compact/end': if (open?.type === 'compact/start') open = undefined; break
        case 'compaction/end':
          if (open?.type === 'compaction/start' && (open.data as { [k: string]: Json }).compactionId === d.compactionId) open = undefined
          break
      }
    }
    if ((turn === undefined && open === undefined) || this.log.length === 0) return []
    const last = this.log[this.log.length - 1]!
    let seq = last.seq + 1
    const out: Candidate[] = []
    const add = (type: string, data: Json, op: Op, sources: number[] | null) => {
      out.push({ type, seq: seq++, time: last.time, dataText: JSON.stringify(data), op, sources, ignorable: false })
    }
    if (open !== undefined) {
      const d = open.data as { [k: string]: Json }
      if (open.type === 'compact/start') add('compact/end', { turn: d.turn!, error: 'interrupted' }, { kind: 'none' }, null)
      else {
        const end: { [k: string]: Json } = { compactionId: d.compactionId! }
        if (d.sourceCommandId !== undefined) end.sourceCommandId = d.sourceCommandId
        end.turn = d.turn!
        end.error = 'interrupted'
        add('compaction/end', end, { kind: 'none' }, null)
      }
    }
    if (turn === undefined) return out
    for (const c of calls) {
      if (!c.open || !this.surface.includes(c.host)) continue
      add('tool/result', {
        turn, step: c.step, callId: c.id,
        content: [{ type: 'text', text: 'Tool call interrupted by a crash; no result was recorded.' }],
        isError: true, error: { name: 'InterruptedError', code: 'interrupted' },
      }, { kind: 'append' }, c.callSeq >= 0 ? [c.callSeq] : null)
    }
    if (step !== undefined) add('step/end', { turn, step }, { kind: 'none' }, null)
    add('turn/end', { turn, reason: { kind: 'interrupted' } }, { kind: 'none' }, null)
    return out
  }
}

function toCandidate(e: Stored): Candidate {
  return { type: e.type, seq: e.seq, time: e.time, dataText: JSON.stringify(e.data), op: e.op, sources: e.sources, ignorable: e.ignorable }
}

function wire(e: Stored): Json {
  const out: { [k: string]: Json } = { type: e.type, seq: e.seq, time: e.time, data: e.data }
  if (e.sources !== null) out.sourceEventSeqs = e.sources
  if (e.op.kind === 'append') out.surfaceOp = 'append'
  if (e.op.kind === 'replace') out.surfaceOp = { op: 'replace', start: e.op.start, end: e.op.end }
  if (e.ignorable) out.ignorable = true
  return out
}

// register builds the vocabulary of a register step (SURF-3).
function register(types: TypeSpec[]): Map<string, TypeSpec> {
  const kinds = ['any', 'integer', 'string', 'boolean', 'array', 'object', 'blocks', 'tagged']
  const extra = new Map<string, TypeSpec>()
  for (const t of types) {
    if (typeof t.type !== 'string' || t.type === '' || t.type.trim() !== t.type) reject('vocabulary.invalid', 'empty type')
    if (catalog.has(t.type)) reject('vocabulary.invalid', `${t.type} is a catalog type`)
    if (extra.has(t.type)) reject('vocabulary.invalid', `${t.type} twice`)
    const names = new Set<string>()
    const fields = (t.fields ?? []).map(f => ({ ...f, required: f.required ?? false }))
    for (const f of fields) {
      if (f.name === '' || names.has(f.name) || !kinds.includes(f.kind) || (f.enum !== undefined && f.kind !== 'string')) reject('vocabulary.invalid', `field ${f.name}`)
      names.add(f.name)
    }
    extra.set(t.type, { type: t.type, surface: false, fields })
  }
  return extra
}

// ---- the protocol ----

interface Step {
  op: string
  type?: string
  time?: number
  dataText?: string
  dataBase64?: string
  surfaceOp?: Json
  sourceEventSeqs?: Json
  lines?: string[]
  boundary?: number
  continue?: boolean
  seq?: number
  ignorable?: boolean
  types?: TypeSpec[]
  format?: string
  fileBase64?: string
  beside?: { [suffix: string]: string }
  id?: string
  createdAt?: number
  exact?: boolean
}

// ---- the JSONL store (STORE-*) ----

interface Store {
  dir: string
  file: string
  good: number // bytes of the header and the complete event lines
  torn: boolean // bytes past good are a torn tail, cut before the next write
  written: number // events of the log the file holds
  live: boolean
}

let store: Store | undefined

// u8 views a Buffer as the plain bytes node's fs functions take.
const u8 = (b: Buffer): Uint8Array => new Uint8Array(b.buffer, b.byteOffset, b.byteLength)
const isObject = (x: Json): x is { [k: string]: Json } => x !== null && typeof x === 'object' && !Array.isArray(x)

function dropStore(): void {
  if (store !== undefined) fs.rmSync(store.dir, { recursive: true, force: true })
  store = undefined
}

// syncStore writes the events the session appended since the last step.
function syncStore(): void {
  if (store === undefined || !store.live || session.log.length <= store.written) return
  if (store.torn) {
    fs.truncateSync(store.file, store.good)
    store.torn = false
  }
  const text = session.log.slice(store.written).map(e => JSON.stringify(wire(e)) + '\n').join('')
  fs.appendFileSync(store.file, text)
  store.good += Buffer.byteLength(text)
  store.written = session.log.length
}

// firstInvalidUtf8 is the index of the first byte of b that is not part
// of a well-formed UTF-8 sequence, or -1.
function firstInvalidUtf8(b: Buffer): number {
  for (let i = 0; i < b.length;) {
    const c = b[i]!
    const n = c < 0x80 ? 0 : c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : -1
    if (n < 0) return i
    for (let k = 1; k <= n; k++) {
      const d = b[i + k]
      if (d === undefined || (d & 0xc0) !== 0x80) return i
    }
    if ((c === 0xe0 && b[i + 1]! < 0xa0) || (c === 0xed && b[i + 1]! > 0x9f) || (c === 0xf0 && b[i + 1]! < 0x90) || (c === 0xf4 && b[i + 1]! > 0x8f)) return i
    i += n + 1
  }
  return -1
}

// dataSpan is the byte range of the value of the top-level member "data"
// of the JSON object in b, found by walking the bytes (no decoding), or
// undefined when b is not such an object.
function dataSpan(b: Buffer): [number, number] | undefined {
  let i = 0
  const ws = () => { while (i < b.length && (b[i] === 0x20 || b[i] === 0x09 || b[i] === 0x0d || b[i] === 0x0a)) i++ }
  const str = (): string | undefined => {
    const start = i++
    while (i < b.length && b[i] !== 0x22) i += b[i] === 0x5c ? 2 : 1
    if (i >= b.length) return undefined
    i++
    return b.subarray(start, i).toString('latin1')
  }
  const value = (): boolean => {
    if (b[i] === 0x22) return str() !== undefined
    if (b[i] === 0x7b || b[i] === 0x5b) {
      let depth = 0
      while (i < b.length) {
        const c = b[i]
        if (c === 0x22) { if (str() === undefined) return false; continue }
        if (c === 0x7b || c === 0x5b) depth++
        if (c === 0x7d || c === 0x5d) depth--
        i++
        if (depth === 0) return true
      }
      return false
    }
    while (i < b.length && ![0x2c, 0x7d, 0x20, 0x09, 0x0d, 0x0a].includes(b[i]!)) i++
    return true
  }
  ws()
  if (b[i] !== 0x7b) return undefined
  i++
  for (;;) {
    ws()
    if (b[i] !== 0x22) return undefined
    const key = str()
    ws()
    if (key === undefined || b[i] !== 0x3a) return undefined
    i++
    ws()
    const start = i
    if (!value()) return undefined
    if (key === '"data"') return [start, i]
    ws()
    if (b[i] !== 0x2c) return undefined
    i++
  }
}

// decodeStoredLine reads one stored line's bytes: a byte that is not UTF-8
// inside data makes the data not lossless JSON (SURF-4); elsewhere it reads
// as U+FFFD, as JSON.parse reads a line decoded as UTF-8 (SURF-1).
function decodeStoredLine(b: Buffer): Candidate {
  const c = decodeLine(b.toString('utf8'))
  const bad = firstInvalidUtf8(b)
  if (bad >= 0) {
    const span = dataSpan(b)
    if (span !== undefined && bad >= span[0] && bad < span[1]) c.dataText = null
  }
  return c
}

function storeOpen(s: Step): { [k: string]: Json } {
  if (s.format !== 'jsonl') throw new Reject('unsupported', `format ${s.format}`)
  dropStore()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'surface-ts-store-'))
  const file = path.join(dir, 'session.jsonl')
  store = { dir, file, good: 0, torn: false, written: 0, live: false }
  if (s.fileBase64 !== undefined) fs.writeFileSync(file, u8(Buffer.from(s.fileBase64, 'base64')))
  for (const [suffix, b64] of Object.entries(s.beside ?? {})) fs.writeFileSync(file + suffix, u8(Buffer.from(b64, 'base64')))
  const id = s.id ?? ''
  if (id === '') reject('persist.header_invalid', 'empty id') // STORE-15
  if (!fs.existsSync(file)) {
    fs.writeFileSync(file, JSON.stringify({ type: 'session', version: 0, id, createdAt: s.createdAt ?? 0 }) + '\n')
  }
  const bytes = fs.readFileSync(file)
  // STORE-1: the header line.
  const nl = bytes.indexOf(0x0a)
  if (nl < 0) reject('persist.not_a_session', 'no complete first line')
  let header: Json = null
  try {
    header = JSON.parse(bytes.subarray(0, nl).toString('utf8')) as Json
  } catch {
    reject('persist.not_a_session', 'the first line is not JSON')
  }
  if (!isObject(header) || header.type !== 'session' || !('version' in header)) reject('persist.not_a_session', 'no session header')
  const h = header as { [k: string]: Json }
  if (typeof h.version !== 'number') reject('persist.not_a_session', 'the version is not a number')
  if (h.version !== 0) reject('persist.format_version', String(h.version))
  if (typeof h.id !== 'string') reject('persist.corrupt', 'the header id is not a string')
  // STORE-2: event lines; only the last may be torn.
  let good = nl + 1
  let tornBytes: Buffer | undefined
  const events: Candidate[] = []
  while (good < bytes.length) {
    const end = bytes.indexOf(0x0a, good)
    if (end < 0) { tornBytes = bytes.subarray(good); break }
    const line = bytes.subarray(good, end).toString('utf8')
    try {
      events.push(decodeStoredLine(bytes.subarray(good, end)))
    } catch (err) {
      if (!(err instanceof Reject)) throw err
      if (typeof scan(line, true) !== 'string') { err.index = events.length; throw err } // JSON, not an event
      if (end + 1 === bytes.length) { tornBytes = bytes.subarray(good); break }
      reject('persist.corrupt', `line ${events.length + 2} is not JSON`)
    }
    good = end + 1
  }
  if (h.id !== id) reject('persist.wrong_session', `${h.id as string}, not ${id}`)
  // STORE-8: copy the torn tail beside the file, never over other bytes.
  let quarantine = ''
  if (tornBytes !== undefined) {
    for (let n = 1; ; n++) {
      const name = `.torn-${good}` + (n > 1 ? `.${n}` : '')
      const target = file + name
      if (fs.existsSync(target)) {
        if (fs.readFileSync(target).toString('base64') === tornBytes.toString('base64')) { quarantine = name; break }
        continue
      }
      fs.writeFileSync(target, u8(tornBytes), { flag: 'wx' })
      quarantine = name
      break
    }
  }
  // STORE-14, STORE-3, STORE-7.
  if (typeof h.seedLength === 'number' && h.seedLength > events.length) reject('persist.fork_incomplete', `${events.length} of ${h.seedLength}`)
  session = Session.seed(events, session.extra)
  Object.assign(store, { good, torn: tornBytes !== undefined, written: session.log.length, live: true })
  const closers = session.closers().map(c => wire(session.append(c)))
  return state({ report: { events: events.length, tornBytes: tornBytes?.length ?? 0, quarantine }, closers })
}

function storeFile(s: Step): { [k: string]: Json } {
  if (store === undefined) throw new Error('store_file before store_open')
  const bytes = fs.readFileSync(store.file)
  const out: { [k: string]: Json } = {}
  let lines: Json[] | undefined = []
  let at = 0
  for (let end = bytes.indexOf(0x0a); end >= 0; at = end + 1, end = bytes.indexOf(0x0a, at)) {
    try {
      if (firstInvalidUtf8(bytes.subarray(at, end)) >= 0) throw new Error('not UTF-8')
      lines?.push(JSON.parse(bytes.subarray(at, end).toString('utf8')) as Json)
    } catch {
      lines = undefined
    }
  }
  if (lines !== undefined) out.lines = lines
  if (at < bytes.length) out.tailBase64 = bytes.subarray(at).toString('base64')
  const beside: { [k: string]: Json } = {}
  const base = path.basename(store.file)
  for (const name of fs.readdirSync(store.dir)) {
    if (name.startsWith(base + '.torn-')) beside[name.slice(base.length)] = fs.readFileSync(path.join(store.dir, name)).toString('base64')
  }
  out.beside = beside
  if (s.exact && bytes.length > 0) out.bytesBase64 = bytes.toString('base64')
  return { file: out }
}

let session = new Session()

function state(result: { [k: string]: Json }): { [k: string]: Json } {
  return { ...result, surface: session.surface, messages: session.messages() }
}

function doStep(s: Step): { [k: string]: Json } {
  switch (s.op) {
    case 'append': {
      let dataText: string | null = s.dataText ?? null
      if (s.dataBase64 !== undefined) {
        try {
          dataText = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(s.dataBase64, 'base64'))
        } catch {
          dataText = null
        }
      }
      const e = session.append({
        type: s.type ?? '', seq: session.log.length, time: s.time ?? 0, dataText,
        op: decodeOp(s.surfaceOp), sources: decodeSources(s.sourceEventSeqs), ignorable: s.ignorable === true,
      })
      return state({ event: wire(e) })
    }
    case 'seed': {
      // In log order (SURF-18): a line that is not an event is bad at its
      // index, after any earlier event that breaks a rule.
      const lines = s.lines ?? []
      const events: Candidate[] = []
      for (let i = 0; i < lines.length; i++) {
        try {
          events.push(decodeLine(lines[i]!))
        } catch (err) {
          if (err instanceof Reject) {
            Session.seed(events, session.extra)
            err.index = i
          }
          throw err
        }
      }
      session = Session.seed(events, session.extra)
      if (store !== undefined) store.live = false
      return state({})
    }
    case 'register': {
      if (session.log.length !== 0) throw new Error('register must be the first step')
      session = new Session(register(s.types ?? []))
      return state({})
    }
    case 'fork': {
      const child = session.fork(s.boundary ?? -1)
      if (s.continue) {
        if (store !== undefined) store.live = false
        session = child
      }
      return state({})
    }
    case 'provenance':
      return { seqs: session.provenance(s.seq ?? -1) }
    case 'repair': {
      const closers = session.closers().map(c => wire(session.append(c)))
      return state({ closers })
    }
    case 'store_open':
      return storeOpen(s)
    case 'store_file':
      return storeFile(s)
    case 'crash_reopen': {
      if (store !== undefined) store.live = false
      // Persist (STORE-1), lose the memory, load through the seed path
      // (STORE-3), repair (STORE-7).
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'surface-ts-'))
      const file = path.join(dir, 'session.jsonl')
      try {
        const lines = [JSON.stringify({ type: 'session', version: 0, id: 'ts', createdAt: 0 })]
        for (const e of session.log) lines.push(JSON.stringify(wire(e)))
        fs.writeFileSync(file, lines.join('\n') + '\n')
        const extra = session.extra
        session = new Session(extra)
        const stored = fs.readFileSync(file, 'utf8').split('\n').filter(l => l !== '')
        const header = JSON.parse(stored[0]!) as { type: string; version: number }
        if (header.type !== 'session' || header.version !== 0) reject('persist.format_version')
        session = Session.seed(stored.slice(1).map(decodeLine), extra)
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
      const closers = session.closers().map(c => wire(session.append(c)))
      return state({ closers })
    }
  }
  throw new Reject('unsupported', s.op)
}

function answer(msg: Json): void {
  process.stdout.write(JSON.stringify(msg) + '\n')
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })
rl.on('line', line => {
  const req = JSON.parse(line) as { type: string; step?: Step }
  switch (req.type) {
    case 'hello':
      answer({ type: 'hello', protocol: 1, name: 'surface-ts', version: '0.1.0', features: ['core', 'repair', 'persist', 'store'] })
      break
    case 'reset':
      dropStore()
      session = new Session()
      answer({ type: 'ok' })
      break
    case 'step':
      try {
        const result = doStep(req.step!)
        syncStore()
        answer({ type: 'result', result })
      } catch (e) {
        if (e instanceof Reject && e.code === 'unsupported') answer({ type: 'unsupported', reason: e.message })
        else if (e instanceof Reject) answer({ type: 'result', result: (req.step!.op === 'seed' || req.step!.op === 'store_open') && e.index !== undefined ? { error: e.code, index: e.index } : { error: e.code } })
        else {
          process.stderr.write(`testee bug: ${(e as Error).stack}\n`)
          answer({ type: 'result', result: { error: 'internal' } })
        }
      }
      break
    case 'bye':
      dropStore()
      rl.close()
      break
  }
})
