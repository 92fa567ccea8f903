// oidc-provider 9 ships no types. What test/helpers/oidc-provider.ts uses of it, declared by hand
// (from its README and lib/provider.js); anything else is a type error until added here.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http'

  export interface ProviderContext {
    status: number
    body: unknown
    oidc?: { route?: string }
  }

  interface Grant {
    addOIDCScope(scope: string): void
    save(): Promise<string>
  }

  export default class Provider {
    constructor (issuer: string, configuration: Record<string, unknown>)
    callback (): (req: IncomingMessage, res: ServerResponse) => void
    use (middleware: (ctx: ProviderContext, next: () => Promise<void>) => Promise<void>): void
    interactionDetails (req: IncomingMessage, res: ServerResponse): Promise<{ uid: string, prompt: { name: string } }>
    interactionFinished (
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean }
    ): Promise<void>

    Grant: {
      new (properties: { accountId: string, clientId: string }): Grant
      find(id: string): Promise<Grant | undefined>
    }
  }
}
