// Verifies an agent card's signatures with @a2a-js/sdk 1.3.0's
// verifyAgentCardSignature, for Switchboard's card signing interop tests.
// Usage: node a2a-card-verify.mjs <card URL> <public JWK JSON>
// Prints one JSON line per check ({"check", "ok", "detail"}), then "DONE":
//   served    the card as served verifies with the key
//   tampered  the same card with its description changed does not
//   wrongkey  the card does not verify with another key
import * as jose from 'jose';
import { verifyAgentCardSignature } from '@a2a-js/sdk';

const [url, jwkText] = process.argv.slice(2);
const jwk = JSON.parse(jwkText);
const report = (check, ok, detail) => process.stdout.write(JSON.stringify({ check, ok: !!ok, detail }) + '\n');
const card = await (await fetch(url)).json();
const verify = (key) => verifyAgentCardSignature(async (kid) => {
  if (kid !== jwk.kid) throw new Error('unknown kid ' + kid);
  return key;
});
const verifies = async (key, c) => { try { await verify(key)(c); return true; } catch { return false; } };
const origDebug = console.debug;
console.debug = () => {}; // the SDK logs every failed entry
report('served', await verifies(jwk, card), JSON.stringify(card.signatures));
report('tampered', !(await verifies(jwk, { ...card, description: card.description + ' (changed)' })), 'must not verify');
const { publicKey } = await jose.generateKeyPair('ES256');
report('wrongkey', !(await verifies(publicKey, card)), 'must not verify');
console.debug = origDebug;
process.stdout.write('DONE\n');
