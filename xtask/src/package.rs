//! `cargo xtask package`: the artefacts a user installs, into target/dist/ — the
//! Python wheel (the component inside), the Node and browser packages as npm
//! tarballs. Each package is staged in target/package/<name>/ from its own files
//! only (and the licence), so nothing in it can reach into the rest of the
//! repository; tests/packages.mjs then installs each one outside the repository and
//! runs its README's quickstart there.

use std::fs;
use std::path::Path;

use crate::{PYTHON, build_hosts, build_web, run};

pub const DIST: &str = "target/dist";
const STAGE: &str = "target/package";
const LICENCES: [&str; 2] = ["LICENSE-MIT", "LICENSE-APACHE"];

/// Builds what the packages hold, then packs them.
pub fn package() -> Result<(), String> {
    build_hosts()?;
    build_web()?;
    run("node", &["host-node/build.mjs"])?;
    pack()
}

/// Packs what the builds left: the component in target/, web/pkg, host-node/gen.
pub fn pack() -> Result<(), String> {
    remove(Path::new(DIST))?;
    remove(Path::new(STAGE))?;
    fs::create_dir_all(DIST).map_err(|e| format!("cannot create {DIST}: {e}"))?;

    let python = stage("python", "host-python", &["pyproject.toml", "README.md", "mneme"])?;
    copy(Path::new("target/mneme.component.wasm"), &python.join("mneme/mneme.component.wasm"))?;
    let python = path_str(&python)?;
    run(PYTHON, &["-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", DIST, &python])?;

    for (name, files) in
        [("node", &["package.json", "README.md", "js", "gen"][..]), ("web", &["package.json", "README.md", "js", "pkg"][..])]
    {
        let staged = path_str(&stage(name, if name == "node" { "host-node" } else { "web" }, files)?)?;
        // The repository's scripts name tests the package does not hold, and its
        // development dependencies are no user's.
        run("npm", &["pkg", "delete", "scripts", "devDependencies", "--prefix", &staged])?;
        run("npm", &["pack", "--quiet", "--pack-destination", DIST, &staged])?;
    }
    let built: Vec<String> = fs::read_dir(DIST)
        .map_err(|e| format!("cannot read {DIST}: {e}"))?
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    eprintln!("xtask: packaged into {DIST}: {}", built.join(", "));
    Ok(())
}

/// Copies `files` of the package in `source` (and the licences) into
/// target/package/`name`, leaving out Python's caches.
fn stage(name: &str, source: &str, files: &[&str]) -> Result<std::path::PathBuf, String> {
    let staged = Path::new(STAGE).join(name);
    fs::create_dir_all(&staged).map_err(|e| format!("cannot create {}: {e}", staged.display()))?;
    for file in files {
        copy(&Path::new(source).join(file), &staged.join(file))?;
    }
    for licence in LICENCES {
        copy(Path::new(licence), &staged.join(licence))?;
    }
    Ok(staged)
}

fn copy(from: &Path, to: &Path) -> Result<(), String> {
    if from.is_dir() {
        fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
        for entry in fs::read_dir(from).map_err(|e| format!("cannot read {}: {e}", from.display()))?.flatten() {
            let name = entry.file_name();
            if name == "__pycache__" {
                continue;
            }
            copy(&entry.path(), &to.join(name))?;
        }
        return Ok(());
    }
    if !from.exists() {
        return Err(format!("{} is missing: the package needs it (was the build skipped?)", from.display()));
    }
    fs::copy(from, to).map(drop).map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
}

fn remove(path: &Path) -> Result<(), String> {
    match fs::remove_dir_all(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(format!("cannot remove {}: {e}", path.display())),
        _ => Ok(()),
    }
}

fn path_str(path: &Path) -> Result<String, String> {
    path.to_str().map(str::to_owned).ok_or_else(|| format!("{} is not UTF-8", path.display()))
}
