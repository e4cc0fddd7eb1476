// The TypeScript MCP SDK v2's OAuth clients against toolctl serve + oidc-provider (issue 22).
//
//   node ts_oauth_client.mjs CLIENT_ENTRY SERVER_URL ISSUER code|credentials TOOL
//
// CLIENT_ENTRY: the @modelcontextprotocol/client package's dist/index.mjs (installed with the
// MCP Inspector under .cache/mcp-node). `code`: authorization code + PKCE for the public client
// mcp-app, the user alice (the browser is played here: the authorization server's redirects are
// followed up to the redirect URI). `credentials`: client credentials for the machine client
// robot. Connects (discovery through the 401 and the RFC 9728 metadata), lists the tools, calls
// TOOL with {"text": "ts"} and prints one JSON line: {"tools": [...], "text": "..."}.
import { pathToFileURL } from 'node:url';

const [entry, serverUrl, issuer, mode, tool] = process.argv.slice(2);
const sdk = await import(pathToFileURL(entry).href);
const { Client, StreamableHTTPClientTransport, ClientCredentialsProvider, UnauthorizedError } = sdk;
const REDIRECT = 'http://127.0.0.1/callback';

class BrowserProvider {
  constructor() {
    this.saved = undefined;
    this.verifier = undefined;
    this.callback = undefined;
  }
  get redirectUrl() { return REDIRECT; }
  get clientMetadata() {
    return {
      client_name: 'mcp-app',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() { return { client_id: 'mcp-app', ...this.clientMetadata }; }
  tokens() { return this.saved; }
  saveTokens(tokens) { this.saved = tokens; }
  saveCodeVerifier(verifier) { this.verifier = verifier; }
  saveDiscoveryState(state) { this.discovery = state; }
  discoveryState() { return this.discovery; }
  codeVerifier() { return this.verifier; }
  async redirectToAuthorization(url) {
    let next = new URL(url);
    next.searchParams.set('login_hint', 'alice');
    const jar = new Map(); // the authorization server's session cookies, as a browser keeps them
    for (let i = 0; i < 10; i += 1) {
      const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
      const answer = await fetch(next, { redirect: 'manual', headers: cookie ? { cookie } : {} });
      for (const line of answer.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const at = pair.indexOf('=');
        jar.set(pair.slice(0, at), pair.slice(at + 1));
      }
      const location = answer.headers.get('location');
      if (!location) throw new Error(`no redirect from ${next}: ${answer.status}`);
      const target = new URL(location, next);
      if (target.href.startsWith(REDIRECT)) {
        this.callback = target.searchParams;
        return;
      }
      next = target;
    }
    throw new Error('the authorization server never redirected to the client');
  }
}

async function connect(provider) {
  const client = new Client({ name: 'ts-oauth-test', version: '1.0.0' });
  let transport = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider });
  try {
    await client.connect(transport);
  } catch (err) {
    if (!(err instanceof UnauthorizedError) || !provider.callback) throw err;
    await transport.finishAuth(provider.callback);  // the code (and iss) from the redirect
    transport = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider });
    await client.connect(transport);
  }
  return client;
}

const provider = mode === 'code'
  ? new BrowserProvider()
  : new ClientCredentialsProvider({
    clientId: 'robot',
    clientSecret: 'robot-secret-for-tests-only',
    scope: 'toolctl.call',
    expectedIssuer: issuer,
  });
const client = await connect(provider);
const listed = await client.listTools();
const result = await client.callTool({ name: tool, arguments: { text: 'ts' } });
process.stdout.write(`${JSON.stringify({
  tools: listed.tools.map((t) => t.name).sort(),
  text: result.content[0].text,
})}\n`);
await client.close();
