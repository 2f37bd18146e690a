// The runtime edge of the dashboard: one Hono `fetch` handler served by whatever runs baton —
// @hono/node-server on Node, Bun.serve on Bun, Deno.serve on Deno. Nothing else in the dashboard
// knows which runtime it is on.

export type FetchHandler = (request: Request) => Response | Promise<Response>;

export type ServedHttp = Readonly<{ port: number; runtime: 'node' | 'bun' | 'deno'; close(): Promise<void> }>;

type BunServer = { port: number; stop(closeActive?: boolean): void | Promise<void> };
type BunGlobal = { serve(options: { fetch: FetchHandler; hostname: string; port: number }): BunServer };
type DenoServer = { addr: { port: number }; shutdown(): Promise<void> };
type DenoGlobal = {
  serve(options: { hostname: string; port: number; onListen?: (addr: unknown) => void }, handler: FetchHandler): DenoServer;
};

export async function serveFetch(fetch: FetchHandler, options: { hostname: string; port: number }): Promise<ServedHttp> {
  const globals = globalThis as { Bun?: BunGlobal; Deno?: DenoGlobal };
  if (globals.Bun) {
    const server = globals.Bun.serve({ fetch, hostname: options.hostname, port: options.port });
    return { port: server.port, runtime: 'bun', close: async () => void (await server.stop(true)) };
  }
  if (globals.Deno) {
    const server = globals.Deno.serve({ hostname: options.hostname, port: options.port, onListen: () => undefined }, fetch);
    return { port: server.addr.port, runtime: 'deno', close: () => server.shutdown() };
  }
  const { serve } = await import('@hono/node-server');
  return new Promise<ServedHttp>((resolve, reject) => {
    const server = serve({ fetch, hostname: options.hostname, port: options.port }, (info) => {
      server.off('error', reject);
      resolve({
        port: info.port,
        runtime: 'node',
        close: () =>
          new Promise<void>((done) => {
            // Keep-alive connections (an open browser tab) would hold close() forever.
            (server as { closeAllConnections?: () => void }).closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
    server.once('error', reject);
  });
}
