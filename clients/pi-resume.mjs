// pi's own resume of a session file, for `cargo xtask bench`: SessionManager.open and
// buildSessionContext, as `pi --session FILE` does before its first request. Prints the
// fastest of three runs as JSON.
import { SessionManager } from "@mariozechner/pi-coding-agent";

const [file] = process.argv.slice(2);
let best = Infinity;
let messages = 0;
for (let run = 0; run < 3; run++) {
  const started = performance.now();
  const context = SessionManager.open(file).buildSessionContext();
  best = Math.min(best, performance.now() - started);
  messages = context.messages.length;
}
console.log(JSON.stringify({ ms: best, messages }));
