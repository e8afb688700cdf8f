// Syntax check of every .tla file of tla/ with the tree-sitter TLA+
// grammar (@tlaplus/tree-sitter-tlaplus on web-tree-sitter). Prints each
// ERROR or MISSING node with its position; exits 1 if there is one.
// Usage: node check.mjs [files...]   (default: ../*.tla)
import { readFileSync, readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Parser, Language } from 'web-tree-sitter'

const here = dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)
const wasm = join(dirname(require.resolve('@tlaplus/tree-sitter-tlaplus/package.json')), 'tree-sitter-tlaplus.wasm')

await Parser.init()
const parser = new Parser()
parser.setLanguage(await Language.load(wasm))

let files = process.argv.slice(2)
if (files.length === 0) {
  files = readdirSync(join(here, '..')).filter(f => f.endsWith('.tla')).map(f => join(here, '..', f))
}
let bad = 0
for (const file of files) {
  const tree = parser.parse(readFileSync(file, 'utf8'))
  const problems = []
  const walk = node => {
    if (node.isError || node.isMissing) {
      problems.push(`${file}:${node.startPosition.row + 1}:${node.startPosition.column + 1}: ${node.isMissing ? 'missing ' + node.type : 'syntax error'}`)
      return
    }
    for (const child of node.children) walk(child)
  }
  walk(tree.rootNode)
  if (tree.rootNode.hasError && problems.length === 0) problems.push(`${file}: syntax error`)
  const modules = tree.rootNode.descendantsOfType('module').length
  if (modules === 0) problems.push(`${file}: no MODULE`)
  for (const p of problems) console.log(p)
  if (problems.length > 0) bad++
  else console.log(`ok ${file} (${modules} module, ${tree.rootNode.descendantCount} nodes)`)
}
process.exit(bad > 0 ? 1 : 0)
