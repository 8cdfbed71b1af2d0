type Json = Record<string, unknown>;

const escapeHtml = (text: unknown) => String(text ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function schemaBlock(schema: unknown): string {
  return schema ? `<pre>${escapeHtml(JSON.stringify(schema, null, 2))}</pre>` : '';
}

/** Renders the OpenAPI document as one self-contained page (no scripts, no external assets). */
export function renderDocsPage(spec: Json): string {
  const info = spec.info as { title: string; version: string };
  const paths = spec.paths as Record<string, Record<string, Json>>;
  const sections = Object.entries(paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, op]) => {
      const params = (op.parameters as Json[]) ?? [];
      const security = (op.security as unknown[]) ?? [];
      const body = op.requestBody as { content: Record<string, { schema: unknown }> } | undefined;
      const responses = op.responses as Record<
        string,
        { description: string; content?: Record<string, { schema: unknown }> }
      >;
      return `<section id="${escapeHtml(op.operationId)}">
<h2><span class="method ${escapeHtml(method)}">${escapeHtml(method.toUpperCase())}</span> <code>${escapeHtml(path)}</code></h2>
<p>${escapeHtml(op.summary)}${security.length > 0 ? ' <em>(bearer token)</em>' : ' <em>(no auth)</em>'}</p>
${op.description ? `<p>${escapeHtml(op.description)}</p>` : ''}
${params.length > 0 ? `<h3>Parameters</h3><ul>${params.map((p) => `<li><code>${escapeHtml(p.name)}</code> in ${escapeHtml(p.in)}${p.required ? ' (required)' : ''}</li>`).join('')}</ul>` : ''}
${
  body
    ? `<h3>Request body</h3>${Object.entries(body.content)
        .map(([type, c]) => `<p><code>${escapeHtml(type)}</code></p>${schemaBlock(c.schema)}`)
        .join('')}`
    : ''
}
<h3>Responses</h3><ul>${Object.entries(responses)
        .map(
          ([status, r]) =>
            `<li><strong>${escapeHtml(status)}</strong> ${escapeHtml(r.description)}${r.content ? schemaBlock(r.content['application/json']?.schema) : ''}</li>`,
        )
        .join('')}</ul>
</section>`;
    }),
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(info.title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.5}
section{border-top:1px solid #ddd;padding:.5rem 0}pre{background:#f6f8fa;padding:.5rem;overflow:auto;font-size:.8rem}
.method{display:inline-block;min-width:4.5rem;font-size:.9rem;padding:.1rem .4rem;border-radius:.3rem;background:#eee}
.get{background:#e3f2fd}.post{background:#e8f5e9}.put,.patch{background:#fff8e1}.delete{background:#ffebee}</style></head>
<body><h1>${escapeHtml(info.title)} <small>${escapeHtml(info.version)}</small></h1>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a>. Get a token from <code>POST /oauth2/token</code>, then send <code>Authorization: Bearer &lt;token&gt;</code>.</p>
<nav><ul>${Object.entries(paths)
    .flatMap(([path, ops]) =>
      Object.entries(ops).map(
        ([m, op]) =>
          `<li><a href="#${escapeHtml(op.operationId)}">${escapeHtml(m.toUpperCase())} ${escapeHtml(path)}</a></li>`,
      ),
    )
    .join('')}</ul></nav>
${sections.join('\n')}
</body></html>`;
}
