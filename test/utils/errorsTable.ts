import * as Operations from "../../src/internal/operations.js"

/** Extra tags an operation's public union adds to its definition's (documented in its module). */
const extraTags: Partial<Record<Operations.Name, ReadonlyArray<string>>> = { downloadReplay: ["ReplayNotReady"] }
/** Other accessors sharing an operation's errors. */
const alsoAccessors: Partial<Record<Operations.Name, ReadonlyArray<string>>> = { downloadReplay: ["downloadToFile"] }

/**
 * The per-operation status table of docs/errors.md, rendered from the operations table: the
 * method and path, the documented statuses (as their error tags), the operation's other own tags.
 *
 * @internal
 */
export const renderStatusTable = (): string => {
  const lines = [
    "| operation | request | documented statuses | its own tags | plus |",
    "| --- | --- | --- | --- | --- |"
  ]
  for (const definition of Operations.table) {
    const accessors = [
      `\`${definition.module}.${definition.accessor}\``,
      ...(alsoAccessors[definition.name] ?? []).map((a) => `\`${a}\``)
    ]
    const statuses = definition.errors.map((Class) => `${Class.status} \`${Operations.tagOf(Class)}\``).join(", ")
    const own = [...Operations.ownTags(definition), ...(extraTags[definition.name] ?? [])].map((t) => `\`${t}\``).join(
      " "
    )
    lines.push(
      `| ${accessors.join(" / ")} | \`${definition.method} ${definition.path}\` | ${statuses} | ${own} | common |`
    )
  }
  return lines.join("\n")
}
