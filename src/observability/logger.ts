import { pino, type Logger } from "pino";

export type { Logger };

/** JSON logs; credentials and prompt bodies never reach them. */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const options = {
    level,
    base: { service: "reflector" },
    redact: {
      paths: [
        "config.openai.apiKey",
        // SASL and registry passwords, at the depths where a config or client options would hold them.
        "password",
        "*.password",
        "*.*.password",
        "config.kafka.sasl.password",
        "config.http.auditHmacKey",
        "auditHmacKey",
        "*.auditHmacKey",
        "apiKey",
        "*.apiKey",
        "authorization",
        "*.authorization",
        "headers.authorization",
        "prompt",
        "*.prompt",
        "messages",
        "*.messages",
      ],
      censor: "[redacted]",
    },
  };
  return destination ? pino(options, destination as pino.DestinationStream) : pino(options);
}
