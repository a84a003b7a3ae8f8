// A certified OpenID provider for the tests (npm oidc-provider, a devDependency): client credentials with
// resource indicators (RFC 8707), issuing RFC 9068 JWT access tokens. Started by tests/e2e/test_oidc_provider.py:
//   node tests/oidc/provider.mjs PORT CLIENT_ID CLIENT_SECRET RESOURCE
// prints one JSON line {"issuer", "token_url"} once it listens on 127.0.0.1:PORT.
import { generateKeyPairSync } from 'node:crypto';
import Provider, { errors } from 'oidc-provider';

const [port, clientId, clientSecret, resource] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signing = { ...privateKey.export({ format: 'jwk' }), kid: 'pos-tests-1', use: 'sig', alg: 'RS256' };

const provider = new Provider(issuer, {
  clients: [{
    client_id: clientId,
    client_secret: clientSecret,
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  jwks: { keys: [signing] },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        if (indicator !== resource) throw new errors.InvalidTarget();
        return { scope: '', audience: indicator, accessTokenFormat: 'jwt', accessTokenTTL: 600, jwt: { sign: { alg: 'RS256' } } };
      },
    },
  },
});
provider.listen(Number(port), '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ issuer, token_url: `${issuer}/token` }) + '\n');
});
