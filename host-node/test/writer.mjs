// Appends `count` messages ("node 0", "node 1", …) to one session, one call each, a
// few milliseconds apart: the Node side of the test that shares a session with `mneme`
// CLI processes. Prints "ready" once the store is open, so the CLI starts alongside.
//   node writer.mjs <root> <session> <count>
import { Mneme } from "../js/mneme.js";

const [root, id, count] = process.argv.slice(2);
const store = await Mneme.open({ root });
console.log("ready");
for (let i = 0; i < Number(count); i++) {
  await store.append(id, { role: "user", text: `node ${i}`, cwd: "/w" });
  await new Promise((resolve) => setTimeout(resolve, 3));
}
await store.close();
