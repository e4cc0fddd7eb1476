// The TypeScript SDK v2 client (@modelcontextprotocol/client) against `toolctl serve`, driven
// by tests/server/test_ts_clients.py. argv[2] is a JSON plan:
//   {"server": "stdio" | URL, "python": PATH, "mode": "auto" | "legacy",
//    "elicit": "accept" | "decline" | "cancel", "calls": [[tool, args], ...]}
// It answers elicitation (form content {"name": "Ada"}), sampling ("all good") and roots
// (file:///work) itself, and prints {"tools": [names], "results": [result or {"error": ...}],
// "asked": [methods]} as one JSON line.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const plan = JSON.parse(process.argv[2]);
const asked = [];
const client = new Client(
  { name: 'toolctl-ts-probe', version: '1.0.0' },
  {
    capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} },
    versionNegotiation: { mode: plan.mode },
  },
);
client.setRequestHandler('elicitation/create', async () => {
  asked.push('elicitation');
  return plan.elicit === 'accept' ? { action: 'accept', content: { name: 'Ada' } } : { action: plan.elicit };
});
client.setRequestHandler('sampling/createMessage', async () => {
  asked.push('sampling');
  return { model: 'probe', role: 'assistant', content: { type: 'text', text: 'all good' } };
});
client.setRequestHandler('roots/list', async () => {
  asked.push('roots');
  return { roots: [{ uri: 'file:///work', name: 'work' }] };
});
const transport =
  plan.server === 'stdio'
    ? new StdioClientTransport({ command: plan.python, args: ['-m', 'toolctl', 'serve'], cwd: process.cwd(), stderr: 'ignore' })
    : new StreamableHTTPClientTransport(new URL(plan.server));
await client.connect(transport);
const tools = (await client.listTools()).tools.map((t) => t.name);
const results = [];
for (const [name, args] of plan.calls) {
  try {
    results.push(await client.callTool({ name, arguments: args }));
  } catch (err) {
    results.push({ error: { name: err?.constructor?.name, code: err?.code, message: String(err?.message ?? err) } });
  }
}
await client.close();
console.log(JSON.stringify({ tools, results, asked, era: plan.mode }));
