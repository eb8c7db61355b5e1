/**
 * A strict `multipart/form-data` parser for tests (RFC 7578 as browsers and busboy read it): the
 * body must be exactly `--boundary CRLF (part) CRLF --boundary ... --boundary-- CRLF`, each part
 * a header block ended by an empty line; anything else throws.
 */
export interface Part {
  readonly name: string
  readonly filename: string | undefined
  readonly contentType: string | undefined
  readonly body: Buffer
}

export const boundaryOf = (contentType: string | undefined): string => {
  const match = /^multipart\/form-data;\s*boundary=("?)([^";]+)\1$/i.exec(contentType ?? "")
  if (match === null) throw new Error(`not a multipart content type: ${contentType}`)
  return match[2]!
}

export const parseMultipart = (body: Buffer, contentType: string | undefined): Array<Part> => {
  const boundary = boundaryOf(contentType)
  const delimiter = Buffer.from(`--${boundary}`)
  const parts: Array<Part> = []
  if (!body.subarray(0, delimiter.length).equals(delimiter)) {
    throw new Error("the body does not start with the boundary")
  }
  let at = delimiter.length
  for (;;) {
    const after = body.subarray(at, at + 2).toString("latin1")
    if (after === "--") {
      if (body.subarray(at + 2).toString("latin1") !== "\r\n") throw new Error("bytes after the closing boundary")
      return parts
    }
    if (after !== "\r\n") throw new Error(`expected CRLF after the boundary at ${at}`)
    at += 2
    const headEnd = body.indexOf("\r\n\r\n", at)
    if (headEnd < 0) throw new Error("a part without the end of its headers")
    const headers = new Map<string, string>()
    for (const line of body.subarray(at, headEnd).toString("utf8").split("\r\n")) {
      const colon = line.indexOf(":")
      if (colon <= 0) throw new Error(`a malformed header line: ${JSON.stringify(line)}`)
      headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim())
    }
    const next = body.indexOf(Buffer.concat([Buffer.from("\r\n"), delimiter]), headEnd + 4)
    if (next < 0) throw new Error("a part without its closing boundary")
    const disposition = headers.get("content-disposition") ?? ""
    const name = /(?:^|;)\s*name="([^"]*)"/.exec(disposition)?.[1]
    if (!disposition.startsWith("form-data") || name === undefined) {
      throw new Error(`a part without a form-data name: ${disposition}`)
    }
    parts.push({
      name,
      filename: /;\s*filename="([^"]*)"/.exec(disposition)?.[1],
      contentType: headers.get("content-type"),
      body: body.subarray(headEnd + 4, next)
    })
    at = next + 2 + delimiter.length
  }
}
