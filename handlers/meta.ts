import type { HandlerGroup } from './types.js'
import type { HandlerDeps } from './index.js'

export function metaHandlers ({ contract }: HandlerDeps): HandlerGroup<'getOpenapiJson' | 'getDocs'> {
  const json = JSON.stringify(contract)
  return {
    async getOpenapiJson (_request, reply) {
      return await reply.type('application/json; charset=utf-8').header('cache-control', 'no-cache').send(json)
    },
    async getDocs (_request, reply) {
      return await reply.type('text/html; charset=utf-8').send(docsPage())
    }
  }
}

function docsPage (): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Workspace Service API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body>
<script id="api-reference" data-url="/api/openapi.json"></script>
<script src="/api/docs/standalone.js"></script>
</body>
</html>`
}
