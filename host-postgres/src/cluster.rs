//! A throwaway PostgreSQL cluster in a temporary folder, for tests and benchmarks:
//! `initdb` then `pg_ctl start`, listening on a Unix socket in that folder only
//! (`listen_addresses = ''`), stopped and deleted on drop. Needs the PostgreSQL server
//! binaries (Debian: `apt-get install postgresql`; `cargo xtask setup` does it).
//! `initdb` refuses to run as root, so as root the cluster belongs to the `postgres`
//! user.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    as_postgres: bool,
}

impl Cluster {
    /// Creates and starts a cluster.
    pub fn start() -> Result<Cluster, String> {
        let bin = server_bin()?;
        let dir =
            tempfile::Builder::new().prefix("mneme-pg-").tempdir().map_err(|e| format!("cannot create a folder for the cluster: {e}"))?;
        let as_postgres = is_root();
        if as_postgres {
            let chown = Command::new("chown").args(["-R", "postgres:postgres"]).arg(dir.path()).output();
            check("chown", chown)?;
        }
        let cluster = Cluster { dir, bin, as_postgres };
        let data = cluster.data();
        cluster.run("initdb", &["-D", &data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale", "C"])?;
        cluster.start_server()?;
        Ok(cluster)
    }

    /// The connection string for its `postgres` database.
    pub fn url(&self) -> String {
        format!("host={} user=postgres dbname=postgres", self.dir.path().display())
    }

    /// Stops the server at once, as a crash would (`pg_ctl stop -m immediate`):
    /// nothing is flushed that was not already durable.
    pub fn crash(&self) -> Result<(), String> {
        self.run("pg_ctl", &["-D", &self.data(), "-m", "immediate", "-w", "stop"])
    }

    /// Starts the server again after [`Cluster::crash`]; it recovers from its WAL.
    pub fn start_server(&self) -> Result<(), String> {
        let log = self.dir.path().join("log").display().to_string();
        let options = format!("-k {} -c listen_addresses=''", self.dir.path().display());
        self.run("pg_ctl", &["-D", &self.data(), "-l", &log, "-w", "-o", &options, "start"])
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    fn run(&self, program: &str, args: &[&str]) -> Result<(), String> {
        let path = self.bin.join(program);
        let output = if self.as_postgres {
            Command::new("runuser").args(["-u", "postgres", "--"]).arg(&path).args(args).output()
        } else {
            Command::new(&path).args(args).output()
        };
        check(&path.display().to_string(), output)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.run("pg_ctl", &["-D", &self.data(), "-m", "immediate", "-w", "stop"]);
    }
}

fn check(what: &str, output: std::io::Result<Output>) -> Result<(), String> {
    let output = output.map_err(|e| format!("cannot run {what}: {e}"))?;
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "{what} failed ({}): {}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ))
}

/// The folder of `initdb` and `pg_ctl`: `$PG_BIN`, else the newest Debian install.
fn server_bin() -> Result<PathBuf, String> {
    if let Some(bin) = std::env::var_os("PG_BIN") {
        return Ok(PathBuf::from(bin));
    }
    let versions = Path::new("/usr/lib/postgresql");
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir(versions)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| Some((entry.file_name().to_str()?.parse().ok()?, entry.path().join("bin"))))
        .filter(|(_, bin)| bin.join("initdb").exists())
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin).ok_or_else(|| {
        "no PostgreSQL server found in /usr/lib/postgresql: install it (apt-get install postgresql; cargo xtask setup does) or set PG_BIN".to_owned()
    })
}

#[cfg(unix)]
fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

#[cfg(not(unix))]
fn is_root() -> bool {
    false
}
