import type { Operation } from "../../src/internal/definition.js"
import { operations as generated } from "../../src/internal/generated/table.js"
import * as Operations from "../../src/internal/operations.js"

/** Extra tags an operation's public union adds to its definition's (documented in its module). */
const extraTags: Partial<Record<string, ReadonlyArray<string>>> = { downloadReplay: ["ReplayNotReady"] }
/** Other accessors sharing an operation's errors. */
const alsoAccessors: Partial<Record<string, ReadonlyArray<string>>> = { downloadReplay: ["downloadToFile"] }

/** A paged operation also has its `<accessor>All` stream, with the same errors. */
const isPaged = (definition: Operation): boolean => {
  const answers = Object.values(definition.answers)
  return answers.length === 1 && answers[0]!.kind === "page"
}

/**
 * Every operation of the API (the generated table, in the order of the docs), the hand-written
 * definition standing in for the generated one where there is one.
 */
const definitions: ReadonlyArray<Operation> = generated.map((definition) =>
  Operations.table.find((handWritten) => handWritten.name === definition.name) ?? definition
)

/**
 * The per-operation status table of docs/errors.md, rendered from the operations tables (all 118): the
 * method and path, the documented statuses (as their error tags), the operation's other own tags.
 *
 * @internal
 */
export const renderStatusTable = (): string => {
  const lines = [
    "| operation | request | documented statuses | its own tags | plus |",
    "| --- | --- | --- | --- | --- |"
  ]
  for (const definition of definitions) {
    const accessors = [
      `\`${definition.module}.${definition.accessor}\``,
      ...(isPaged(definition) ? [`\`${definition.accessor}All\``] : []),
      ...(alsoAccessors[definition.name] ?? []).map((a) => `\`${a}\``)
    ]
    const statuses = definition.errors.map((Class) => `${Class.status} \`${Operations.tagOf(Class)}\``).join(", ") ||
      "—"
    const own = [...Operations.ownTags(definition), ...(extraTags[definition.name] ?? [])].map((t) => `\`${t}\``).join(
      " "
    )
    lines.push(
      `| ${accessors.join(" / ")} | \`${definition.method} ${definition.path}\` | ${statuses} | ${own} | common |`
    )
  }
  return lines.join("\n")
}
