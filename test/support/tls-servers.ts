import { execFileSync, spawn } from "node:child_process";
import {
  chownSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer as createHttpsServer, type Server } from "node:https";
import { request as httpRequest } from "node:http";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitFor } from "./wait-for.js";

/**
 * Postgres, Redis and an HTTPS front of the schema registry on spare ports, with TLS from the
 * private CA of scripts/services.sh (`tlsDir`: ca.crt, server.crt/key for 127.0.0.1), started by
 * the test that needs them and stopped by it. Postgres and Redis are the machine's own binaries,
 * which the README lists as prerequisites.
 */

export async function sparePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function postgresBin(): string {
  const dirs = execFileSync("bash", [
    "-c",
    "ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1",
  ])
    .toString()
    .trim();
  if (!dirs) throw new Error("no Postgres server binaries under /usr/lib/postgresql/*/bin (initdb, pg_ctl)");
  return dirs;
}

export interface TlsPostgres {
  port: number;
  user: string;
  password: string;
  /** `postgres://user:password@127.0.0.1:port/<database>?sslmode=...` */
  url(database: string, sslmode?: string): string;
  stop(): void;
}

/** A Postgres that accepts only TLS connections on 127.0.0.1, with a SCRAM password user. */
export async function startTlsPostgres(tlsDir: string): Promise<TlsPostgres> {
  const bin = postgresBin();
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), "reflector-tls-pg-"));
  const data = join(dir, "data");
  const run = (cmd: string, args: string[]) =>
    execFileSync(
      root ? "runuser" : join(bin, cmd),
      root ? ["-u", "postgres", "--", join(bin, cmd), ...args] : args,
      {
        stdio: "pipe",
      },
    );
  const password = "tls-pg-secret";
  writeFileSync(join(dir, "pw"), password);
  // Postgres reads its key only when the key belongs to it and no one else may read it.
  copyFileSync(join(tlsDir, "server.crt"), join(dir, "server.crt"));
  copyFileSync(join(tlsDir, "server.key"), join(dir, "server.key"));
  if (root) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString());
    for (const path of [dir, join(dir, "pw"), join(dir, "server.crt"), join(dir, "server.key")])
      chownSync(path, uid, gid);
  }
  run("initdb", [
    "-D",
    data,
    "-U",
    "reflector",
    "--pwfile",
    join(dir, "pw"),
    "--auth-local=trust",
    "--auth-host=scram-sha-256",
  ]);
  writeFileSync(
    join(data, "pg_hba.conf"),
    [
      "local all all trust",
      "hostssl all all 127.0.0.1/32 scram-sha-256",
      "hostnossl all all 127.0.0.1/32 reject",
      "",
    ].join("\n"),
  );
  const port = await sparePort();
  const options = [
    `-p ${String(port)}`,
    `-k ${dir}`,
    "-c listen_addresses=127.0.0.1",
    "-c ssl=on",
    `-c ssl_cert_file=${join(dir, "server.crt")}`,
    `-c ssl_key_file=${join(dir, "server.key")}`,
    "-c fsync=off",
  ].join(" ");
  run("pg_ctl", ["-D", data, "-o", options, "-l", join(dir, "log"), "-w", "start"]);
  return {
    port,
    user: "reflector",
    password,
    url: (database, sslmode = "verify-full") =>
      `postgres://reflector:${password}@127.0.0.1:${String(port)}/${database}?sslmode=${sslmode}`,
    stop() {
      try {
        run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

export interface TlsRedis {
  port: number;
  user: string;
  password: string;
  /** `rediss://user:password@127.0.0.1:port/0` */
  url(password?: string): string;
  stop(): Promise<void>;
}

/** A Redis with only a TLS port and one ACL user; the default user is off. */
export async function startTlsRedis(tlsDir: string): Promise<TlsRedis> {
  const port = await sparePort();
  const password = "tls-redis-secret";
  const dir = mkdtempSync(join(tmpdir(), "reflector-tls-redis-"));
  const child = spawn(
    "redis-server",
    [
      "--port",
      "0",
      "--tls-port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--tls-cert-file",
      join(tlsDir, "server.crt"),
      "--tls-key-file",
      join(tlsDir, "server.key"),
      "--tls-ca-cert-file",
      join(tlsDir, "ca.crt"),
      "--tls-auth-clients",
      "no",
      "--save",
      "",
      "--appendonly",
      "no",
      "--dir",
      dir,
      "--user",
      "default",
      "off",
      "--user",
      "reflector",
      "on",
      `>${password}`,
      "~*",
      "&*",
      "+@all",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  await waitFor(() => output.includes("Ready to accept connections") || child.exitCode !== null, {
    timeoutMs: 15_000,
  }).catch(() => undefined);
  if (!output.includes("Ready to accept connections")) {
    child.kill("SIGKILL");
    throw new Error(`redis-server with TLS did not start:\n${output}`);
  }
  return {
    port,
    user: "reflector",
    password,
    url: (pw = password) => `rediss://reflector:${pw}@127.0.0.1:${String(port)}/0`,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface AuthRegistry {
  /** https://127.0.0.1:port/apis/ccompat/v7 */
  url: string;
  username: string;
  password: string;
  /** Requests let through (right credentials) and refused (401). */
  counts: { allowed: number; refused: number };
  stop(): Promise<void>;
}

/**
 * An HTTPS front with basic auth for a plain-HTTP Confluent-compatible registry (Apicurio's ccompat
 * API): the local registry has no auth, so this checks TLS and credentials the way a secured registry
 * would and passes what it lets through to the real one.
 */
export async function startAuthRegistry(tlsDir: string, upstream: string): Promise<AuthRegistry> {
  const username = "registry-user";
  const password = "registry-secret";
  const expected = `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
  const target = new URL(upstream);
  const counts = { allowed: 0, refused: 0 };
  const server: Server = createHttpsServer(
    { cert: readFileSync(join(tlsDir, "server.crt")), key: readFileSync(join(tlsDir, "server.key")) },
    (req, res) => {
      if (req.headers.authorization !== expected) {
        counts.refused += 1;
        res.writeHead(401, {
          "content-type": "application/json",
          "www-authenticate": 'Basic realm="registry"',
        });
        res.end('{"error_code":401,"message":"Unauthorized"}');
        return;
      }
      counts.allowed += 1;
      const headers = { ...req.headers, host: target.host };
      delete headers.authorization;
      const upstreamRequest = httpRequest(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
        (upstreamResponse) => {
          res.writeHead(upstreamResponse.statusCode ?? 502, upstreamResponse.headers);
          upstreamResponse.pipe(res);
        },
      );
      upstreamRequest.on("error", () => {
        res.writeHead(502);
        res.end();
      });
      req.pipe(upstreamRequest);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${String(port)}${target.pathname}`,
    username,
    password,
    counts,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}

export function tlsFilesPresent(tlsDir: string): boolean {
  return ["ca.crt", "server.crt", "server.key", "untrusted-ca.crt"].every((f) => existsSync(join(tlsDir, f)));
}
