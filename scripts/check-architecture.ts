/**
 * The rules of docs/architecture.md ("Import rules", "Rules the code follows"), checked over src/:
 *
 * 1. layers: a folder of src/ imports only itself and the folders of the layers below it (LAYERS);
 *    src/platform/ is the lowest, so it imports no domain, and no folder-level import loop can form;
 * 2. the contract: src/api.ts imports only the API declarations (`*Api.ts`, `ApiDescriptions.ts`) and
 *    src/platform/; no file-level import cycle anywhere;
 * 3. repositories: no domain imports another domain's repository (`Repo.ts`, `<Aggregate>Repo.ts`);
 *    only src/app/ assembles them;
 * 4. casts: a type assertion the compiler cannot check (`x as T` where x's type is not assignable to T,
 *    or T names `any`) is marked at its spot with `// allow-cast: <why>`, on its line or in the comment
 *    right above it;
 * 5. errors and tags: no class writes its own `_tag` member, no `Data.TaggedError`/`Data.Error`
 *    (Schema.TaggedError, Schema.TaggedClass).
 *
 * `bun run check:architecture` (exit 1 on a broken rule); `--casts` lists the allowed casts and why.
 */
import ts from "typescript"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"

/** The folders of src/, bottom layer first; a folder imports only folders of lower layers (not its own layer's). */
export const LAYERS: ReadonlyArray<ReadonlyArray<string>> = [
  ["platform"],
  ["catalog"],
  ["accounts"],
  ["brands", "verification"],
  ["ingestion", "visibility"],
  ["webhooks"],
  ["agents", "observations"],
  ["actions"],
  ["web"],
  ["mcp"],
  ["client.ts"],
  ["app"]
]

/** The contract (PublicApi, DashboardApi, ServerApi): between the domains' API declarations and their handlers. */
const CONTRACT = "src/api.ts"
const isApiDeclaration = (file: string) => /(^|\/)(\w*Api|ApiDescriptions)\.ts$/.test(file)
const isRepository = (file: string) => /(^|\/)\w*Repo\.ts$/.test(file)

const MARKER = "allow-cast:"

const root = resolve(dirname(new URL(import.meta.url).pathname), "..")
const rel = (file: string) => relative(root, file)

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return path.endsWith(".ts") ? [path] : []
  })

/** The folder of src/ a file belongs to; a file directly in src/ is its own ("api.ts", "client.ts"). */
const folderOf = (file: string): string => file.split("/")[1]!

const layerOf = new Map<string, number>()
LAYERS.forEach((folders, i) => folders.forEach((folder) => layerOf.set(folder, i)))

interface Import {
  readonly from: string
  readonly to: string
  readonly line: number
}

const problems: Array<string> = []

const files = sourceFiles(join(root, "src")).map(rel).sort()
const texts = new Map(files.map((file) => [file, readFileSync(join(root, file), "utf8")]))

/** Every relative import of every file (static, type-only, re-exports and dynamic `import()`). */
const imports: Array<Import> = files.flatMap((file) => {
  const text = texts.get(file)!
  const info = ts.preProcessFile(text, true, true)
  return info.importedFiles
    .filter((i) => i.fileName.startsWith("."))
    .map((i) => {
      const target = rel(resolve(root, dirname(file), i.fileName)).replace(/\.js$/, ".ts")
      return { from: file, to: target, line: lineAt(text, i.pos) }
    })
})

function lineAt(text: string, pos: number): number {
  let line = 1
  for (let i = 0; i < pos && i < text.length; i++) if (text.charCodeAt(i) === 10) line++
  return line
}

// 1. Layers, and 2. the contract.
for (const folder of new Set(files.map(folderOf))) {
  if (folder !== "api.ts" && !layerOf.has(folder)) problems.push(`src/${folder}: not in LAYERS of scripts/check-architecture.ts (and the layer order of docs/architecture.md)`)
}
for (const { from, to, line } of imports) {
  if (!to.startsWith("src/")) continue
  const a = folderOf(from)
  const b = folderOf(to)
  if (from === CONTRACT) {
    if (b !== "platform" && !isApiDeclaration(to)) problems.push(`${from}:${line}: the contract imports ${to}, which is not an API declaration`)
    continue
  }
  if (to === CONTRACT) {
    if (isApiDeclaration(from)) problems.push(`${from}:${line}: an API declaration imports the contract (src/api.ts), which imports it`)
    continue
  }
  if (a === b) continue
  const la = layerOf.get(a)
  const lb = layerOf.get(b)
  if (la === undefined || lb === undefined) continue
  if (lb >= la) {
    problems.push(`${from}:${line}: src/${a} imports ${to}, of ${lb === la ? "its own layer" : "a layer above"} (docs/architecture.md, "Layers")`)
  }
  // 3. Repositories.
  if (isRepository(to) && a !== "app") problems.push(`${from}:${line}: imports another domain's repository ${to}; reach it through its service`)
}

