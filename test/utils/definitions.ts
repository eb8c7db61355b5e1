/**
 * Test operations shared by the call pipeline's test files: the fields every test definition
 * has, and a paged list of `{ n }` items with `limit` / `offset`.
 */
import { Schema } from "effect"
import type { Operation } from "../../src/internal/definition.js"

export const base = {
  operationId: "test",
  module: "Test",
  accessor: "test",
  body: undefined,
  errors: [],
  idempotent: true
} as const

export const listThings = {
  ...base,
  name: "listThings",
  method: "GET",
  path: "/list",
  parameters: [
    { field: "limit", name: "limit", in: "query", required: false, schema: Schema.Int },
    { field: "offset", name: "offset", in: "query", required: false, schema: Schema.Int }
  ],
  answers: { 200: { kind: "page", schema: Schema.Struct({ n: Schema.Int }) } }
} as const satisfies Operation
