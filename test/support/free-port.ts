import { createServer } from "node:net";

/**
 * A free TCP port on this host (bound then released), drawn at random from 10000-19999: below the
 * kernel's ephemeral range (32768-60999), so no outgoing connection or `listen(0)` of a parallel
 * test can take it between this call and the moment the test binds it (CI saw Docker's host port
 * taken that way).
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * 10_000);
    const server = createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once("error", () => resolve(false));
      server.listen(port, "0.0.0.0", () => resolve(true));
    });
    if (!bound) continue;
    await new Promise((resolve) => server.close(resolve));
    return port;
  }
  throw new Error("no free TCP port in 10000-19999 after 100 tries");
}