// 2. No file-level import cycle (Tarjan's strongly connected components).
{
  const edges = new Map<string, Array<string>>()
  for (const { from, to } of imports) if (texts.has(to)) edges.set(from, [...(edges.get(from) ?? []), to])
  let index = 0
  const indices = new Map<string, number>()
  const lowlinks = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const connect = (v: string): void => {
    indices.set(v, index)
    lowlinks.set(v, index++)
    stack.push(v)
    onStack.add(v)
    for (const w of edges.get(v) ?? []) {
      if (!indices.has(w)) {
        connect(w)
        lowlinks.set(v, Math.min(lowlinks.get(v)!, lowlinks.get(w)!))
      } else if (onStack.has(w)) {
        lowlinks.set(v, Math.min(lowlinks.get(v)!, indices.get(w)!))
      }
    }
    if (lowlinks.get(v) === indices.get(v)) {
      const component: Array<string> = []
      let w: string
      do {
        w = stack.pop()!
        onStack.delete(w)
        component.push(w)
      } while (w !== v)
      if (component.length > 1) problems.push(`file-level import cycle: ${component.sort().join(", ")}`)
    }
  }
  for (const file of files) if (!indices.has(file)) connect(file)
}

// 5. Tags: no hand-written `_tag` member of a class, no Data.TaggedError / Data.Error.
const parsed = new Map(files.map((file) => [file, ts.createSourceFile(file, texts.get(file)!, ts.ScriptTarget.Latest, true)]))
for (const [file, source] of parsed) {
  const visit = (node: ts.Node): void => {
    if (ts.isClassLike(node)) {
      for (const member of node.members) {
        if (member.name !== undefined && ts.isIdentifier(member.name) && member.name.text === "_tag") {
          problems.push(`${file}:${source.getLineAndCharacterOfPosition(member.getStart(source)).line + 1}: a class writes its own _tag; use Schema.TaggedError or Schema.TaggedClass`)
        }
      }
    }
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "Data" &&
      (node.name.text === "TaggedError" || node.name.text === "Error")) {
      problems.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}: Data.${node.name.text}; errors are Schema.TaggedError`)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
}

// 4. Casts the compiler cannot check, each marked where it is.
const listCasts = process.argv.includes("--casts")
{
  const config = ts.getParsedCommandLineOfConfigFile(join(root, "tsconfig.json"), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => problems.push(`tsconfig.json: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`)
  })
  if (config !== undefined) {
    const program = ts.createProgram(files.map((file) => join(root, file)), config.options)
    const checker = program.getTypeChecker()
    const unmarked = new Map<string, Array<string>>()
    for (const file of files) {
      const source = program.getSourceFile(join(root, file))
      if (source === undefined) continue
      const lines = source.text.split("\n")
      /** The reason given on a line or in the comment lines right above it. */
      const reasonAt = (line: number): string | null => {
        for (let i = line; i >= 0; i--) {
          const text = lines[i]!
          const at = text.indexOf(MARKER)
          if (at !== -1) return text.slice(at + MARKER.length).trim()
          if (i < line && !/^\s*(\/\/|\/?\*)/.test(text)) return null
        }
        return null
      }
      /** The reason at the cast's line, or at the start of what holds it, up to its statement or property. */
      const reasonOf = (node: ts.Node): string | null => {
        for (let n: ts.Node | undefined = node; n !== undefined && !ts.isSourceFile(n); n = n.parent) {
          const reason = reasonAt(source.getLineAndCharacterOfPosition(n.getStart(source)).line)
          if (reason !== null) return reason
          if (ts.isStatement(n) || ts.isPropertyAssignment(n) || ts.isClassElement(n)) return null
        }
        return null
      }
      const visit = (node: ts.Node): void => {
        if ((ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) && !(ts.isTypeReferenceNode(node.type) && node.type.typeName.getText(source) === "const")) {
          const target = checker.getTypeFromTypeNode(node.type)
          let namesAny = false
          const anyIn = (n: ts.Node): void => {
            if (n.kind === ts.SyntaxKind.AnyKeyword) namesAny = true
            ts.forEachChild(n, anyIn)
          }
          anyIn(node.type)
          if (namesAny || !checker.isTypeAssignableTo(checker.getTypeAtLocation(node.expression), target)) {
            const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line
            const reason = reasonOf(node)
            const where = `${file}:${line + 1}: ${node.getText(source).replace(/\s+/g, " ").slice(0, 100)}`
            if (reason === null || reason.length < 8) unmarked.set(file, [...(unmarked.get(file) ?? []), where])
            else if (listCasts) console.log(`${where}\n    ${reason}`)
          }
        }
        ts.forEachChild(node, visit)
      }
      visit(source)
    }
    for (const casts of unmarked.values()) {
      for (const cast of casts) problems.push(`${cast}\n    an unchecked cast: decode the value (Schema, a type guard) or mark the spot with // ${MARKER} <why>`)
    }
  }
}

if (problems.length > 0) {
  for (const problem of problems) console.error(problem)
  console.error(`\n${problems.length} broken rule(s) of docs/architecture.md`)
  process.exit(1)
}
console.log(`architecture: ${files.length} files of src/, ${imports.length} imports, the rules of docs/architecture.md hold`)
