// The packages as a user gets them: each artefact of `cargo xtask package`
// (target/dist/) installed into a new project in a temporary folder outside the
// repository — a fresh venv, a fresh `npm init` — with nothing pointing back here
// (no PYTHONPATH, MNEME_COMPONENT or CARGO_TARGET_DIR), and its README's quickstart
// run there as written; and the CLI by `cargo install`, the README's commands run
// with it in a home of its own.
//
// Run by `cargo xtask test` after `cargo xtask package`'s packing step.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { quickstart } from "./js/quickstart.mjs";
import { assert, finish, test } from "./js/runner.mjs";
import { serve } from "../web/test/serve.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
// The browser tests' playwright-core (web/node_modules) and the Node package's
// TypeScript (host-node/node_modules), not packages of their own here.
const { chromium } = createRequire(join(ROOT, "web/package.json"))("playwright-core");
const ts = createRequire(join(ROOT, "host-node/package.json"))("typescript");
const TSC = join(ROOT, "host-node/node_modules/.bin/tsc");
// The bundler the browser package's README names (web/node_modules).
const VITE = join(ROOT, "web/node_modules/.bin/vite");
const ESBUILD = join(ROOT, "web/node_modules/.bin/esbuild");
const DIST = join(ROOT, "target/dist");
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const scratch = mkdtempSync(join(tmpdir(), "mneme-packages-"));
assert(relative(ROOT, scratch).startsWith(".."), `the scratch folder ${scratch} is inside the repository`);

/** The environment of a user's shell: nothing that leads back into the repository. */
const USER_ENV = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !["PYTHONPATH", "MNEME_COMPONENT", "CARGO_TARGET_DIR", "NODE_PATH", "VIRTUAL_ENV"].includes(name)),
);

/** The one file in target/dist whose name matches `pattern`. */
function artefact(pattern) {
  assert(existsSync(DIST), `no ${DIST}: run \`cargo xtask package\` first`);
  const found = readdirSync(DIST).filter((name) => pattern.test(name));
  assert(found.length === 1, `expected one ${pattern} in ${DIST}, found ${JSON.stringify(found)}`);
  return join(DIST, found[0]);
}

/** Runs `program` in `cwd` as a user would; resolves with its output, rejects with it if it fails. */
function run(program, args, cwd, input, env = USER_ENV) {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { cwd, env, stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    if (input !== undefined) child.stdin.end(input);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve({ stdout, stderr }) : reject(new Error(`\`${program} ${args.join(" ")}\` in ${cwd} failed (${code}):\n${stderr}${stdout}`)),
    );
  });
}

/**
 * A new npm project in `folder` with the tarball matching `pattern` installed, as
 * package `name`. Its package.json is a user's: the repository's scripts name tests
 * the package does not hold, and its development dependencies are no user's (packing
 * strips both); it says its licence, its types and the Node it needs.
 */
async function npmProject(folder, pattern, name) {
  mkdirSync(folder);
  await run("npm", ["init", "-y"], folder);
  await run("npm", ["install", "--no-audit", "--no-fund", artefact(pattern)], folder);
  const manifest = JSON.parse(readFileSync(join(folder, "node_modules", name, "package.json"), "utf8"));
  for (const field of ["scripts", "devDependencies", "private"]) assert(!(field in manifest), `the installed ${name} has \`${field}\` in its package.json`);
  for (const field of ["license", "types", "engines"]) assert(field in manifest, `the installed ${name} has no \`${field}\` in its package.json`);
}

