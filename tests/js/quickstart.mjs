// A package README's quickstart, as the tests run it: the first fenced block in
// `language` under its "## Quickstart" heading, taken as written.
import { readFileSync } from "node:fs";

export function quickstart(readme, language) {
  const section = readFileSync(readme, "utf8").split(/^## Quickstart$/m)[1]?.split(/^## /m)[0];
  if (section === undefined) throw new Error(`${readme} has no "## Quickstart" section`);
  const block = section.match(new RegExp("^```" + language + "\\n([\\s\\S]*?)^```$", "m"));
  if (!block) throw new Error(`${readme}'s quickstart has no \`\`\`${language} block`);
  return block[1];
}
