/**
 * The params each operation is called with where every operation is called (test/contract-prism.test.ts,
 * bench/sweep.ts): the minimal params the generator writes (test/generated/examples.ts), with the
 * values those cannot make valid.
 */
const file = "/tmp/a.txt"
/**
 * Values the generated params cannot make valid: the generator's examples meet a string's
 * `format: uuid`, but neither its `pattern` nor an array's `minItems`, so these operations get a
 * valid value here (the document's pattern named).
 */
export const overrides: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  readFile: { path: file }, // pattern ^/.*
  writeFile: { path: file },
  listFiles: { path: "/tmp" },
  getFileInfo: { path: file },
  downloadDirZip: { path: "/tmp" },
  createDirectory: { path: "/tmp/d" },
  deleteFile: { path: file },
  deleteDirectory: { path: "/tmp/d" },
  setFilePermissions: { path: file, mode: "0644" }, // mode: ^[0-7]{3,4}$
  movePath: { src_path: file, dest_path: "/tmp/b.txt" },
  uploadZip: { dest_path: "/tmp/d" },
  dragMouse: { path: [[0, 0], [10, 10]] }, // minItems 2
  batchComputerActions: { actions: [{ type: "move_mouse", move_mouse: { x: 1, y: 1 } }] }, // minItems 1
  loadBrowserExtensions: { extensions: [{ name: "ext", zip_file: new Uint8Array([80, 75, 5, 6]) }] },
  uploadFiles: { files: [{ dest_path: file, file: new TextEncoder().encode("hello") }] }
}

/** An operation's params: the generated ones with {@link overrides} over them. */
export const paramsOf = (name: string, params: unknown): unknown => {
  const override = overrides[name]
  return override === undefined ? params : { ...(typeof params === "object" ? params : {}), ...override }
}