try {
  await test("the wheel installs into a fresh venv, and its README's quickstart runs there", async () => {
    const folder = join(scratch, "python");
    mkdirSync(folder);
    await run("python3", ["-m", "venv", "venv"], folder);
    await run(join(folder, "venv/bin/pip"), ["install", "--quiet", artefact(/^mneme_engine-.*\.whl$/)], folder);
    writeFileSync(join(folder, "quickstart.py"), quickstart(join(ROOT, "host-python/README.md"), "python"));
    const { stdout } = await run(join(folder, "venv/bin/python"), ["quickstart.py"], folder);
    assert(stdout.includes("user Releases go to staging on Fridays.") && stdout.includes("assistant Noted (1 messages read)."), stdout);
    // The package and its component are the venv's own, and it says it is typed.
    const where = await run(
      join(folder, "venv/bin/python"),
      ["-c", "import mneme, os; here = os.path.dirname(mneme.__file__); print(here); print(sorted(f for f in os.listdir(here) if not f.endswith('.py')))"],
      folder,
    );
    const [site, files] = where.stdout.trim().split("\n");
    assert(site.startsWith(join(folder, "venv")), `mneme was imported from ${site}`);
    assert(files.includes("mneme.component.wasm") && files.includes("py.typed"), `the installed package holds ${files}`);
    await run(join(folder, "venv/bin/python"), ["-c", "from mneme.claude_agent_sdk import MnemeSessionStore; from mneme.openai_agents import MnemeSession; from mneme.postgres import PgStorage"], folder);
  });

  await test("the Node package installs into a fresh npm project, and its README's quickstart runs there", async () => {
    const folder = join(scratch, "node");
    await npmProject(folder, /^mneme-node-.*\.tgz$/, "@mneme/node");
    writeFileSync(join(folder, "quickstart.mjs"), quickstart(join(ROOT, "host-node/README.md"), "js"));
    const { stdout } = await run(process.execPath, ["quickstart.mjs"], folder);
    assert(stdout.includes("user Releases go to staging on Fridays.") && stdout.includes("assistant Noted (1 messages read)."), stdout);
    const [project] = readdirSync(join(folder, "data/projects"));
    assert(readdirSync(join(folder, "data/projects", project)).filter((f) => f.endsWith(".jsonl")).length === 1, "one session in ./data");
    // Every entry point resolves (`@mneme/node/postgres` without node-postgres, an
    // optional peer, until a PgStorage is made), and their declarations type-check in
    // a strict TypeScript project of the user's (no option of the package's own tests).
    writeFileSync(
      join(folder, "check.mts"),
      [
        'import { Mneme } from "@mneme/node";',
        'import { MnemeSessionStore } from "@mneme/node/claude-agent-sdk";',
        'import { MnemeSession } from "@mneme/node/openai-agents";',
        'import { PgStorage } from "@mneme/node/postgres";',
        'const store = await Mneme.open({ root: "./data" });',
        "const listed: number = (await store.list()).sessions.length;",
        'const items: number = (await new MnemeSession("chat-1", store).getItems()).length;',
        "const onPostgres: (url: string) => Promise<Mneme> = (url) => Mneme.open({ storage: new PgStorage(url, { schema: \"agents\" }) });",
        "console.log(listed, typeof new MnemeSessionStore(store).append, items, typeof onPostgres);",
        "await store.close();",
        "",
      ].join("\n"),
    );
    await run(TSC, ["--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022", "check.mts"], folder);
    writeFileSync(join(folder, "check.mjs"), ts.transpileModule(readFileSync(join(folder, "check.mts"), "utf8"), { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText);
    const checked = await run(process.execPath, ["check.mjs"], folder);
    assert(checked.stdout.trim() === "1 function 0 function", checked.stdout);
  });

  // A release build of the CLI, wasmtime again (cargo install unifies features apart
  // from the test build): 3.5 to over 5 minutes on a 2-core machine, no hang.
  await test("the CLI installs with `cargo install`, and the README's commands run as written", async () => {
    // A home of the user's own: a Claude Code session and a pi session from the corpus,
    // and nothing else (the store `mneme append` writes is the per-user data folder).
    const home = join(scratch, "home");
    const claude = join(home, ".claude/projects/-Users-dain-workspace-JSSoundRecorder");
    const pi = join(home, ".pi/agent/sessions/--home-me-app--");
    mkdirSync(claude, { recursive: true });
    mkdirSync(pi, { recursive: true });
    const session = "7acd37a8-2745-4b58-a8a9-46164b22ad9e";
    copyFileSync(join(ROOT, "tests/corpus/claude/08-v2.0.42-thinking/-Users-dain-workspace-JSSoundRecorder", `${session}.jsonl`), join(claude, `${session}.jsonl`));
    copyFileSync(join(ROOT, "tests/corpus/pi/v3/agent-history-session-01.jsonl"), join(pi, "2025-01-01T00-00-00-000Z_agent-history-session-01.jsonl"));
    const env = Object.fromEntries(Object.entries(USER_ENV).filter(([name]) => !name.startsWith("XDG_") && name !== "MNEME_ROOT"));
    Object.assign(env, {
      HOME: home,
      // Where cargo and rustup keep their own files stays theirs (no second download);
      // the program goes into the home, built in the repository's target folder (no
      // second build of what the tests built).
      CARGO_HOME: process.env.CARGO_HOME ?? join(homedir(), ".cargo"),
      RUSTUP_HOME: process.env.RUSTUP_HOME ?? join(homedir(), ".rustup"),
      CARGO_INSTALL_ROOT: join(home, ".local"),
      CARGO_TARGET_DIR: join(ROOT, "target"),
      PATH: `${join(home, ".local/bin")}:${process.env.PATH}`,
    });
    const commands = quickstart(join(ROOT, "README.md"), "sh", "Using `mneme`");
    const { stdout } = await run("sh", ["-e"], ROOT, commands, env);
    assert(existsSync(join(home, ".local/bin/mneme")), "cargo install left no mneme in the home");
    for (const said of [session, "agent-history-session-01", "Usage: mneme"]) {
      assert(stdout.includes(said), `the commands did not print ${JSON.stringify(said)}:\n${stdout.slice(-3000)}`);
    }
    // `mneme append` wrote its session into the per-user data folder, under the project of the folder it ran in.
    const written = join(home, ".local/share/mneme/projects", ROOT.replace(/\/$/, "").replace(/[^A-Za-z0-9]/g, "-"), "my-chat.jsonl");
    assert(existsSync(written) && readFileSync(written, "utf8").includes("remember the milk"), `no session my-chat at ${written}`);
  }, { hungAfterMinutes: 20 });

/** Opens `url` in Chromium; resolves with what the page logged once it set `window.quickstartDone`. */
async function runPage(url) {
  assert(existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}; install it (apt-get install -y chromium) or set CHROMIUM`);
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--headless", "--no-sandbox", "--disable-gpu"] });
  try {
    const page = await browser.newPage();
    const errors = [];
    const logged = [];
    page.on("pageerror", (error) => errors.push(String(error)));
    page.on("console", (message) => logged.push(message.text()));
    await page.goto(url);
    await page.waitForFunction(() => window.quickstartDone === true, null, { timeout: 20000 }).catch(() => {});
    const done = await page.evaluate(() => window.quickstartDone === true);
    assert(done && errors.length === 0, `the page did not finish: ${errors.join("; ") || "no error, no end"}`);
    return logged;
  } finally {
    await browser.close();
  }
}

  await test("the browser package installs into a fresh npm project: its README's quickstart runs in a page served from it, and its bundler recipes build with Vite and esbuild and run", async () => {
    const folder = join(scratch, "web");
    await npmProject(folder, /^mneme-web-.*\.tgz$/, "@mneme/web");
    const readme = join(ROOT, "web/README.md");
    writeFileSync(
      join(folder, "index.html"),
      `<!doctype html>\n${quickstart(readme, "html")}\n<script type="module">\n${quickstart(readme, "js")}\nwindow.quickstartDone = true;\n</script>\n`,
    );
    const { server, url } = await serve(0, { root: folder });
    try {
      const logged = await runPage(`${url}/index.html`);
      assert(logged.some((line) => line.includes("hello")), `it printed ${JSON.stringify(logged)}`);
    } finally {
      server.close();
    }

    // The README's bundler recipe, as written, in a folder of the same project (whose
    // index.html above is the import-map page): Vite builds it, and the bundle's page
    // opens its store on OPFS through the worker Vite copied.
    const app = join(folder, "app");
    mkdirSync(app);
    writeFileSync(join(app, "index.html"), `<!doctype html>\n<script type="module" src="./main.js"></script>\n`);
    const section = readFileSync(readme, "utf8").split(/^## With a bundler$/m)[1].split(/^## /m)[0];
    const main = section.split("\n```js\n")[1].split("\n```\n")[0];
    writeFileSync(join(app, "main.js"), `${main}\nwindow.quickstartDone = true;\n`);
    await run(VITE, ["build", "--logLevel", "warn"], app);
    const bundled = await serve(0, { root: join(app, "dist") });
    try {
      const logged = await runPage(`${bundled.url}/index.html`);
      assert(logged.some((line) => line.includes("hello from the bundle")), `the bundle printed ${JSON.stringify(logged)}`);
    } finally {
      bundled.server.close();
    }

    // The recipe for a bundler that copies nothing: the same main.js bundled by esbuild
    // with the README's commands, as written, in the project's folder.
    writeFileSync(join(folder, "main.js"), `${main}\nwindow.quickstartDone = true;\n`);
    const commands = section.split("\n```sh\n")[1].split("\n```\n")[0];
    await run("sh", ["-ec", commands.replaceAll("npx esbuild", ESBUILD)], folder);
    writeFileSync(join(folder, "dist", "index.html"), `<!doctype html>\n<script type="module" src="./main.js"></script>\n`);
    const esbuilt = await serve(0, { root: join(folder, "dist") });
    try {
      const logged = await runPage(`${esbuilt.url}/index.html`);
      assert(logged.some((line) => line.includes("hello from the bundle")), `esbuild's bundle printed ${JSON.stringify(logged)}`);
    } finally {
      esbuilt.server.close();
    }
  });
} finally {
  rmSync(scratch, { recursive: true, force: true });
  finish("package");
}
