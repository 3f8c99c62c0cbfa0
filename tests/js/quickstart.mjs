// A package README's quickstart, as the tests run it: the first fenced block in
// `language` under its "## Quickstart" heading (or another `heading`), taken as written.
import { readFileSync } from "node:fs";

export function quickstart(readme, language, heading = "Quickstart") {
  const section = readFileSync(readme, "utf8").split(`\n## ${heading}\n`)[1]?.split(/^## /m)[0];
  if (section === undefined) throw new Error(`${readme} has no "## ${heading}" section`);
  const block = section.match(new RegExp("^```" + language + "\\n([\\s\\S]*?)^```$", "m"));
  if (!block) throw new Error(`${readme}'s quickstart has no \`\`\`${language} block`);
  return block[1];
}
