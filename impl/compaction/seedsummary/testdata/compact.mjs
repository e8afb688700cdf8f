// Compacts sessions with the seed system's own compaction (b736889ac7's
// compactSurfaceRegion, from the seed testee's bundle in SEED_BUNDLE) and
// its own token meter, and prints what it did: the transcript its
// summariser was handed, and the events it appended (or the error it
// threw). Input on stdin: [{name, lines, start, end, summary, provider,
// model, maxTokens, time}]. This file is this project's test driver; the
// seed system's code is only imported.
import * as fs from 'node:fs'
import { pathToFileURL } from 'node:url'

const real = await import(pathToFileURL(process.env.SEED_BUNDLE).href)
const { Session, SessionId, TokenMeterService, Context, compactSurfaceRegion } = real
const tm = new TokenMeterService(new Context(), {})
const meter = {
  measure: (s) => ({ nodes: s.surface.nodes.map(seq => { const m = s.deriveEventMessage(s.events[seq]); return { seq, tokens: m ? tm.estimateMessage(m) : 0 } }), logRevision: s.events.length }),
  estimateMessage: (m) => tm.estimateMessage(m),
}
const out = []
for (const c of JSON.parse(fs.readFileSync(0, 'utf8'))) {
  const s = new Session(SessionId('s'), c.lines.map(l => JSON.parse(l)))
  const before = s.events.length
  let transcript = null
  const orig = Date.now
  Date.now = () => c.time
  try {
    await compactSurfaceRegion({
      meter,
      summarize: async (text) => {
        transcript = text
        if (c.fail !== undefined) throw new Error(c.fail)
        return { summary: c.summary, provider: c.provider, model: c.model, ...(c.maxTokens === undefined ? {} : { maxTokens: c.maxTokens }) }
      },
    }, s, c.start, c.end, {}, undefined)
    out.push({ name: c.name, transcript, events: s.events.slice(before).map(e => JSON.stringify(e)) })
  } catch (e) {
    out.push({ name: c.name, transcript, events: s.events.slice(before).map(e => JSON.stringify(e)), error: String(e && e.message) })
  } finally {
    Date.now = orig
  }
}
process.stdout.write(JSON.stringify(out) + '\n')
