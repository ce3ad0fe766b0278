// The SaslServerSettings of one listener: its mechanisms and PLAIN users from the configuration,
// SCRAM credentials from the broker's ScramCredentialStore, nonces from the platform's secure
// random source. Null for a listener that does not speak SASL.
import type { Platform } from "../platform/mod.ts";
import type { SaslServerSettings } from "./sasl_authenticator.ts";
import type { ScramCredentialStore } from "./scram_credentials.ts";
import type { SecurityConfig } from "./security_config.ts";

const nonceAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

export function listenerSaslSettings(
  security: SecurityConfig,
  listener: string,
  credentials: ScramCredentialStore,
  platform: Platform,
): SaslServerSettings | undefined {
  const sasl = security.listeners.get(listener)?.sasl ?? null;
  if (sasl === null) return undefined;
  return {
    mechanisms: sasl.mechanisms,
    plainPassword: (user) => sasl.plainUsers.get(user),
    scramCredential: (user, mech) => credentials.lookup(user, mech),
    reauthMs: security.connectionsMaxReauthMs,
    maxReceiveBytes: security.saslServerMaxReceiveBytes,
    // 24 characters of 62: 142 bits, more than Kafka's 130-bit server nonce.
    nonce: () => {
      const bytes = new Uint8Array(24);
      platform.randomBytes(bytes);
      let out = "";
      for (const b of bytes) out += nonceAlphabet[b % nonceAlphabet.length];
      return out;
    },
    monotonicMs: () => platform.clock.monotonicMs(),
  };
}
