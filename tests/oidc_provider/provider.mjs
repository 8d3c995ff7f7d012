// A real OpenID provider for the tests: panva's oidc-provider with its development login and
// consent pages (any login name, any password). The test passes its configuration as JSON in
// OIDC_TEST_CONFIG: {"clients": [...], "jwks": {"keys": [private JWKs]}}. Each login name is a
// base64url JSON object of the account's claims ({"email", "email_verified",
// "preferred_username"}), so a test makes whatever account it needs by signing in as it.
// The provider listens on 127.0.0.1 on a free port and prints its issuer URL as its first line.
import http from 'node:http';
import Provider from 'oidc-provider';

const config = JSON.parse(process.env.OIDC_TEST_CONFIG);

// The account's id (its subject, "sub") is the login itself: the same login, the same account.
function claimsOf(login) {
  try {
    const claims = JSON.parse(Buffer.from(login, 'base64url').toString('utf8'));
    if (claims && typeof claims === 'object') return { ...claims, sub: login };
  } catch {
    // not one of the test's encoded logins: an account with a subject and nothing else
  }
  return { sub: login };
}

const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: config.clients,
    jwks: config.jwks,
    cookies: { keys: ['podium-tests-only-cookie-key'] },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['preferred_username', 'name'],
    },
    // Every client must send a PKCE challenge (S256 is the only method offered).
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    async findAccount(ctx, id) {
      const claims = claimsOf(id);
      return { accountId: id, async claims() { return claims; } };
    },
  });
  provider.on('server_error', (ctx, err) => { console.error('server_error', err); });
  server.on('request', provider.callback());
  console.log(issuer);
});
