// Mastra's MCPClient (@mastra/mcp) against `toolctl serve`, driven by
// tests/server/test_ts_clients.py. argv[2] is a JSON plan:
//   {"server": "stdio" | URL, "python": PATH, "protocolVersion": "legacy" | undefined,
//    "elicit": "accept" | "decline", "calls": [[tool, args], ...]}
// Input requests (elicitation) are answered with {"name": "Ada"}; tools that ask for
// approval under Mastra's requireToolApproval policy (toolctl's destructive tools) are
// listed in "needsApproval". Prints one JSON line: {"tools", "needsApproval", "results", "asked"}.
import { MCPClient } from '@mastra/mcp';

const plan = JSON.parse(process.argv[2]);
const asked = [];
const judged = new Set();
const server = {
  ...(plan.server === 'stdio'
    ? { command: plan.python, args: ['-m', 'toolctl', 'serve'], env: { PATH: process.env.PATH ?? '' } }
    : { url: new URL(plan.server) }),
  ...(plan.protocolVersion ? { protocolVersion: plan.protocolVersion } : {}),
  timeout: 60000,
  enableServerLogs: false,
  // Mastra's own gate, from the annotations toolctl lists (a hint, trusted here: our server)
  requireToolApproval: ({ toolName, annotations }) => {
    const destructive = !!annotations && annotations.readOnlyHint !== true && annotations.destructiveHint === true;
    if (destructive) judged.add(toolName);
    return destructive;
  },
  inputRequests: async ({ key, params }) => {
    asked.push(key);
    return plan.elicit === 'accept' ? { action: 'accept', content: { name: 'Ada' } } : { action: plan.elicit };
  },
};
const mcp = new MCPClient({ id: `toolctl-probe-${process.pid}`, servers: { toolctl: server } });
try {
  const tools = await mcp.listTools();
  const results = [];
  for (const [name, args] of plan.calls) {
    const tool = tools[`toolctl_${name}`];
    try {
      results.push(await tool.execute(args, { requestContext: undefined }));
    } catch (err) {
      results.push({ error: String(err?.message ?? err) });
    }
  }
  const needsApproval = [];
  for (const [name, tool] of Object.entries(tools)) {
    if (typeof tool.needsApprovalFn === 'function' ? await tool.needsApprovalFn({}) : tool.requireApproval) needsApproval.push(name);
  }
  console.log(JSON.stringify({ tools: Object.keys(tools).sort(), needsApproval, results, asked }));
} finally {
  await mcp.disconnect();
}
