// Reads a JSON array of plain scalars on stdin; prints how the yaml package (YAML 1.2, core
// schema: what the editors' YAML language server uses) resolves each as the value of `k: `.
import { parse } from "yaml";

let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const out = JSON.parse(input).map((text) => {
    try {
      const value = parse(`k: ${text}\n`, { schema: "core", version: "1.2" }).k;
      if (typeof value === "number" && !Number.isFinite(value)) return { nonfinite: String(value) };
      return { value: value === undefined ? null : value };
    } catch (err) {
      return { error: String(err.message).split("\n")[0] };
    }
  });
  process.stdout.write(JSON.stringify(out));
});
