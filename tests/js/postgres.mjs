// A throwaway PostgreSQL cluster for the JavaScript tests, as host-postgres/src/cluster.rs
// and host-python/tests/harness.py make one: `initdb` in a temporary folder, then a
// server on a Unix socket in that folder only; stopped and deleted by `close`. As root,
// the cluster belongs to the `postgres` user (`initdb` refuses root). `$PG_BIN`, else
// the newest server in /usr/lib/postgresql.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export class PostgresCluster {
  constructor() {
    let bin = process.env.PG_BIN;
    if (!bin) {
      const versions = existsSync("/usr/lib/postgresql")
        ? readdirSync("/usr/lib/postgresql").filter((v) => /^\d+$/.test(v) && existsSync(`/usr/lib/postgresql/${v}/bin/initdb`)).map(Number).sort((a, b) => a - b)
        : [];
      if (versions.length === 0) throw new Error("no PostgreSQL server in /usr/lib/postgresql: install it (cargo xtask setup does) or set PG_BIN");
      bin = `/usr/lib/postgresql/${versions.at(-1)}/bin`;
    }
    this.bin = bin;
    this.dir = mkdtempSync(join(tmpdir(), "mneme-pg-"));
    this.asPostgres = process.getuid?.() === 0;
    if (this.asPostgres) execFileSync("chown", ["-R", "postgres:postgres", this.dir]);
    this.data = join(this.dir, "data");
    this.run("initdb", "-D", this.data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale", "C");
    this.run("pg_ctl", "-D", this.data, "-l", join(this.dir, "log"), "-w", "-o", `-k ${this.dir} -c listen_addresses=''`, "start");
    this.url = `host=${this.dir} user=postgres dbname=postgres`;
  }

  run(program, ...args) {
    const command = join(this.bin, program);
    const [file, argv] = this.asPostgres ? ["runuser", ["-u", "postgres", "--", command, ...args]] : [command, args];
    execFileSync(file, argv, { stdio: ["ignore", "pipe", "pipe"] });
  }

  close() {
    try {
      // A server a test stopped already has nothing left to stop.
      if (existsSync(join(this.data, "postmaster.pid"))) this.run("pg_ctl", "-D", this.data, "-m", "immediate", "-w", "stop");
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}
