// A real OpenID Connect / OAuth 2.1 authorization server for the identity tests: the certified
// `oidc-provider` package, on a loopback port, issuing JWT access tokens (RFC 9068) for one
// resource indicator (RFC 8707), the toolctl server's /mcp URL.
//
//   node oidc_provider.mjs PORT RESOURCE
//
// Two clients with different scopes:
//   mcp-app  a public client (authorization code + PKCE), may ask for every scope;
//   robot    a confidential machine client (client credentials), toolctl.call and files:read.
// Two users, logged in without a form (the test plays the browser): the authorization request's
// login_hint picks one (alice by default). alice is granted every scope asked for; bob is
// refused (access_denied) when asked for files:write. The signing key rotates on POST /test/rotate (a new key first in the JWKS,
// the old one still published), so the tests can follow a rotation. Prints "ready URL" once
// listening.
import { generateKeyPair } from 'node:crypto';
import { createServer } from 'node:http';
import { promisify } from 'node:util';
import Provider from 'oidc-provider';

const [port, resource] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;
const SCOPES = 'toolctl.call files:read files:write';
const DENIED = { bob: new Set(['files:write']) };

async function newKey(kid) {
  const { privateKey } = await promisify(generateKeyPair)('ec', { namedCurve: 'P-256' });
  return { ...privateKey.export({ format: 'jwk' }), kid, alg: 'ES256', use: 'sig' };
}

// key ids unique to this run: a restarted provider has new keys under new ids
const run = Math.random().toString(36).slice(2, 8);
const keys = [await newKey(`${run}-1`)];

function configuration() {
  return {
    clients: [
      {
        client_id: 'mcp-app',
        token_endpoint_auth_method: 'none',
        id_token_signed_response_alg: 'ES256',
        application_type: 'native',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: ['http://127.0.0.1/callback'],
        scope: `openid offline_access ${SCOPES}`,
      },
      {
        client_id: 'robot',
        client_secret: 'robot-secret-for-tests-only',
        id_token_signed_response_alg: 'ES256',
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        scope: 'toolctl.call files:read',
      },
    ],
    jwks: { keys },
    scopes: ['openid', 'offline_access', ...SCOPES.split(' ')],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, indicator) => {
          if (indicator !== resource) throw new Error(`unknown resource ${indicator}`);
          return {
            scope: SCOPES,
            audience: resource,
            accessTokenTTL: 600,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'ES256' } },
          };
        },
      },
    },
    pkce: { required: () => true },
    findAccount: (ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
    interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
    ttl: { AccessToken: 600, ClientCredentials: 600, Interaction: 600, Session: 600, Grant: 600 },
  };
}

let provider = new Provider(issuer, configuration());
provider.proxy = false;

// The browser's part: log the user in (login_hint) and grant what the policy allows.
async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params } = details;
  const user = params.login_hint || 'alice';
  if (prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: user } });
    return;
  }
  const accountId = details.session.accountId;
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId, clientId: params.client_id });
  const missing = prompt.details;
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  const denied = DENIED[accountId] || new Set();
  const asked = Object.values(missing.missingResourceScopes || {}).flat();
  if (asked.some((s) => denied.has(s))) {
    // as a user declining consent: the client gets access_denied on its redirect URI
    await provider.interactionFinished(req, res, {
      error: 'access_denied',
      error_description: `${accountId} may not have ${asked.filter((s) => denied.has(s)).join(' ')}`,
    });
    return;
  }
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes || {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

const server = createServer(async (req, res) => {
  try {
    if (req.url.startsWith('/interaction/')) {
      await interaction(req, res);
    } else if (req.method === 'POST' && req.url === '/test/rotate') {
      keys.unshift(await newKey(`${run}-${keys.length + 1}`));
      provider = new Provider(issuer, configuration());
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kid: keys[0].kid }));
    } else {
      await provider.callback()(req, res);
    }
  } catch (err) {
    res.writeHead(500, { 'content-type': 'text/plain' });
    res.end(String(err && err.stack ? err.stack : err));
  }
});
server.listen(Number(port), '127.0.0.1', () => {
  process.stdout.write(`ready ${issuer}\n`);
});
