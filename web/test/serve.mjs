// A static file server for the repository, for the playground and the browser tests.
// `node web/test/serve.mjs [port]` serves http://127.0.0.1:<port>/web/playground.html.
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { extname, join, normalize, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const TYPES = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".json": "application/json", ".wasm": "application/wasm", ".css": "text/css", ".png": "image/png" };

/** Serves the repository (or the folder `root`); `mockModel` answers model API
 * requests under `/mock-model/`. */
export function serve(port = 0, { mockModel, root = ROOT } = {}) {
  const server = createServer(async (request, response) => {
    const path = normalize(decodeURIComponent(new URL(request.url, "http://x").pathname));
    if (mockModel && path.startsWith("/mock-model/") && mockModel(path, request, response)) return;
    const file = join(root, path);
    if (!file.startsWith(root)) {
      response.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      response.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream", "cache-control": "no-store" }).end(body);
    } catch {
      response.writeHead(404).end(`not found: ${path}`);
    }
  });
  return new Promise((ready) => server.listen(port, "127.0.0.1", () => ready({ server, url: `http://127.0.0.1:${server.address().port}` })));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { url } = await serve(Number(process.argv[2] ?? 8080));
  console.log(`Mneme playground: ${url}/web/playground.html`);
}
